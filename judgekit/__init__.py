"""judgekit: can you trust your LLM judge?

One flat namespace over the two tidy tables described in :mod:`judgekit.schema`::

    import judgekit as jk
    pairs, judgments, truth = jk.sim.simulate_judgments(1000, position_bias=0.5, repeats=5)
    jk.report_card(judgments, pairs)

Importing judgekit does no I/O, reads no environment variable and loads no subpackage: each
``jk.<name>`` imports the subpackage that defines it on first use, so a notebook pays only for
what it calls (``import judgekit`` costs little more than ``import pandas``).
"""

from __future__ import annotations

import importlib
from typing import Any

from judgekit._deprecation import moved
from judgekit._env import smoke as smoke
from judgekit._version import __version__ as __version__

# bound here so that jk.published is the function, not the package of the same name
from judgekit.published import published as published

#: The subpackages whose ``__all__`` make up the flat namespace, in order of precedence (a name two
#: of them export, such as an exception re-exported for convenience, is taken from the first).
#: The names themselves are declared once, in each subpackage's ``__all__``, and read from there
#: without importing it (:mod:`judgekit._namespace`).
_SUBPACKAGES = ("exceptions", "schema", "data", "judging", "metrics", "calibration", "winrate",
               "perturb", "inference", "auditing", "scale")

#: Subpackages reachable as attributes (``jk.viz.accuracy_bars``), also imported on first use;
#: the first two are part of the public namespace.
_SUBMODULES = ("scoreboard", "viz", "auditing", "calibration", "data", "exceptions", "inference",
               "judging", "metrics", "perturb", "scale", "schema", "sim", "winrate")

#: Names that moved to the simulation wing (issue 24): ``jk.<name>`` warns and gives ``jk.sim.<name>``;
#: and a chart that moved to ``jk.viz`` (``jk.ppi_chart``).
_moved = moved("judgekit", dict.fromkeys((
    "ArenaSimulation", "ContentSimJudge", "Faults", "IDLapseJudge", "LeaderboardSimulation",
    "SimJudge", "SimServer", "Simulation", "detect_signals", "selection_bias_study",
    "sim_rewrite_handler", "simulate_arena_hard", "simulate_judgments", "simulate_leaderboard",
    "simulate_pairs", "simulated_rewrite", "simulation_pairs", "strip_perturbations",
), "judgekit.sim") | {"ppi_chart": "judgekit.viz.inference"})


def _where() -> dict[str, str]:
    from judgekit._namespace import exports

    return exports(tuple(f"judgekit.{name}" for name in _SUBPACKAGES))


def __getattr__(name: str) -> Any:
    if name == "__all__":
        value: Any = sorted(["__version__", "published", "smoke", *_SUBMODULES[:2], *_where()])
    elif name in _SUBMODULES:
        value = importlib.import_module(f"judgekit.{name}")
    elif name in _moved.moved:
        return _moved(name)  # not cached: each use warns
    else:
        from judgekit._namespace import resolve

        return resolve(globals(), _where(), name, "judgekit")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__getattr__("__all__")))
