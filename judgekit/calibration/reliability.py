"""Reliability of P(first shown) when each item was judged in one arrangement only (e.g. AlpacaEval).

Without swapped arrangements NOA cannot be fitted, but two diagnostics remain. The reliability
table bins the judge's probability that the first-shown response wins and compares it with how
often the first-shown response was chosen by the judge's own (sampled) verdict. And when the
display order was randomised independently of content, an unbiased judge's logit of P(first) is
symmetric around 0, so its median estimates a position shift in logit units.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.special import logit, ndtri

from judgekit import _bootstrap
from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.exceptions import MetricWarning
from judgekit.schema import validate_judgments

__all__ = ["first_position_reliability", "first_position_summary"]


def _first(judgments: pd.DataFrame, what: str) -> tuple[pd.DataFrame, list[str]]:
    """Judgments with a probability, P(first) and the first-shown choice; and every judge.

    An empty table is an error; a judge without any probability warns (its rows are NaN or
    absent, as the caller says)."""
    df = validate_judgments(judgments)
    if df.empty:
        raise ValueError("judgments: the table is empty; there is nothing to measure")
    judges = sorted(pd.unique(df["judge"]))
    df = df[df["p_a"].notna()].copy()
    without = sorted(set(judges) - set(pd.unique(df["judge"])))
    if without:
        warnings.warn(f"{what} is NaN for judge(s) {without}: none of their judgments has a "
                      "probability p_a (e.g. every call failed)", MetricWarning, stacklevel=caller_level())
    ab = (df["order"] == "ab").to_numpy()
    df["p_first"] = np.where(ab, df["p_a"], 1.0 - df["p_a"])
    is_a = (df["verdict"] == "a").to_numpy(dtype=bool)
    is_b = (df["verdict"] == "b").to_numpy(dtype=bool)
    # the first-shown response is a in order "ab" and b in order "ba"
    df["first_chosen"] = np.where(np.where(ab, is_a, is_b), 1.0, np.where(np.where(ab, is_b, is_a), 0.0, np.nan))
    return df, without


@stamped
def first_position_reliability(
    judgments: pd.DataFrame, n_bins: int = 10, *, strategy: str = "uniform", ci: float = 0.95
) -> pd.DataFrame:
    """Binned reliability of the judge's P(first shown wins) against its verdicts.

    Parameters
    ----------
    judgments : DataFrame
        Judgments with ``p_a`` and a verdict; any arrangements (one per item is enough).
    n_bins : int
        Number of bins of P(first).
    strategy : {"uniform", "quantile"}
        Equal-width bins on [0, 1], or bins holding equal numbers of judgments.
    ci : float
        Coverage of the Wilson intervals of the observed rate.

    Returns
    -------
    DataFrame
        Per judge and bin: ``judge``, ``bin``, ``p_low``, ``p_high``, ``mean_predicted`` (mean
        P(first) in the bin), ``metric`` ("first_chosen_rate"), ``estimate`` (share of verdicts
        choosing the first-shown response; ties and invalid verdicts left out), ``ci_low``,
        ``ci_high``, ``n``. A well-calibrated judge lies on the diagonal: where the verdict is
        sampled from the same distribution (temperature 1), departures measure how far the
        logprobs are from the judge's own choices; at temperature 0 the verdict is the argmax and
        the curve is a step.

    Examples
    --------
    >>> import judgekit as jk
    >>> _, j, _ = jk.sim.simulate_judgments(2000, position_bias=0.5, seed=0)  # verdicts drawn from p
    >>> r = jk.first_position_reliability(j, n_bins=5)
    >>> r["n"].tolist()
    [1010, 487, 459, 534, 1510]
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    if strategy not in ("uniform", "quantile"):
        raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")
    df, _ = _first(judgments, "the reliability table")
    rows = []
    for judge, d in df.groupby("judge", sort=True):
        d = d[d["first_chosen"].notna()]
        if d.empty:
            warnings.warn(f"the reliability table has no rows for judge {judge!r}: none of its "
                          "judgments with a probability has a verdict for a shown response",
                          MetricWarning, stacklevel=caller_level())
        p = d["p_first"].to_numpy()
        if strategy == "uniform":
            edges = np.linspace(0.0, 1.0, n_bins + 1)
        else:
            edges = np.unique(np.quantile(p, np.linspace(0, 1, n_bins + 1)))
            edges[0], edges[-1] = 0.0, 1.0
        b = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, len(edges) - 2)
        y = d["first_chosen"].to_numpy()
        for k in range(len(edges) - 1):
            sel = b == k
            n = int(sel.sum())
            if n == 0:
                continue
            hits = int(y[sel].sum())
            lo, hi = _wilson(hits, n, ci)
            rows.append({"judge": judge, "bin": k, "p_low": edges[k], "p_high": edges[k + 1],
                         "mean_predicted": float(p[sel].mean()), "metric": "first_chosen_rate",
                         "estimate": hits / n, "ci_low": float(lo), "ci_high": float(hi), "n": n})
    return pd.DataFrame(rows, columns=["judge", "bin", "p_low", "p_high", "mean_predicted", "metric",
                                       "estimate", "ci_low", "ci_high", "n"])


