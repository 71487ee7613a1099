"""Every reliability metric, defined once.

A :class:`~judgekit.metrics._metric.Metric` carries all there is to know about one number: the per-pair statistics it reads
(:mod:`judgekit.metrics._statistics`), its estimator over their sums, why it can be NaN, whether
a row was de-noised, what ``n_invalid`` counts, which tidy functions return it and whether the
report card shows it by default. The engine (:mod:`judgekit.metrics._engine`) needs nothing
else: adding a metric is adding one definition to :data:`METRICS` (and its test). See
``docs/metrics.md`` ("Adding a metric").

Estimators work on :class:`~judgekit.metrics._metric.Sums`, the column sums of the statistics over a group's pairs, with
any leading shape: one value per group for the estimate, per (group, split) for splits and per
(group, resample) for the bootstrap. They return an :class:`~judgekit.metrics._metric.Est`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from judgekit.metrics import _statistics as st
from judgekit.metrics._cells import Cells
from judgekit.metrics._formulas import MIN_DENOM, denoise, flip_q, joint_both, ratio
from judgekit.metrics._metric import Est, Metric, Reason, Sums
from judgekit.metrics._prepare import Options
from judgekit.metrics._statistics import Stat

# ---------------------------------------------------------------------------------------------
# shared pieces of estimators (memoised per evaluation)
# ---------------------------------------------------------------------------------------------

def _acc(t: Sums, o: str) -> np.ndarray:
    return t.memo(("acc", o), lambda: ratio(t[st.Z[o]], t[st.H[o]]))


def _disagree(t: Sums, o: str) -> np.ndarray:
    return t.memo(("d", o), lambda: 1.0 - ratio(t[st.AG[o]], t[st.M[o]]))


def _q(t: Sums, o: str, opt: Options) -> np.ndarray:
    return t.memo(("q", o), lambda: flip_q(_disagree(t, o), opt.flip_estimator))


def _denoised_acc(t: Sums, o: str, opt: Options) -> tuple[np.ndarray, np.ndarray]:
    return t.memo(("den", o), lambda: denoise(_acc(t, o), _q(t, o, opt)))


def _both_in_stratum(t: Sums, s: str, opt: Options) -> tuple[np.ndarray, np.ndarray]:
    """De-noised Acc_both in a length stratum (``lb_method``) and its unstable mask."""

    def compute() -> tuple[np.ndarray, np.ndarray]:
        hb = t[st.HB_S[s]]
        p_both = ratio(t[st.ZB_S[s]], hb)
        if opt.lb_method == "indicator":
            return denoise(p_both, _q_indicator(t, s, opt))
        qs = [flip_q(1.0 - ratio(t[st.AG_S[o][s]], t[st.M_S[o][s]]), opt.flip_estimator)
              for o in st.LABEL_ORDERS]
        marginals = [ratio(t[st.Z_S[o][s]], hb) for o in st.LABEL_ORDERS]
        return joint_both(p_both, *marginals, *qs)

    return t.memo(("both", s), compute)


def _q_indicator(t: Sums, s: str, opt: Options) -> np.ndarray:
    return t.memo(("qB", s), lambda: flip_q(1.0 - ratio(t[st.AGB_S[s]], t[st.MB_S[s]]),
                                            opt.flip_estimator))


def _pairs_n(t: Sums) -> np.ndarray:
    return t[st.PAIRS]


def _primacy_recency(t: Sums, opt: Options) -> tuple[np.ndarray, np.ndarray]:
    pcn, rcn = t[st.PRIMACY], t[st.RECENCY]
    if opt.mixed_ties == "reference":
        pcn, rcn = pcn + t[st.PRIMACY_MIXED], rcn + t[st.RECENCY_MIXED]
    return pcn, rcn


def _win_rate(t: Sums) -> np.ndarray:
    n = t[st.PAIRS]
    return t.memo("owr", lambda: ratio(t[st.WINS_A] + (n - t[st.WINS_A] - t[st.WINS_B]) / 2.0, n))


# ---------------------------------------------------------------------------------------------
# statistics and NaN reasons that several metrics share
# ---------------------------------------------------------------------------------------------

_SHOWN = {"ab": "response a shown first", "ba": "response b shown first",
          "cr": "the preferred response shown first", "rc": "the preferred response shown second"}
_PC_STATS = (st.PAIRS, st.PRIMACY, st.RECENCY, st.PRIMACY_MIXED, st.RECENCY_MIXED)


_ALL_INVALID = Reason(
    lambda t: t[st.JUDGMENTS] == t[st.INVALID],
    "every verdict is invalid (no answer could be parsed, or every call failed; see invalid_rate)",
    (st.JUDGMENTS, st.INVALID), design=False,
)


def _per_order(make: Callable[[str], Reason]) -> dict[str, Reason]:
    return {o: make(o) for o in (*st.ORDERS, *st.LABEL_ORDERS)}


_NEEDS_LABELS = _per_order(lambda o: Reason(
    lambda t: t[st.H[o]] == 0,
    f"no labelled pair (label 'a' or 'b') was judged with {_SHOWN[o]}", (st.H[o],)))
_NO_VALID = _per_order(lambda o: Reason(
    lambda t: t[st.VALID[o]] == 0,
    f"no labelled pair judged with {_SHOWN[o]} has a valid verdict", (st.VALID[o],),
    design=False))
_NEEDS_REPEATS = _per_order(lambda o: Reason(
    lambda t: t[st.M[o]] == 0,
    f"no {'labelled ' if o in st.LABEL_ORDERS else ''}request with {_SHOWN[o]} was asked twice "
    "or more", (st.M[o],)))
_NO_VALID_IN = {o: Reason(
    lambda t, o=o: t[st.JUDGMENTS_IN[o]] == t[st.INVALID_IN[o]],
    f"no judgment with {_SHOWN[o]} has a valid verdict", (st.JUDGMENTS_IN[o], st.INVALID_IN[o]),
    design=False) for o in st.ORDERS}
_NO_VALID_BOTH = Reason(
    lambda t: t[st.VALID_BOTH] == 0,
    "no labelled pair has a valid verdict in both orders (of the same repeat)", (st.VALID_BOTH,),
    design=False)
_NEEDS_BOTH_ORDERS = Reason(lambda t: t[st.HB] == 0,
                            "no labelled pair (label 'a' or 'b') was judged in both orders",
                            (st.HB,))
# An empty length stratum among labelled pairs judged in both orders is a property of the data
# (every preferred response is the longer one, say), not of the design: it warns on the report
# card too. Where no labelled pair was judged in both orders, _NEEDS_BOTH_ORDERS explains it first.
_NEEDS_STRATUM = {s: Reason(
    lambda t, s=s: t[st.HB_S[s]] == 0,
    "no labelled pair judged in both orders where the preferred response "
    f"{'is' if s == 'longer' else 'is not'} the longer one", (st.HB_S[s],), design=False)
    for s in st.STRATA}
_NEEDS_BOTH_JUDGED = Reason(
    lambda t: t[st.PAIRS] + t[st.PAIRS_INVALID] == 0,
    "no pair was judged in both orders (with matching repeats)", (st.PAIRS, st.PAIRS_INVALID))
_NO_VALID_PAIR = Reason(
    lambda t: t[st.PAIRS] == 0,
    "every (original, swapped) judgment pair has an invalid verdict", (st.PAIRS,), design=False)
_NOT_REPEATED = Reason(lambda t: t[st.REPEATED] == 0, "no request was asked twice or more",
                       (st.REPEATED,))
_NO_QUERY = Reason(
    lambda t: t[st.QUERIES] == 0,
    "no repeated request has enough valid answers (one; two with invalid='drop')",
    (st.QUERIES,), design=False)


def _labelled(*orders: str, design: tuple[Reason, ...] = (), both: bool = False) -> tuple[Reason, ...]:
    """Reasons of a metric of labelled verdicts in ``orders``: all invalid, the design ones,
    no valid verdict in one of the orders and (``both``) no pair valid in both orders."""
    return (_ALL_INVALID, *design, *(_NO_VALID[o] for o in orders),
            *((_NO_VALID_BOTH,) if both else ()))


_BOTH = ("cr", "rc")
_PC_REASONS = (_ALL_INVALID, _NEEDS_BOTH_JUDGED, _NO_VALID_PAIR)
_RS_REASONS = (_ALL_INVALID, _NOT_REPEATED, _NO_QUERY)


# ---------------------------------------------------------------------------------------------
# the metrics, in output order
# ---------------------------------------------------------------------------------------------

def _accuracy(o: str, what: str, card: bool) -> Metric:
    return Metric(
        f"acc_{o}", f"accuracy with {what}", (st.Z[o], st.H[o]),
        lambda t, opt: Est(_acc(t, o), t[st.H[o]]),
        reasons=_labelled(o, design=(_NEEDS_LABELS[o],)), families=("accuracy",), card=card,
    )


def _denoised_accuracy(o: str) -> Metric:
    def estimate(t: Sums, opt: Options) -> Est:
        value, unstable = _denoised_acc(t, o, opt)
        return Est(value, t[st.H[o]], unstable)

    return Metric(
        f"acc_{o}_denoised", f"acc_{o} de-noised with q_{o}",
        (st.Z[o], st.H[o], st.AG[o], st.M[o]), estimate,
        reasons=_labelled(o, design=(_NEEDS_LABELS[o],)), denoised=lambda t, opt: t[st.M[o]] > 0,
        families=("accuracy_denoised", "position_bias"), card=True,
    )


def _both_denoised(t: Sums, opt: Options) -> Est:
    hb = t[st.HB]
    qs = [flip_q(1.0 - ratio(t[st.AG_B[o]], t[st.M_B[o]]), opt.flip_estimator)
          for o in st.LABEL_ORDERS]
    marginals = [ratio(t[st.Z_B[o]], hb) for o in st.LABEL_ORDERS]
    value, unstable = joint_both(ratio(t[st.ZB], hb), *marginals, *qs)
    return Est(value, hb, unstable)


def _flip(o: str, kind: str) -> Metric:
    """disagree_o, q_o or scr_o."""
    labelled = o in st.LABEL_ORDERS
    value = {
        "disagree": lambda t, opt: _disagree(t, o),
        "q": lambda t, opt: _q(t, o, opt),
        "scr": lambda t, opt: 1.0 - _q(t, o, opt),
    }[kind]
    choice = "the preferred response" if labelled else "the first position"
    description = {
        "disagree": f"probability that two repeats disagree on {choice}, {_SHOWN[o]}",
        "q": f"flip probability of {choice}, {_SHOWN[o]}",
        "scr": f"self-consistency rate 1 - q_{o}",
    }[kind]
    return Metric(
        f"{kind}_{o}", description, (st.AG[o], st.M[o]),
        lambda t, opt: Est(value(t, opt), t[st.M[o]]),
        reasons=(_ALL_INVALID, _NEEDS_REPEATS[o],
                 _NO_VALID[o] if labelled else _NO_VALID_IN[o]),
        families=("flip_noise",),
        card=labelled and kind in ("q", "scr"),
    )


def _position_bias(t: Sums, opt: Options) -> Est:
    (cr, u_cr), (rc, u_rc) = _denoised_acc(t, "cr", opt), _denoised_acc(t, "rc", opt)
    return Est(cr - rc, np.minimum(t[st.H["cr"]], t[st.H["rc"]]), u_cr | u_rc)


_LB_STATS = tuple(
    stat
    for s in st.STRATA
    for stat in (st.HB_S[s], st.ZB_S[s], st.AGB_S[s], st.MB_S[s],
                 *(d[o][s] for d in (st.Z_S, st.AG_S, st.M_S) for o in st.LABEL_ORDERS))
)


def _lb_denoised(t: Sums, opt: Options, s: str) -> np.ndarray:
    """Whether a stratum's Acc_both was de-noised (its flip rates were estimable)."""
    if opt.lb_method == "indicator":
        return t[st.MB_S[s]] > 0
    return (t[st.M_S["cr"][s]] > 0) & (t[st.M_S["rc"][s]] > 0)


