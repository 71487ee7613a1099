"""Fast simulation of human outcomes and a judge's swap-averaged predictions, with known truth.

Used by the coverage study (tests, ``benchmarks/bench_ppi.py``) and to check the planner. Per
pair: the human outcome y (1: response a preferred, 0: b, 1/2: tie) with E[y] = ``win_rate``;
the judge's underlying decision in each order from one uniform draw per pair (so an unbiased
judge decides the same way in both orders), correct with probability ``accuracy`` on non-tied
pairs, shifted toward response a by ``asymmetry`` (errors that favour a: the judge-only rate is
biased) and toward the first position by ``position_bias``; each of ``repeats`` calls per order
flips the decision with probability ``flip_q``. The prediction f is the share of calls that
preferred a over both orders and all repeats.
"""

from __future__ import annotations

import numpy as np


def simulate(
    n_pairs: int, *, win_rate: float = 0.6, tie_rate: float = 0.0, accuracy: float = 0.75,
    asymmetry: float = 0.0, position_bias: float = 0.0, flip_q: float = 0.0, repeats: int = 1,
    orders: int = 2, rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """``(y, f)`` for ``n_pairs`` pairs; see the module docstring."""
    p_win = win_rate - tie_rate / 2
    if not (0 <= p_win <= 1 - tie_rate):
        raise ValueError("win_rate and tie_rate are incompatible")
    u = rng.random(n_pairs)
    y = np.where(u < p_win, 1.0, np.where(u < p_win + tie_rate, 0.5, 0.0))
    # probability that the decision prefers a, before position effects
    base = np.where(y == 1.0, accuracy, np.where(y == 0.0, 1.0 - accuracy, 0.5)) + asymmetry
    shared = rng.random(n_pairs)
    count = np.zeros(n_pairs)
    for o in range(orders):
        shift = position_bias if o == 0 else -position_bias  # order ab: a shown first
        decide_a = shared < np.clip(base + shift, 0.0, 1.0)
        keep = rng.binomial(repeats, 1.0 - flip_q, size=n_pairs)
        count += np.where(decide_a, keep, repeats - keep)
    return y, count / (orders * repeats)


def judge_moments(accuracy: float, flip_q: float, calls: int, win_rate: float = 0.5
                  ) -> tuple[float, float, float]:
    """(Var y, Cov(y, f), Var f) of :func:`simulate` without ties, asymmetry or position bias,
    where ``accuracy`` is the per-call agreement with humans and the decision is shared by all
    ``calls`` of a pair."""
    a_dec = (accuracy - flip_q) / (1.0 - 2.0 * flip_q)
    v = win_rate * (1.0 - win_rate)
    cov = v * (2.0 * accuracy - 1.0)
    var_f = v * (2.0 * accuracy - 1.0) ** 2 + a_dec * (1 - a_dec) * (1 - 2 * flip_q) ** 2 + (
        flip_q * (1 - flip_q) / calls)
    return v, cov, var_f
