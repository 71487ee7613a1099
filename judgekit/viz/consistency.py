"""Charts of position consistency and judge agreement (Shi et al. 2024, Figs. 4-6)."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from judgekit.viz._theme import POSITIVE, metric_label
from judgekit.viz.accuracy import metric_scatter
from judgekit.viz.shared import frame, keys_of, metric_frame, require, title_params

__all__ = ["agreement_heatmap", "consistency_vs_winrate", "disagreement_histogram"]

#: Ranges the metrics can take (Shi et al. 2024): the y axis of consistency_vs_winrate.
_BOUNDS = {"position_consistency": (0.0, 1.0), "preference_fairness": (-1.0, 1.0)}


def consistency_vs_winrate(
    data: pd.DataFrame,
    metric: str = "position_consistency",
    *,
    win_rate: str = "overall_win_rate",
    color: str | None = "judge",
    facet: str | None = None,
    detail: Sequence[str] = (),
    fit: str | None = "quadratic",
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 380,
    height: int = 300,
) -> alt.LayerChart | alt.FacetChart:
    """Position consistency (or fairness) against the candidate's overall win rate.

    Shi et al. (2024, Figs. 4a-b and 6) find a parabola: judgments are least consistent when the
    two candidates are close (win rate near 0.5, a small answer-quality gap). The fitted parabola
    is drawn by the chart spec over all points of a panel. The axes span what the quantities can
    take (win rate and PC in [0, 1], PF in [-1, 1]), and the parabola is clipped to them.

    Parameters
    ----------
    data : DataFrame
        One row per (judge, task, candidate) or similar, with columns ``metric`` and ``win_rate``.
    metric : str
        ``"position_consistency"`` or ``"preference_fairness"`` (then a zero line is drawn).
    win_rate : str
        Column with the overall win rate of the candidate against the baseline.
    color, facet : str, optional
        Columns colouring the points and splitting panels (e.g. one panel per judge, Fig. 6).
    detail : sequence of str
        Further tooltip columns (e.g. ``("task", "candidate")``).
    fit : {"quadratic", "linear", None}
        Fitted curve.
    title, subtitle, width, height
        Chart title, subtitle and panel size.

    Returns
    -------
    altair.LayerChart or altair.FacetChart

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> d = pd.DataFrame({"judge": "x", "overall_win_rate": [0.1, 0.5, 0.9],
    ...                   "position_consistency": [0.9, 0.6, 0.85]})
    >>> spec = jk.viz.consistency_vs_winrate(d).to_dict()
    >>> spec["layer"][1]["transform"][0]["order"]
    2
    """
    y_reference = 0.0 if metric == "preference_fairness" else None
    # PC is a share in [0, 1], PF lies in [-1, 1]: fixed axes keep the fitted parabola from
    # suggesting values the metric cannot take
    y_domain = _BOUNDS.get(metric)
    x_title = ("candidate's overall win rate" if facet is not None
               else "overall win rate of the candidate over the baseline")
    return metric_scatter(
        data, win_rate, metric, color=color, facet=facet, detail=detail, fit=fit,
        x_reference=0.5, y_reference=y_reference, x_title=x_title,
        x_domain=(0.0, 1.0), y_domain=y_domain,
        title=title if title is not None else f"{metric_label(metric)} vs overall win rate",
        subtitle=subtitle, width=width, height=height,
    )


def agreement_heatmap(
    data: pd.DataFrame,
    *,
    judge_1: str = "judge_1",
    judge_2: str = "judge_2",
    metric: str | None = None,
    value: str = "estimate",
    facet: str | None = None,
    order: Sequence[str] | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    cell: int = 32,
) -> alt.LayerChart | alt.FacetChart:
    """Mutual agreement between judges as a heatmap (Shi et al. 2024, Fig. 5c-e).

    Parameters
    ----------
    data : DataFrame
        One row per judge pair: ``judge_1``, ``judge_2`` and the agreement (``value``, or a long
        metric frame filtered by ``metric``). Both (i, j) and (j, i) rows may be present; the
        chart draws the rows it is given.
    judge_1, judge_2 : str
        Columns naming the two judges.
    metric : str, optional
        For a long metric frame: which metric's rows to draw (e.g. ``"agreement_with_ties"``).
    value : str
        Column with the agreement when ``metric`` is not given.
    facet : str, optional
        Column splitting panels (e.g. ``"benchmark"``).
    order : sequence of str, optional
        Judge order on both axes.
    title, subtitle : str, optional
    cell : int
        Cell size in pixels.

    Returns
    -------
    altair.LayerChart or altair.FacetChart

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> ag = pd.DataFrame({"judge_1": ["x", "x", "y", "y"], "judge_2": ["x", "y", "x", "y"],
    ...                    "estimate": [1.0, 0.7, 0.7, 1.0]})
    >>> spec = jk.viz.agreement_heatmap(ag).to_dict()
    >>> spec["layer"][0]["mark"]["type"], spec["layer"][0]["encoding"]["color"]["field"]
    ('rect', 'estimate')
    """
    builder = "agreement_heatmap"
    keys = keys_of(judge_1, judge_2, facet)
    if metric is not None:
        df = metric_frame(data, metric, keys, builder)
        value = "estimate"
    else:
        df = frame(data, builder)
        require(df, [*keys, value], builder)
        df = df[[*keys, value, *(c for c in ("n",) if c in df.columns)]].reset_index(drop=True)
    sort = list(order) if order is not None else "ascending"
    tips = [alt.Tooltip(f"{judge_1}:N", title="judge"), alt.Tooltip(f"{judge_2}:N", title="judge"),
            alt.Tooltip(f"{value}:Q", title="agreement", format=".3f")]
    if "n" in df.columns:
        tips.append(alt.Tooltip("n:Q"))
    base = alt.Chart().encode(
        x=alt.X(f"{judge_2}:N", title=None, sort=sort, axis=alt.Axis(labelAngle=-40)),
        y=alt.Y(f"{judge_1}:N", title=None, sort=sort),
        tooltip=tips,
    )
    layers = [
        base.mark_rect(stroke="white", strokeWidth=1).encode(
            color=alt.Color(f"{value}:Q", title="agreement", scale=alt.Scale(scheme="viridis"))),
        base.mark_text(fontSize=9.5).encode(
            text=alt.Text(f"{value}:Q", format=".2f"),
            color=alt.condition(f"datum['{value}'] < 0.75", alt.value("white"),
                                alt.value("#111111"))),
    ]
    chart = alt.layer(*layers, data=df)
    default = "Mutual agreement between judges"
    if facet is not None:
        # fixed sizes: step sizing with independent scales inside a facet breaks Vega-Lite
        per_panel = df.groupby(facet)[[judge_1, judge_2]].nunique().max()
        chart = chart.properties(width=cell * int(per_panel[judge_2]),
                                 height=cell * int(per_panel[judge_1]))
        return chart.facet(column=alt.Column(f"{facet}:N", title=None)).resolve_scale(
            x="independent", y="independent").properties(title=title_params(title, subtitle, default))
    return chart.properties(width=alt.Step(cell), height=alt.Step(cell),
                            title=title_params(title, subtitle, default))


def disagreement_histogram(
    data: pd.DataFrame,
    *,
    disagreement: str = "disagreement",
    count: str | None = None,
    facet: str | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 320,
    height: int = 220,
) -> alt.LayerChart | alt.HConcatChart:
    """How many instances have each disagreement value, with the cumulative share (Fig. 5a-b).

    The disagreement of an instance is the number of judges whose choice differs from the
    majority's. Bars count instances; the line is the cumulative share of all instances.

    Parameters
    ----------
    data : DataFrame
        One row per instance with a ``disagreement`` column, or one row per value with a
        ``count`` column.
    disagreement : str
        Column with the disagreement value.
    count : str, optional
        Column with counts, when rows are already aggregated.
    facet : str, optional
        Column splitting panels (e.g. ``"benchmark"``).
    title, subtitle, width, height
        Chart title, subtitle and panel size.

    Returns
    -------
    altair.LayerChart or altair.HConcatChart

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> d = pd.DataFrame({"disagreement": [0, 0, 1, 2, 0, 1]})
    >>> spec = jk.viz.disagreement_histogram(d).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['bar', 'line']
    """
    builder = "disagreement_histogram"
    df = frame(data, builder)
    require(df, [disagreement, count, facet], builder)
    groups = keys_of(facet)
    df = df[keys_of(disagreement, count, facet)].reset_index(drop=True)
    agg = {"as": "instances", "field": count, "op": "sum"} if count else {"as": "instances", "op": "count"}
    base = alt.Chart().transform_aggregate(
        [alt.AggregatedFieldDef(**agg)], groupby=[disagreement, *groups]
    ).transform_window(
        cumulative="sum(instances)", sort=[alt.SortField(disagreement)], groupby=groups,
        frame=[None, 0],
    ).transform_joinaggregate(total="sum(instances)", groupby=groups).transform_calculate(
        share="datum.cumulative / datum.total"
    ).encode(x=alt.X(f"{disagreement}:O", title="disagreement (judges differing from the majority)",
                     axis=alt.Axis(labelAngle=0)))
    tips = [alt.Tooltip(f"{disagreement}:O", title="disagreement"),
            alt.Tooltip("instances:Q", title="instances"),
            alt.Tooltip("share:Q", title="cumulative share", format=".1%")]
    bars = base.mark_bar(color="#0072B2", opacity=0.85).encode(
        y=alt.Y("instances:Q", title="instances"), tooltip=tips)
    line = base.mark_line(color=POSITIVE, point=alt.OverlayMarkDef(color=POSITIVE)).encode(
        y=alt.Y("share:Q", title="cumulative share", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%", titleColor=POSITIVE)),
        tooltip=tips)
    default = title_params(title, subtitle, "Disagreement between judges")
    if facet is None:
        return alt.layer(bars, line, data=df).resolve_scale(y="independent").properties(
            width=width, height=height, title=default)
    # one dual-axis panel per facet value (Vega-Lite cannot facet a dual-axis layer)
    panels = [
        alt.layer(bars, line, data=df[df[facet] == value].reset_index(drop=True)).resolve_scale(
            y="independent").properties(width=width, height=height, title=str(value))
        for value in pd.unique(df[facet])
    ]
    return alt.hconcat(*panels).properties(title=default)
