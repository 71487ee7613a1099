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


#: The judges of the coverage study: accuracy of the underlying decision 0.6 to 0.9, errors that
#: favour response a (``asymmetry``), position bias, flip noise and repeats.
STUDY_JUDGES: dict[str, dict[str, float]] = {
    "weak (0.6)": {"accuracy": 0.6, "flip_q": 0.1, "repeats": 1},
    "biased (0.75)": {"accuracy": 0.75, "asymmetry": 0.1, "position_bias": 0.15, "flip_q": 0.1,
                      "repeats": 3},
    "good (0.9)": {"accuracy": 0.9, "asymmetry": 0.03, "flip_q": 0.05, "repeats": 1},
    "good, very biased (0.9)": {"accuracy": 0.9, "asymmetry": 0.15, "position_bias": 0.3,
                                "flip_q": 0.05, "repeats": 1},
}


def coverage_study(
    *, judges: dict[str, dict[str, float]] | None = None, n_labels=(50, 200, 500),
    n_pairs=(2000, 20000), reps: int = 1000, win_rate: float = 0.6, tie_rate: float = 0.1,
    ci: float = 0.95, small_sample: bool = True, seed: int = 0,
):
    """Coverage of the human win rate and mean interval width per judge, design and method."""
    import pandas as pd

    from judgekit.inference._fit import quick_intervals

    judges = STUDY_JUDGES if judges is None else judges
    rng = np.random.default_rng(seed)
    rows = []
    for name, params in judges.items():
        params = dict(params)
        repeats = int(params.pop("repeats", 1))
        for P in n_pairs:
            for n in n_labels:
                hits, widths = {}, {}
                for _ in range(reps):
                    y, f = simulate(P, win_rate=win_rate, tie_rate=tie_rate, repeats=repeats,
                                    rng=rng, **params)
                    ys = np.full(P, np.nan)
                    idx = rng.choice(P, n, replace=False)
                    ys[idx] = y[idx]
                    for method, (_, _, low, high) in quick_intervals(
                            ys, f, ci=ci, small_sample=small_sample).items():
                        hits.setdefault(method, []).append(low <= win_rate <= high)
                        widths.setdefault(method, []).append(high - low)
                for method in hits:
                    rows.append({"judge": name, "n_pairs": P, "n_labels": n, "method": method,
                                 "coverage": float(np.mean(hits[method])),
                                 "width": float(np.mean(widths[method])), "reps": reps})
    out = pd.DataFrame(rows)
    base = out[out["method"] == "classical"].set_index(["judge", "n_pairs", "n_labels"])["width"]
    out["width_vs_classical"] = out["width"].to_numpy() / base.reindex(
        pd.MultiIndex.from_frame(out[["judge", "n_pairs", "n_labels"]])).to_numpy()
    return out
