"""The arithmetic the metric definitions share, vectorised over any leading shape (groups, splits,
resamples): ratios that are NaN on a zero denominator, the flip probability from repeat
disagreement, and de-noising (``docs/spec.md#accuracy``, ``docs/spec.md#bias``)."""

from __future__ import annotations

import numpy as np

#: 1 - 2q at or below this is too close to 0 to de-noise: the result is NaN with a warning.
MIN_DENOM = 0.05


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, NaN where den is not positive."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def flip_q(disagree: np.ndarray, estimator: str) -> np.ndarray:
    """Flip probability q from the probability d that two repeats disagree.

    ``"consistent"`` solves d = 2q(1 - q) (d clipped to [0, 0.5]); ``"paper"`` takes q = d, as
    Wei et al. do.
    """
    if estimator == "paper":
        return disagree
    d = np.clip(disagree, 0.0, 0.5)
    return (1.0 - np.sqrt(1.0 - 2.0 * d)) / 2.0


def denoise(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p - q) / (1 - 2q), and the mask where 1 - 2q <= :data:`MIN_DENOM` (NaN there).

    A NaN q (no repeats) means no de-noising: p is returned as is.
    """
    q0 = np.where(np.isnan(q), 0.0, q)
    unstable = (1.0 - 2.0 * q0) <= MIN_DENOM
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(unstable, np.nan, (p - q0) / np.where(unstable, 1.0, 1.0 - 2.0 * q0))
    return value, unstable


def joint_both(
    pB: np.ndarray, pc: np.ndarray, pr: np.ndarray, qc: np.ndarray, qr: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """P(X_cr = 1 and X_rc = 1) from E[Z_cr Z_rc], the marginals and both orders' flips.

    With independent flips, E[Z_cr Z_rc] = (1-2q_c)(1-2q_r) P11 + (1-q_c) q_r p_c + q_c (1-q_r) p_r
    + q_c q_r (1 - p_c - p_r), where p_c, p_r are the de-noised marginals. Returns the value and
    the mask where either order's de-noising broke down.
    """
    qc0 = np.where(np.isnan(qc), 0.0, qc)
    qr0 = np.where(np.isnan(qr), 0.0, qr)
    dc, uc = denoise(pc, qc)
    dr, ur = denoise(pr, qr)
    unstable = uc | ur
    with np.errstate(invalid="ignore", divide="ignore"):
        num = pB - (1 - qc0) * qr0 * dc - qc0 * (1 - qr0) * dr - qc0 * qr0 * (1 - dc - dr)
        value = num / ((1 - 2 * qc0) * (1 - 2 * qr0))
    return np.where(unstable, np.nan, value), unstable
