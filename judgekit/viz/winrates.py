"""Charts of win rates and their length-controlled correction (Dubois et al. 2024)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import pandas as pd

from judgekit.viz._theme import NEGATIVE, NEUTRAL, POSITIVE, metric_label
from judgekit.viz.shared import frame, keys_of, require, safe_names, title_params

__all__ = ["arena_scatter", "gameability_bars", "leaderboard_slope", "winrate_matrix"]


def _spread(values: pd.Series, *, lo: float, hi: float, height: int, gap_px: float = 11.0) -> pd.Series:
    """Which labels to write so that none overlaps the one above it (greedy, from the top)."""
    per_px = (hi - lo) / max(height, 1)
    keep = pd.Series(False, index=values.index)
    last = None
    for idx in values.sort_values(ascending=False).index:
        v = values[idx]
        if pd.notna(v) and (last is None or last - v >= gap_px * per_px):
            keep[idx] = True
            last = v
    return keep


def _dodge(values: pd.Series, *, top: float, gap: float) -> pd.Series:
    """Label positions at least ``gap`` apart, each as near its value as the others allow and
    all within [0, top] (pushed down from the top, then up from the bottom)."""
    order = values.sort_values(ascending=False, kind="stable").index
    pos = values[order].astype(float).clip(0.0, top).to_numpy(copy=True)
    for i in range(1, len(pos)):
        pos[i] = min(pos[i], pos[i - 1] - gap)
    if len(pos):
        pos[-1] = max(pos[-1], 0.0)
    for i in range(len(pos) - 2, -1, -1):
        pos[i] = max(pos[i], pos[i + 1] + gap)
    return pd.Series(pos, index=order).reindex(values.index)


def _nice_top(value: float) -> float:
    step = 10.0 if value > 20 else 5.0 if value > 5 else 1.0
    return max(step, step * -(-value // step))


def leaderboard_slope(
    data: pd.DataFrame,
    *,
    model: str = "model",
    before: str = "win_rate",
    after: str = "lc_win_rate",
    color: str | None = None,
    labels: bool | Sequence[str] = True,
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 260,
    height: int = 520,
) -> alt.LayerChart:
    """Slope chart: each model's raw win rate joined to its length-controlled win rate.

    Lines are coloured by whether the model gains or loses under length control, grey when it
    moves by less than 0.05 points (the baseline), or by ``color`` (e.g. open vs closed weights,
    as in Dubois et al. 2024, Fig. 4).

    Parameters
    ----------
    data : DataFrame
        One row per model with columns ``before`` and ``after`` (in percent).
    model : str
        Column naming the model.
    before, after : str
        The two win-rate columns, drawn left and right.
    color : str, optional
        Column to colour lines by, instead of the direction of the change.
    labels : bool or sequence of str
        Write model names at the right end: ``True`` for as many as fit without overlapping
        (from the top), or the names to label, every one of them: where names would overlap
        they are moved apart and joined to their point by a thin line (as many as the height
        holds at 11 px each, in the order given).
    title, subtitle, width, height
        Chart title, subtitle and size.

    Returns
    -------
    altair.LayerChart
        One line per model from ``before`` to ``after`` with points at both ends, and the
        model names at the right end; the chart's data marks each labelled model (``_label``)
        and where its name is written (``_label_y``).

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> lb = pd.DataFrame({"model": ["a", "b", "c"], "win_rate": [30.0, 20.0, 19.0],
    ...                    "lc_win_rate": [25.0, 28.0, 27.9]})
    >>> spec = jk.viz.leaderboard_slope(lb, labels=["b", "c"]).to_dict()
    >>> [t["fold"] for t in spec["layer"][0]["transform"] if "fold" in t]
    [['win_rate', 'lc_win_rate']]
    >>> [r["model"] for r in spec["datasets"][spec["data"]["name"]] if r["_label"]]  # both, apart
    ['b', 'c']
    """
    builder = "leaderboard_slope"
    df = frame(data, builder)
    require(df, [model, before, after, color], builder)
    names = {before: metric_label(before), after: metric_label(after)}
    df, f = safe_names(df[keys_of(model, before, after, color)].reset_index(drop=True),
                       [model, before, after, color])
    model, before, after, color = f[model], f[before], f[after], f.get(color) if color else None
    names = {f[k]: v for k, v in names.items()}
    up, down, same = "higher after length control", "lower after length control", "unchanged"
    # within 0.05 points counts as unchanged (the baseline sits at 50 on both sides)
    base = alt.Chart().transform_calculate(
        change=f"datum['{after}'] - datum['{before}']",
        direction=(f"abs(datum['{after}'] - datum['{before}']) < 0.05 ? '{same}' : "
                   f"datum['{after}'] > datum['{before}'] ? '{up}' : '{down}'"),
    ).transform_fold([before, after], as_=["measure", "value"]).transform_calculate(
        side=f"datum.measure == '{after}' ? 1 : 0")
    enc_color = (alt.Color(f"{color}:N", title=color) if color else
                 alt.Color("direction:N", title=None, scale=alt.Scale(
                     domain=[up, down, same], range=[NEGATIVE, POSITIVE, NEUTRAL]),
                     legend=alt.Legend(orient="bottom")))
    # the two columns sit at 0 and 1 of a numeric axis, so that names can be written beside
    # the right one and joined to their points
    x = alt.X("side:Q", title=None, scale=alt.Scale(domain=[-0.22, 1.1], nice=False),
              axis=alt.Axis(values=[0, 1], grid=False, ticks=False, domain=False, labelAngle=0,
                            labelLimit=200, labelExpr=f"datum.value == 0 ? '{names[before]}' : "
                                                      f"'{names[after]}'"))
    tips = [alt.Tooltip(f"{model}:N"), alt.Tooltip(f"{before}:Q", title=names[before], format=".1f"),
            alt.Tooltip(f"{after}:Q", title=names[after], format=".1f"),
            alt.Tooltip("change:Q", title="change", format="+.1f")]
    top = _nice_top(float(df[[before, after]].max().max()))
    y_scale = alt.Scale(domain=[0, top], nice=False)
    y = alt.Y("value:Q", title="win rate (%)", scale=y_scale)
    enc = {"x": x, "y": y, "color": enc_color, "detail": f"{model}:N", "tooltip": tips}
    layers: list[alt.Chart] = [
        base.mark_line(strokeWidth=1.5, opacity=0.75).encode(**enc),
        base.mark_point(filled=True, size=35).encode(**enc),
    ]
    gap = 11.0 * top / max(height, 1)  # one line of 9.5 px text, in win-rate points
    if labels is True:
        df["_label"] = _spread(df[after], lo=0.0, hi=top, height=height)
    elif labels is False:
        df["_label"] = False
    else:  # every name asked for, in order, as many as the height holds
        rank = df[model].map({name: k for k, name in enumerate(dict.fromkeys(labels))})
        chosen = rank.dropna().sort_values(kind="stable").index[: int(top / gap) + 1]
        df["_label"] = df.index.isin(chosen)
    df["_label_y"] = float("nan")
    df.loc[df["_label"], "_label_y"] = _dodge(df.loc[df["_label"], after], top=top, gap=gap)
    if df["_label"].any():
        named = base.transform_filter(f"datum.measure == '{after}' && datum._label")
        layers.append(named.mark_rule(strokeWidth=0.6, opacity=0.7).encode(
            x=alt.datum(1.015), x2=alt.datum(1.09), y=y, y2="_label_y:Q", color=enc_color))
        layers.append(named.mark_text(align="left", dx=2, fontSize=9.5).encode(
            x=alt.datum(1.09), y=alt.Y("_label_y:Q", scale=y_scale), text=f"{model}:N",
            color=enc_color))
    return alt.layer(*layers, data=df).properties(
        width=width, height=height,
        title=title_params(title, subtitle, "Leaderboard before and after length control"))


def arena_scatter(
    data: pd.DataFrame,
    *,
    x: str = "arena_elo",
    y: Sequence[str] = ("win_rate", "lc_win_rate"),
    model: str = "model",
    correlations: Mapping[str, float] | None = None,
    labels: bool = False,
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 300,
    height: int = 280,
) -> alt.FacetChart:
    """Win rates against Chatbot Arena Elo, one panel per win-rate measure (Fig. 1).

    Parameters
    ----------
    data : DataFrame
        One row per model with the Elo column and each ``y`` column.
    x : str
        Column with Arena Elo.
    y : sequence of str
        Win-rate columns, one panel each.
    model : str
        Column naming the model (tooltip, labels).
    correlations : mapping of str to float, optional
        Correlation per ``y`` column (computed by judgekit, e.g. Spearman's rho), written into
        the panel titles.
    labels : bool
        Write model names beside the points.
    title, subtitle, width, height
        Chart title, subtitle and panel size.

    Returns
    -------
    altair.FacetChart
        One panel per ``y`` column (each with its own vertical scale) holding the points, a
        least-squares trend line (dashed, named in the subtitle) and, with ``labels``, the
        model names.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> d = pd.DataFrame({"model": ["a", "b", "c"], "arena_elo": [1100, 1200, 1250],
    ...                   "win_rate": [10.0, 20.0, 40.0], "lc_win_rate": [12.0, 25.0, 38.0]})
    >>> spec = jk.viz.arena_scatter(d, correlations={"win_rate": 0.93, "lc_win_rate": 0.98}).to_dict()
    >>> sorted(spec["facet"]["column"]["sort"])
    ['Length-controlled win rate (%) (rho = 0.98)', 'Win rate (%) (rho = 0.93)']
    """
    builder = "arena_scatter"
    df = frame(data, builder)
    y = list(y)
    require(df, [x, model, *y], builder)
    df = df[keys_of(model, x, y)].reset_index(drop=True)
    correlations = dict(correlations or {})
    panel = {c: metric_label(c) + (f" (rho = {correlations[c]:.3g})" if c in correlations else "")
             for c in y}
    long = df.melt(id_vars=[model, x], value_vars=y, var_name="measure", value_name="value")
    long["panel"] = long["measure"].map(panel)
    long = long.rename(columns={x: "elo", model: "model_name"})
    # a win rate is never negative: the axis starts at 0 and the trend line is clipped there;
    # both axes end on a round value past the last point (a set minimum alone turns off
    # rounding, and the top point was cut in half by the frame)
    base = alt.Chart().encode(
        x=alt.X("elo:Q", title="Chatbot Arena Elo", scale=alt.Scale(zero=False, nice=True, padding=10)),
        y=alt.Y("value:Q", title="win rate (%)", scale=alt.Scale(domainMin=0, nice=True)))
    layers: list[alt.Chart] = [
        base.mark_point(filled=True, size=55, opacity=0.85, color="#0072B2").encode(
            tooltip=[alt.Tooltip("model_name:N", title=model), alt.Tooltip("elo:Q", title=x),
                     alt.Tooltip("measure:N"), alt.Tooltip("value:Q", format=".1f")]),
        base.transform_regression("elo", "value").mark_line(
            color="#222222", strokeDash=[6, 3], strokeWidth=1.5, clip=True),
    ]
    if labels:
        layers.append(base.mark_text(align="left", dx=5, fontSize=9, color="#444444").encode(
            text="model_name:N"))
    trend = "dashed line: least-squares fit of the win rate on the Elo"
    return alt.layer(*layers, data=long).properties(width=width, height=height).facet(
        column=alt.Column("panel:N", title=None, sort=[panel[c] for c in y])
    ).resolve_scale(y="independent").properties(
        title=alt.TitleParams(title if title is not None else "AlpacaEval against Chatbot Arena",
                              subtitle=[subtitle, trend] if subtitle else trend))


def gameability_bars(
    data: pd.DataFrame,
    *,
    model: str = "model",
    variant: str = "variant",
    value: Sequence[str] = ("win_rate", "lc_win_rate"),
    variant_order: Sequence[str] = ("concise", "standard", "verbose"),
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 300,
    height: int = 220,
) -> alt.FacetChart:
    """Win rates of the same model prompted to be concise, standard or verbose (Fig. 3).

    A measure that is hard to game keeps the three bars of a model at the same height.

    Parameters
    ----------
    data : DataFrame
        One row per (model, variant) with the ``value`` columns.
    model, variant : str
        Columns naming the base model and the prompting variant.
    value : sequence of str
        Win-rate columns, one panel each (e.g. raw and length-controlled).
    variant_order : sequence of str
        Order and colours of the variants.
    title, subtitle, width, height
        Chart title, subtitle and panel size.

    Returns
    -------
    altair.FacetChart
        One panel per ``value`` column; in a panel, one group of bars per model with one bar
        per variant.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> d = pd.DataFrame({"model": "gpt4", "variant": ["concise", "standard", "verbose"],
    ...                   "win_rate": [22.0, 30.0, 46.0], "lc_win_rate": [41.0, 50.0, 51.0]})
    >>> spec = jk.viz.gameability_bars(d).to_dict()
    >>> spec["spec"]["encoding"]["xOffset"]["sort"]
    ['concise', 'standard', 'verbose']
    """
    builder = "gameability_bars"
    df = frame(data, builder)
    value = list(value)
    require(df, [model, variant, *value], builder)
    panel_names = {c: metric_label(c) for c in value}
    df, f = safe_names(df[keys_of(model, variant, value)].reset_index(drop=True),
                       [model, variant, *value])
    model, variant = f[model], f[variant]
    panel_names = {f[c]: name for c, name in panel_names.items()}
    value = [f[c] for c in value]
    order = list(variant_order)
    extra = [v for v in pd.unique(df[variant]) if v not in order]
    order += extra
    expr = " : ".join(f"datum.measure == '{c}' ? '{panel_names[c]}'" for c in value) + " : datum.measure"
    chart = alt.Chart(df).transform_fold(value, as_=["measure", "value"]).transform_calculate(
        panel=expr).mark_bar().encode(
        x=alt.X(f"{model}:N", title=None, axis=alt.Axis(labelAngle=-30, labelLimit=180)),
        xOffset=alt.XOffset(f"{variant}:N", sort=order),
        y=alt.Y("value:Q", title="win rate (%)"),
        color=alt.Color(f"{variant}:N", title="prompted to be", sort=order,
                        scale=alt.Scale(range=["#56B4E9", "#0072B2", "#D55E00"]
                                        if len(order) == 3 else None)),
        tooltip=[alt.Tooltip(f"{model}:N"), alt.Tooltip(f"{variant}:N"),
                 alt.Tooltip("measure:N"), alt.Tooltip("value:Q", format=".1f")],
    ).properties(width=width, height=height)
    return chart.facet(column=alt.Column("panel:N", title=None,
                                         sort=[panel_names[c] for c in value])).properties(
        title=title_params(title, subtitle, "Gameability: win rate by verbosity prompt"))


def winrate_matrix(
    data: pd.DataFrame,
    *,
    model: str = "model",
    baseline: str = "baseline",
    value: str = "win_rate",
    order: Sequence[str] | None = None,
    text: bool | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    cell: int = 26,
) -> alt.LayerChart:
    """Predicted win rate of every model (rows) against every baseline (columns) (Fig. 5).

    Parameters
    ----------
    data : DataFrame
        One row per (model, baseline) with the win rate in percent.
    model, baseline, value : str
        Columns for rows, columns and colour.
    order : sequence of str, optional
        Order of models on both axes (e.g. by LC win rate).
    text : bool, optional
        Write values in cells (default: when there are at most 16 models).
    title, subtitle : str, optional
        Chart title (default "Predicted win rate against any baseline") and subtitle.
    cell : int
        Cell size in pixels.

    Returns
    -------
    altair.LayerChart
        The cells on a diverging colour scale centred at 50% and, with ``text``, their values.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> m = pd.DataFrame({"model": ["a", "a", "b", "b"], "baseline": ["a", "b", "a", "b"],
    ...                   "win_rate": [50.0, 70.0, 30.0, 50.0]})
    >>> jk.viz.winrate_matrix(m).to_dict()["layer"][0]["encoding"]["color"]["scale"]["domainMid"]
    50
    """
    builder = "winrate_matrix"
    df = frame(data, builder)
    require(df, [model, baseline, value], builder)
    df = df[[model, baseline, value]].reset_index(drop=True)
    sort = list(order) if order is not None else "ascending"
    n_models = df[model].nunique()
    text = n_models <= 16 if text is None else text
    base = alt.Chart().encode(
        x=alt.X(f"{baseline}:N", sort=sort, title="baseline", axis=alt.Axis(labelAngle=-45)),
        y=alt.Y(f"{model}:N", sort=sort, title="model"),
        tooltip=[alt.Tooltip(f"{model}:N"), alt.Tooltip(f"{baseline}:N"),
                 alt.Tooltip(f"{value}:Q", title="win rate (%)", format=".1f")])
    layers: list[alt.Chart] = [base.mark_rect().encode(color=alt.Color(
        f"{value}:Q", title="win rate (%)",
        scale=alt.Scale(scheme="redblue", domain=[0, 100], domainMid=50)))]
    if text:
        layers.append(base.mark_text(fontSize=9).encode(
            text=alt.Text(f"{value}:Q", format=".0f"),
            color=alt.condition(f"abs(datum['{value}'] - 50) > 30", alt.value("white"),
                                alt.value("#111111"))))
    return alt.layer(*layers, data=df).properties(
        width=alt.Step(cell), height=alt.Step(cell),
        title=title_params(title, subtitle, "Predicted win rate against any baseline"))
