"""What the chart builders share: reading judgekit's tidy frames, and the common chart parts.

Every module of :mod:`judgekit.viz` builds on these public helpers (and on nothing private of
another module). Metric functions return either a long frame (grouping columns, ``metric``, ``estimate``,
``ci_low``, ``ci_high``, ``n``) or, for :func:`judgekit.report_card`, one wide row per group with a
column per metric and ``<metric>_ci_low`` / ``<metric>_ci_high`` beside it. Chart builders accept
both; the frame helpers only select and rename columns, they compute nothing. The chart-part
helpers (tooltips, grouped bars, reference lines, titles) give every builder the same look.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import altair as alt
import numpy as np
import pandas as pd

__all__ = [
    "COUNT_METRICS", "GROUP_PADDING", "band_height", "band_order", "bar_mark", "frame", "grouped",
    "has_ci", "interval_readings", "keys_of", "metric_frame", "n_categories", "nice_bound",
    "readings", "ref_chart", "require", "safe_names", "stat_tooltips", "title_params", "wide_frame",
]

#: Report-card metrics that are counts of judgment pairs, not shares: drawn on a count axis.
COUNT_METRICS = frozenset({"primacy", "recency"})

# Characters Vega-Lite reads as nested access or type separators inside a field name.
_UNSAFE = re.compile(r"[.\[\]\\:\"']")

_STATS = ("estimate", "ci_low", "ci_high", "n")


def frame(data: object, builder: str) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"{builder}: data must be a pandas DataFrame, got {type(data).__name__}")
    if data.empty:
        raise ValueError(f"{builder}: data is empty; there is nothing to draw")
    return data


def require(df: pd.DataFrame, columns: Iterable[str | None], builder: str) -> None:
    missing = [c for c in columns if c is not None and c not in df.columns]
    if missing:
        raise ValueError(
            f"{builder}: data has no column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(c) for c in missing)}; it has {list(df.columns)}"
        )


def keys_of(*keys: str | Sequence[str] | None) -> list[str]:
    out: list[str] = []
    for key in keys:
        if key is None:
            continue
        for k in [key] if isinstance(key, str) else key:
            if k not in out:
                out.append(k)
    return out


def metric_frame(data: pd.DataFrame, metric: str | None, keys: Sequence[str], builder: str) -> pd.DataFrame:
    """Rows of one metric with columns ``keys + [estimate, ci_low, ci_high, n]``.

    ``metric=None`` keeps every row of a long frame (e.g. several metrics, drawn by="metric").

    ``ci_low``/``ci_high`` are NaN and ``n`` is missing when the input has no such columns.
    """
    df = frame(data, builder)
    if metric is None:
        # every row as it is: a long frame whose rows are different metrics (draw with by="metric")
        require(df, [*keys, "estimate"], builder)
        out = df[list(keys)].copy()
        for stat in _STATS:
            out[stat] = df[stat] if stat in df.columns else float("nan")
    elif "metric" in df.columns and "estimate" in df.columns:
        available = pd.unique(df["metric"].astype(str))
        if metric not in set(available):
            raise ValueError(
                f"{builder}: no rows with metric == {metric!r}; the data has metrics "
                f"{sorted(available)}"
            )
        df = df[df["metric"].astype(str) == metric]
        require(df, keys, builder)
        out = df[list(keys)].copy()
        for stat in _STATS:
            out[stat] = df[stat] if stat in df.columns else float("nan")
    elif "estimate" in df.columns:
        require(df, keys, builder)
        out = df[list(keys)].copy()
        for stat in _STATS:
            out[stat] = df[stat] if stat in df.columns else float("nan")
    else:
        require(df, [*keys, metric], builder)
        out = df[list(keys)].copy()
        out["estimate"] = df[metric]
        for stat in ("ci_low", "ci_high", "n"):
            col = f"{metric}_{stat}"
            out[stat] = df[col] if col in df.columns else float("nan")
        if out["n"].isna().all() and "n_pairs" in df.columns:
            out["n"] = df["n_pairs"]
    out = out.reset_index(drop=True)
    for stat in ("estimate", "ci_low", "ci_high"):
        out[stat] = pd.to_numeric(out[stat], errors="coerce").astype("float64")
    return out


def wide_frame(
    data: pd.DataFrame, metrics: Sequence[str], keys: Sequence[str], builder: str
) -> pd.DataFrame:
    """One row per group with ``<m>``, ``<m>_ci_low``, ``<m>_ci_high`` for each metric ``m``."""
    df = frame(data, builder)
    if "metric" in df.columns and "estimate" in df.columns:
        parts = []
        for m in metrics:
            one = metric_frame(df, m, keys, builder).drop(columns="n")
            parts.append(one.rename(columns={
                "estimate": m, "ci_low": f"{m}_ci_low", "ci_high": f"{m}_ci_high"}))
        out = parts[0]
        for part in parts[1:]:
            out = out.merge(part, on=list(keys), how="outer")
        return out
    require(df, [*keys, *metrics], builder)
    cols = list(keys)
    for m in metrics:
        cols.append(m)
        cols.extend(c for c in (f"{m}_ci_low", f"{m}_ci_high") if c in df.columns)
    out = df[cols].copy().reset_index(drop=True)
    for m in metrics:
        for c in (f"{m}_ci_low", f"{m}_ci_high"):
            if c not in out.columns:
                out[c] = float("nan")
    return out


def n_categories(df: pd.DataFrame, column: str | None) -> int:
    return 1 if column is None else int(df[column].nunique())


def safe_names(df: pd.DataFrame, columns: Iterable[str | None]) -> tuple[pd.DataFrame, dict[str, str]]:
    """Rename columns whose names Vega-Lite would misread (dots, brackets, colons, quotes).

    Returns the renamed frame and a mapping from every given column to the name to encode.
    """
    mapping: dict[str, str] = {}
    taken = set(df.columns)
    for column in columns:
        if column is None or column in mapping:
            continue
        if not _UNSAFE.search(column):
            mapping[column] = column
            continue
        name = _UNSAFE.sub("_", column)
        while name in taken:
            name += "_"
        taken.add(name)
        mapping[column] = name
    renames = {k: v for k, v in mapping.items() if k != v}
    return (df.rename(columns=renames) if renames else df), mapping


# ------------------------------------------------------------------ chart parts
def stat_tooltips(keys: Sequence[str], label: str, fmt: str = ".3f") -> list[alt.Tooltip]:
    tips = [alt.Tooltip(f"{k}:N", title=k) for k in keys]
    tips += [
        alt.Tooltip("estimate:Q", title=label, format=fmt),
        alt.Tooltip("ci_low:Q", title="95% CI low", format=fmt),
        alt.Tooltip("ci_high:Q", title="95% CI high", format=fmt),
        alt.Tooltip("n:Q", title="n"),
    ]
    return tips


def has_ci(df: pd.DataFrame) -> bool:
    return bool(df["ci_low"].notna().any() and df["ci_high"].notna().any())


def nice_bound(value: float) -> float:
    """The smallest round number at least ``value`` (for symmetric axes around zero)."""
    if not value > 0:  # also NaN
        return 1.0
    for step in (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0):
        if value <= step:
            return step
    return float(np.ceil(value))


def band_height(color: str | None) -> alt.Step:
    """Height by bar: one step per band, or per bar within a band when bars are grouped."""
    return alt.Step(20) if color is None else alt.Step(12, **{"for": "offset"})


#: Gap between grouped bars, as a share of each bar's band.
GROUP_PADDING = 0.15


def grouped(channel: str, *, title: str | None = None, sort: list | None = None) -> alt.YOffset:
    """The yOffset channel of grouped bars, with the gap between bars made by the offset scale.

    Bars of grouped charts fill their offset band and the gap comes from the scale's padding: a
    bar shrunk with ``height={"band": ...}`` is not centred where Vega-Lite draws the rule and
    text layers on the same band, so intervals and labels drifted onto the neighbouring bar.
    """
    kwargs = {} if title is None else {"title": title}
    if sort is not None:
        kwargs["sort"] = sort
    return alt.YOffset(channel, scale=alt.Scale(paddingInner=GROUP_PADDING), **kwargs)


def bar_mark(grouped: bool) -> dict:
    """Mark properties of a bar: ungrouped bars leave a gap by their height."""
    return {} if grouped else {"height": {"band": 0.85}}


def band_order(df: pd.DataFrame, by: str, value: str = "estimate", *, descending: bool = True) -> list:
    """The values of ``by`` ordered by their mean ``value`` (best first when ``descending``),
    as an explicit list every layer of the chart shares."""
    means = df.groupby(by, sort=False)[value].mean()
    return means.sort_values(ascending=not descending, kind="stable").index.tolist()


def ref_chart() -> alt.Chart:
    """A chart over one empty row, for reference lines placed by ``alt.datum`` values."""
    return alt.Chart(alt.InlineData(values=[{}]))


def title_params(title: str | None, subtitle: str | None, default: str) -> alt.TitleParams:
    return alt.TitleParams(text=title if title is not None else default, subtitle=subtitle or "")


def readings(pos: str, neg: str, margin: float | None) -> tuple[str, ...]:
    """Every reading a bar can have, in legend order."""
    within = f"no material effect (CI within ±{margin:g})" if margin is not None else "no material effect"
    return (pos, neg, within, "inconclusive (CI includes 0)", "inconclusive (no interval)")


def interval_readings(df: pd.DataFrame, pos: str, neg: str, margin: float | None) -> pd.Series:
    """What each row's interval shows: ``pos`` / ``neg`` when it excludes zero, no material
    effect when it lies inside ±``margin``, else inconclusive (an estimate alone decides nothing).
    """
    _, _, within, includes, missing = readings(pos, neg, margin)
    lo, hi = df["ci_low"].astype(float), df["ci_high"].astype(float)
    out = pd.Series(missing, index=df.index, dtype=object)
    known = lo.notna() & hi.notna()
    out[known] = includes
    if margin is not None:
        out[known & (lo > -margin) & (hi < margin)] = within
    out[known & (lo > 0)] = pos
    out[known & (hi < 0)] = neg
    return out
