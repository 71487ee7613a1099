"""Charts of a judge's report card: accuracy and bias bars, bias-vs-accuracy, temperature curves.

Every builder takes a metric frame as judgekit returns it (long: ``metric, estimate, ci_low,
ci_high, n`` beside the grouping columns; or wide: one row per group, as :func:`judgekit.report_card`
returns) and gives back an altair chart. Nothing is displayed and nothing is computed beyond what
the chart needs (the order of bands, absolute values, sign colours).
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from judgekit.viz._theme import (
    MATERIAL_MARGINS,
    NEGATIVE,
    NEUTRAL,
    POSITIVE,
    REFERENCE,
    SIGN_LABELS,
    UNDECIDED,
    metric_label,
)
from judgekit.viz.shared import (
    COUNT_METRICS,
    band_height,
    band_order,
    bar_mark,
    frame,
    grouped,
    has_ci,
    interval_readings,
    keys_of,
    metric_frame,
    nice_bound,
    readings,
    ref_chart,
    require,
    safe_names,
    stat_tooltips,
    title_params,
    wide_frame,
)

__all__ = [
    "accuracy_bars",
    "bias_accuracy_scatter",
    "bias_bars",
    "metric_heatmap",
    "metric_scatter",
    "temperature_curves",
]


def accuracy_bars(
    data: pd.DataFrame,
    metric: str | None = "acc_both",
    *,
    by: str = "judge",
    color: str | None = None,
    facet: str | None = None,
    domain: tuple[float, float] | str | None = "auto",
    reference: float | None = None,
    reference_label: str = "",
    sort: bool = True,
    title: str | None = None,
    subtitle: str | None = None,
    axis_title: str | None = None,
    width: int = 340,
) -> alt.LayerChart | alt.FacetChart:
    """Horizontal bars of a metric per judge (or template), with 95% intervals.

    Parameters
    ----------
    data : DataFrame
        Long metric frame (``metric, estimate, ci_low, ci_high, n`` and grouping columns) or a
        wide report card (a column named ``metric`` with ``<metric>_ci_low/_ci_high`` beside it).
    metric : str or None
        Which metric to draw, e.g. ``"acc_both"``, ``"acc_random"``, ``"position_consistency"``;
        ``None`` draws every row of a long frame (e.g. all accuracies, with ``by="metric"``).
    by : str
        Column on the vertical axis (one band per value).
    color : str, optional
        Column whose values become side-by-side bars within each band (e.g. ``"template"``).
    facet : str, optional
        Column that splits the chart into side-by-side panels (e.g. ``"model"``).
    domain : (float, float), "auto" or None
        Value-axis range; ``None`` fits the data (from zero). ``"auto"``: [0, 1] for shares and
        rates, fitted from zero for the metrics that are counts (``primacy``, ``recency``).
    reference : float, optional
        Draws a dashed vertical line there (e.g. chance, or human agreement).
    reference_label : str
        Text shown beside the reference line.
    sort : bool
        Order bands by their mean estimate, best first.
    title, subtitle : str, optional
        Chart title (default: the metric's label) and subtitle.
    axis_title : str, optional
        Title of the value axis (default: the metric's label).
    width : int
        Width of one panel in pixels.

    Returns
    -------
    altair.LayerChart or altair.FacetChart
        Layers: the bars, the intervals as rules (when the frame has ``ci_low`` / ``ci_high``),
        the value written at the end of each bar, and the reference line; one panel per
        ``facet`` value when ``facet`` is given.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> card = pd.DataFrame({"judge": ["gpt-4o", "llama-3"], "acc_both": [0.81, 0.64],
    ...                      "acc_both_ci_low": [0.77, 0.60], "acc_both_ci_high": [0.85, 0.68]})
    >>> spec = jk.viz.accuracy_bars(card).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['bar', 'rule', 'text']
    """
    builder = "accuracy_bars"
    keys = keys_of(by, color, facet)
    df = metric_frame(data, metric, keys, builder)
    if by == "metric":
        df["metric"] = df["metric"].map(metric_label)
    label = metric_label(metric) if metric is not None else "estimate"
    sort_spec = band_order(df, by) if sort else None
    y = alt.Y(f"{by}:N", sort=sort_spec, title=None, axis=alt.Axis(labelLimit=320))
    if isinstance(domain, str):
        if domain != "auto":
            raise ValueError(f"{builder}: domain must be a (low, high) pair, 'auto' or None, got {domain!r}")
        domain = None if metric in COUNT_METRICS else (0.0, 1.0)
    x_scale = alt.Scale(domain=list(domain), clamp=True) if domain is not None else alt.Scale(zero=True)
    fmt = ".0f" if metric in COUNT_METRICS else ".2f"
    base = alt.Chart().encode(y=y, tooltip=stat_tooltips(keys, label))
    if color is not None:
        base = base.encode(yOffset=grouped(f"{color}:N", title=color))
        bar_color = alt.Color(f"{color}:N", title=color)
    else:
        bar_color = alt.value("#0072B2")
    bars = base.mark_bar(**bar_mark(color is not None)).encode(
        x=alt.X("estimate:Q", title=axis_title or label, scale=x_scale), color=bar_color
    )
    layers: list[alt.Chart] = [bars]
    if has_ci(df):
        layers.append(base.mark_rule(color="#333333", strokeWidth=1.4).encode(
            x="ci_low:Q", x2="ci_high:Q"))
    text_at = "ci_high:Q" if has_ci(df) else "estimate:Q"
    layers.append(base.mark_text(align="left", dx=4, fontSize=10.5, color="#333333").encode(
        x=alt.X(text_at), text=alt.Text("estimate:Q", format=fmt)))
    if reference is not None:
        layers.append(ref_chart().mark_rule(strokeDash=[5, 4], color=REFERENCE).encode(
            x=alt.datum(reference)))
        if reference_label:
            layers.append(ref_chart().mark_text(
                align="left", baseline="bottom", dx=3, y=0, dy=-3, fontSize=10.5, color="#555555"
            ).encode(x=alt.datum(reference), text=alt.datum(reference_label)))
    chart = alt.layer(*layers, data=df).properties(width=width, height=band_height(color))
    if facet is not None:
        return chart.facet(column=alt.Column(f"{facet}:N", title=None)).properties(
            title=title_params(title, subtitle, label)).resolve_scale(y="independent")
    return chart.properties(title=title_params(title, subtitle, label))


def bias_bars(
    data: pd.DataFrame,
    metric: str = "position_bias",
    *,
    by: str = "judge",
    color: str | None = None,
    facet: str | None = None,
    sign_labels: tuple[str, str] | None = None,
    margin: float | None = None,
    sort: bool = True,
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 340,
) -> alt.LayerChart | alt.FacetChart:
    """Diverging bars of a signed metric around zero (position bias, length bias, fairness).

    A bar is coloured by what its interval shows, never by the sign of its estimate alone: a
    direction (e.g. "prefers the first position") only when the interval excludes zero; "no
    material effect" when the interval lies inside ±``margin``; "inconclusive" otherwise (the
    interval includes zero and an effect of the margin's size, or there is no interval). With
    ``color`` naming a column to colour by, the undecided bars are drawn faint instead.

    Parameters
    ----------
    data : DataFrame
        Long or wide metric frame (see :func:`accuracy_bars`).
    metric : str
        ``"position_bias"``, ``"length_bias"``, ``"preference_fairness"`` or any signed metric.
    by, color, facet
        As in :func:`accuracy_bars`.
    sign_labels : (str, str), optional
        Legend text for an interval above and below zero (defaults known for PB, LB and PF).
    margin : float, optional
        The smallest material effect (default: 0.05 for PB, LB and PF, none otherwise, so that
        an interval including zero reads "inconclusive").
    sort, title, subtitle, width
        As in :func:`accuracy_bars`.

    Returns
    -------
    altair.LayerChart or altair.FacetChart
        One horizontal bar per ``by`` value with its interval as a rule when the frame has
        ``ci_low`` / ``ci_high``, and a rule at zero; a facet chart when ``facet`` is given.
        The reading of each bar is the ``reading`` column of the chart's data.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pb = pd.DataFrame({"judge": ["x", "y"], "metric": "position_bias",
    ...                    "estimate": [0.12, -0.05], "ci_low": [0.08, -0.09],
    ...                    "ci_high": [0.16, -0.01], "n": [500, 500]})
    >>> spec = jk.viz.bias_bars(pb).to_dict()
    >>> spec["layer"][0]["encoding"]["color"]["scale"]["domain"]
    ['prefers the first position', 'prefers the second position']
    >>> pb.loc[1, ["ci_low", "ci_high"]] = [-0.15, 0.05]   # y's interval now includes 0
    >>> jk.viz.bias_bars(pb).to_dict()["layer"][0]["encoding"]["color"]["scale"]["domain"]
    ['prefers the first position', 'inconclusive (CI includes 0)']
    """
    builder = "bias_bars"
    keys = keys_of(by, color, facet)
    df = metric_frame(data, metric, keys, builder)
    label = metric_label(metric)
    pos, neg = sign_labels or SIGN_LABELS.get(metric, ("positive", "negative"))
    margin = MATERIAL_MARGINS.get(metric) if margin is None else margin
    if margin is not None and not margin > 0:
        raise ValueError(f"bias_bars: margin must be positive, got {margin!r}")
    df["reading"] = interval_readings(df, pos, neg, margin)
    bound = nice_bound(float(pd.concat([df["estimate"], df["ci_low"], df["ci_high"]]).abs().max()))
    sort_spec = band_order(df, by) if sort else None
    y = alt.Y(f"{by}:N", sort=sort_spec, title=None, axis=alt.Axis(labelLimit=320))
    base = alt.Chart().encode(
        y=y, tooltip=[*stat_tooltips(keys, label), alt.Tooltip("reading:N", title="reading")])
    colours = dict(zip(readings(pos, neg, margin), (POSITIVE, NEGATIVE, NEUTRAL, UNDECIDED, UNDECIDED)))
    shown = [r for r in colours if (df["reading"] == r).any()]
    extra = {}
    if color is not None:
        base = base.encode(yOffset=grouped(f"{color}:N"))
        bar_color = alt.Color(f"{color}:N", title=color)
        # an ordinal scale: opacity's default (point) scale spans only its first two values
        fade = dict(zip(colours, (1.0, 1.0, 0.6, 0.3, 0.3)))
        extra["opacity"] = alt.Opacity("reading:N", title=None, legend=alt.Legend(orient="bottom"),
                                       scale=alt.Scale(type="ordinal", domain=shown,
                                                       range=[fade[r] for r in shown]))
    else:
        bar_color = alt.Color("reading:N", title=None, scale=alt.Scale(
            domain=shown, range=[colours[r] for r in shown]), legend=alt.Legend(orient="bottom"))
    bars = base.mark_bar(**bar_mark(color is not None)).encode(
        x=alt.X("estimate:Q", title=label, scale=alt.Scale(domain=[-bound, bound], nice=False),
                axis=alt.Axis(values=[-bound, -bound / 2, 0.0, bound / 2, bound])),
        color=bar_color, **extra)
    layers: list[alt.Chart] = [bars]
    if has_ci(df):
        layers.append(base.mark_rule(color="#333333", strokeWidth=1.4).encode(
            x="ci_low:Q", x2="ci_high:Q"))
    layers.append(ref_chart().mark_rule(color="#555555").encode(x=alt.datum(0)))
    chart = alt.layer(*layers, data=df).properties(width=width, height=band_height(color))
    if facet is not None:
        return chart.facet(column=alt.Column(f"{facet}:N", title=None)).properties(
            title=title_params(title, subtitle, label)).resolve_scale(y="independent")
    return chart.properties(title=title_params(title, subtitle, label))


def bias_accuracy_scatter(
    data: pd.DataFrame,
    bias: str = "position_bias",
    accuracy: str = "acc_both",
    *,
    by: str = "judge",
    color: str | None = None,
    label: str | None = None,
    facet: str | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 380,
    height: int = 300,
) -> alt.LayerChart | alt.FacetChart:
    """|bias| against accuracy, one point per judge (Wei et al. 2024, Fig. 4).

    A judge in the top-left corner is both accurate and unbiased. The absolute value is taken in
    the chart spec; the signed estimate and its interval stay in the tooltip.

    Parameters
    ----------
    data : DataFrame
        Long or wide metric frame holding both metrics per ``by`` (and ``color``) group.
    bias, accuracy : str
        Metric names for the horizontal (absolute value) and vertical axes.
    by : str
        Column identifying a point.
    color : str, optional
        Column that colours the points (e.g. ``"model"``).
    label : str, optional
        Column whose values are written beside the points (e.g. ``"template"``).
    facet : str, optional
        Column splitting the chart into panels (e.g. the dataset).
    title, subtitle, width, height
        Chart title, subtitle and the size of one panel.

    Returns
    -------
    altair.LayerChart or altair.FacetChart
        Layers: the accuracy intervals as vertical rules (when the frame has them), the points
        and the ``label`` text; one panel per ``facet`` value when ``facet`` is given.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> card = pd.DataFrame({"judge": ["x", "y"], "position_bias": [0.1, -0.2],
    ...                      "acc_both": [0.7, 0.6]})
    >>> spec = jk.viz.bias_accuracy_scatter(card).to_dict()
    >>> spec["layer"][0]["transform"][0]["calculate"]
    'abs(datum["position_bias"])'
    """
    builder = "bias_accuracy_scatter"
    keys = keys_of(by, color, label, facet)
    df = wide_frame(data, [bias, accuracy], keys, builder)
    bias_label, acc_label = metric_label(bias), metric_label(accuracy)
    tips = [alt.Tooltip(f"{k}:N") for k in keys] + [
        alt.Tooltip(f"{bias}:Q", title=f"{bias_label} (signed)", format=".3f"),
        alt.Tooltip(f"{bias}_ci_low:Q", title="CI low", format=".3f"),
        alt.Tooltip(f"{bias}_ci_high:Q", title="CI high", format=".3f"),
        alt.Tooltip(f"{accuracy}:Q", title=acc_label, format=".3f"),
        alt.Tooltip(f"{accuracy}_ci_low:Q", title="CI low", format=".3f"),
        alt.Tooltip(f"{accuracy}_ci_high:Q", title="CI high", format=".3f"),
    ]
    base = alt.Chart().transform_calculate(abs_bias=f'abs(datum["{bias}"])').encode(
        x=alt.X("abs_bias:Q", title=f"|{bias_label}|", scale=alt.Scale(zero=True)),
        tooltip=tips,
    )
    enc_color = alt.Color(f"{color}:N", title=color) if color else alt.value("#0072B2")
    points = base.mark_point(size=80, filled=True, opacity=0.85).encode(
        y=alt.Y(f"{accuracy}:Q", title=acc_label, scale=alt.Scale(zero=False)), color=enc_color)
    layers: list[alt.Chart] = [points]
    if df[f"{accuracy}_ci_low"].notna().any():
        layers.insert(0, base.mark_rule(opacity=0.5).encode(
            y=f"{accuracy}_ci_low:Q", y2=f"{accuracy}_ci_high:Q", color=enc_color))
    if label is not None:
        layers.append(base.mark_text(align="left", dx=6, fontSize=10, color="#444444").encode(
            y=f"{accuracy}:Q", text=f"{label}:N"))
    chart = alt.layer(*layers, data=df).properties(width=width, height=height)
    default = title_params(title, subtitle, f"|{bias_label}| vs {acc_label}")
    if facet is not None:
        return chart.facet(column=alt.Column(f"{facet}:N", title=None)).properties(title=default)
    return chart.properties(title=default)


def temperature_curves(
    data: pd.DataFrame,
    metrics: Sequence[str] = ("scr_cr", "scr_rc", "acc_both"),
    *,
    temperature: str = "temperature",
    color: str | None = "judge",
    recommended: str | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 240,
    height: int = 200,
) -> alt.FacetChart:
    """Self-consistency and accuracy against sampling temperature (Wei et al. 2024, Table 1).

    One panel per metric, one line per ``color`` group, 95% intervals as error bars.

    Parameters
    ----------
    data : DataFrame
        Long frame (``temperature``, grouping columns, ``metric``, ``estimate``, ``ci_low``,
        ``ci_high``) or wide (one row per temperature and group with a column per metric).
    metrics : sequence of str
        Metrics to draw, one panel each.
    temperature : str
        Column holding the temperature.
    color : str, optional
        Column distinguishing the lines (e.g. ``"judge"``).
    recommended : str, optional
        Boolean column marking the recommended temperature (drawn as an open ring).
    title, subtitle, width, height
        Chart title, subtitle and the size of one panel.

    Returns
    -------
    altair.FacetChart
        One panel per metric (each with its own vertical scale) holding the lines, the
        intervals as rules and the ring at the recommended temperature.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> t = pd.DataFrame({"judge": "x", "temperature": [0.0, 0.5, 1.0],
    ...                   "scr_cr": [1.0, 0.95, 0.9], "acc_both": [0.7, 0.71, 0.66]})
    >>> spec = jk.viz.temperature_curves(t, ["scr_cr", "acc_both"]).to_dict()
    >>> spec["facet"]["column"]["field"]
    'metric_label'
    """
    builder = "temperature_curves"
    keys = keys_of(temperature, color, recommended)
    df = frame(data, builder)
    parts = []
    for m in metrics:
        one = metric_frame(df, m, keys, builder)
        one["metric"] = m
        one["metric_label"] = metric_label(m)
        parts.append(one)
    long = pd.concat(parts, ignore_index=True)
    order = [metric_label(m) for m in metrics]
    tips = [alt.Tooltip(f"{k}:N") for k in keys_of(color)] + [
        alt.Tooltip(f"{temperature}:Q", title="temperature"),
        alt.Tooltip("metric_label:N", title="metric"),
        alt.Tooltip("estimate:Q", format=".3f"),
        alt.Tooltip("ci_low:Q", title="95% CI low", format=".3f"),
        alt.Tooltip("ci_high:Q", title="95% CI high", format=".3f"),
    ]
    enc_color = alt.Color(f"{color}:N", title=color) if color else alt.value("#0072B2")
    base = alt.Chart().encode(
        x=alt.X(f"{temperature}:Q", title="temperature"), color=enc_color, tooltip=tips)
    layers: list[alt.Chart] = [
        base.mark_line(point=alt.OverlayMarkDef(size=45, filled=True)).encode(
            y=alt.Y("estimate:Q", title=None, scale=alt.Scale(zero=False)))
    ]
    if has_ci(long):
        layers.append(base.mark_rule(opacity=0.6).encode(y="ci_low:Q", y2="ci_high:Q"))
    if recommended is not None:
        layers.append(base.transform_filter(f"datum['{recommended}'] == true").mark_point(
            size=260, filled=False, strokeWidth=2, color="#222222").encode(y="estimate:Q"))
    return alt.layer(*layers, data=long).properties(width=width, height=height).facet(
        column=alt.Column("metric_label:N", title=None, sort=order)
    ).resolve_scale(y="independent").properties(
        title=title_params(title, subtitle, "Self-consistency and accuracy by temperature"))


def metric_heatmap(
    data: pd.DataFrame,
    metric: str,
    *,
    x: str = "task",
    y: str = "judge",
    diverging: bool | None = None,
    domain: tuple[float, float] | None = None,
    text: bool = True,
    title: str | None = None,
    subtitle: str | None = None,
    cell: int = 34,
) -> alt.LayerChart:
    """A metric as a grid of coloured cells, e.g. preference fairness per judge and task.

    Parameters
    ----------
    data : DataFrame
        Long or wide metric frame with the ``x`` and ``y`` columns.
    metric : str
        Metric to colour by.
    x, y : str
        Columns for the two axes.
    diverging : bool, optional
        Use a diverging scale centred at zero (default: for signed metrics such as PB, LB, PF).
    domain : (float, float), optional
        Colour-scale range.
    text : bool
        Write the value in each cell.
    title, subtitle : str, optional
        Chart title (default: the metric's label) and subtitle.
    cell : int
        Cell size in pixels.

    Returns
    -------
    altair.LayerChart
        The coloured cells and, with ``text``, their values (white on dark cells).

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pf = pd.DataFrame({"judge": ["x", "x", "y", "y"], "task": ["math", "code"] * 2,
    ...                    "preference_fairness": [0.1, -0.2, 0.0, 0.3]})
    >>> spec = jk.viz.metric_heatmap(pf, "preference_fairness").to_dict()
    >>> spec["layer"][0]["encoding"]["color"]["scale"]["domainMid"]
    0
    """
    builder = "metric_heatmap"
    keys = keys_of(y, x)
    df = metric_frame(data, metric, keys, builder)
    label = metric_label(metric)
    if diverging is None:
        diverging = metric in SIGN_LABELS
    if diverging:
        bound = float(df["estimate"].abs().max()) or 1.0
        scale = alt.Scale(scheme="redblue", reverse=True, domainMid=0,
                          domain=list(domain) if domain else [-bound, bound])
    else:
        scale = alt.Scale(scheme="viridis", domain=list(domain)) if domain else alt.Scale(
            scheme="viridis")
    base = alt.Chart(df).encode(
        x=alt.X(f"{x}:N", title=x, axis=alt.Axis(labelAngle=-35)),
        y=alt.Y(f"{y}:N", title=None),
        tooltip=stat_tooltips(keys, label),
    )
    layers: list[alt.Chart] = [base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color("estimate:Q", title=label, scale=scale))]
    if text:
        if diverging:
            dark = f"abs(datum.estimate) > {0.6 * float(scale.domain[1])}"
        else:
            values = df["estimate"].dropna()
            lo = domain[0] if domain else float(values.min()) if len(values) else 0.0
            hi = domain[1] if domain else float(values.max()) if len(values) else 1.0
            dark = f"datum.estimate < {lo + 0.45 * (hi - lo)}"  # viridis is dark at the low end
        layers.append(base.mark_text(fontSize=10).encode(
            text=alt.Text("estimate:Q", format=".2f"),
            color=alt.condition(dark, alt.value("white"), alt.value("#111111"))))
    return alt.layer(*layers).properties(
        width=alt.Step(cell), height=alt.Step(max(18, cell * 2 // 3)),
        title=title_params(title, subtitle, label))


def metric_scatter(
    data: pd.DataFrame,
    x: str,
    y: str,
    *,
    color: str | None = None,
    label: str | None = None,
    facet: str | None = None,
    detail: Sequence[str] = (),
    fit: str | None = None,
    x_reference: float | None = None,
    y_reference: float | None = None,
    x_title: str | None = None,
    y_title: str | None = None,
    x_domain: tuple[float, float] | None = None,
    y_domain: tuple[float, float] | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 380,
    height: int = 300,
) -> alt.LayerChart | alt.FacetChart:
    """Scatter of two numeric columns, with an optional fitted line drawn by the chart spec.

    Used for PC vs PF and PC vs prompt lengths (Shi et al. 2024, Fig. 4) and similar views.

    Parameters
    ----------
    data : DataFrame
        Wide frame with numeric columns ``x`` and ``y``.
    x, y : str
        Columns for the axes.
    color : str, optional
        Column colouring the points.
    label : str, optional
        Column written beside each point.
    facet : str, optional
        Column splitting the chart into panels (each with its own fit).
    detail : sequence of str
        Further columns shown in the tooltip.
    fit : {"linear", "quadratic"}, optional
        Draw a least-squares line or parabola over all points of a panel (Vega-Lite's
        regression transform, so the fit lives in the chart spec).
    x_reference, y_reference : float, optional
        Dashed reference lines at these values.
    x_title, y_title : str, optional
        Axis titles (default: the columns' metric labels).
    x_domain, y_domain : (float, float), optional
        Fixed axis ranges, e.g. ``(0, 1)`` for a rate; the fitted line is clipped to them.
        Default: fitted to the data (and the line).
    title, subtitle, width, height
        Chart title, subtitle and the size of one panel.

    Returns
    -------
    altair.LayerChart or altair.FacetChart
        Layers: the points, the fitted line, the ``label`` text and the reference lines (each
        only when asked for); one panel per ``facet`` value when ``facet`` is given.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> d = pd.DataFrame({"pc": [0.6, 0.7, 0.9], "pf": [0.2, 0.1, 0.0]})
    >>> spec = jk.viz.metric_scatter(d, "pc", "pf", fit="linear").to_dict()
    >>> spec["layer"][1]["transform"][0]["method"]
    'linear'
    """
    builder = "metric_scatter"
    df = frame(data, builder)
    require(df, [x, y, color, label, facet, *detail], builder)
    if fit not in (None, "linear", "quadratic"):
        raise ValueError(f"{builder}: fit must be None, 'linear' or 'quadratic', got {fit!r}")
    cols = keys_of(x, y, color, label, facet, list(detail))
    df, f = safe_names(df[cols].reset_index(drop=True), cols)
    x_title, y_title = x_title or metric_label(x), y_title or metric_label(y)
    tips = [alt.Tooltip(f"{f[c]}:N", title=c) for c in keys_of(color, label, facet, list(detail))] + [
        alt.Tooltip(f"{f[x]}:Q", title=x_title, format=".3f"),
        alt.Tooltip(f"{f[y]}:Q", title=y_title, format=".3f"),
    ]
    enc_color = alt.Color(f"{f[color]}:N", title=color) if color else alt.value("#0072B2")
    def scale(domain: tuple[float, float] | None) -> alt.Scale:
        if domain is None:
            return alt.Scale(zero=False)
        return alt.Scale(domain=[float(domain[0]), float(domain[1])], nice=False)

    base = alt.Chart().encode(
        x=alt.X(f"{f[x]}:Q", title=x_title, scale=scale(x_domain)),
        y=alt.Y(f"{f[y]}:Q", title=y_title, scale=scale(y_domain)),
    )
    layers: list[alt.Chart] = [
        base.mark_point(size=60, filled=True, opacity=0.75).encode(color=enc_color, tooltip=tips)]
    if fit is not None:
        kwargs = {"method": "poly", "order": 2} if fit == "quadratic" else {"method": "linear"}
        layers.append(base.transform_regression(f[x], f[y], **kwargs).mark_line(
            color="#222222", strokeDash=[6, 3], strokeWidth=1.8,
            clip=x_domain is not None or y_domain is not None))
    if label is not None:
        layers.append(base.mark_text(align="left", dx=6, fontSize=10, color="#444444").encode(
            text=f"{f[label]}:N"))
    if x_reference is not None:
        layers.append(ref_chart().mark_rule(strokeDash=[4, 4]).encode(x=alt.datum(x_reference)))
    if y_reference is not None:
        layers.append(ref_chart().mark_rule(strokeDash=[4, 4]).encode(y=alt.datum(y_reference)))
    chart = alt.layer(*layers, data=df).properties(width=width, height=height)
    default = f"{metric_label(y)} vs {metric_label(x)}"
    if facet is not None:
        return chart.facet(column=alt.Column(f"{f[facet]}:N", title=None)).properties(
            title=title_params(title, subtitle, default))
    return chart.properties(title=title_params(title, subtitle, default))
