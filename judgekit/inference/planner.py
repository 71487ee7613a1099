"""How many human labels, judged pairs and repeats a study needs for a given interval width."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from judgekit._deprecation import moved_method
from judgekit._stamp import stamped
from judgekit.inference import _fit, _prepare

__all__ = ["LabelPlan", "plan_bias", "plan_labels"]

_DEFAULT_LABELS = (25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000)


@dataclass
class LabelPlan:
    """What :func:`plan_labels` / :func:`plan_bias` return.

    Attributes
    ----------
    table : DataFrame
        The predicted half-width of every design on the grid, with its cost.
    answer : DataFrame
        Per design (pairs judged x repeats, and method): the fewest labels that reach the
        target half-width, and the cost.
    moments : dict
        What the prediction rests on (variances, covariance, design effect, per-call cost).
    half_width : float
        The target half-width.
    axis : str
        The column of ``table`` the plan varies: ``n_labels`` or ``n_pairs``.
    title : str
        What the plan is for, as a chart title.
    chart : altair.LayerChart
        Deprecated: ``jk.viz.plan_chart(plan)`` draws the plan (half-width against ``axis``,
        one line per design, the target as a rule); ``plan.chart`` still does, with a warning.
    """

    table: pd.DataFrame
    answer: pd.DataFrame
    moments: dict[str, float]
    half_width: float = math.nan
    axis: str = "n_labels"
    title: str = ""

    #: Moved to judgekit.viz (issue 24): the plan is tables; jk.viz.plan_chart draws it.
    chart = property(moved_method("LabelPlan.chart", "judgekit.viz.inference", "plan_chart"))


@dataclass(frozen=True)
class _Moments:
    """Per-pair moments of one unit: Var y, Cov(y, μ), Var μ (the judge's expected prediction),
    the within-pair variance of a single call, and the design effect of clustering."""

    var_y: float
    cov: float
    var_mu: float
    var_call: float
    deff: float = 1.0

    def var_f(self, calls: int) -> float:
        return self.var_mu + self.var_call / calls


def _half_width(m: _Moments, n: np.ndarray, n_pairs: np.ndarray, calls: int, z: float,
                method: str) -> np.ndarray:
    """z · sd of the estimate with n labels among n_pairs judged pairs (population estimand)."""
    n = np.asarray(n, float)
    N = np.asarray(n_pairs, float) - n
    # the intervals' small-sample form: divisor n - 1 and Student's t with n - 1 df
    df = np.maximum(n - 1, 1)
    crit = stats.t.ppf(stats.norm.cdf(z), df)
    if method == "classical":
        var = m.var_y / df
    else:
        vf = m.var_f(calls)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.clip(m.cov / ((1 + n / N) * vf), 0.0, 1.0) if vf > 0 else np.zeros_like(n)
            lam = np.where(np.isfinite(lam), lam, 0.0)
            unl = np.where(N > 0, lam**2 * vf / N, 0.0)
        var = unl + (m.var_y - 2 * lam * m.cov + lam**2 * vf) / df
    out = crit * np.sqrt(m.deff * var)
    return np.where(n < np.asarray(n_pairs, float), out, np.nan) if method != "classical" else out


def _pilot_moments(judgments: pd.DataFrame, pairs: pd.DataFrame, *, target: str, models: Any,
                   prediction: str) -> tuple[list[_Moments], int, int, int]:
    """Moments per model (one without models), the pilot's repeats per order, orders, pairs."""
    j, p = _prepare.load_tables(judgments, pairs)
    judges = j["judge"].unique()
    if len(judges) != 1:
        raise ValueError(f"judgments: the pilot must hold one judge, found {sorted(judges)}")
    units = _prepare.build_units(j, p, target=target, models=models, prediction=prediction,
                                 strata=None, sampling_prob=None, cluster="auto",
                                 estimand="population")
    x = _prepare._per_call(j, target, prediction)
    calls = pd.DataFrame({"pair_id": j["pair_id"], "cell": j["order"] + "/" + j["id_swap"].astype(str),
                          "x": x}).dropna()
    grp = calls.groupby(["pair_id", "cell"])["x"]
    k = grp.size()
    within = grp.var(ddof=1)
    repeats = int(round(k.mean())) if len(k) else 1
    orders = int(calls.groupby("pair_id")["cell"].nunique().median()) if len(calls) else 1
    var_call = float(np.nanmean(within)) if (k > 1).any() else np.nan
    out = []
    for u in units:
        lab = ~np.isnan(u.y)
        if lab.sum() < 10:
            raise ValueError(
                f"pairs: the pilot has {int(lab.sum())} labelled pairs"
                f"{' for model ' + repr(u.model) if u.model else ''}; the planner needs at least "
                "10 (or give accuracy= instead of a pilot)")
        y, f = u.y[lab], u.f[lab]
        vc = 0.0 if not np.isfinite(var_call) else var_call
        var_mu = max(float(np.var(u.f, ddof=1)) - vc / (orders * repeats), 0.0)
        fit = _fit.fit_unit(u, "population")
        iid = float(np.sum(fit.terms["ppi++"] ** 2))
        clustered = _fit.clt_se([fit], [1.0], "ppi++") ** 2
        deff = max(clustered / iid, 1.0) if iid > 0 else 1.0
        out.append(_Moments(var_y=float(np.var(y, ddof=1)),
                            cov=float(np.cov(y, f, ddof=1)[0, 1]), var_mu=var_mu,
                            var_call=vc, deff=deff))
    return out, repeats, orders, len(p)


def _assumed_moments(accuracy: float, flip_q: float, win_rate: float) -> _Moments:
    if not 0.5 <= accuracy < 1:
        raise ValueError(f"accuracy must be in [0.5, 1), got {accuracy}")
    if not 0 <= flip_q < 0.5:
        raise ValueError(f"flip_q must be in [0, 0.5), got {flip_q}")
    a_dec = (accuracy - flip_q) / (1.0 - 2.0 * flip_q)
    if not 0 <= a_dec <= 1:
        raise ValueError(f"accuracy {accuracy} is impossible with flip_q {flip_q}: a judge that "
                         "flips that often cannot agree with humans that often")
    v = win_rate * (1.0 - win_rate)
    return _Moments(var_y=v, cov=v * (2 * accuracy - 1),
                    var_mu=v * (2 * accuracy - 1) ** 2 + a_dec * (1 - a_dec) * (1 - 2 * flip_q) ** 2,
                    var_call=flip_q * (1 - flip_q))


def _cost_per_call(judge: Any, pairs: pd.DataFrame | None, cost_per_call_usd: float | None) -> float:
    if cost_per_call_usd is not None:
        return float(cost_per_call_usd)
    if judge is None or pairs is None:
        return np.nan
    from judgekit.judging import estimate_cost

    sample = pairs.head(200)
    est = estimate_cost(sample, judge, orders=("ab",), repeats=1, cache=None)
    return float(est["cost_usd_typical"].iloc[0]) / len(sample)


def _needed(fn, target: float, n_max: int) -> float:
    """The smallest integer n in [2, n_max] with fn(n) <= target (fn decreasing), else NaN."""
    lo, hi = 2, n_max
    if not fn(hi) <= target:
        return np.nan
    while lo < hi:
        mid = (lo + hi) // 2
        if fn(mid) <= target:
            hi = mid
        else:
            lo = mid + 1
    return float(lo)


@stamped
def plan_labels(
    judgments: pd.DataFrame | None = None,
    pairs: pd.DataFrame | None = None,
    *,
    half_width: float = 0.03,
    accuracy: float | None = None,
    flip_q: float = 0.0,
    win_rate: float = 0.5,
    difference: tuple[str, str] | bool = False,
    n_labels: Sequence[int] = _DEFAULT_LABELS,
    n_pairs: Sequence[int] | None = None,
    repeats: Sequence[int] | None = None,
    orders: int | None = None,
    target: str = "win",
    prediction: str = "auto",
    judge: Any = None,
    cost_per_call_usd: float | None = None,
    label_cost_usd: float | None = None,
    ci: float = 0.95,
) -> LabelPlan:
    """How many human labels and judged pairs (and repeats) give a win rate to ± ``half_width``.

    Two ways to describe the judge: a pilot (``judgments`` and ``pairs`` with labels on at least
    10 pairs, one judge), whose variances and covariance with the human outcome are measured;
    or assumed numbers (``accuracy``: its per-call agreement with humans, as
    :func:`judgekit.accuracy` reports it; ``flip_q``: the probability a repeat flips, as
    :func:`judgekit.flip_noise` reports it; ``win_rate``: a guess of the human rate).

    Parameters
    ----------
    judgments, pairs : DataFrame, optional
        The pilot.
    half_width : float, default 0.03
        The target half-width of the 95% (``ci``) interval, in rate units.
    accuracy, flip_q, win_rate : float
        The assumed judge when there is no pilot.
    difference : (str, str) or bool, default False
        Plan for the difference between two models' win rates, each getting half of the labels
        and pairs: the two model names (a pilot with ``model_a``/``model_b``), or True with an
        assumed judge (both models alike).
    n_labels : sequence of int
        Label counts shown in the table and chart.
    n_pairs : sequence of int, optional
        Judged pairs (labelled ones included); default the pilot's count, or 2,000 and 20,000.
    repeats : sequence of int, optional
        Calls per pair and order; default the pilot's (a pilot without repeats cannot say what
        more repeats would buy), or (1, 3) with an assumed judge.
    orders : int, optional
        Orders judged per pair (1 or 2); default the pilot's, or 2.
    target, prediction
        As in :func:`judgekit.ppi_win_rates`.
    judge : judgekit.Judge, optional
        Prices the judge calls with :func:`judgekit.estimate_cost` on the pilot's pairs.
    cost_per_call_usd, label_cost_usd : float, optional
        Dollars per judge call (overrides ``judge``) and per human label.
    ci : float, default 0.95
        Coverage of the planned interval.

    Returns
    -------
    LabelPlan
        ``table``: one row per (design, n_labels, method) with ``half_width``, ``meets_target``,
        ``judge_calls``, ``judge_cost_usd``, ``label_cost_usd``, ``total_cost_usd``;
        ``answer``: per design and method the labels needed (``labels_needed``, NaN when no
        label count below the pairs judged reaches the target) and the cost; ``chart``;
        ``moments``.

    Notes
    -----
    With σ²_y the variance of the human outcome, c = Cov(y, f), and σ²_f the variance of the
    judge's prediction averaged over m calls, σ²_f = σ²_μ + σ²_call / m, PPI++ with n labels
    and N unlabelled pairs has variance λ² σ²_f / N + (σ²_y − 2 λ c + λ² σ²_f) / n with
    λ = c / ((1 + n/N) σ²_f) clipped to [0, 1]; unclipped this is (σ²_y / n)(1 − ρ² N/(N + n)),
    ρ the correlation of y and f. Label-only: σ²_y / n. As in the intervals, the labelled part
    uses divisor n − 1 and the half-width Student's t quantile with n − 1 degrees of freedom. The variance is multiplied by the pilot's
    design effect (clustered over plain variance of the PPI++ estimate), and a difference of
    two models adds the two variances (ignoring the covariance of shared instructions, which
    makes the plan conservative when it is positive). Repeats only shrink σ²_call / m, the
    judge's own noise; its systematic errors stay. With an assumed judge, its underlying
    decision is taken to be the same in both orders and in all repeats, which flip
    independently (no position bias).

    Examples
    --------
    >>> import judgekit as jk
    >>> plan = jk.plan_labels(half_width=0.03, accuracy=0.8, flip_q=0.1, n_pairs=[5000])
    >>> plan.answer[["design", "method", "labels_needed"]]
                          design     method  labels_needed
    0  5000 pairs x 2 orders x 1  classical         1071.0
    1  5000 pairs x 2 orders x 1      ppi++          665.0
    2  5000 pairs x 2 orders x 3  classical         1071.0
    3  5000 pairs x 2 orders x 3      ppi++          586.0
    """
    if not half_width > 0:
        raise ValueError(f"half_width must be > 0, got {half_width}")
    z = float(stats.norm.ppf(0.5 + ci / 2))
    pilot_pairs = None
    if judgments is not None:
        if pairs is None:
            raise ValueError("a pilot needs both judgments and pairs (with labels)")
        models = list(difference) if isinstance(difference, (tuple, list)) else None
        if difference is True:
            raise ValueError("difference: name the two models of the pilot, e.g. ('m1', 'm2')")
        moments, rep0, ord0, n0 = _pilot_moments(judgments, pairs, target=target, models=models,
                                                 prediction=prediction)
        repeats = [rep0] if repeats is None else list(repeats)
        if rep0 == 1 and any(r != rep0 for r in repeats):
            raise ValueError("repeats: the pilot has one call per pair and order, so it cannot "
                             "say what more repeats would buy; plan with repeats=None")
        orders = ord0 if orders is None else orders
        n_pairs = [n0] if n_pairs is None else list(n_pairs)
        pilot_pairs = pairs
    else:
        if accuracy is None:
            raise ValueError("give a pilot (judgments and pairs) or an assumed accuracy=")
        m = _assumed_moments(accuracy, flip_q, win_rate)
        moments = [m, m] if difference else [m]
        repeats = [1, 3] if repeats is None else list(repeats)
        orders = 2 if orders is None else orders
        n_pairs = [2000, 20000] if n_pairs is None else list(n_pairs)
    per_call = _cost_per_call(judge, pilot_pairs, cost_per_call_usd)
    share = 1.0 / len(moments)

    def hw(n, pairs_total, k, method):
        parts = [_half_width(m, np.asarray(n) * share, np.asarray(pairs_total) * share,
                             orders * k, z, method) ** 2 for m in moments]
        return np.sqrt(np.sum(parts, axis=0))

    rows, answers = [], []
    for P in n_pairs:
        for k in repeats:
            design = f"{P} pairs x {orders} orders x {k}"
            calls = P * orders * k
            judge_cost = per_call * calls
            for method in ("classical", "ppi++"):
                for n in n_labels:
                    if n >= P and method == "ppi++":
                        continue
                    h = float(hw(n, P, k, method))
                    label_cost = n * label_cost_usd if label_cost_usd is not None else np.nan
                    jc = judge_cost if method == "ppi++" else 0.0
                    rows.append({"design": design if method == "ppi++" else "labels only",
                                 "n_pairs": P, "repeats": k, "orders": orders, "method": method,
                                 "n_labels": n, "half_width": h, "meets_target": h <= half_width,
                                 "judge_calls": calls if method == "ppi++" else 0,
                                 "judge_cost_usd": jc, "label_cost_usd": label_cost,
                                 "total_cost_usd": jc + label_cost})
                need = _needed(lambda n, P=P, k=k, method=method: float(hw(n, P, k, method)),
                               half_width, P - 1 if method == "ppi++" else 10**7)
                label_cost = need * label_cost_usd if label_cost_usd is not None else np.nan
                jc = judge_cost if method == "ppi++" else 0.0
                answers.append({"design": design, "n_pairs": P, "repeats": k, "orders": orders,
                                "method": method, "labels_needed": need,
                                "judge_calls": calls if method == "ppi++" else 0,
                                "judge_cost_usd": jc, "label_cost_usd": label_cost,
                                "total_cost_usd": jc + label_cost})
    table = pd.DataFrame(rows).drop_duplicates(["design", "method", "n_labels"], ignore_index=True)
    answer = pd.DataFrame(answers)
    what = "difference of two win rates" if difference else "human win rate"
    title = f"Labels needed for ±{half_width:g} on the {what}"
    info = {"var_y": moments[0].var_y, "cov": moments[0].cov, "var_mu": moments[0].var_mu,
            "var_call": moments[0].var_call, "design_effect": moments[0].deff,
            "cost_per_call_usd": per_call, "z": z}
    return LabelPlan(table, answer, info, half_width, "n_labels", title)


@stamped
def plan_bias(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    metric: str = "position_bias",
    half_width: float = 0.03,
    repeats: Sequence[int] | None = None,
    n_pairs: Sequence[int] = (100, 200, 500, 1000, 2000, 5000),
    judge: Any = None,
    cost_per_call_usd: float | None = None,
    label_cost_usd: float | None = None,
    ci: float = 0.95,
    n_boot: int = 500,
    seed: int = 0,
) -> LabelPlan:
    """How many labelled pairs (judged in both orders, with repeats) pin a judge's position or
    length bias down to ± ``half_width``.

    Position and length bias (:func:`judgekit.position_bias`, :func:`judgekit.length_bias`)
    need a human label on every pair they use. Their bootstrap standard error on the pilot,
    computed with the first k repeats for every k in ``repeats``, scales as 1/√n.

    Parameters
    ----------
    judgments, pairs : DataFrame
        The pilot: one judge, labelled pairs, both orders, repeats (de-noising needs at least
        two).
    metric : {"position_bias", "length_bias"}
        Which bias to plan for.
    half_width : float
        Target half-width of the ``ci`` interval.
    repeats : sequence of int, optional
        Repeats per order to consider (each at most the pilot's); default 2 up to the pilot's.
    n_pairs : sequence of int
        Pair counts shown in the table and chart.
    judge, cost_per_call_usd, label_cost_usd, ci
        As in :func:`plan_labels`.
    n_boot, seed
        The pilot's bootstrap.

    Returns
    -------
    LabelPlan
        ``table`` per (repeats, n_pairs): ``half_width``, costs; ``answer`` per repeats:
        ``labels_needed`` (= pairs); ``chart``; ``moments`` (the pilot's SE per repeats).

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(400, position_bias=0.8, flip_q=0.1,
    ...                                             repeats=3, seed=0)
    >>> plan = jk.plan_bias(judgments, pairs, half_width=0.03, n_boot=200)
    >>> plan.answer[["repeats", "labels_needed"]].to_dict("records")  # doctest: +SKIP
    [{'repeats': 2, 'labels_needed': 1402.0}, {'repeats': 3, 'labels_needed': 1153.0}]
    >>> bool(plan.answer["labels_needed"].is_monotonic_decreasing)
    True
    """
    from judgekit.metrics import length_bias, position_bias

    fn = {"position_bias": position_bias, "length_bias": length_bias}.get(metric)
    if fn is None:
        raise ValueError(f"metric must be 'position_bias' or 'length_bias', got {metric!r}")
    j = judgments
    if j["judge"].nunique() != 1:
        raise ValueError("judgments: the pilot must hold one judge")
    k_max = int(j["repeat"].max()) + 1
    repeats = list(range(2, k_max + 1)) if repeats is None else list(repeats)
    if not repeats or max(repeats) > k_max or min(repeats) < 1:
        raise ValueError(f"repeats must be between 1 and the pilot's {k_max}, got {repeats}")
    orders = int(j["order"].nunique())
    z = float(stats.norm.ppf(0.5 + ci / 2))
    per_call = _cost_per_call(judge, pairs, cost_per_call_usd)
    rows, answers, info = [], [], {}
    for k in repeats:
        res = fn(j[j["repeat"] < k], pairs, n_boot=n_boot, ci=ci, seed=seed)
        row = res[res["metric"] == metric].iloc[0]
        n0, se = int(row["n"]), float(row["se"])
        info[f"se_repeats_{k}"] = se
        info[f"n_pilot_repeats_{k}"] = n0
        design = f"{orders} orders x {k}"
        for P in n_pairs:
            h = z * se * math.sqrt(n0 / P)
            lc = P * label_cost_usd if label_cost_usd is not None else np.nan
            rows.append({"design": design, "repeats": k, "n_pairs": P, "half_width": h,
                         "meets_target": h <= half_width, "judge_calls": P * orders * k,
                         "judge_cost_usd": per_call * P * orders * k, "label_cost_usd": lc,
                         "total_cost_usd": per_call * P * orders * k + lc})
        need = float(math.ceil(n0 * (z * se / half_width) ** 2)) if np.isfinite(se) else np.nan
        lc = need * label_cost_usd if label_cost_usd is not None else np.nan
        answers.append({"design": design, "repeats": k, "metric": metric, "labels_needed": need,
                        "judge_calls": need * orders * k,
                        "judge_cost_usd": per_call * need * orders * k, "label_cost_usd": lc,
                        "total_cost_usd": per_call * need * orders * k + lc})
    table = pd.DataFrame(rows)
    title = f"Labelled pairs needed for ±{half_width:g} on {metric}"
    return LabelPlan(table, pd.DataFrame(answers), info, half_width, "n_pairs", title)
