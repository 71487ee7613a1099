"""How consistent a judge is across the arrangements of IDs and positions (CalibraEval's metrics).

Fleiss' κ over the arrangements' choices, ICC(2,k) and ICC(3,k) over P(o1) across arrangements,
RStd (spread of the per-class recalls) and accuracy, each with a percentile cluster bootstrap over
pairs.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgekit import _bootstrap
from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.calibration.arrangements import ARRANGEMENTS, _add_arrangements
from judgekit.exceptions import MetricWarning
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["icc_two_way", "selection_bias_metrics"]

_CATEGORIES = ("a", "b", "tie")


def icc_two_way(ratings: np.ndarray, weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Shrout & Fleiss (1979) intraclass correlations from the two-way ANOVA of a targets x raters table.

    Parameters
    ----------
    ratings : array of shape (n, k)
        One row per target (here: pair), one column per rater (here: arrangement); no NaN.
    weights : array of shape (B, n), optional
        Non-negative integer multiplicities of the targets, one row per bootstrap resample
        (a target drawn twice counts as two targets). Without it, every target counts once.

    Returns
    -------
    dict
        ``"icc21"``, ``"icc2k"``, ``"icc31"``, ``"icc3k"`` (floats, or arrays of length B with
        ``weights``).

    Notes
    -----
    With mean squares for targets (BMS), raters (JMS) and residual (EMS) of the two-way
    ANOVA without replication,

    * ICC(2,1) = (BMS − EMS) / (BMS + (k − 1) EMS + k (JMS − EMS) / n)
    * ICC(2,k) = (BMS − EMS) / (BMS + (JMS − EMS) / n)
    * ICC(3,1) = (BMS − EMS) / (BMS + (k − 1) EMS)
    * ICC(3,k) = (BMS − EMS) / BMS

    ICC(2, ·) counts systematic differences between raters as disagreement (absolute agreement,
    raters random); ICC(3, ·) does not (consistency, raters fixed). CalibraEval's appendix prints
    one-way-looking formulas in σ_B² and σ_W²; these are the standard forms (its code uses
    pingouin, which computes the same).

    References
    ----------
    Shrout, P. E. & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
    reliability. Psychological Bulletin 86(2), 420-428, Table 2.

    Examples
    --------
    Shrout & Fleiss's Table 2 (6 targets, 4 judges):

    >>> import numpy as np
    >>> x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8],
    ...               [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])
    >>> {k: round(float(v), 2) for k, v in icc_two_way(x).items()}
    {'icc21': 0.29, 'icc2k': 0.62, 'icc31': 0.71, 'icc3k': 0.91}
    """
    x = np.asarray(ratings, dtype=float)
    if x.ndim != 2 or x.shape[1] < 2 or x.shape[0] < 2:
        raise ValueError(f"ratings must be an n x k table with n >= 2 and k >= 2, got {x.shape}")
    if np.isnan(x).any():
        raise ValueError("ratings contain NaN; drop incomplete targets first")
    n, k = x.shape
    c = np.ones((1, n)) if weights is None else np.atleast_2d(np.asarray(weights, dtype=float))
    if c.shape[1] != n:
        raise ValueError(f"weights must have {n} columns, got {c.shape}")
    N = c.sum(axis=1)
    row_sum = x.sum(axis=1)
    grand = (c @ row_sum) / (N * k)
    col_mean = (c @ x) / N[:, None]
    ss_rows = (c @ (row_sum**2)) / k - N * k * grand**2
    ss_cols = N * ((col_mean - grand[:, None]) ** 2).sum(axis=1)
    ss_total = c @ (x**2).sum(axis=1) - N * k * grand**2
    ss_err = ss_total - ss_rows - ss_cols
    with np.errstate(divide="ignore", invalid="ignore"):
        bms = ss_rows / (N - 1)
        jms = ss_cols / (k - 1)
        ems = ss_err / ((N - 1) * (k - 1))
        out = {
            "icc21": (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / N),
            "icc2k": (bms - ems) / (bms + (jms - ems) / N),
            "icc31": (bms - ems) / (bms + (k - 1) * ems),
            "icc3k": (bms - ems) / bms,
        }
    if weights is None:
        return {key: float(v[0]) for key, v in out.items()}
    return out