def _stratum_metric(s: str) -> Metric:
    def estimate(t: Sums, opt: Options) -> Est:
        value, unstable = _both_in_stratum(t, s, opt)
        return Est(value, t[st.HB_S[s]], unstable)

    where = "is the longer one" if s == "longer" else "is not the longer one"
    return Metric(
        f"acc_both_{s}", f"de-noised Acc_both where the preferred response {where}", _LB_STATS,
        estimate, reasons=(*_labelled(*_BOTH, design=(_NEEDS_BOTH_ORDERS,), both=True),
                           _NEEDS_STRATUM[s]),
        denoised=lambda t, opt: _lb_denoised(t, opt, s),
        families=("length_bias",),
    )


def _length_bias(t: Sums, opt: Options) -> Est:
    (vl, ul), (vs, us) = _both_in_stratum(t, "longer", opt), _both_in_stratum(t, "shorter", opt)
    return Est(vl - vs, np.minimum(t[st.HB_S["longer"]], t[st.HB_S["shorter"]]), ul | us)


def _q_stratum(s: str) -> Metric:
    where = "is the longer one" if s == "longer" else "is not the longer one"
    return Metric(
        f"q_{s}", f"flip probability of the both-orders indicator where the preferred response {where}",
        _LB_STATS, lambda t, opt: Est(_q_indicator(t, s, opt), t[st.MB_S[s]]),
        reasons=_labelled(*_BOTH, design=(Reason(
            lambda t: t[st.MB_S[s]] == 0,
            "no labelled pair was asked twice or more in both orders in this stratum",
            (st.MB_S[s],)),), both=True),
        families=("length_bias",),
    )


