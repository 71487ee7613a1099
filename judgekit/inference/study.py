"""What if only some of the labels had been collected? Random label subsets of fully labelled data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit._stamp import stamped
from judgekit.inference import _fit, _prepare

__all__ = ["label_subset_study"]


@stamped
def label_subset_study(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    sizes: Sequence[int] = (50, 100, 200, 400),
    reps: int = 500,
    target: str = "win",
    models: Any = None,
    prediction: str = "auto",
    estimand: str = "pairs",
    ci: float = 0.95,
    small_sample: bool = True,
    seed: int = 0,
) -> pd.DataFrame:
    """Hide all but ``n`` random labels, estimate, compare with the truth from all the labels.

    For every size ``n`` and ``reps`` random subsets of the labelled pairs, computes the
    classical, judge-only, PPI and PPI++ intervals (CLT) from the ``n`` labels and the judge's
    predictions on every labelled pair, and checks them against the rate computed from all the
    labels. Pairs without a label are left out (they are not part of the truth).

    Parameters
    ----------
    judgments, pairs : DataFrame
        Fully labelled pairs (the labelled ones are used) and the judge outputs.
    sizes : sequence of int
        Numbers of labels to keep (each below the number of labelled pairs).
    reps : int
        Random subsets per size.
    target, models, prediction
        As in :func:`judgekit.ppi_win_rates`.
    estimand : {"pairs", "population"}, default "pairs"
        ``"pairs"``: intervals for the rate on these pairs, the quantity the all-label truth is.
        ``"population"`` intervals are wider (they also cover sampling the pairs) and
        over-cover this truth when ``n`` is a large share of the pairs.
    ci : float
        Nominal coverage.
    small_sample : bool, default True
        As in :func:`judgekit.ppi_win_rates`.
    seed : int
        Seeds the subsets.

    Returns
    -------
    DataFrame
        One row per (judge, model, n_labels, method): ``truth``, ``coverage`` (share of subsets
        whose interval holds the truth), ``width`` (mean interval width), ``width_vs_classical``,
        ``bias`` (mean estimate − truth), ``rmse``, ``n_pairs``, ``reps``.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(1000, accuracy=0.8, seed=0)
    >>> s = jk.label_subset_study(judgments, pairs, sizes=[100], reps=50)
    >>> s[["n_labels", "method", "reps"]].head(2)
       n_labels     method  reps
    0       100  classical    50
    1       100  judge_only    50
    """
    _prepare.check_options(target, prediction, estimand)
    j, p = _prepare.load_tables(judgments, pairs)
    p = p[p["label"].notna()].reset_index(drop=True)
    j = j[j["pair_id"].isin(p["pair_id"])]
    units = _prepare.build_units(j, p, target=target, models=models, prediction=prediction,
                                 strata=None, sampling_prob=None, cluster="pair", estimand=estimand)
    rng = np.random.default_rng(seed)
    rows = []
    for u in units:
        M = len(u.y)
        truth = float(np.mean(u.y))
        for n in sizes:
            if not 2 <= n < M:
                raise ValueError(f"sizes: {n} labels is not between 2 and the {M} labelled pairs "
                                 f"of judge {u.judge!r}")
            res: dict[str, list[tuple[float, float, float, float]]] = {}
            for _ in range(reps):
                ys = np.full(M, np.nan)
                idx = rng.choice(M, n, replace=False)
                ys[idx] = u.y[idx]
                for method, quad in _fit.quick_intervals(ys, u.f, estimand, ci=ci,
                                                         small_sample=small_sample).items():
                    res.setdefault(method, []).append(quad)
            for method, values in res.items():
                theta, _, low, high = np.asarray(values).T
                rows.append({"judge": u.judge, "model": u.model, "n_labels": n, "method": method,
                             "truth": truth,
                             "coverage": float(np.mean((low <= truth) & (truth <= high))),
                             "width": float(np.mean(high - low)),
                             "bias": float(np.mean(theta) - truth),
                             "rmse": float(np.sqrt(np.mean((theta - truth) ** 2))),
                             "n_pairs": M, "reps": reps})
    out = pd.DataFrame(rows)
    key = ["judge", "model", "n_labels"]
    base = out[out["method"] == "classical"].set_index(key)["width"]
    idx = pd.MultiIndex.from_frame(out[key].astype(object))
    out.insert(out.columns.get_loc("bias"), "width_vs_classical",
               out["width"].to_numpy() / base.reindex(idx).to_numpy())
    return out