def _kappa_weighted(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Fleiss' κ from per-target category counts, for each row of target multiplicities."""
    k = counts.sum(axis=1)[0]
    p_i = ((counts**2).sum(axis=1) - k) / (k * (k - 1))
    N = weights.sum(axis=1)
    p_bar = (weights @ p_i) / N
    p_j = (weights @ counts) / (N[:, None] * k)
    p_e = (p_j**2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (p_bar - p_e) / (1.0 - p_e)


def _choices(p: np.ndarray) -> np.ndarray:
    return np.where(p > 0.5, "a", np.where(p < 0.5, "b", "tie"))


def _recall_terms(choice: np.ndarray, label: np.ndarray) -> dict[str, np.ndarray]:
    """Per-pair indicators for recall of a, recall of b and accuracy (per arrangement column)."""
    is_a = (label == "a")[:, None]
    is_b = (label == "b")[:, None]
    return {
        "hit_a": (choice == "a") & is_a,
        "hit_b": (choice == "b") & is_b,
        "is_a": np.broadcast_to(is_a, choice.shape),
        "is_b": np.broadcast_to(is_b, choice.shape),
    }


def _rstd_acc(terms: dict[str, np.ndarray], w: np.ndarray, ddof: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """RStd and accuracy, each averaged over arrangements, for rows of multiplicities w."""
    with np.errstate(divide="ignore", invalid="ignore"):
        n_a = w @ terms["is_a"]
        n_b = w @ terms["is_b"]
        r_a = (w @ terms["hit_a"]) / n_a
        r_b = (w @ terms["hit_b"]) / n_b
        # the standard deviation of two recalls: |r_a − r_b| / √2 (ddof 1), / 2 (ddof 0)
        rstd = np.abs(r_a - r_b) / (np.sqrt(2.0) if ddof == 1 else 2.0)
        acc = (w @ terms["hit_a"] + w @ terms["hit_b"]) / (n_a + n_b)
    return rstd.mean(axis=1), acc.mean(axis=1)


def _warn(judge: str, metric: str, reason: str) -> None:
    verb = "are" if " and " in metric else "is"
    warnings.warn(f"{metric} {verb} NaN for judge {judge!r}: {reason}", MetricWarning, stacklevel=caller_level())


def _interval(boot: np.ndarray, ci: float) -> tuple[float, float]:
    boot = boot[np.isfinite(boot)]
    if boot.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.quantile(boot, [(1 - ci) / 2, (1 + ci) / 2])
    return float(lo), float(hi)


@stamped
def selection_bias_metrics(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    prob: str = "p_a",
    *,
    arrangements: Sequence[str] = ("X0", "X1", "X2", "X3"),
    choices: str = "prob",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    rstd_ddof: int = 1,
) -> pd.DataFrame:
    """Consistency of each judge across option-ID and position arrangements (CalibraEval's metrics).

    Parameters
    ----------
    judgments : DataFrame
        Judgments with ``id_swap``, covering the ``arrangements`` for some pairs (see
        :func:`judgekit.with_arrangements`). Pairs missing one of them, or whose probability is
        missing there, are left out (``n`` counts the pairs used).
    pairs : DataFrame, optional
        With human labels: adds RStd and accuracy.
    prob : {"p_a", "p_a_calibrated"}
        Which probability of response a to read. Repeats are averaged.
    arrangements : sequence of {"X0", "X1", "X2", "X3"}
        The arrangements compared (the "raters"); CalibraEval's code uses X0, X1, X2.
    choices : {"prob", "verdict"}
        Binary choices for κ, RStd and accuracy: from ``prob`` (> 0.5 is a, < 0.5 is b, exactly
        0.5 is a tie; the paper's argmax) or from the verdict column (``verdict`` for ``p_a``,
        ``verdict_calibrated`` for ``p_a_calibrated``; first repeat).
    n_boot : int
        Percentile cluster-bootstrap resamples of pairs (0: no intervals, ``ci_low``/``ci_high``
        NaN).
    ci : float
        Coverage of the intervals.
    seed : int
        Seeds the bootstrap.
    rstd_ddof : {1, 0}
        RStd as the sample standard deviation of the two recalls (1, the paper's appendix and
        the default) or the population one (0, what CalibraEval's code computes: √2 smaller).

    Returns
    -------
    DataFrame
        One row per judge and metric: ``judge``, ``metric`` (``fleiss_kappa``, ``icc2k``,
        ``icc3k``, ``all_agree``, and with labels ``rstd``, ``accuracy``), ``estimate``,
        ``ci_low``, ``ci_high``, ``n`` (pairs), ``prob``, ``arrangements``.

    Notes
    -----
    For each pair, P(o1) in arrangement X_j is P(response a), so an unbiased judge gives the same
    value in every arrangement. Fleiss' κ (statsmodels) treats the arrangements as raters of the
    choice; ICC(2,k) and ICC(3,k) (see :func:`icc_two_way`) treat them as raters of P(o1).
    ``all_agree`` is the share of pairs whose choice is identical in every arrangement. For pairs
    labelled a or b, the recall of each gold class is computed per arrangement; RStd is the
    sample standard deviation of the two recalls (|r_a − r_b| / √2), and RStd and accuracy are
    averaged over arrangements, as in the paper. CalibraEval reports these in percent and its
    code uses the population standard deviation (|r_a − r_b| / 2, ``rstd_ddof=0``); judgekit
    reports fractions.

    Nothing is silent: a judge without two pairs in all ``arrangements`` while others have them,
    a κ over choices that all fall in one category, and RStd/accuracy without two pairs
    labelled a or b are NaN with a :class:`judgekit.exceptions.MetricWarning` naming the judge
    and the reason; intervals resampled from fewer than five pairs warn too. An empty table, or
    no judge with the arrangements, is a ValueError.

    References
    ----------
    Li et al. (2024), CalibraEval, §4.1 and Appendix B.2. Fleiss (1971), Measuring nominal scale
    agreement among many raters. Shrout & Fleiss (1979).

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, j, _ = jk.sim.simulate_judgments(300, token_bias=1.0, id_swap=(False, True), seed=0)
    >>> m = jk.selection_bias_metrics(j, pairs, n_boot=0)
    >>> m[["metric", "n"]].to_dict("list")
    {'metric': ['fleiss_kappa', 'icc2k', 'icc3k', 'all_agree', 'rstd', 'accuracy'], 'n': [300, 300, 300, 300, 300, 300]}
    """
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa  # slow import

    arrangements = tuple(arrangements)
    unknown = set(arrangements) - set(ARRANGEMENTS)
    if unknown or len(arrangements) < 2 or len(set(arrangements)) != len(arrangements):
        raise ValueError(f"arrangements must be at least two distinct of X0..X3, got {arrangements}")
    if choices not in ("prob", "verdict"):
        raise ValueError(f"choices must be 'prob' or 'verdict', got {choices!r}")
    verdict_col = "verdict" if prob == "p_a" else "verdict_calibrated"
    need = (prob,) if prob != "p_a" else ()
    if choices == "verdict" and verdict_col != "verdict":
        need = (*need, verdict_col)
    if rstd_ddof not in (0, 1):
        raise ValueError(f"rstd_ddof must be 0 or 1, got {rstd_ddof!r}")
    n_boot = _bootstrap.check_args(n_boot, ci)
    df = _add_arrangements(validate_judgments(judgments, pairs, require=need), prob)
    if df.empty:
        raise ValueError("judgments: the table is empty; there is nothing to measure")
    labels = None
    if pairs is not None:
        labels = validate_pairs(pairs).set_index("pair_id")["label"]
    all_judges = sorted(pd.unique(df["judge"]))
    df = df[df["arrangement"].isin(arrangements)]
    # P(o1) = P(response a) in every arrangement
    p = df.groupby(["judge", "pair_id", "arrangement"], sort=True)[prob].mean().unstack("arrangement")
    first_verdict = None
    if choices == "verdict":
        first = df.sort_values("repeat").groupby(["judge", "pair_id", "arrangement"], sort=True)
        first_verdict = first[verdict_col].first().unstack("arrangement")
    rng = np.random.default_rng(seed)
    rows = []
    metrics = ["fleiss_kappa", "icc2k", "icc3k", "all_agree"] + (["rstd", "accuracy"] if labels is not None else [])
    judged = set(p.index.get_level_values("judge")) if len(p) else set()
    failed: dict[str, str] = {}
    for judge in all_judges:
        pj = (p.loc[judge] if judge in judged else pd.DataFrame(columns=list(arrangements)))
        pj = pj.reindex(columns=list(arrangements))
        present = [a for a in arrangements if pj[a].notna().any()]
        pj = pj.dropna()
        if len(pj) < 2:
            if not present:
                failed[judge] = (f"none of its judgments in {', '.join(arrangements)} has a "
                                 f"probability {prob!r} (e.g. every call failed)")
            else:
                failed[judge] = (f"fewer than 2 pairs have a probability in all of "
                                 f"{', '.join(arrangements)} (present: {', '.join(present)}); pass "
                                 "the arrangements the judgments cover, e.g. arrangements=('X0', 'X2')")
            continue
        x = pj.to_numpy(dtype=float)
        if first_verdict is None:
            choice = _choices(x)
        else:
            v = first_verdict.loc[judge].reindex(index=pj.index, columns=list(arrangements))
            choice = v.to_numpy(dtype=object)
            choice = np.where(pd.isna(choice), "invalid", choice).astype(str)
        n = len(x)
        categories = [c for c in (*_CATEGORIES, "invalid") if (choice == c).any()]
        counts = np.stack([(choice == c).sum(axis=1) for c in categories], axis=1).astype(float)
        estimates = {
            "fleiss_kappa": float(fleiss_kappa(aggregate_raters(choice)[0])) if len(categories) > 1
            else float("nan"),
            **{key: v for key, v in icc_two_way(x).items() if key in ("icc2k", "icc3k")},
            "all_agree": float((counts.max(axis=1) == len(arrangements)).mean()),
        }
        if len(categories) == 1:
            _warn(judge, "fleiss_kappa", f"every choice in every arrangement is {categories[0]!r}, "
                  "so agreement beyond chance is undefined")
        boots: dict[str, np.ndarray] = {}
        ns = dict.fromkeys(estimates, n)
        w = _bootstrap.counts(n, n_boot, rng) if n_boot else None
        if w is not None:
            _bootstrap.warn_few_clusters(n, f"selection_bias_metrics, judge {judge!r}")
            boots["fleiss_kappa"] = _kappa_weighted(counts, w)
            icc_b = icc_two_way(x, w)
            boots["icc2k"], boots["icc3k"] = icc_b["icc2k"], icc_b["icc3k"]
            boots["all_agree"] = (w @ (counts.max(axis=1) == len(arrangements))) / n
        if labels is not None:
            lab = labels.reindex(pj.index).to_numpy(dtype=object)
            keep = (lab == "a") | (lab == "b")
            if keep.sum() >= 2:
                terms = _recall_terms(choice[keep], lab[keep])
                rstd, acc = _rstd_acc(terms, np.ones((1, int(keep.sum()))), rstd_ddof)
                estimates["rstd"], estimates["accuracy"] = float(rstd[0]), float(acc[0])
                ns["rstd"] = ns["accuracy"] = int(keep.sum())
                if w is not None:
                    boots["rstd"], boots["accuracy"] = _rstd_acc(terms, w[:, keep], rstd_ddof)
            else:
                estimates["rstd"] = estimates["accuracy"] = float("nan")
                ns["rstd"] = ns["accuracy"] = int(keep.sum())
                _warn(judge, "rstd and accuracy", f"only {int(keep.sum())} of its {n} pairs are "
                      "labelled a or b (need 2)")
        for metric, est in estimates.items():
            lo, hi = _interval(boots[metric], ci) if metric in boots else (np.nan, np.nan)
            rows.append({
                "judge": judge, "metric": metric, "estimate": est, "ci_low": lo, "ci_high": hi,
                "n": ns[metric], "prob": prob, "arrangements": ",".join(arrangements),
            })
    if len(failed) == len(all_judges) and any("present:" in why for why in failed.values()):
        judge, why = next((j, w) for j, w in failed.items() if "present:" in w)
        raise ValueError(f"judge {judge!r}: {why}")
    for judge, why in failed.items():
        _warn(judge, "every metric", why)
        rows += [{"judge": judge, "metric": m, "estimate": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                  "n": 0, "prob": prob, "arrangements": ",".join(arrangements)} for m in metrics]
        rows.sort(key=lambda r: all_judges.index(r["judge"]))
    return pd.DataFrame(rows, columns=["judge", "metric", "estimate", "ci_low", "ci_high", "n",
                                       "prob", "arrangements"])
