"""The judgekit look: one altair theme, a colour-blind-safe palette and metric labels.

Nothing here changes altair's global state at import. :func:`setup` (called once at the top of a
notebook) registers and enables the theme and the offline-capable renderer;
:func:`judgekit.viz.save_chart` and the explorers apply the theme on their own.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PALETTE", "metric_label", "setup", "theme"]

THEME_NAME = "judgekit"

#: Categorical colours (Okabe & Ito 2008, colour-blind safe), in the order they are assigned.
PALETTE: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
    "#999999",
)
#: Colours of the two sides of a diverging bar (positive, negative) and of neutral marks.
POSITIVE = "#D55E00"
NEGATIVE = "#0072B2"
NEUTRAL = "#7F7F7F"
#: Colour of an estimate whose interval decides nothing (it includes zero and a material effect).
UNDECIDED = "#C9C9C9"
#: Colour of reference lines (zero, chance, identity).
REFERENCE = "#9A9A9A"

_METRIC_LABELS: dict[str, str] = {
    "acc_both": "Acc_both (both orders correct)",
    "acc_random": "Acc_random (mean over orders)",
    "acc_ab": "Accuracy, a shown first",
    "acc_ba": "Accuracy, b shown first",
    "acc_cr": "Accuracy, preferred response first",
    "acc_rc": "Accuracy, preferred response second",
    "accuracy": "Accuracy",
    "position_bias": "Position bias (PB)",
    "length_bias": "Length bias (LB)",
    "q_cr": "Flip probability q (preferred first)",
    "q_rc": "Flip probability q (preferred second)",
    "scr_cr": "Self-consistency (preferred first)",
    "scr_rc": "Self-consistency (preferred second)",
    "position_consistency": "Position consistency (PC)",
    "preference_fairness": "Preference fairness (PF)",
    "repetition_stability": "Repetition stability (RS)",
    "repetition_stability_star": "Repetition stability, chance-corrected (RS*)",
    "acc_cr_denoised": "De-noised accuracy, preferred first",
    "acc_rc_denoised": "De-noised accuracy, preferred second",
    "primacy": "Primacy-preferred judgment pairs (count)",
    "recency": "Recency-preferred judgment pairs (count)",
    "primacy_rate": "Primacy-preferred share of inconsistent pairs",
    "recency_rate": "Recency-preferred share of inconsistent pairs",
    "invalid_rate": "Invalid verdicts",
    "overall_win_rate": "Overall win rate",
    "quality_gap": "Answer quality gap",
    "win_rate": "Win rate (%)",
    "lc_win_rate": "Length-controlled win rate (%)",
    "length_controlled_winrate": "Length-controlled win rate (%)",
    "discrete_win_rate": "Discrete win rate (%)",
    "ln_win_rate": "Length-normalized win rate (%)",
    "lb_win_rate": "Length-balanced win rate (%)",
    "input_length": "Input length (characters)",
    "output_length": "Candidate's answer length (characters)",
    "prompt_length": "Prompt length (characters)",
    "robustness": "Robustness rate (RR)",
    "consistency": "Consistency on an unperturbed re-run",
    "robustness_rate": "Robustness rate (RR)",
    "consistency_rate": "Consistency on an unperturbed re-run",
    "fleiss_kappa": "Fleiss' kappa",
    "icc2k": "ICC(2,k)",
    "icc3k": "ICC(3,k)",
    "rstd": "RStd (std of recalls)",
}

#: What a positive / negative value of a signed metric means, for legends.
SIGN_LABELS: dict[str, tuple[str, str]] = {
    "position_bias": ("prefers the first position", "prefers the second position"),
    "length_bias": ("prefers longer responses than humans do", "prefers shorter responses than humans do"),
    "preference_fairness": ("recency-preferred", "primacy-preferred"),
}

#: The smallest value of a signed metric that counts as material: an interval inside
#: ±margin reads "no material effect" (bias_bars), one that includes 0 and reaches past the
#: margin reads "inconclusive".
MATERIAL_MARGINS: dict[str, float] = {
    "position_bias": 0.05,
    "length_bias": 0.05,
    "preference_fairness": 0.05,
}


def metric_label(metric: str) -> str:
    """A readable axis or legend title for a metric name (the name itself when unknown).

    Parameters
    ----------
    metric : str
        A metric name as the ``metric`` column of judgekit's result frames holds it (e.g.
        ``"acc_both"``, ``"position_bias"``, ``"lc_win_rate"``).

    Returns
    -------
    str
        The title the charts use for that metric, or ``metric`` unchanged when judgekit has no
        title for it.

    Examples
    --------
    >>> metric_label("position_bias")
    'Position bias (PB)'
    >>> metric_label("my_metric")
    'my_metric'
    """
    return _METRIC_LABELS.get(metric, metric)


def theme() -> dict[str, Any]:
    """The judgekit altair theme: readable fonts, light grid, colour-blind-safe colours.

    Returns
    -------
    dict
        ``{"config": {...}}``, a Vega-Lite top-level config.

    Examples
    --------
    >>> cfg = theme()["config"]
    >>> cfg["axis"]["labelFontSize"], cfg["range"]["category"][0]
    (12, '#0072B2')
    """
    axis = {
        "labelFontSize": 12, "titleFontSize": 12.5, "titleFontWeight": "normal",
        "labelLimit": 320, "titlePadding": 8, "gridColor": "#E8E8E8", "domainColor": "#8A8A8A",
        "tickColor": "#8A8A8A", "labelColor": "#333333", "titleColor": "#222222",
    }
    return {
        "config": {
            "background": "white",
            "font": "sans-serif",
            "padding": 8,
            "title": {
                "fontSize": 15, "fontWeight": "bold", "anchor": "start", "offset": 10,
                "subtitleFontSize": 12, "subtitleColor": "#555555", "subtitlePadding": 4,
                "color": "#222222",
            },
            "axis": axis,
            "axisBand": {"grid": False},
            "legend": {
                "labelFontSize": 12, "titleFontSize": 12, "titleFontWeight": "normal",
                "labelLimit": 320, "symbolSize": 90, "symbolOpacity": 1,
            },
            "header": {"labelFontSize": 12.5, "titleFontSize": 13, "labelFontWeight": "bold"},
            "view": {"continuousWidth": 420, "continuousHeight": 280, "stroke": None},
            "range": {"category": list(PALETTE)},
            "point": {"size": 70, "filled": True},
            "line": {"strokeWidth": 2},
            "bar": {"cornerRadiusEnd": 1},
            "rule": {"color": REFERENCE},
            "text": {"fontSize": 11},
            "tick": {"thickness": 2.5},
        }
    }


def _register() -> None:
    """Register the theme with altair (idempotent; does not enable it)."""
    import altair as alt

    if THEME_NAME not in alt.theme.names():
        alt.theme.register(THEME_NAME, enable=False)(theme)


def setup(*, renderer: bool = True) -> None:
    """Use the judgekit look and an offline-capable renderer for altair charts in this kernel.

    Call it once at the top of a notebook. It enables the judgekit theme and, with
    ``renderer=True``, a renderer that shows each chart as live Vega (tooltips, zoom) in
    JupyterLab without any internet access, with a PNG beside it for places that cannot run
    Vega (nbconvert HTML, GitHub, ``judgekit reproduce``).

    Parameters
    ----------
    renderer : bool
        Also enable the judgekit renderer (otherwise keep altair's current renderer).

    Examples
    --------
    >>> import altair as alt
    >>> import judgekit as jk
    >>> jk.viz.setup()
    >>> alt.theme.active, alt.renderers.active
    ('judgekit', 'judgekit')
    >>> _ = alt.theme.enable("default"), alt.renderers.enable("default")  # undo, for the doctest
    """
    import altair as alt

    _register()
    alt.theme.enable(THEME_NAME)
    if renderer:
        from judgekit.viz._export import register_renderer

        register_renderer()
        alt.renderers.enable(THEME_NAME)
