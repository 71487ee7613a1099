"""Rank agreement of win-rate metrics with Chatbot Arena Elo."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgekit import _bootstrap
from judgekit._stamp import stamped

__all__ = ["ARENA_ELO", "arena_correlation"]

#: The Arena column Dubois et al. (2024) correlate with (``jk.load_table("arena_elo")``).
ARENA_ELO = "Arena Elo [Feb 2, 2024]"


@stamped
def arena_correlation(
    leaderboard: pd.DataFrame,
    arena: pd.DataFrame | None = None,
    *,
    metrics: Sequence[str] = ("win_rate", "lc_win_rate"),
    elo: str = ARENA_ELO,
    model: str = "model",
    common: bool = True,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Spearman correlation of each metric with Arena Elo, over the models both rank.

    Parameters
    ----------
    leaderboard : DataFrame
        One row per model with the ``metrics`` columns (e.g. :func:`judgekit.lc_win_rates`, or
        ``jk.load_table("arena_elo")`` itself, whose ``"AlpacaEval 2.0"`` and
        ``"LC AlpacaEval 2.0"`` columns are the published metrics).
    arena : DataFrame, optional
        A table with ``model`` and the ``elo`` column (default: ``leaderboard`` holds it).
    metrics : sequence of str
        Metric columns to correlate.
    elo : str
        The Elo column (default the February 2024 Arena, as in the paper).
    model : str
        The model-name column of both tables.
    common : bool
        Use the same models for every metric (those with Elo and all metrics), as the paper does;
        otherwise each metric uses every model it has.
    n_boot : int
        Bootstrap resamples of the models for the percentile interval (0 skips it).
    ci : float
        Coverage of the interval.
    seed : int
        Seeds the bootstrap.

    Returns
    -------
    DataFrame
        One row per metric: ``metric``, ``estimate`` (Spearman ρ), ``ci_low``, ``ci_high``, ``n``
        (models), ``p_value`` (scipy's test of ρ = 0), ``models`` (the models used, ";"-joined).

    Notes
    -----
    Spearman rather than Pearson because win rates relate to Elo through a logistic, not a line.
    Dubois et al. (2024) report 0.94 → 0.98 for AlpacaEval → LC AlpacaEval (Fig. 1); from the
    published columns on the 37 models that have both, the values are 0.93 and 0.975.

    References
    ----------
    Dubois, Galambosi, Liang, Hashimoto (2024). Length-Controlled AlpacaEval, §4.2, Fig. 1.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> lb = pd.DataFrame({"model": list("abcd"), "win_rate": [1, 2, 3, 4],
    ...                    "Arena Elo [Feb 2, 2024]": [1000, 1010, 1030, 1020]})
    >>> jk.arena_correlation(lb, metrics=["win_rate"], n_boot=0)[["metric", "estimate", "n"]]
         metric  estimate  n
    0  win_rate       0.8  4
    """
    if arena is None:
        table = leaderboard
    else:
        if model not in arena.columns or elo not in arena.columns:
            raise ValueError(f"arena needs the columns {model!r} and {elo!r}")
        table = leaderboard.drop(columns=[elo], errors="ignore").merge(
            arena[[model, elo]], on=model, how="inner")
    missing = [c for c in (model, elo, *metrics) if c not in table.columns]
    if missing:
        raise ValueError(f"columns {missing} are missing; have {list(table.columns)}")
    if "judge" in table.columns and table["judge"].nunique() > 1:
        raise ValueError("leaderboard holds several judges; pass one judge's rows")
    if common:
        table = table.dropna(subset=[elo, *metrics])
    from scipy import stats  # here, not at import: scipy.stats takes ~0.6 s to import

    n_boot = _bootstrap.check_args(n_boot, ci)
    gen = _bootstrap.rng(seed)
    rows = []
    for metric in metrics:
        t = table.dropna(subset=[elo, metric])
        x = t[metric].to_numpy(dtype=float)
        e = t[elo].to_numpy(dtype=float)
        if len(t) < 3:
            raise ValueError(f"{metric}: only {len(t)} models have both the metric and {elo!r}")
        res = stats.spearmanr(x, e)
        lo = hi = np.nan
        if n_boot:
            idx = _bootstrap.indices(len(t), n_boot, gen)
            # Spearman's rho of each resample: Pearson's r of its (average) ranks, all at once;
            # a resample with no spread in either variable has none and is left out
            boots = _row_pearson(stats.rankdata(x[idx], axis=1), stats.rankdata(e[idx], axis=1))
            lo, hi, _ = _bootstrap.interval(boots, ci, min_finite=1e-12)
        rows.append({"metric": metric, "estimate": float(res.statistic), "ci_low": float(lo), "ci_high": float(hi),
                     "n": len(t), "p_value": float(res.pvalue), "models": ";".join(map(str, t[model]))})
    return pd.DataFrame(rows)


def _row_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson's r of each row of ``a`` with the same row of ``b`` (NaN where a row is constant)."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
