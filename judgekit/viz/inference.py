"""Charts of the human-label estimators (:mod:`judgekit.inference`): prediction-powered intervals
beside the truth, and the labelling plan of :func:`judgekit.plan_labels` / :func:`judgekit.plan_bias`."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

__all__ = ["plan_chart", "ppi_chart"]

_LABELS = {"classical": "labels only", "judge_only": "judge only", "ppi": "PPI", "ppi++": "PPI++"}


def ppi_chart(rates: pd.DataFrame, *, truth: float | None = None, title: str | None = None,
              truth_label: str = "truth") -> alt.LayerChart:
    """The intervals of :func:`judgekit.ppi_win_rates` (one row per method), a rule at ``truth``.

    Parameters
    ----------
    rates : DataFrame
        Output of :func:`judgekit.ppi_win_rates` or :func:`judgekit.ppi_mean` for one unit and
        one kind of interval (``method``, ``estimate``, ``ci_low``, ``ci_high``).
    truth : float, optional
        The value to compare with (e.g. the rate from all the labels), drawn as a dashed rule.
    title : str, optional
        Chart title.
    truth_label : str
        What ``truth`` is; the subtitle explains the dashed rule with it (e.g. "the rate from
        all 999 labels").

    Returns
    -------
    altair.LayerChart
        One row per method: the interval as a thick rule and the estimate as a point, plus
        the dashed rule at ``truth`` when given.

    Examples
    --------
    >>> import numpy as np, judgekit as jk
    >>> rng = np.random.default_rng(0)
    >>> y = rng.binomial(1, 0.6, 2000).astype(float)
    >>> f = np.where(rng.random(2000) < 0.8, y, 1 - y)
    >>> chart = jk.viz.ppi_chart(jk.ppi_mean(np.where(np.arange(2000) < 100, y, np.nan), f), truth=0.6)
    >>> chart.to_dict()["layer"][0]["mark"]["type"]
    'rule'
    >>> chart.to_dict()["title"]["subtitle"]
    'dashed line: truth = 0.600'
    """
    need = {"method", "estimate", "ci_low", "ci_high"}
    missing = need - set(rates.columns)
    if missing:
        raise ValueError(f"rates: missing columns {sorted(missing)}")
    if rates["method"].duplicated().any():
        raise ValueError("rates: one row per method (filter one judge, model and interval kind)")
    df = rates.assign(estimator=rates["method"].map(_LABELS).fillna(rates["method"]),
                      n_labelled=rates.get("n_labelled", pd.Series(pd.NA, index=rates.index)))
    order = [_LABELS.get(m, m) for m in rates["method"]]
    y = alt.Y("estimator:N", sort=order, title=None)
    bars = alt.Chart(df).mark_rule(strokeWidth=3).encode(
        y=y, x=alt.X("ci_low:Q", title="human rate", scale=alt.Scale(zero=False, padding=10)),
        x2="ci_high:Q",
        color=alt.Color("estimator:N", sort=order, legend=None),
        tooltip=["estimator", alt.Tooltip("estimate:Q", format=".3f"),
                 alt.Tooltip("ci_low:Q", format=".3f"), alt.Tooltip("ci_high:Q", format=".3f")])
    points = alt.Chart(df).mark_point(filled=True, size=60).encode(
        y=y, x="estimate:Q", color=alt.Color("estimator:N", sort=order, legend=None))
    layers = [bars, points]
    if truth is not None:
        rule = alt.Chart(pd.DataFrame({"truth": [truth]})).mark_rule(strokeDash=[4, 4]).encode(
            x="truth:Q")
        layers.insert(0, rule)
    subtitle = f"dashed line: {truth_label} = {truth:.3f}" if truth is not None else ""
    return alt.layer(*layers).properties(
        title=alt.TitleParams(title or "Estimate and interval", subtitle=subtitle), width=420,
        height=140)


def plan_chart(plan: Any) -> alt.LayerChart:
    """The predicted half-width of every design of a labelling plan against the number of labels
    (or labelled pairs), one line per design, the target as a dashed rule.

    Parameters
    ----------
    plan : LabelPlan
        From :func:`judgekit.plan_labels` or :func:`judgekit.plan_bias` (``plan.chart`` is this
        chart).

    Returns
    -------
    altair.LayerChart

    Examples
    --------
    >>> import judgekit as jk
    >>> plan = jk.plan_labels(accuracy=0.8, half_width=0.05)
    >>> spec = jk.viz.plan_chart(plan).to_dict()
    >>> spec["layer"][0]["encoding"]["x"]["field"], spec["layer"][1]["mark"]["type"]
    ('n_labels', 'rule')
    """
    table, x = plan.table, plan.axis
    lines = alt.Chart(table).mark_line(point=True).encode(
        x=alt.X(f"{x}:Q", scale=alt.Scale(type="log"), title=x.replace("_", " ")),
        y=alt.Y("half_width:Q", title="predicted 95% half-width"),
        color=alt.Color("design:N", title="design"),
        tooltip=[x, "design", alt.Tooltip("half_width:Q", format=".4f"), "total_cost_usd"],
    )
    rule = alt.Chart(pd.DataFrame({"target": [plan.half_width]})).mark_rule(strokeDash=[4, 4]).encode(
        y="target:Q")
    return alt.layer(lines, rule).properties(title=plan.title, width=420, height=260)
