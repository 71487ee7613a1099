"""A few human labels go a long way: prediction-powered human win rates and a labelling planner.

The estimators and the planner return tables; their charts are drawn in :mod:`judgekit.viz`
(``jk.ppi_chart`` is :func:`judgekit.viz.ppi_chart`, imported on first use so that altair is not
loaded with the estimators).
"""

from typing import Any

from judgekit.inference.labelling import check_labelling, sample_for_labelling
from judgekit.inference.planner import LabelPlan, plan_bias, plan_labels
from judgekit.inference.rates import ppi_compare, ppi_mean, ppi_win_rates
from judgekit.inference.study import label_subset_study

__all__ = [
    "LabelPlan",
    "check_labelling",
    "label_subset_study",
    "plan_bias",
    "plan_labels",
    "ppi_chart",
    "ppi_compare",
    "ppi_mean",
    "ppi_win_rates",
    "sample_for_labelling",
]


def __getattr__(name: str) -> Any:
    if name == "ppi_chart":  # drawn in viz; kept here so that jk.ppi_chart stays where it was
        from judgekit.viz.inference import ppi_chart

        globals()[name] = ppi_chart
        return ppi_chart
    raise AttributeError(f"module 'judgekit.inference' has no attribute {name!r}")
