"""Altair chart builders and ipywidgets explorers.

Every builder takes a tidy frame as judgekit's metric functions return it and returns an altair
chart without displaying it. ``jk.viz.setup()`` at the top of a notebook gives the judgekit look
and an offline-capable renderer; ``jk.viz.save_chart`` writes PNG, SVG, PDF or HTML.

The submodules (and altair, ipywidgets) are imported on first use, so ``import judgekit`` stays
fast for code that draws nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE: dict[str, str] = {
    # export and theme
    "chart_spec": "_export", "html_page": "_export", "mimebundle": "_export",
    "save_chart": "_export", "script_json": "_export", "to_png": "_export", "to_svg": "_export",
    "PALETTE": "_theme", "metric_label": "_theme", "setup": "_theme", "theme": "_theme",
    # chart builders
    "accuracy_bars": "accuracy", "bias_accuracy_scatter": "accuracy", "bias_bars": "accuracy",
    "metric_heatmap": "accuracy", "metric_scatter": "accuracy", "temperature_curves": "accuracy",
    "calibration_bars": "calibration", "calibration_curve": "calibration",
    "reliability_diagram": "calibration",
    "agreement_heatmap": "consistency", "consistency_vs_winrate": "consistency",
    "disagreement_histogram": "consistency",
    "robustness_bars": "suite",
    "pair_card": "pairview", "JudgeExplorer": "explorer", "ESTIMATORS": "explorer",
    "arena_scatter": "winrates", "gameability_bars": "winrates", "leaderboard_slope": "winrates",
    "winrate_matrix": "winrates",
    "plan_chart": "inference", "ppi_chart": "inference",
    # the audit report: its charts, page and folder
    "audit_charts": "audit_report", "audit_page": "audit_report", "save_audit": "audit_report",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'judgekit.viz' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"judgekit.viz.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
