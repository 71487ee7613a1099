"""Charts of calibrated A/B probabilities (Li et al. 2024, CalibraEval)."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from judgekit.viz._theme import REFERENCE, metric_label
from judgekit.viz.shared import (
    bar_mark,
    frame,
    grouped,
    has_ci,
    keys_of,
    metric_frame,
    require,
    stat_tooltips,
    title_params,
)

__all__ = ["calibration_bars", "calibration_curve", "reliability_diagram"]


def _diagonal() -> alt.Chart:
    return alt.Chart(alt.InlineData(values=[{"v": 0.0}, {"v": 1.0}])).mark_line(
        color=REFERENCE, strokeDash=[5, 4], strokeWidth=1.2).encode(x="v:Q", y="v:Q")


def calibration_bars(
    data: pd.DataFrame,
    metrics: Sequence[str] = ("fleiss_kappa", "icc2k", "icc3k"),
    *,
    method: str = "method",
    by: str = "judge",
    method_order: Sequence[str] | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 220,
) -> alt.FacetChart:
    """Selection-bias metrics before and after calibration, per judge and method (Table 1 in shape).

    One panel per metric; within a panel one band per judge and one bar per method (e.g. raw,
    Pride, NOA), with 95% intervals where given.

    Parameters
    ----------
    data : DataFrame
        Long frame (``by``, ``method``, ``metric``, ``estimate``, ``ci_low``, ``ci_high``) as
        :func:`judgekit.selection_bias_metrics` returns for each method, or wide.
    metrics : sequence of str
        Metrics to show, one panel each (e.g. ``"fleiss_kappa"``, ``"icc2k"``, ``"rstd"``).
    method : str
        Column naming the calibration method.
    by : str
        Column on the vertical axis (judge or dataset).
    method_order : sequence of str, optional
        Colour and bar order of the methods (default: as they first appear).
    title, subtitle, width
        Chart title, subtitle and panel width.

    Returns
    -------
    altair.FacetChart

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> d = pd.DataFrame({"judge": "x", "method": ["raw", "noa"], "fleiss_kappa": [0.4, 0.7],
    ...                   "icc2k": [0.5, 0.8]})
    >>> spec = jk.viz.calibration_bars(d, ["fleiss_kappa", "icc2k"]).to_dict()
    >>> spec["spec"]["layer"][0]["encoding"]["color"]["field"]
    'method'
    """
    builder = "calibration_bars"
    keys = keys_of(by, method)
    df = frame(data, builder)
    parts = []
    for m in metrics:
        one = metric_frame(df, m, keys, builder)
        one["metric_label"] = metric_label(m)
        parts.append(one)
    long = pd.concat(parts, ignore_index=True)
    order = list(method_order) if method_order is not None else list(pd.unique(long[method]))
    base = alt.Chart().encode(
        y=alt.Y(f"{by}:N", title=None, sort=list(pd.unique(long[by]))),
        yOffset=grouped(f"{method}:N", sort=order),
        tooltip=[alt.Tooltip("metric_label:N", title="metric"),
                 *stat_tooltips(keys, "estimate")],
    )
    layers = [base.mark_bar(**bar_mark(True)).encode(
        x=alt.X("estimate:Q", title=None),
        color=alt.Color(f"{method}:N", title=method, sort=order))]
    if has_ci(long):
        layers.append(base.mark_rule(color="#333333").encode(x="ci_low:Q", x2="ci_high:Q"))
    return alt.layer(*layers, data=long).properties(
        width=width, height=alt.Step(12, **{"for": "offset"})).facet(
        column=alt.Column("metric_label:N", title=None, sort=[metric_label(m) for m in metrics])
    ).resolve_scale(x="independent").properties(
        title=title_params(title, subtitle, "Selection bias before and after calibration"))


def reliability_diagram(
    data: pd.DataFrame,
    *,
    predicted: str = "predicted",
    observed: str = "observed",
    n: str | None = "n",
    color: str | None = None,
    facet: str | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    size: int = 280,
) -> alt.LayerChart | alt.FacetChart:
    """Reliability diagram: observed frequency against predicted probability, per bin.

    A calibrated judge's points lie on the diagonal. Point area is proportional to the number
    of items in the bin; vertical bars are 95% intervals when ``<observed>_ci_low`` and
    ``<observed>_ci_high`` (or, in a tidy metric frame, ``ci_low`` and ``ci_high``) columns exist.

    Parameters
    ----------
    data : DataFrame
        One row per bin (and group): mean predicted probability, observed frequency, count.
    predicted, observed : str
        Columns for the two axes.
    n : str, optional
        Column with the bin's item count (point size).
    color, facet : str, optional
        Columns distinguishing lines (e.g. ``"method"``: raw vs calibrated) and panels.
    title, subtitle : str, optional
    size : int
        Width and height of a panel.

    Returns
    -------
    altair.LayerChart or altair.FacetChart

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> b = pd.DataFrame({"predicted": [0.1, 0.5, 0.9], "observed": [0.2, 0.5, 0.8],
    ...                   "n": [30, 50, 20]})
    >>> spec = jk.viz.reliability_diagram(b).to_dict()
    >>> spec["layer"][1]["mark"]["type"], spec["layer"][-1]["encoding"]["size"]["field"]
    ('line', 'n')
    """
    builder = "reliability_diagram"
    df = frame(data, builder)
    require(df, [predicted, observed, n, color, facet], builder)
    ci = [c for c in (f"{observed}_ci_low", f"{observed}_ci_high") if c in df.columns]
    if len(ci) < 2 and {"ci_low", "ci_high"} <= set(df.columns):  # a tidy metric frame
        ci = ["ci_low", "ci_high"]
    df = df[keys_of(predicted, observed, n, color, facet, ci)].reset_index(drop=True)
    tips = [alt.Tooltip(f"{c}:N") for c in keys_of(color, facet)] + [
        alt.Tooltip(f"{predicted}:Q", title="predicted", format=".3f"),
        alt.Tooltip(f"{observed}:Q", title="observed", format=".3f")]
    if n is not None:
        tips.append(alt.Tooltip(f"{n}:Q", title="items"))
    enc_color = alt.Color(f"{color}:N", title=color) if color else alt.value("#0072B2")
    axis_scale = alt.Scale(domain=[0, 1])
    base = alt.Chart().encode(
        x=alt.X(f"{predicted}:Q", title="predicted probability", scale=axis_scale),
        y=alt.Y(f"{observed}:Q", title="observed frequency", scale=axis_scale),
        color=enc_color, tooltip=tips)
    layers: list[alt.Chart] = [base.mark_line(opacity=0.7)]
    if len(ci) == 2:
        layers.append(base.mark_rule(opacity=0.6).encode(y=ci[0], y2=ci[1]))
    point_size = alt.Size(f"{n}:Q", title="items", scale=alt.Scale(range=[20, 400])) if n else alt.value(60)
    layers.append(base.mark_point(filled=True, opacity=0.9).encode(size=point_size))
    chart = alt.layer(_diagonal(), *layers, data=df).properties(width=size, height=size)
    default = "Reliability diagram"
    if facet is not None:
        return chart.facet(column=alt.Column(f"{facet}:N", title=None)).properties(
            title=title_params(title, subtitle, default))
    return chart.properties(title=title_params(title, subtitle, default))


def calibration_curve(
    data: pd.DataFrame,
    *,
    x: str = "score",
    y: str = "calibrated",
    color: str | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    size: int = 280,
) -> alt.LayerChart:
    """A calibration map g*: raw probability in, calibrated probability out, with the diagonal.

    Parameters
    ----------
    data : DataFrame
        Points of the map (e.g. a grid of raw scores and their calibrated values).
    x, y : str
        Columns with the raw and calibrated probability.
    color : str, optional
        Column distinguishing maps (e.g. judge or method).
    title, subtitle : str, optional
    size : int
        Width and height in pixels.

    Returns
    -------
    altair.LayerChart

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> g = pd.DataFrame({"score": [0.0, 0.5, 1.0], "calibrated": [0.0, 0.4, 1.0]})
    >>> jk.viz.calibration_curve(g).to_dict()["layer"][1]["mark"]["type"]
    'line'
    """
    builder = "calibration_curve"
    df = frame(data, builder)
    require(df, [x, y, color], builder)
    df = df[keys_of(x, y, color)].reset_index(drop=True)
    enc_color = alt.Color(f"{color}:N", title=color) if color else alt.value("#0072B2")
    curve = alt.Chart(df).mark_line(interpolate="step-after" if len(df) < 40 else "linear").encode(
        x=alt.X(f"{x}:Q", title="raw probability", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y(f"{y}:Q", title="calibrated probability", scale=alt.Scale(domain=[0, 1])),
        color=enc_color,
        tooltip=[*(alt.Tooltip(f"{c}:N") for c in keys_of(color)),
                 alt.Tooltip(f"{x}:Q", format=".3f"), alt.Tooltip(f"{y}:Q", format=".3f")])
    return alt.layer(_diagonal(), curve).properties(
        width=size, height=size, title=title_params(title, subtitle, "Calibration map"))
