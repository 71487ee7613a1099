"""Charts of the bias perturbation suite (Ye et al. 2024, CALM)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from judgekit.viz._theme import metric_label
from judgekit.viz.shared import band_order, grouped, keys_of, title_params, wide_frame

__all__ = ["robustness_bars"]


def robustness_bars(
    data: pd.DataFrame,
    *,
    bias: str = "bias",
    judge: str | None = None,
    robustness: str = "robustness",
    consistency: str | None = "consistency",
    title: str | None = None,
    subtitle: str | None = None,
    width: int = 360,
) -> alt.LayerChart:
    """Robustness rate per bias type, beside the judge's own consistency on an unperturbed re-run.

    A bar well short of its tick is bias; a bar that reaches its tick is only the judge's noise.

    Parameters
    ----------
    data : DataFrame
        As :func:`judgekit.bias_suite` returns: long (``bias``, ``metric``, ``estimate``,
        ``ci_low``, ``ci_high``) or wide (one row per bias with both rates).
    bias : str
        Column naming the bias type.
    judge : str, optional
        Column naming the judge, to compare several (side-by-side bars).
    robustness, consistency : str
        Metric names of the robustness rate (bars) and the consistency rate (ticks; ``None``
        for none), as :func:`judgekit.bias_report` names them.
    title, subtitle, width
        Chart title, subtitle and width.

    Returns
    -------
    altair.LayerChart

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> d = pd.DataFrame({"bias": ["authority", "bandwagon"], "robustness": [0.7, 0.9],
    ...                   "consistency": [0.92, 0.93]})
    >>> spec = jk.viz.robustness_bars(d).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['bar', 'tick']
    """
    builder = "robustness_bars"
    keys = keys_of(bias, judge)
    metrics = [robustness] + ([consistency] if consistency else [])
    df = wide_frame(data, metrics, keys, builder)
    tips = [alt.Tooltip(f"{k}:N") for k in keys] + [
        alt.Tooltip(f"{robustness}:Q", title=metric_label(robustness), format=".3f"),
        alt.Tooltip(f"{robustness}_ci_low:Q", title="95% CI low", format=".3f"),
        alt.Tooltip(f"{robustness}_ci_high:Q", title="95% CI high", format=".3f")]
    if consistency:
        tips.append(alt.Tooltip(f"{consistency}:Q", title=metric_label(consistency), format=".3f"))
    base = alt.Chart().encode(
        y=alt.Y(f"{bias}:N", title=None, sort=band_order(df, bias, robustness, descending=False)),
        tooltip=tips)
    if judge is not None:
        base = base.encode(yOffset=grouped(f"{judge}:N"))
        bar_color = alt.Color(f"{judge}:N", title=judge)
    else:
        bar_color = alt.value("#0072B2")
    x_scale = alt.Scale(domain=[0, 1])
    layers: list[alt.Chart] = [base.mark_bar(**({} if judge else {"height": {"band": 0.8}})).encode(
        x=alt.X(f"{robustness}:Q", title=metric_label(robustness), scale=x_scale),
        color=bar_color)]
    if df[f"{robustness}_ci_low"].notna().any():
        layers.append(base.mark_rule(color="#333333").encode(
            x=f"{robustness}_ci_low:Q", x2=f"{robustness}_ci_high:Q"))
    if consistency:
        layers.append(base.mark_tick(color="#222222", thickness=3, size=11 if judge else 18).encode(
            x=alt.X(f"{consistency}:Q")))
    if subtitle is None:
        subtitle = ("bars: share of verdicts unchanged by the perturbation (95% CI)"
                    + ("; ticks: the judge's own consistency on an unperturbed re-run"
                       if consistency else ""))
    height = alt.Step(12, **{"for": "offset"}) if judge else alt.Step(22)
    return alt.layer(*layers, data=df).properties(
        width=width, height=height,
        title=title_params(title, subtitle, "Robustness to perturbations"))
