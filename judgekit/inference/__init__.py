"""A few human labels go a long way: prediction-powered human win rates and a labelling planner.

The estimators and the planner return tables; their charts are drawn in :mod:`judgekit.viz`
(``jk.viz.ppi_chart``, ``jk.viz.plan_chart``). ``judgekit.inference.ppi_chart`` and
``jk.ppi_chart`` still work, with a DeprecationWarning naming the new place.
"""

from judgekit._deprecation import moved
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
    "ppi_compare",
    "ppi_mean",
    "ppi_win_rates",
    "sample_for_labelling",
]

#: Moved to judgekit.viz (issue 24): looking it up here warns and gives the function there.
__getattr__ = moved("judgekit.inference", {"ppi_chart": "judgekit.viz.inference"})