def _rs(t: Sums, opt: Options) -> np.ndarray:
    return t.memo("rs", lambda: ratio(t[st.RS_SUM], t[st.QUERIES]))


def _rs0(t: Sums, opt: Options) -> np.ndarray:
    return t.memo("rs0", lambda: ratio(t[st.RS0_SUM], t[st.QUERIES]))


_RS_STATS = (st.RS_SUM, st.RS0_SUM, st.QUERIES)


def _rs_sd(c: Cells) -> np.ndarray:
    """Per cell, the sum over its queries of the sample standard deviation (ddof 1) of the
    indicators "this trial gave the majority answer": with k of n trials agreeing,
    sqrt(k (n - k) / (n (n - 1)))."""
    share, _, query, n = c.stability
    n = np.maximum(n, 2)
    sd = np.sqrt(np.clip(share * (1.0 - share), 0.0, None) * n / (n - 1.0))
    return np.where(query, sd, 0.0).sum(axis=(1, 2))


#: The example of docs/metrics.md ("Adding a metric"): one statistic, one definition.
RS_SD = Stat("rs_sd_sum", _rs_sd)


def _primacy_count(index: int) -> Callable[[Sums, Options], Est]:
    def estimate(t: Sums, opt: Options) -> Est:
        n = t[st.PAIRS]
        return Est(np.where(n > 0, _primacy_recency(t, opt)[index], np.nan), n)

    return estimate


