"""Win rates: raw, swap-averaged, length-normalized, length-balanced and length-controlled."""

from judgekit.winrate.arena import arena_correlation
from judgekit.winrate.attack import truncation_attack
from judgekit.winrate.difficulty import load_difficulty
from judgekit.winrate.gameability import (
    gameability,
    length_normalized_leaderboard,
    verbosity_variants,
)
from judgekit.winrate.lc import (
    InstructionDifficulty,
    instruction_difficulty,
    lc_win_rate_matrix,
    lc_win_rates,
)
from judgekit.winrate.rates import length_balanced_win_rates, length_normalized_win_rates, win_rates
from judgekit.winrate.simulate import LeaderboardSimulation, simulate_leaderboard

__all__ = [
    "InstructionDifficulty",
    "LeaderboardSimulation",
    "arena_correlation",
    "gameability",
    "instruction_difficulty",
    "lc_win_rate_matrix",
    "lc_win_rates",
    "length_balanced_win_rates",
    "length_normalized_leaderboard",
    "length_normalized_win_rates",
    "load_difficulty",
    "simulate_leaderboard",
    "truncation_attack",
    "verbosity_variants",
    "win_rates",
]
