"""A few human labels go a long way: prediction-powered human win rates and a labelling planner."""

from judgekit.inference.charts import ppi_chart
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