def _primacy_rate(index: int) -> Callable[[Sums, Options], Est]:
    def estimate(t: Sums, opt: Options) -> Est:
        pcn, rcn = _primacy_recency(t, opt)
        return Est(ratio((pcn, rcn)[index], pcn + rcn), pcn + rcn)

    return estimate


def _preference_fairness(t: Sums, opt: Options) -> Est:
    pcn, rcn = _primacy_recency(t, opt)
    n = t[st.PAIRS]
    if opt.pf_denominator == "all":  # Shi et al.'s code: every judgment pair, valid or not
        n = n + t[st.PAIRS_INVALID]
    # rcn*irr - pcn*ipr = (rcn^2 - pcn^2)/(rcn + pcn) = rcn - pcn (0 when both are 0)
    return Est(ratio(rcn - pcn, n), n)


_NO_INCONSISTENCY = Reason(
    lambda t: t[st.PRIMACY] + t[st.RECENCY] == 0,
    "no judgment pair chose the same position twice (ipr and irr are 0/0)",
    (st.PRIMACY, st.RECENCY),
)


def _invalid_rate(o: str | None) -> Metric:
    judgments = st.JUDGMENTS if o is None else st.JUDGMENTS_IN[o]
    invalid = st.INVALID if o is None else st.INVALID_IN[o]
    return Metric(
        "invalid_rate" if o is None else f"invalid_rate_{o}",
        "share of judgments without a valid verdict" + ("" if o is None else f", {_SHOWN[o]}"),
        (judgments, invalid), lambda t, opt: Est(ratio(t[invalid], t[judgments]), t[judgments]),
        families=("invalid_rate",), card=o is None,
    )


