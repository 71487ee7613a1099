"""Win rates: raw, swap-averaged, length-normalized, length-balanced and length-controlled;
Arena-Hard scores and Bradley-Terry ratings, with style control."""

from judgekit._deprecation import moved
from judgekit.winrate.arena import arena_correlation
from judgekit.winrate.arena_hard import arena_hard_scores
from judgekit.winrate.attack import truncation_attack
from judgekit.winrate.bradley_terry import bradley_terry
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
from judgekit.winrate.style import style_features

__all__ = [
    "InstructionDifficulty",
    "arena_correlation",
    "arena_hard_scores",
    "bradley_terry",
    "gameability",
    "instruction_difficulty",
    "lc_win_rate_matrix",
    "lc_win_rates",
    "length_balanced_win_rates",
    "length_normalized_leaderboard",
    "length_normalized_win_rates",
    "load_difficulty",
    "style_features",
    "truncation_attack",
    "verbosity_variants",
    "win_rates",
]

# Moved to the simulation wing (issue 24): the old names warn and still work.
__getattr__ = moved(__name__, dict.fromkeys(("ArenaSimulation", "LeaderboardSimulation", "simulate_arena_hard", "simulate_leaderboard"), "judgekit.sim"))
