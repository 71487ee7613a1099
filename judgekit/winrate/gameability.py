"""How much a win-rate metric moves when a model is prompted to be concise or verbose."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import special

from judgekit._stamp import stamped
from judgekit.winrate.rates import LN_TEMPERATURE

__all__ = ["gameability", "length_normalized_leaderboard", "verbosity_variants"]


@stamped
def verbosity_variants(
    leaderboard: pd.DataFrame,
    *,
    metrics: Sequence[str] = ("win_rate", "lc_win_rate"),
    model: str = "model",
    variants: Sequence[str] = ("concise", "verbose"),
    separator: str = "_",
    require_all: bool = True,
) -> pd.DataFrame:
    """The metric values of each model beside its prompted variants (the paper's Fig. 3 table).

    A variant of model ``m`` is the row named ``m + separator + variant`` (AlpacaEval names them
    ``gpt4_1106_preview_concise``, ``gpt4_1106_preview_verbose``).

    Parameters
    ----------
    leaderboard : DataFrame
        One row per model (e.g. :func:`judgekit.lc_win_rates`, or the published leaderboard from
        ``jk.load_table("alpacaeval_leaderboard")``), with the ``metrics`` columns.
    metrics : sequence of str
        Metric columns to report.
    model : str
        The column holding model names.
    variants : sequence of str
        Variant suffixes; ``"standard"`` is the model itself.
    separator : str
        Between the model name and the suffix.
    require_all : bool
        Keep only models that have every variant (else any model with at least one).

    Returns
    -------
    DataFrame
        Long form: ``base_model``, ``variant`` ("standard" or a suffix), ``model`` (the row's
        name), ``metric``, ``value``.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> lb = pd.DataFrame({"model": ["a", "a_concise", "a_verbose", "b"],
    ...                    "win_rate": [20.0, 10.0, 30.0, 5.0]})
    >>> jk.verbosity_variants(lb, metrics=["win_rate"])[["variant", "value"]].to_dict("list")
    {'variant': ['standard', 'concise', 'verbose'], 'value': [20.0, 10.0, 30.0]}
    """
    lb = _indexed(leaderboard, model, metrics)
    names = set(lb.index)
    rows = []
    for base in lb.index:
        present = [v for v in variants if f"{base}{separator}{v}" in names]
        if not present or (require_all and len(present) < len(variants)):
            continue
        for variant, name in [("standard", base)] + [(v, f"{base}{separator}{v}") for v in present]:
            for metric in metrics:
                rows.append({"base_model": base, "variant": variant, "model": name,
                             "metric": metric, "value": float(lb.at[name, metric])})
    return pd.DataFrame(rows, columns=["base_model", "variant", "model", "metric", "value"])


def _indexed(leaderboard: pd.DataFrame, model: str, metrics: Sequence[str]) -> pd.DataFrame:
    if model not in leaderboard.columns:
        raise ValueError(f"leaderboard has no column {model!r} with model names")
    missing = [m for m in metrics if m not in leaderboard.columns]
    if missing:
        raise ValueError(f"leaderboard has no column(s) {missing}; it has {list(leaderboard.columns)}")
    if "judge" in leaderboard.columns and leaderboard["judge"].nunique() > 1:
        raise ValueError("leaderboard holds several judges; pass one judge's rows")
    dup = leaderboard[model].duplicated()
    if dup.any():
        raise ValueError(f"leaderboard: model names repeat: {sorted(set(leaderboard.loc[dup, model]))[:5]}")
    return leaderboard.set_index(model)


@stamped
def gameability(
    leaderboard: pd.DataFrame,
    *,
    metrics: Sequence[str] = ("win_rate", "lc_win_rate"),
    model: str = "model",
    variants: Sequence[str] = ("concise", "verbose"),
    separator: str = "_",
    reference: str | None = "win_rate",
) -> pd.DataFrame:
    """Length gameability: the normalised spread of a metric across a model's verbosity variants.

    For each model that has all ``variants`` and each variant v, the relative standard deviation
    sd(metric(m), metric(m_v)) / mean(metric(m), metric(m_v)) is averaged over models; each metric
    is then rescaled by sd(reference)/sd(metric) across the standard (non-variant) models, so that
    a metric cannot look less gameable by merely compressing its range. ``overall`` is the mean
    over the variants. Lower is better.

    Parameters
    ----------
    leaderboard : DataFrame
        One row per model with the ``metrics`` (e.g. :func:`judgekit.lc_win_rates` output, which
        also carries ``ln_win_rate`` and ``lb_win_rate``, or the published leaderboard).
    metrics : sequence of str
        Metric columns to assess.
    model, variants, separator
        As in :func:`verbosity_variants`.
    reference : str or None
        Column whose spread across standard models sets the common scale (None: no rescaling).

    Returns
    -------
    DataFrame
        One row per (metric, kind) with ``kind`` in the variants and ``"overall"``: ``metric``,
        ``kind``, ``estimate`` (%), ``n`` (models averaged), ``scale`` (the rescaling factor).

    Notes
    -----
    Dubois et al. (2024) describe gameability as "the normalized standard deviation of win rate
    across concise/standard/verbose prompts" and report 26% for the raw AlpacaEval win rate and
    10% for the LC win rate (Fig. 6) without giving the exact formula. The definition here (each
    variant against the standard prompt, then averaged) gives 25.6% for the raw win rate on the
    published leaderboard and 11.7% for the LC win rate, from the very values the paper prints in
    its Fig. 3; sd/mean over all three prompts at once would give 29% and 13% (population sd) or
    35% and 16% (sample sd). No simple formula tried gives both of the paper's numbers.

    References
    ----------
    Dubois, Galambosi, Liang, Hashimoto (2024). Length-Controlled AlpacaEval, §4.1 and §4.4.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> lb = pd.DataFrame({"model": ["a", "a_concise", "a_verbose", "b"],
    ...                    "win_rate": [20.0, 10.0, 30.0, 5.0]})
    >>> g = jk.gameability(lb, metrics=["win_rate"])
    >>> g[["kind", "estimate"]].round(1).to_dict("list")
    {'kind': ['concise', 'verbose', 'overall'], 'estimate': [47.1, 28.3, 37.7]}
    """
    cols = list(dict.fromkeys([*metrics, *([reference] if reference else [])]))
    lb = _indexed(leaderboard, model, cols)
    table = verbosity_variants(leaderboard, metrics=cols, model=model, variants=variants,
                               separator=separator, require_all=True)
    if table.empty:
        raise ValueError(f"no model in the leaderboard has all the variants {list(variants)}")
    suffixes = tuple(separator + v for v in variants)
    standard = [m for m in lb.index if not str(m).endswith(suffixes)]
    rows = []
    for metric in metrics:
        if reference is None:
            scale = 1.0
        else:
            spread = lb.loc[standard, metric].astype(float).std(ddof=1)
            scale = float(lb.loc[standard, reference].astype(float).std(ddof=1) / spread)
        t = table[table["metric"] == metric]
        parts = []
        for v in variants:
            rel = []
            for _, g in t.groupby("base_model"):
                pair = g.loc[g["variant"].isin(["standard", v]), "value"].to_numpy(dtype=float)
                rel.append(np.std(pair, ddof=1) / np.mean(pair))
            value = 100.0 * float(np.mean(rel)) * scale
            parts.append(value)
            rows.append({"metric": metric, "kind": v, "estimate": value, "n": len(rel), "scale": scale})
        rows.append({"metric": metric, "kind": "overall", "estimate": float(np.mean(parts)),
                     "n": rows[-1]["n"], "scale": scale})
    return pd.DataFrame(rows)


@stamped
def length_normalized_leaderboard(
    leaderboard: pd.DataFrame,
    *,
    baseline: str,
    model: str = "model",
    win_rate: str = "win_rate",
    length: str = "avg_length",
    temperature: float = LN_TEMPERATURE,
) -> pd.DataFrame:
    """A leaderboard with the length-normalized win rate of each model, from its win rate and
    mean output length alone (Dubois et al. 2024, §4.4).

    LN = WR · 2σ((L̄_b − L̄_m) / T): the formula of :func:`judgekit.length_normalized_win_rates`,
    which needs only the win rate and the two mean lengths, so a published leaderboard that
    lists them (AlpacaEval's lists ``avg_length``) gives LN for every model on it.

    Parameters
    ----------
    leaderboard : DataFrame
        One row per model with ``win_rate`` (percent) and ``length`` columns.
    baseline : str
        The reference model; its row gives L̄_b.
    model, win_rate, length : str
        Column names.
    temperature : float
        T, in the units of ``length`` (default ``LN_TEMPERATURE``, 500 characters).

    Returns
    -------
    DataFrame
        A copy of ``leaderboard`` with ``ln_win_rate`` added.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> lb = pd.DataFrame({"model": ["base", "short", "long"], "win_rate": [50.0, 20.0, 60.0],
    ...                    "avg_length": [1000, 500, 2000]})
    >>> jk.length_normalized_leaderboard(lb, baseline="base")["ln_win_rate"].round(1).tolist()
    [50.0, 29.2, 14.3]
    """
    lb = _indexed(leaderboard, model, [win_rate, length])
    if baseline not in lb.index:
        raise ValueError(f"leaderboard has no row for the baseline {baseline!r}")
    base = float(lb.at[baseline, length])
    out = leaderboard.copy()
    gap = (base - out[length].astype(float)) / float(temperature)
    out["ln_win_rate"] = out[win_rate].astype(float) * 2.0 * special.expit(gap)
    return out
