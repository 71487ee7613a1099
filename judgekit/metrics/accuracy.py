"""Agreement with humans, flipping noise, and de-noised position and length bias (Wei et al.)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from judgekit._stamp import stamped
from judgekit.metrics import _engine
from judgekit.metrics import heterogeneity as _het
from judgekit.metrics._definitions import family
from judgekit.metrics._docs import fill_doc

__all__ = ["accuracy", "flip_noise", "length_bias", "position_bias"]

_BY = ("judge",)
_OTHER = {"consistent": "paper", "paper": "consistent"}


def _flip_rate_check(frame, by_cols, judgments, metric, flip_rates, ci, rerun):
    """Test for per-pair flip rates; where found (and ``flip_rates="auto"``), widen the
    de-noised intervals to both flip estimators' (see :func:`heterogeneity.widen`); warn."""
    if not frame["denoised"].fillna(False).any():
        return frame
    bad = _het.heterogeneous_judges(judgments)
    widened = flip_rates == "auto" and not bad.empty
    if widened:
        frame = _het.widen(frame, rerun(), by_cols, bad["judge"], ci)
    _het.warn_heterogeneous(bad, metric, widened)
    return frame


@fill_doc(", ``denoised`` (whether the row was de-noised; NA for raw accuracies), ``n_invalid`` "
          "(judgments without a valid verdict in the group)")