def _summary_stats(w: np.ndarray, p: np.ndarray, y0: np.ndarray, ok: np.ndarray, order: np.ndarray,
           lg_sorted: np.ndarray, b: np.ndarray, n_bins: int) -> dict[str, np.ndarray]:
    """Statistics for rows of observation weights w (B x n)."""
    wv = w * ok
    n_w, n_v = w.sum(axis=1), wv.sum(axis=1)
    cum = np.cumsum(w[:, order], axis=1)
    median = lg_sorted[np.argmax(cum >= n_w[:, None] / 2, axis=1)]
    ece = np.zeros(len(w))
    for k in range(n_bins):
        sel = (b == k) & ok
        nk = wv[:, sel].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = np.abs((wv[:, sel] @ y0[sel]) / nk - (wv[:, sel] @ p[sel]) / nk)
        ece += np.where(nk > 0, nk * np.nan_to_num(gap), 0.0)
    return {
        "mean_p_first": (w @ p) / n_w,
        "first_chosen_rate": (wv @ y0) / n_v,
        "logit_shift": median,
        "brier": (wv @ np.where(ok, (y0 - p) ** 2, 0.0)) / n_v,
        "ece": ece / n_v,
    }


@stamped
def first_position_summary(
    judgments: pd.DataFrame,
    *,
    cluster: str | None = None,
    n_bins: int = 10,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Position preference and calibration of P(first shown), per judge, from single arrangements.

    Parameters
    ----------
    judgments : DataFrame
        Judgments with ``p_a``; the display order should have been randomised independently of
        the content for ``mean_p_first`` and ``logit_shift`` to measure a position bias.
    cluster : str, optional
        Column whose values are resampled together in the bootstrap (e.g. the instruction, when
        every model shares the order of an instruction as in AlpacaEval); default ``pair_id``.
    n_bins : int
        Bins for the expected calibration error.
    n_boot, ci, seed
        Percentile cluster bootstrap.

    Returns
    -------
    DataFrame
        ``judge``, ``metric``, ``estimate``, ``ci_low``, ``ci_high``, ``n``. Metrics:
        ``mean_p_first`` (0.5 for no position preference), ``first_chosen_rate`` (share of
        verdicts for the first-shown response), ``logit_shift`` (median of logit P(first): the
        centre of symmetry, in logits, of the judge's P(first) under random order), ``brier``
        (mean squared difference between the verdict and P(first)) and ``ece`` (expected
        calibration error over ``n_bins`` equal-width bins).

    Examples
    --------
    >>> import judgekit as jk
    >>> _, j, _ = jk.sim.simulate_judgments(400, position_bias=1.0, quality_scale=1.0, seed=0)
    >>> s = jk.first_position_summary(j, n_boot=0).set_index("metric")
    >>> round(float(s.loc["logit_shift", "estimate"]), 1)
    1.0
    """
    n_boot = _bootstrap.check_args(n_boot, ci)
    df, without = _first(judgments, "first_position_summary")
    cluster = cluster or "pair_id"
    if cluster not in df.columns:
        raise ValueError(f"judgments: no column {cluster!r} to cluster the bootstrap on")
    rng = np.random.default_rng(seed)
    rows = []
    for judge, d in df.groupby("judge", sort=True):
        p = d["p_first"].to_numpy()
        y = d["first_chosen"].to_numpy()
        lg = logit(np.clip(p, 1e-12, 1 - 1e-12))
        order = np.argsort(lg)
        lg_sorted = lg[order]
        codes, uniq = pd.factorize(d[cluster])
        edges = np.linspace(0, 1, n_bins + 1)
        b = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1)
        ok = ~np.isnan(y)
        y0 = np.where(ok, y, 0.0)
        args = (p, y0, ok, order, lg_sorted, b, n_bins)

        if n_boot:
            _bootstrap.warn_few_clusters(len(uniq), f"first_position_summary, judge {judge!r}",
                                         unit=f"clusters ({cluster})")
        if not ok.any():
            warnings.warn(f"first_chosen_rate, brier and ece are NaN for judge {judge!r}: none of "
                          "its judgments with a probability has a verdict for a shown response",
                          MetricWarning, stacklevel=caller_level())
        with np.errstate(invalid="ignore", divide="ignore"):
            est = {k: float(v[0]) for k, v in _summary_stats(np.ones((1, len(p))), *args).items()}
        boot: dict[str, list[np.ndarray]] = {k: [] for k in est}
        # resamples of the clusters, in chunks of at most 50 (each is a B x n weight matrix)
        for _, counts in _bootstrap.iter_counts(len(uniq), n_boot, rng, dtype=np.float64,
                                                max_cells=50 * len(uniq)):
            with np.errstate(invalid="ignore", divide="ignore"):
                stats = _summary_stats(counts[:, codes], *args)
            for k, v in stats.items():
                boot[k].append(v)
        for metric, value in est.items():
            if n_boot and np.isfinite(value):
                draws = np.concatenate(boot[metric])
                draws = draws[np.isfinite(draws)]
                lo, hi = np.quantile(draws, [(1 - ci) / 2, (1 + ci) / 2]) if len(draws) else (np.nan,) * 2
            else:
                lo = hi = np.nan
            n = int(ok.sum()) if metric in ("first_chosen_rate", "brier", "ece") else len(p)
            rows.append({"judge": judge, "metric": metric, "estimate": value, "ci_low": float(lo),
                         "ci_high": float(hi), "n": n})
    rows += [{"judge": judge, "metric": metric, "estimate": np.nan, "ci_low": np.nan, "ci_high": np.nan,
              "n": 0} for judge in without
             for metric in ("mean_p_first", "first_chosen_rate", "logit_shift", "brier", "ece")]
    out = pd.DataFrame(rows, columns=["judge", "metric", "estimate", "ci_low", "ci_high", "n"])
    return out.sort_values("judge", kind="stable").reset_index(drop=True) if without else out


def _wilson(hits: int, n: int, ci: float) -> tuple[float, float]:
    """The Wilson score interval of ``hits`` of ``n``, by the very operations of statsmodels'
    ``proportion_confint(hits, n, alpha=1 - ci, method="wilson")`` (so the same floats, which a
    test checks), without importing statsmodels and scipy.stats (about 1 s, the larger part of
    ``judgekit audit``'s analysis time on a small file)."""
    count, nobs = float(hits), float(n)
    q = count / nobs
    crit = -ndtri((1 - ci) / 2.0)  # scipy.stats.norm.isf
    crit2 = crit**2
    denom = 1 + crit2 / nobs
    center = (q + crit2 / (2 * nobs)) / denom
    dist = crit * np.sqrt(q * (1.0 - q) / nobs + crit2 / (4.0 * nobs**2))
    dist /= denom
    return float(np.clip(center - dist, 0, 1)), float(np.clip(center + dist, 0, 1))
