"""judgekit: can you trust your LLM judge?

One flat namespace over the two tidy tables described in :mod:`judgekit.schema`::

    import judgekit as jk
    pairs, judgments, truth = jk.simulate_judgments(1000, position_bias=0.5, repeats=5)
    jk.report_card(judgments, pairs)

Importing judgekit does no I/O, reads no environment variable and loads no subpackage: each
``jk.<name>`` imports the subpackage that defines it on first use, so a notebook pays only for
what it calls (``import judgekit`` costs little more than ``import pandas``).
"""

from __future__ import annotations

import importlib
from typing import Any

from judgekit._env import smoke as smoke
from judgekit._version import __version__ as __version__

# bound here so that jk.published is the function, not the package of the same name
from judgekit.published import published as published

#: The flat namespace: defining module -> the public names it gives ``jk``. A test checks that it
#: equals the subpackages' ``__all__`` (``tests/test_namespace.py`` prints the table to paste when
#: a subpackage gains a name) and that no name is given twice.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "judgekit.exceptions": (
        "CacheError", "CacheWarning", "ConvergenceWarning", "DataFileError", "JudgeConnectionError",
        "MetricWarning", "MissingDataWarning", "NonRandomLabelsError", "OutputPathError",
        "TableError", "UnsafePickleError", "UnverifiedDataWarning",
    ),
    "judgekit.schema": (
        "JUDGMENT_COLUMNS", "JUDGMENT_REQUIRED", "LABELS", "ORDERS", "PAIR_COLUMNS",
        "PAIR_REQUIRED", "VERDICTS", "label_order", "position_of", "validate_judgments",
        "validate_pairs",
    ),
    "judgekit.data": (
        "SimJudge", "Simulation", "crowd_agreement", "data_files", "detect_format",
        "fetch_dataset", "list_datasets", "load_dataset", "load_judgments", "load_pairs",
        "load_table", "read_alpacaeval", "read_any", "read_arena_battles", "read_arena_hard", "read_judging_the_judges", "read_judgments",
        "read_llmbar_results", "read_mtbench", "sample_splits", "simulate_judgments",
        "simulate_pairs", "split_tables",
    ),
    "judgekit.judging": (
        "Cache", "DEFAULT_PRICES", "Faults", "Judge", "ParsedVerdict", "RunConfig", "SimServer",
        "Template", "acomplete", "arun_judges", "collect_batch", "complete", "estimate_cost",
        "get_template", "list_templates", "option_probabilities", "price_table", "request_key",
        "run_judges", "run_judges_batch", "submit_batch",
    ),
    "judgekit.metrics": (
        "REPORT_CARD_METRICS", "StepwiseResult", "accuracy", "disagreement", "flip_heterogeneity",
        "flip_noise", "invalid_rate", "length_bias", "mutual_agreement", "overall_win_rate", "position_bias",
        "position_bias_factors", "position_consistency", "preference_fairness", "rank_judges",
        "recommend_temperature", "repetition_stability", "report_card", "stepwise_ols",
        "temperature_table",
    ),
    "judgekit.calibration": (
        "ARRANGEMENTS", "CALIBRATION_METHODS", "Calibration", "Calibrator", "IDLapseJudge",
        "NOAFit", "arrangement_table", "calibrate", "content_free_pairs",
        "first_position_reliability", "first_position_summary", "icc_two_way", "load_calibrator",
        "noa_fit", "selection_bias_metrics", "selection_bias_study", "with_arrangements",
    ),
    "judgekit.winrate": (
        "ArenaSimulation", "InstructionDifficulty", "LeaderboardSimulation", "arena_correlation",
        "arena_hard_scores", "bradley_terry", "gameability", "instruction_difficulty",
        "lc_win_rate_matrix", "lc_win_rates", "length_balanced_win_rates",
        "length_normalized_leaderboard", "length_normalized_win_rates", "load_difficulty",
        "simulate_arena_hard", "simulate_leaderboard", "style_features", "truncation_attack",
        "verbosity_variants", "win_rates",
    ),
    "judgekit.perturb": (
        "BIASES", "BiasSuite", "ContentSimJudge", "apply_rewrites", "bias_report", "bias_suite",
        "bias_summary", "calm_perturbations", "detect_signals", "fake_citation", "perturb_all",
        "perturb_authority", "perturb_bandwagon", "perturb_compassion_fade", "perturb_cot",
        "perturb_distraction", "perturb_diversity", "perturb_fallacy", "perturb_position",
        "perturb_refinement_aware", "perturb_self_enhancement", "perturb_sentiment",
        "perturb_verbosity", "refine_pairs", "rewrite_requests", "sim_rewrite_handler",
        "simulated_rewrite", "simulation_pairs", "strip_perturbations",
    ),
    "judgekit.inference": (
        "LabelPlan", "check_labelling", "label_subset_study", "plan_bias", "plan_labels",
        "ppi_chart", "ppi_compare", "ppi_mean", "ppi_win_rates", "sample_for_labelling",
    ),

    "judgekit.auditing": ("Audit", "audit", "effect_finding"),
    "judgekit.scale": ("ScannedTable", "scan_table"),
}

#: Subpackages reachable as attributes (``jk.viz.accuracy_bars``), also imported on first use;
#: the first two are part of the public namespace.
_SUBMODULES = ("scoreboard", "viz", "auditing", "calibration", "data", "exceptions", "inference",
               "judging", "metrics", "perturb", "scale", "schema", "sim", "winrate")

_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(["__version__", "published", "smoke", *_SUBMODULES[:2], *_WHERE])


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"judgekit.{name}")
    else:
        raise AttributeError(f"module 'judgekit' has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