@stamped
def accuracy(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    by: str | Sequence[str] = _BY,
    *,
    denoise: bool = False,
    repeats: str = "all",
    flip_estimator: str = "consistent",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """Agreement with the human label per order, Acc_both and Acc_random.

    Parameters
    ----------
    {judgments}
    {pairs}
    {by}
    denoise : bool, default False
        Also return ``acc_cr_denoised``, ``acc_rc_denoised`` (each order's accuracy with its flip
        noise removed) and ``acc_both_denoised``.
    {repeats}
    {flip_estimator}
    {uncertainty}

    Returns
    -------
    {returns}

        Metrics: ``acc_ab``, ``acc_ba`` (response a / b shown first, what LLMBar publishes),
        ``acc_cr``, ``acc_rc`` (the human-preferred response shown first / second), ``acc_both``,
        ``acc_random`` and, with ``denoise=True``, the de-noised accuracies.

    Notes
    -----
    Only pairs labelled ``"a"`` or ``"b"`` count. A tie or invalid verdict counts as not picking
    the preferred response; ``n_invalid`` says how many there were. With Z = 1 when the judge
    picked the preferred response y_c,

    * acc_o = mean over pairs of Z in order o (averaged over a pair's repeats first);
    * Acc_both = mean over pairs of 1(both orders picked y_c), the two orders matched by repeat;
    * Acc_random = mean over pairs of (Z_cr + Z_rc) / 2, the expectation of Wei et al.'s
      "pick one order at random" (same mean, no extra noise);
    * acc_o de-noised = (acc_o - q_o) / (1 - 2 q_o) with q_o from :func:`flip_noise`;
      Acc_both de-noised solves E[Z_cr Z_rc] = (1-2q_cr)(1-2q_rc) P(X_cr=1, X_rc=1) + terms in
      the de-noised marginals, which is exact when the two orders flip independently.

    ``n`` is the number of labelled pairs judged in that order (or in both orders).

    References
    ----------
    Wei et al. (2024), Systematic Evaluation of LLM-as-a-Judge in LLM Alignment Tasks, §4, A.4.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth = jk.sim.simulate_judgments(400, accuracy=0.8, position_bias=1.0, seed=3)
    >>> acc = jk.accuracy(judgments, pairs, n_boot=200)
    >>> acc[["metric", "estimate", "n"]].round(3)
           metric  estimate    n
    0      acc_ab     0.818  400
    1      acc_ba     0.778  400
    2      acc_cr     0.892  400
    3      acc_rc     0.702  400
    4    acc_both     0.670  400
    5  acc_random     0.798  400
    """
    from judgekit.metrics._labels import require_labels

    require_labels(pairs, "accuracy")
    metrics = family("accuracy") + (family("accuracy_denoised") if denoise else [])
    frame, by_cols = _engine.run(
        judgments, pairs, by, metrics, repeats=repeats, flip_estimator=flip_estimator,
        n_boot=n_boot, ci=ci, seed=seed, splits=splits,
    )
    return _engine.select(frame, by_cols, ["denoised", "n_invalid"])


@stamped
@fill_doc()
def flip_noise(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    by: str | Sequence[str] = _BY,
    *,
    flip_estimator: str = "consistent",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """Flip probability q and self-consistency rate SCR = 1 - q from repeated identical requests.

    Parameters
    ----------
    {judgments}
    {pairs}
    {by}
    {flip_estimator}
    {uncertainty}

    Returns
    -------
    {returns}

        Metrics: ``disagree_cr``, ``disagree_rc`` (d, the probability that two repeats disagree),
        ``q_cr``, ``q_rc``, ``scr_cr``, ``scr_rc`` per order relative to the label (need pairs with
        labels), and ``q_ab``, ``q_ba``, ``scr_ab``, ``scr_ba`` per display order (no labels needed).

    Notes
    -----
    For a request repeated K times, k of which picked the preferred response (cr/rc) or the first
    position (ab/ba), d = 1 - mean over requests of [k(k-1) + (K-k)(K-k-1)] / (K(K-1)), an
    unbiased estimate of the probability that two repeats disagree (Wei et al., A.4 step 2).
    Under Wei et al.'s own model (a fixed decision X flipped independently with probability q in
    each repeat) that probability is 2q(1-q), not q. The default ``"consistent"`` estimator solves
    it: q = (1 - sqrt(1 - 2d)) / 2 with d clipped to [0, 0.5]. ``"paper"`` sets q = d, which is
    about twice the true q for small q and biases everything de-noised with it upward. Requests
    with fewer than two repeats do not count; with none, q is NaN. Ties and invalid verdicts
    count as "not the preferred response" (cr/rc) or "not the first position" (ab/ba).
    ``n`` is the number of pairs with at least two repeats in that order.

    References
    ----------
    Wei et al. (2024), §4 (flipping noise), A.4 and Table 1.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth = jk.sim.simulate_judgments(2000, flip_q=0.1, repeats=5, seed=1)
    >>> q = jk.flip_noise(judgments, pairs, n_boot=0).set_index("metric")["estimate"]
    >>> float(q["q_cr"].round(2)), float(q["q_rc"].round(2))
    (0.1, 0.1)
    >>> q_paper = jk.flip_noise(judgments, pairs, flip_estimator="paper", n_boot=0)
    >>> float(q_paper.set_index("metric").loc["q_cr", "estimate"].round(2))  # about 2q(1 - q) = 0.18
    0.19
    """
    frame, by_cols = _engine.run(
        judgments, pairs, by, family("flip_noise"), flip_estimator=flip_estimator,
        n_boot=n_boot, ci=ci, seed=seed, splits=splits, warn_design=False,
    )
    return _engine.select(frame, by_cols)


@stamped
@fill_doc(", ``denoised`` (False when no repeats allowed estimating q: then not de-noised)")
def position_bias(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    by: str | Sequence[str] = _BY,
    *,
    repeats: str = "all",
    flip_estimator: str = "consistent",
    flip_rates: str = "auto",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """De-noised position bias PB = p[X=1 | cr] - p[X=1 | rc] (> 0: prefers the first position).

    Parameters
    ----------
    {judgments}
    {pairs}
    {by}
    {repeats}
    {flip_estimator}
    {flip_rates}
    {uncertainty}

    Returns
    -------
    {returns}

        Metrics: ``position_bias`` and the two de-noised accuracies it is the difference of,
        ``acc_cr_denoised`` and ``acc_rc_denoised``.

    Notes
    -----
    Each order's accuracy is de-noised with its own flip probability,
    p[X=1 | o] = (p[Z=1 | o] - q_o) / (1 - 2 q_o); where 1 - 2 q_o <= 0.05 the result is NaN with
    a :class:`MetricWarning`. With a single repeat, q cannot be estimated and PB is the raw
    difference (``denoised`` False). Orders are relative to the human label, so a judge that
    prefers the first position shows PB > 0 whatever the mix of labels. ``n`` is the number of
    labelled pairs judged in both orders.

    The de-noising assumes one flip probability per order for every pair. Where the flip rate
    varies by pair (a judge that flips on hard pairs), PB is shrunk toward 0 (by about 20% with
    per-pair rates Beta(0.4, 1.6), mean 0.2) and its one-rate interval is too narrow (coverage
    0.81 of a 95% interval, 600 pairs, K = 3). With repeats (K >= 3) :func:`flip_heterogeneity`
    tests for it; where it rejects (p < 0.01) and ``flip_rates="auto"``, the interval becomes the
    union of the intervals de-noised with the consistent q (a lower bound of the mean flip rate)
    and with Wei et al.'s q = d (an upper bound), which covered the truth in 0.98 of 150 such
    simulations, and a :class:`MetricWarning` says so (``docs/metrics.md``, "Flip rates that
    vary by pair"). The estimate is not moved.

    References
    ----------
    Wei et al. (2024), eq. 2 and A.4 ("Position bias computation procedure").

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth = jk.sim.simulate_judgments(
    ...     3000, position_bias=1.0, flip_q=0.1, repeats=5, seed=2)
    >>> pb = jk.position_bias(judgments, pairs, n_boot=200).set_index("metric")
    >>> round(truth["position_bias"], 2), float(pb.loc["position_bias", "estimate"].round(2))
    (0.23, 0.23)
    >>> bool(pb.loc["position_bias", "ci_low"] < truth["position_bias"] < pb.loc["position_bias", "ci_high"])
    True
    """
    _het.check_flip_rates(flip_rates)

    def run(estimator: str) -> tuple[pd.DataFrame, list[str]]:
        return _engine.run(judgments, pairs, by, family("position_bias"), repeats=repeats,
                           flip_estimator=estimator, n_boot=n_boot, ci=ci, seed=seed, splits=splits)

    frame, by_cols = run(flip_estimator)
    frame = _flip_rate_check(frame, by_cols, judgments, "position_bias", flip_rates, ci,
                             lambda: run(_OTHER[flip_estimator])[0])
    return _engine.select(frame, by_cols, ["denoised"])


@stamped
@fill_doc(", ``denoised``")
def length_bias(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    by: str | Sequence[str] = _BY,
    *,
    length: str | Callable[[str], float] = "chars",
    repeats: str = "all",
    flip_estimator: str = "consistent",
    lb_method: str = "joint",
    flip_rates: str = "auto",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """De-noised length bias relative to humans, LB = p[X=1 | Δl > 0] - p[X=1 | Δl <= 0].

    Parameters
    ----------
    {judgments}
    {pairs}
    {by}
    {length}
    {repeats}
    {flip_estimator}
    {lb_method}
    {flip_rates}
    {uncertainty}

    Returns
    -------
    {returns}

        Metrics: ``length_bias``, its two de-noised strata ``acc_both_longer`` (the preferred
        response is the longer one) and ``acc_both_shorter`` (it is not), and the strata's flip
        probabilities ``q_longer``, ``q_shorter`` (of the both-orders indicator).

    Notes
    -----
    Δl = len(y_c) - len(y_r). X here is the Acc_both indicator (both orders picked y_c), which
    Wei et al. use because it is free of position bias (their Finding 2). Positive LB: the judge
    favours longer responses more than the humans did.

    The default ``lb_method="joint"`` de-noises each order first: per stratum it solves
    E[Z_cr Z_rc] = (1-2q_cr)(1-2q_rc) P11 + (1-q_cr) q_rc p_cr + q_cr (1-q_rc) p_rc
    + q_cr q_rc (1 - p_cr - p_rc) for P11 = P(X_cr=1, X_rc=1), with p_cr, p_rc the stratum's
    de-noised per-order accuracies; exact when the two orders flip independently (Wei et al.'s
    model). ``lb_method="indicator"`` follows Wei et al.: the indicator's flip rate q_s per
    stratum comes from the K repeats of the indicator itself and
    p[X=1 | s] = (p[Z=1 | s] - q_s) / (1 - 2 q_s). The indicator does not flip symmetrically,
    though (P(Z=1 | X=1) = (1-q)^2, P(Z=1 | X=0) is q(1-q) or q^2), so this leaves a bias that
    grows with q: on simulated judges with N = 20,000 pairs it is between -13% and +13% of LB
    for q <= 0.2 and about -65% at q = 0.3, where its 95% interval covers the truth in none of
    200 replications; the joint method stays within 0.5%, and its 95% interval covered the
    truth in 0.93-0.965 of 200-500 replications in independent simulations (0.97 in the 200 of
    ``benchmarks/bench_length_bias.py``). ``q_longer`` / ``q_shorter`` are the indicator's flip
    rates. Both methods assume one flip probability per order for every pair: with per-pair
    rates (Beta, mean 0.2) the joint LB was 14-15% too small and, with many pairs, its interval
    covered 0.62. With repeats (K >= 3) :func:`flip_heterogeneity` tests for it; where it
    rejects and ``flip_rates="auto"``, the de-noised intervals become the union of those with the
    consistent q and with q = d (lower and upper bounds of the mean flip rate), and a
    :class:`MetricWarning` says so (``docs/metrics.md``, "Flip rates that vary by pair").
    ``n`` is the number of labelled pairs, judged in both orders, in the smaller stratum.

    References
    ----------
    Wei et al. (2024), eq. 3 and A.4 ("Length bias computation procedure").

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth = jk.sim.simulate_judgments(
    ...     3000, length_bias=1.5, flip_q=0.05, repeats=5, seed=4)
    >>> lb = jk.length_bias(judgments, pairs, n_boot=0).set_index("metric")["estimate"]
    >>> round(truth["length_bias"], 2), float(lb["length_bias"].round(2))
    (0.2, 0.2)
    """
    _het.check_flip_rates(flip_rates)

    def run(estimator: str) -> tuple[pd.DataFrame, list[str]]:
        return _engine.run(judgments, pairs, by, family("length_bias"), length=length,
                           repeats=repeats, flip_estimator=estimator, lb_method=lb_method,
                           n_boot=n_boot, ci=ci, seed=seed, splits=splits)

    frame, by_cols = run(flip_estimator)
    frame = _flip_rate_check(frame, by_cols, judgments, "length_bias", flip_rates, ci,
                             lambda: run(_OTHER[flip_estimator])[0])
    return _engine.select(frame, by_cols, ["denoised"])
