"""One wide row per judge (or any grouping) with every reliability metric and its interval."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from judgekit._stamp import stamped
from judgekit.metrics import _engine
from judgekit.metrics import _statistics as st
from judgekit.metrics import heterogeneity as _het
from judgekit.metrics._definitions import REPORT_CARD_METRICS
from judgekit.metrics._docs import fill_doc
from judgekit.metrics._prepare import ABSENT, Options, prepare

__all__ = ["REPORT_CARD_METRICS", "report_card"]


@stamped
@fill_doc()
def report_card(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    by: str | Sequence[str] = ("judge",),
    *,
    metrics: Sequence[str] | None = None,
    repeats: str = "all",
    flip_estimator: str = "consistent",
    length: str | Callable[[str], float] = "chars",
    lb_method: str = "joint",
    flip_rates: str = "auto",
    n_options: int | None = None,
    mixed_ties: str = "neutral",
    invalid: str = "disagree",
    pf_denominator: str = "valid",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """A judge's report card: every reliability metric, one wide row per group.

    Parameters
    ----------
    {judgments}
    {pairs}
    {by}
    metrics : sequence of str, optional
        Which metrics to include (default :data:`REPORT_CARD_METRICS`); any metric name the
        tidy functions return is allowed (e.g. ``"acc_both_denoised"``, ``"win_rate"``).
    {repeats}
    {flip_estimator}
    {length}
    {lb_method}
    {flip_rates}
    {n_options}
    mixed_ties : {"neutral", "reference"}, default "neutral"
        Mixed-tie judgment pairs in primacy / recency / PF; see :func:`preference_fairness`.
    {invalid}
    pf_denominator : {"valid", "all"}, default "valid"
        What PF is scaled by; see :func:`preference_fairness`.
    {uncertainty}

    Returns
    -------
    DataFrame
        One row per group: the ``by`` columns, ``n_pairs`` (pairs judged), ``n_labelled``
        (pairs with a label "a"/"b"), ``n_judgments``, ``denoised`` (whether position bias
        could be de-noised, i.e. there were repeats), then for each metric ``<metric>``,
        ``<metric>_ci_low`` and ``<metric>_ci_high`` (percentile bootstrap; NaN with
        ``n_boot=0`` or ``splits``) and, with ``splits``, ``<metric>_std``.

        By default the metrics are ``acc_ab, acc_ba`` (accuracy per display order),
        ``acc_cr, acc_rc`` (preferred response first / second), ``acc_both, acc_random``,
        ``acc_cr_denoised, acc_rc_denoised``, ``q_cr, q_rc, scr_cr, scr_rc``,
        ``position_bias, length_bias`` (de-noised, Wei et al.), ``position_consistency,
        primacy, recency, preference_fairness`` (Shi et al.), ``repetition_stability`` and the
        chance-corrected ``repetition_stability_star``, and ``invalid_rate``.

    Notes
    -----
    Metrics that need labels (accuracies, q_cr/q_rc, position and length bias) are NaN when
    ``pairs`` is not given or has no "a"/"b" labels; metrics that need repeats (q, SCR, RS) are NaN
    when no request was repeated, and position and length bias are then reported without
    de-noising (``denoised`` False). These NaN, which the tables cannot avoid by design, raise no
    warning. Every other NaN does (:class:`MetricWarning`, one per reason, naming the groups and
    the metrics): no valid verdict where one is needed (a judge whose every call failed has no
    accuracy and no bias, not a bias of 0), an empty length stratum (labelled pairs judged in
    both orders, but none where the preferred response is the longer one, or none where it is
    not: length bias is NaN), and de-noising that breaks down (1 - 2q <= 0.05).
    Intervals resampled from fewer than 5 pairs warn too (one pair gives an interval of width 0).

    Groups without the judge column (``by=[]``, ``by="dataset"``) pool judges: each judge's
    verdicts on a pair count, and the bootstrap resamples pairs with all their judges;
    ``n_pairs`` counts distinct pairs. Definitions are in the tidy functions:
    :func:`accuracy`, :func:`flip_noise`, :func:`position_bias`, :func:`length_bias`,
    :func:`position_consistency`, :func:`preference_fairness`, :func:`repetition_stability`,
    :func:`invalid_rate`, and in ``docs/spec.md``.

    References
    ----------
    Wei et al. (2024); Shi, Ma, Vosoughi (2024).

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth = jk.sim.simulate_judgments(
    ...     500, accuracy=0.8, position_bias=0.8, flip_q=0.05, repeats=3, seed=0)
    >>> card = jk.report_card(judgments, pairs, n_boot=200)
    >>> card[["judge", "n_pairs", "acc_both", "position_bias", "position_consistency"]].round(3)
      judge  n_pairs  acc_both  position_bias  position_consistency
    0   sim      500      0.63          0.172                 0.703
    >>> bool(card.loc[0, "position_bias_ci_low"] < truth["position_bias"] < card.loc[0, "position_bias_ci_high"])
    True
    """
    metrics = list(REPORT_CARD_METRICS if metrics is None else metrics)
    options = Options(repeats=repeats, flip_estimator=flip_estimator, length=length,
                      n_options=n_options, lb_method=lb_method, mixed_ties=mixed_ties,
                      invalid=invalid, pf_denominator=pf_denominator)
    _het.check_flip_rates(flip_rates)
    prep = prepare(judgments, pairs, by, options, splits=splits, seed=seed)
    long, comp = _engine.compute(prep, options, metrics, n_boot=n_boot, ci=ci, seed=seed,
                                 warn_design=False,
                                 extra=(st.JUDGMENTS, st.M["cr"], st.M["rc"]))
    denoised = [m for m in metrics if m in _het.DENOISED]
    if denoised and long["denoised"].fillna(False).any():  # as jk.position_bias / length_bias
        bad = _het.heterogeneous_judges(judgments)
        widened = flip_rates == "auto" and not bad.empty
        if widened:
            other = replace(options, flip_estimator="paper" if flip_estimator == "consistent"
                            else "consistent")
            other_long, _ = _engine.compute(prepare(judgments, pairs, by, other, splits=splits,
                                                    seed=seed),
                                            other, denoised, n_boot=n_boot, ci=ci, seed=seed,
                                            warn_design=False)
            long = _het.widen(long, other_long, list(prep.keys.columns), bad["judge"], ci)
        _het.warn_heterogeneous(bad, "report_card", widened)
    card = prep.keys.copy()
    card["n_pairs"] = prep.pairs_per_group()
    card["n_labelled"] = prep.pairs_per_group(prep.label != ABSENT)
    card["n_judgments"] = comp.total(st.JUDGMENTS).astype(np.int64)
    # position bias is de-noised when both orders' flip rates are estimable
    card["denoised"] = (comp.total(st.M["cr"]) > 0) & (comp.total(st.M["rc"]) > 0)
    columns = {}
    for m in metrics:
        rows = long[long["metric"] == m]
        columns[m] = rows["estimate"].to_numpy()
        columns[f"{m}_ci_low"] = rows["ci_low"].to_numpy()
        columns[f"{m}_ci_high"] = rows["ci_high"].to_numpy()
        if splits is not None:
            columns[f"{m}_std"] = rows["se"].to_numpy()
    return pd.concat([card, pd.DataFrame(columns, index=card.index)], axis=1)