METRICS: dict[str, Metric] = {m.name: m for m in [
    _accuracy("ab", _SHOWN["ab"], card=True),
    _accuracy("ba", _SHOWN["ba"], card=True),
    _accuracy("cr", _SHOWN["cr"], card=True),
    _accuracy("rc", _SHOWN["rc"], card=True),
    Metric("acc_both", "share of labelled pairs where both orders picked the preferred response",
           (st.ZB, st.HB), lambda t, opt: Est(ratio(t[st.ZB], t[st.HB]), t[st.HB]),
           reasons=_labelled(*_BOTH, design=(_NEEDS_BOTH_ORDERS,), both=True),
           families=("accuracy",),
           card=True),
    Metric("acc_random", "mean of the two orders' accuracies (expectation of Acc_random)",
           (st.ZR, st.HB), lambda t, opt: Est(ratio(t[st.ZR], t[st.HB]), t[st.HB]),
           reasons=_labelled(*_BOTH, design=(_NEEDS_BOTH_ORDERS,)), families=("accuracy",),
           card=True),
    _denoised_accuracy("cr"),
    _denoised_accuracy("rc"),
    Metric("acc_both_denoised", "Acc_both de-noised jointly from both orders' flips",
           (st.ZB, st.HB, *st.Z_B.values(), *st.AG_B.values(), *st.M_B.values(), st.M["cr"],
            st.M["rc"]), _both_denoised,
           reasons=_labelled(*_BOTH, design=(_NEEDS_BOTH_ORDERS,), both=True),
           denoised=lambda t, opt: (t[st.M["cr"]] > 0) & (t[st.M["rc"]] > 0),
           families=("accuracy_denoised",)),
    *(_flip(o, "disagree") for o in st.LABEL_ORDERS),
    *(_flip(o, kind) for kind in ("q", "scr") for o in st.LABEL_ORDERS),
    *(_flip(o, kind) for kind in ("q", "scr") for o in st.ORDERS),
    Metric("position_bias", "de-noised acc_cr - acc_rc (> 0 favours the first position)",
           tuple(s for o in st.LABEL_ORDERS for s in (st.Z[o], st.H[o], st.AG[o], st.M[o])),
           _position_bias,
           reasons=_labelled(*_BOTH, design=(_NEEDS_LABELS["cr"], _NEEDS_LABELS["rc"])),
           denoised=lambda t, opt: (t[st.M["cr"]] > 0) & (t[st.M["rc"]] > 0),
           families=("position_bias",), card=True),
    Metric("length_bias",
           "de-noised Acc_both(preferred response longer) - Acc_both(not longer)", _LB_STATS,
           _length_bias,
           reasons=(*_labelled(*_BOTH, design=(_NEEDS_BOTH_ORDERS,), both=True),
                    *_NEEDS_STRATUM.values()),
           denoised=lambda t, opt: _lb_denoised(t, opt, "longer") & _lb_denoised(t, opt, "shorter"),
           families=("length_bias",), card=True),
    _stratum_metric("longer"),
    _stratum_metric("shorter"),
    _q_stratum("longer"),
    _q_stratum("shorter"),
    Metric("position_consistency",
           "share of (original, swapped) judgment pairs that agree (PC)",
           (st.PAIRS, st.CONSISTENT),
           lambda t, opt: Est(ratio(t[st.CONSISTENT], t[st.PAIRS]), t[st.PAIRS]),
           reasons=_PC_REASONS, invalid=st.PAIRS_INVALID,
           families=("position_consistency",), card=True),
    Metric("primacy", "judgment pairs choosing the first position both times (pcn)", _PC_STATS,
           _primacy_count(0), reasons=_PC_REASONS, invalid=st.PAIRS_INVALID,
           families=("fairness",), card=True),
    Metric("recency", "judgment pairs choosing the second position both times (rcn)", _PC_STATS,
           _primacy_count(1), reasons=_PC_REASONS, invalid=st.PAIRS_INVALID,
           families=("fairness",), card=True),
    Metric("primacy_rate", "ipr = pcn / (pcn + rcn)", _PC_STATS, _primacy_rate(0),
           reasons=(*_PC_REASONS, _NO_INCONSISTENCY), invalid=st.PAIRS_INVALID,
           families=("fairness",)),
    Metric("recency_rate", "irr = rcn / (pcn + rcn)", _PC_STATS, _primacy_rate(1),
           reasons=(*_PC_REASONS, _NO_INCONSISTENCY), invalid=st.PAIRS_INVALID,
           families=("fairness",)),
    Metric("preference_fairness", "PF = (rcn*irr - pcn*ipr) / n in [-1, 1] (> 0 recency)",
           (*_PC_STATS, st.PAIRS_INVALID), _preference_fairness, reasons=_PC_REASONS,
           invalid=st.PAIRS_INVALID, families=("fairness",), card=True),
    Metric("win_rate", "overall win rate of response a, inconsistent pairs as ties (owr)",
           (st.PAIRS, st.WINS_A, st.WINS_B), lambda t, opt: Est(_win_rate(t), t[st.PAIRS]),
           reasons=_PC_REASONS, invalid=st.PAIRS_INVALID, families=("overall_win_rate",)),
    Metric("quality_gap", "answer quality gap |owr - 0.5|", (st.PAIRS, st.WINS_A, st.WINS_B),
           lambda t, opt: Est(np.abs(_win_rate(t) - 0.5), t[st.PAIRS]),
           reasons=_PC_REASONS, invalid=st.PAIRS_INVALID, families=("overall_win_rate",)),
    Metric("repetition_stability", "mean share of the most frequent choice over repeats (RS)",
           _RS_STATS, lambda t, opt: Est(_rs(t, opt), t[st.QUERIES]),
           reasons=_RS_REASONS, families=("repetition_stability",), card=True),
    Metric("repetition_stability_sd",
           "Shi et al.'s ± beside RS: mean over queries of the standard deviation of 'this "
           "trial gave the majority answer'", (RS_SD, st.QUERIES),
           lambda t, opt: Est(ratio(t[RS_SD], t[st.QUERIES]), t[st.QUERIES]),
           reasons=_RS_REASONS, families=("repetition_stability",)),
    Metric("repetition_stability_chance", "RS of a uniformly random judge (RS_0)", _RS_STATS,
           lambda t, opt: Est(_rs0(t, opt), t[st.QUERIES]),
           reasons=_RS_REASONS, families=("repetition_stability",)),
    Metric("repetition_stability_star", "chance-corrected RS* = (RS - RS_0)/(1 - RS_0)",
           _RS_STATS,
           lambda t, opt: Est(ratio(_rs(t, opt) - _rs0(t, opt), 1.0 - _rs0(t, opt)), t[st.QUERIES]),
           reasons=_RS_REASONS, families=("repetition_stability",), card=True),
    _invalid_rate(None),
    _invalid_rate("ab"),
    _invalid_rate("ba"),
]}

#: The metrics of :func:`judgekit.report_card` by default, in column order.
REPORT_CARD_METRICS: tuple[str, ...] = tuple(m.name for m in METRICS.values() if m.card)

#: Why a de-noised metric is NaN where :attr:`Est.unstable` holds.
UNSTABLE = f"1 - 2q <= {MIN_DENOM}: the flip noise is too large to de-noise"


def family(name: str) -> list[str]:
    """The metrics a tidy function returns: the one named like it first, then in definition order."""
    names = [m.name for m in METRICS.values() if name in m.families]
    return sorted(names, key=lambda m: m != name)


def lookup(names: list[str]) -> list[Metric]:
    unknown = [m for m in names if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {sorted(METRICS)}")
    return [METRICS[m] for m in names]
