"""Rank judges (or templates within a model) by a report-card metric, like Wei et al.'s Tables
7-14."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgekit._stamp import stamped
from judgekit.metrics._prepare import as_list as _as_list

__all__ = ["rank_judges"]

_CARD_META = ("n_pairs", "n_labelled", "n_judgments", "denoised")


@stamped
def rank_judges(
    card: pd.DataFrame,
    within: str | Sequence[str] | None = None,
    *,
    by_metric: str = "acc_both",
    columns: Sequence[str] = ("acc_both", "acc_random", "position_bias", "length_bias"),
    ascending: bool = False,
    top: int | None = None,
    as_text: bool = False,
    digits: int = 3,
) -> pd.DataFrame:
    """Rank the rows of a report card by one metric, overall or within groups.

    Parameters
    ----------
    card : DataFrame
        The output of :func:`judgekit.report_card` (one row per judge, e.g. ``by=["model",
        "template"]``).
    within : str or list of str, optional
        Rank separately within these key columns (e.g. ``"model"`` for "templates per model",
        Wei et al.'s Tables 7-9 and 11-13); None ranks all rows together (Tables 10 and 14).
    by_metric : str, default "acc_both"
        The ranking metric (Wei et al. rank by Acc_both).
    columns : sequence of str
        Metrics to show.
    ascending : bool, default False
        Rank low values first (e.g. for ``"invalid_rate"``).
    top : int, optional
        Keep the first ``top`` rows of each ranking (Wei et al. show five).
    as_text : bool, default False
        Return each metric as text "estimate (std)" when the card has ``_std`` columns (splits),
        else "estimate [ci_low, ci_high]", rounded to ``digits``: a table to print.
    digits : int, default 3
        Rounding for ``as_text``.

    Returns
    -------
    DataFrame
        The ``within`` columns, ``rank`` (1 = best, ties share the better rank), the card's other
        key columns, then each metric with its ``_std`` or ``_ci_low``/``_ci_high`` columns (or
        one text column per metric with ``as_text``). Rows with a NaN ranking metric come last,
        unranked.

    References
    ----------
    Wei et al. (2024), appendix A.3, Tables 7-14.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(300, seed=0)
    >>> runs = [jk.sim.simulate_judgments(pairs, accuracy=acc, position_bias=pb, repeats=3, flip_q=0.05,
    ...                               judge_name=f"{m}/{t}", seed=s).judgments.assign(model=m, template=t)
    ...         for s, (m, t, acc, pb) in enumerate([("gpt", "zheng", 0.8, 0.2),
    ...                                              ("gpt", "wang", 0.7, 1.0),
    ...                                              ("llama", "zheng", 0.6, 0.5)])]
    >>> card = jk.report_card(pd.concat(runs), pairs, by=["model", "template"], splits=3)
    >>> jk.rank_judges(card, within="model", columns=["acc_both"], as_text=True)
       model  rank template       acc_both
    0    gpt     1    zheng  0.629 (0.035)
    1    gpt     2     wang  0.488 (0.061)
    2  llama     1    zheng  0.433 (0.018)
    """
    if by_metric not in card.columns:
        raise ValueError(f"card has no column {by_metric!r}")
    columns = list(dict.fromkeys([by_metric, *columns]))
    missing = [c for c in columns if c not in card.columns]
    if missing:
        raise ValueError(f"card has no column(s) {missing}")
    within_cols = _as_list(within)
    metric_like = set()
    for c in card.columns:
        for suffix in ("_ci_low", "_ci_high", "_std"):
            if c.endswith(suffix) and c[: -len(suffix)] in card.columns:
                metric_like.update({c, c[: -len(suffix)]})
    keys = [c for c in card.columns if c not in metric_like and c not in _CARD_META]
    bad = [c for c in within_cols if c not in keys]
    if bad:
        raise ValueError(f"within: {bad} are not key columns of the card ({keys})")
    others = [c for c in keys if c not in within_cols]
    df = card.copy()
    sort_value = df[by_metric] if ascending else -df[by_metric]
    df["_sort"] = sort_value
    if within_cols:
        df["rank"] = df.groupby(within_cols, dropna=False)["_sort"].rank(method="min")
    else:
        df["rank"] = df["_sort"].rank(method="min")
    df = df.sort_values([*within_cols, "_sort", *others], na_position="last", kind="stable")
    if top is not None:
        df = df[df["rank"].isna() | (df["rank"] <= top)] if top > 0 else df.iloc[:0]
        if within_cols:
            df = df.groupby(within_cols, dropna=False, sort=False).head(top)
        else:
            df = df.head(top)
    df["rank"] = df["rank"].astype("Int64")
    has_std = all(f"{c}_std" in df.columns for c in columns)
    out = df[[*within_cols, "rank", *others]].copy()
    for c in columns:
        if as_text:
            est = df[c].to_numpy(float)
            if has_std:
                std = df[f"{c}_std"].to_numpy(float)
                text = [f"{e:.{digits}f} ({s:.{digits}f})" if np.isfinite(e) else "NaN"
                        for e, s in zip(est, std)]
            else:
                lo, hi = df[f"{c}_ci_low"].to_numpy(float), df[f"{c}_ci_high"].to_numpy(float)
                text = [
                    (f"{e:.{digits}f} [{a:.{digits}f}, {b:.{digits}f}]" if np.isfinite(a)
                     else f"{e:.{digits}f}") if np.isfinite(e) else "NaN"
                    for e, a, b in zip(est, lo, hi)
                ]
            out[c] = text
        else:
            out[c] = df[c]
            for suffix in ("_std",) if has_std else ("_ci_low", "_ci_high"):
                if f"{c}{suffix}" in df.columns:
                    out[f"{c}{suffix}"] = df[f"{c}{suffix}"]
    return out.reset_index(drop=True)
