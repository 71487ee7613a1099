"""Reliability metrics: accuracy, flip noise, position and length bias, consistency, agreement."""

from judgekit.exceptions import MetricWarning
from judgekit.metrics.accuracy import accuracy, flip_noise, length_bias, position_bias
from judgekit.metrics.agreement import disagreement, mutual_agreement
from judgekit.metrics.consistency import (
    invalid_rate,
    overall_win_rate,
    position_consistency,
    preference_fairness,
    repetition_stability,
)
from judgekit.metrics.factors import StepwiseResult, position_bias_factors, stepwise_ols
from judgekit.metrics.heterogeneity import flip_heterogeneity
from judgekit.metrics.rankings import rank_judges
from judgekit.metrics.report import REPORT_CARD_METRICS, report_card
from judgekit.metrics.temperature import recommend_temperature, temperature_table

__all__ = [
    "REPORT_CARD_METRICS",
    "MetricWarning",
    "StepwiseResult",
    "accuracy",
    "disagreement",
    "flip_heterogeneity",
    "flip_noise",
    "invalid_rate",
    "length_bias",
    "mutual_agreement",
    "overall_win_rate",
    "position_bias",
    "position_bias_factors",
    "position_consistency",
    "preference_fairness",
    "rank_judges",
    "recommend_temperature",
    "repetition_stability",
    "report_card",
    "stepwise_ols",
    "temperature_table",
]
