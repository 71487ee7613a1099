"""Parameter descriptions shared by the metric docstrings (filled in at definition time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

_PARAMS = {
    "judgments": """judgments : DataFrame
        The judgments table (see :mod:`judgekit.schema`); validated on entry.""",
    "pairs": """pairs : DataFrame, optional
        The pairs table; needed for labels (accuracy, flips per label order, position and length
        bias) and for ``by`` columns that live in pairs (``dataset``, ``task``, ...).""",
    "by": """by : str or list of str, default ["judge"]
        Grouping columns, taken from judgments or, failing that, from pairs. One output row (per
        metric) per group; ``[]`` pools everything. Without the judge column, the judges in a
        group are pooled: each one's verdicts count, and the bootstrap resamples pairs with all
        their judges.""",
    "repeats": """repeats : {"all", "first"}, default "all"
        Which repeats enter accuracies and the (original, swapped) judgment pairs: the mean over
        all repeats of each pair (lower variance), or only the first (Wei et al.). Flip
        probabilities always use all repeats.""",
    "flip_estimator": """flip_estimator : {"consistent", "paper"}, default "consistent"
        How the flip probability q is obtained from the repeat-disagreement d: solving
        d = 2q(1 - q) (consistent), or q = d as Wei et al. do (biased upward; see Notes).""",
    "flip_rates": """flip_rates : {"auto", "one"}, default "auto"
        The de-noising assumes one flip probability per order for every pair. ``"auto"``: with
        K >= 3 repeats, :func:`flip_heterogeneity` tests that; where it rejects (p < 0.01) the
        de-noised intervals are widened to span both bounds of the mean flip rate, and a
        :class:`MetricWarning` says so (Notes). ``"one"``: assume one rate (the interval of
        judgekit < 0.3; the warning still fires).""",
    "length": """length : {"chars", "words"} or callable, default "chars"
        Length unit for length bias: characters (``len_a``/``len_b``), whitespace tokens, or a
        function of the response text (e.g. a tokenizer's ``lambda s: len(tok.encode(s))``).""",
    "lb_method": """lb_method : {"joint", "indicator"}, default "joint"
        How Acc_both is de-noised per length stratum: from both orders' flip rates and de-noised
        marginals ("joint", unbiased under Wei et al.'s flip model), or as Wei et al. do, treating
        the both-orders indicator as one variable with its own flip rate ("indicator"; it shrinks
        length bias toward zero as q grows: about -65% at q = 0.3). See
        ``docs/spec.md#bias`` and :func:`length_bias`.""",
    "invalid": """invalid : {"disagree", "drop"}, default "disagree"
        How repetition stability treats an invalid answer: as a trial that agrees with no other
        (Shi et al.'s definition: RS divides by every trial), or left out of the query's trials
        (judgekit 0.1). ``invalid_rate`` reports the share of invalid answers either way.""",
    "n_options": """n_options : int, optional
        Number of options the judge chose from, for the chance level of repetition stability. By
        default 3 when the group ever answered "tie", else 2.""",
    "uncertainty": """n_boot : int, default 1000
        Bootstrap resamples for the percentile intervals (cluster bootstrap over pairs: each
        resample draws pairs with replacement and keeps all their orders and repeats). 0 skips
        the intervals.
    ci : float, default 0.95
        Coverage of the intervals.
    seed : int, default 0
        Seeds the bootstrap (each group gets its own stream) and random splits.
    splits : int, str, Series or mapping, optional
        Instead of the bootstrap, Wei et al.'s mean (std) over splits of the pairs: an int S for S
        random equal splits, the name of a split column of pairs, or a Series / mapping from
        ``pair_id`` to split (e.g. from :func:`judgekit.sample_splits`). ``estimate`` is then the
        mean over splits, ``se`` their standard deviation (ddof=0), ``ci_low``/``ci_high`` NaN.""",
    "returns": """DataFrame
        Tidy: the ``by`` columns, ``metric``, ``estimate``, ``ci_low``, ``ci_high``, ``n`` (the
        units in the metric's denominator, see Notes){extras}, and ``se`` (bootstrap standard
        error, or the std over splits with ``n_splits``).""",
}


def fill_doc(extras: str = "") -> Callable[[F], F]:
    """Replace ``{judgments}``, ``{by}``, ... in a docstring by the shared descriptions."""

    def deco(func: F) -> F:
        if func.__doc__:
            values = dict(_PARAMS)
            values["returns"] = _PARAMS["returns"].replace("{extras}", extras)
            doc = func.__doc__
            for key, text in values.items():
                doc = doc.replace("{" + key + "}", text)
            func.__doc__ = doc
        return func

    return deco
