"""Calibration of a judge's A/B probabilities: CalibraEval's NOA and its baselines."""

from judgekit._deprecation import moved
from judgekit.calibration.arrangements import ARRANGEMENTS, arrangement_table, with_arrangements
from judgekit.calibration.baselines import content_free_pairs
from judgekit.calibration.calibrate import (
    CALIBRATION_METHODS,
    Calibration,
    Calibrator,
    calibrate,
    load_calibrator,
)
from judgekit.calibration.noa import NOAFit, noa_fit
from judgekit.calibration.reliability import first_position_reliability, first_position_summary
from judgekit.calibration.selection_bias import icc_two_way, selection_bias_metrics

__all__ = [
    "ARRANGEMENTS",
    "CALIBRATION_METHODS",
    "Calibration",
    "Calibrator",
    "NOAFit",
    "arrangement_table",
    "calibrate",
    "content_free_pairs",
    "first_position_reliability",
    "first_position_summary",
    "icc_two_way",
    "load_calibrator",
    "noa_fit",
    "selection_bias_metrics",
    "with_arrangements",
]

# Moved to the simulation wing (issue 24): the old names warn and still work.
__getattr__ = moved(__name__, dict.fromkeys(("IDLapseJudge", "selection_bias_study"), "judgekit.sim"))
