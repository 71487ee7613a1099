"""A few human labels go a long way: prediction-powered human win rates and a labelling planner."""

from judgekit.inference.labelling import check_labelling
from judgekit.inference.rates import ppi_compare, ppi_mean, ppi_win_rates

__all__ = ["check_labelling", "ppi_compare", "ppi_mean", "ppi_win_rates"]
