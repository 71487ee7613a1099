"""The simulation wing: every simulated judge, server, rewrite and study data generator.

Nothing in judgekit's production packages imports this one; it imports them (a simulated judge
answers through the real templates, a study runs the real estimators). Users reach it as
``jk.sim.<name>``::

    import judgekit as jk
    pairs, judgments, truth = jk.sim.simulate_judgments(1000, position_bias=0.5, repeats=5)

Modules, one per concept:

* :mod:`~judgekit.sim.judge`: :class:`SimJudge`, a judge whose biases are known, and
  :func:`simulate_pairs` / :func:`simulate_judgments` (in memory, with the truth).
* :mod:`~judgekit.sim.server`: :class:`SimServer`, the same judge behind an OpenAI-compatible
  HTTP server (chat, logprobs, files, batches), with :class:`Faults` and :class:`RateLimiter`;
  :mod:`~judgekit.sim.chat`, :mod:`~judgekit.sim.batches`, :mod:`~judgekit.sim.replay`,
  :mod:`~judgekit.sim.config` (``judgekit serve-sim``: :func:`serve_forever`).
* :mod:`~judgekit.sim.decoding`: :func:`decode_request`, a template's rendered request read back.
* :mod:`~judgekit.sim.perturbations`: :class:`ContentSimJudge`, :func:`detect_signals`,
  :func:`simulated_rewrite` and :func:`sim_rewrite_handler`, how a simulated judge meets the
  perturbation suite.
* :mod:`~judgekit.sim.selection_bias`: :class:`IDLapseJudge` and :func:`selection_bias_study`
  (calibration methods against judges of known bias).
* :mod:`~judgekit.sim.leaderboard` and :mod:`~judgekit.sim.arena_hard`: leaderboards whose true
  win rates are known (:func:`simulate_leaderboard`, :func:`simulate_arena_hard`).
* :mod:`~judgekit.sim.labels`: human labels and a judge's predictions for the PPI coverage study.

Each name is imported with its module on first use (the server needs aiohttp; a simulated table
does not).
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE: dict[str, str] = {
    **dict.fromkeys(("SimJudge", "Simulation", "simulate_judgments", "simulate_pairs"), "judge"),
    **dict.fromkeys(("ContentSimJudge", "detect_signals", "sim_rewrite_handler", "simulated_rewrite",
                     "simulation_pairs", "strip_perturbations"), "perturbations"),
    **dict.fromkeys(("IDLapseJudge", "selection_bias_study"), "selection_bias"),
    **dict.fromkeys(("LeaderboardSimulation", "simulate_leaderboard"), "leaderboard"),
    **dict.fromkeys(("ArenaSimulation", "simulate_arena_hard"), "arena_hard"),
    **dict.fromkeys(("decode_request", "request_regexes"), "decoding"),
    "SimServer": "server",
    "Faults": "faults",
    "RateLimiter": "ratelimit",
    **dict.fromkeys(("serve_forever", "server_from_config"), "config"),
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
