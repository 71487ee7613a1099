"""Repetition stability, position consistency, preference fairness, overall win rate and invalid
rates (Shi et al.). None of these need human labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from judgekit._stamp import stamped
from judgekit.metrics import _engine
from judgekit.metrics._definitions import family
from judgekit.metrics._docs import fill_doc

__all__ = [
    "invalid_rate",
    "overall_win_rate",
    "position_consistency",
    "preference_fairness",
    "repetition_stability",
]

_BY = ("judge",)


@stamped
@fill_doc()
def repetition_stability(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    by: str | Sequence[str] = _BY,
    *,
    invalid: str = "disagree",
    n_options: int | None = None,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """Repetition stability RS with Shi et al.'s spread, its chance level and the chance-corrected RS*.

    Parameters
    ----------
    {judgments}
    {pairs}
    {by}
    {invalid}
    {n_options}
    {uncertainty}

    Returns
    -------
    {returns}

        Metrics: ``repetition_stability`` (RS), ``repetition_stability_sd`` (the "±" Shi et al.
        print beside RS), ``repetition_stability_chance`` (RS_0) and ``repetition_stability_star``
        (RS*).

    Notes
    -----
    A query j is one request (pair, order, option-ID arrangement) asked n_j times (its trials,
    the repeats); C_k^j counts how often it got choice k (first position, second position, tie).
    RS = mean_j max_k |C_k^j| / n_j. As in Shi et al.'s definition and code, an invalid answer
    is a trial that agrees with no other: it stays in n_j, so a judge that often fails to answer
    is unstable (``invalid="disagree"``, default). Queries with fewer than two trials or without
    any valid answer are left out. ``invalid="drop"`` leaves invalid answers out of n_j first
    (judgekit 0.1's rule, which hides an error-prone judge's instability; the share of invalid
    answers is :func:`invalid_rate`). RS ranges from about 1/m (random) to 1, so RS of a
    2-option and a 3-option judge are not comparable; RS_0 is the exact expected RS of a judge
    that answers every trial uniformly among m = ``n_options`` options with the same n_j, and
    RS* = (RS - RS_0)/(1 - RS_0) is 0 for such a judge and 1 for a perfectly stable one
    (negative for a judge whose invalid answers make it less stable than chance). ``n`` is the
    number of queries. See ``docs/spec.md#consistency``.

    The spread Shi et al. print as RS ± s is the mean over queries of the sample standard
    deviation (ddof 1) of the indicators "this trial gave the majority answer": with k of n_j
    trials agreeing, sqrt(k (n_j - k) / (n_j (n_j - 1))), 0 for a unanimous query
    (``repetition_stability_sd``; their code computes it the same way).

    References
    ----------
    Shi, Ma, Vosoughi (2024), Judging the Judges, eq. 1 and Table 2.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth = jk.sim.simulate_judgments(500, flip_q=0.1, repeats=3, seed=0)
    >>> rs = jk.repetition_stability(judgments, n_boot=0).set_index("metric")["estimate"]
    >>> rs.round(3).to_dict()
    {'repetition_stability': 0.913, 'repetition_stability_sd': 0.151, 'repetition_stability_chance': 0.75, 'repetition_stability_star': 0.651}
    """
    frame, by_cols = _engine.run(
        judgments, pairs, by, family("repetition_stability"), invalid=invalid, n_options=n_options, n_boot=n_boot,
        ci=ci, seed=seed, splits=splits,
    )
    return _engine.select(frame, by_cols)


@stamped
@fill_doc(", ``n_invalid`` ((original, swapped) judgment pairs left out for an invalid verdict)")
def position_consistency(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    by: str | Sequence[str] = _BY,
    *,
    repeats: str = "all",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """Position consistency PC: how often the judge keeps its verdict when the order is swapped.

    Parameters
    ----------
    {judgments}
    {pairs}
    {by}
    {repeats}
    {uncertainty}

    Returns
    -------
    {returns}

    Notes
    -----
    A judgment pair is the verdicts on the original (``ab``) and swapped (``ba``) order of one
    pair, matched by repeat index and option-ID arrangement. In position terms (A = first,
    B = second, C = tie) it is consistent when it lies in V = {(A,B), (B,A), (C,C)}, i.e. when the
    two verdicts name the same response (or both say tie). Pairs with an invalid verdict are left
    out of ``n`` and counted in ``n_invalid``. PC is what LLMBar calls positional agreement.

    References
    ----------
    Shi, Ma, Vosoughi (2024), eq. 2.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth = jk.sim.simulate_judgments(500, position_bias=2.0, seed=0)
    >>> jk.position_consistency(judgments, n_boot=0)[["metric", "estimate", "n", "n_invalid"]]
                     metric  estimate    n  n_invalid
    0  position_consistency     0.504  500          0
    """
    frame, by_cols = _engine.run(
        judgments, pairs, by, family("position_consistency"), repeats=repeats, n_boot=n_boot, ci=ci,
        seed=seed, splits=splits,
    )
    return _engine.select(frame, by_cols, ["n_invalid"])


@stamped
@fill_doc(", ``n_invalid``")
def preference_fairness(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    by: str | Sequence[str] = _BY,
    *,
    mixed_ties: str = "neutral",
    pf_denominator: str = "valid",
    repeats: str = "all",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """Primacy and recency counts and preference fairness PF in [-1, 1] (> 0: prefers recency).

    Parameters
    ----------
    {judgments}
    {pairs}
    {by}
    mixed_ties : {"neutral", "reference"}, default "neutral"
        How inconsistent pairs with one tie count: in neither pcn nor rcn, or as Shi et al.'s
        reference code counts them, by the position the non-tie verdict named ((A,C), (C,A) as
        primacy; (B,C), (C,B) as recency), which reproduces their published PF. See Notes.
    pf_denominator : {"valid", "all"}, default "valid"
        What PF is scaled by: the valid judgment pairs, over which PF_raw ranges (the documented
        definition), or every judgment pair, valid or not, as Shi et al.'s reference code does.
        The two differ only when some pair has an invalid verdict.
    {repeats}
    {uncertainty}

    Returns
    -------
    {returns}

        Metrics: ``primacy`` (pcn, judgment pairs choosing the first position both times),
        ``recency`` (rcn, the second position both times), ``primacy_rate`` (ipr = pcn/(pcn+rcn)),
        ``recency_rate`` (irr) and ``preference_fairness`` (PF).

    Notes
    -----
    PF_raw = rcn * irr - pcn * ipr, which simplifies to rcn - pcn. Over n valid judgment pairs
    its achievable range is [-n, n], so Shi et al.'s min-max scaling to [-1, 1] is
    PF = PF_raw / n: 0 at perfect consistency (or balanced inconsistency), +1 when every pair is
    recency-preferred, -1 when every pair is primacy-preferred. ipr and irr are NaN when no pair
    is inconsistent.

    Mixed-tie pairs (A,C), (C,A), (B,C), (C,B) (original verdict first, in position terms) are
    inconsistent, but a tie in one order says the judge saw no difference there, so by default
    they count in neither pcn nor rcn (they lower PC only). Shi et al.'s reference code
    (``consistency_preference_calculation.py`` in Slimshilin/Position-Bias-Analyzer) attributes
    them to the position the other verdict named: (A,C) and (C,A) count as primacy, (B,C) and
    (C,B) as recency (``mixed_ties="reference"``). The choice moves 3-option judges' PF; it
    does not matter for 2-option judges.

    The reference code also scales PF_raw by every judgment pair of a (candidate, task) unit,
    valid or not, and averages the units; with the study's equal-sized units that is PF_raw over
    all pairs, which ``pf_denominator="all"`` gives. A pair with an invalid verdict then counts
    as a consistent one would, pulling PF toward 0; the default divides by the valid pairs, over
    which PF_raw ranges. See ``docs/spec.md#consistency``.

    References
    ----------
    Shi, Ma, Vosoughi (2024), eq. 3.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth = jk.sim.simulate_judgments(500, position_bias=-2.0, seed=0)
    >>> pf = jk.preference_fairness(judgments, n_boot=0).set_index("metric")["estimate"]
    >>> pf.round(3).to_dict()
    {'primacy': 2.0, 'recency': 228.0, 'primacy_rate': 0.009, 'recency_rate': 0.991, 'preference_fairness': 0.452}
    """
    frame, by_cols = _engine.run(
        judgments, pairs, by, family("fairness"), repeats=repeats, mixed_ties=mixed_ties,
        pf_denominator=pf_denominator, n_boot=n_boot, ci=ci, seed=seed, splits=splits,
    )
    return _engine.select(frame, by_cols, ["n_invalid"])


@stamped
@fill_doc(", ``n_invalid``")
def overall_win_rate(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    by: str | Sequence[str] = _BY,
    *,
    repeats: str = "all",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """Overall win rate of response a over response b, and the answer quality gap.

    Parameters
    ----------
    {judgments}
    {pairs}
    {by}
    {repeats}
    {uncertainty}

    Returns
    -------
    {returns}

        Metrics: ``win_rate`` (owr of response a; the win rate of b is 1 - owr) and ``quality_gap``
        (δ_q = |owr - 0.5|).

    Notes
    -----
    Over the n valid (original, swapped) judgment pairs, owr = (C_w + (C_t + C_I)/2) / n with C_w
    the pairs where a won in both orders, C_t where both orders said tie and C_I the inconsistent
    ones (counted as ties, after Zheng et al.). Group by the candidate (e.g. ``by=["judge",
    "model_b"]``) to get the quality gap of each candidate against a fixed baseline.

    References
    ----------
    Shi, Ma, Vosoughi (2024), §2.2 and appendix D.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth = jk.sim.simulate_judgments(400, seed=0)
    >>> jk.overall_win_rate(judgments, n_boot=0)[["metric", "estimate", "n"]].round(3)
            metric  estimate    n
    0     win_rate     0.499  400
    1  quality_gap     0.001  400
    """
    frame, by_cols = _engine.run(
        judgments, pairs, by, family("overall_win_rate"), repeats=repeats, n_boot=n_boot,
        ci=ci, seed=seed, splits=splits,
    )
    return _engine.select(frame, by_cols, ["n_invalid"])


@stamped
@fill_doc()
def invalid_rate(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    by: str | Sequence[str] = _BY,
    *,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """Share of judgments without a valid verdict, overall and per display order.

    Parameters
    ----------
    {judgments}
    {pairs}
    {by}
    {uncertainty}

    Returns
    -------
    {returns}

        Metrics: ``invalid_rate``, ``invalid_rate_ab``, ``invalid_rate_ba``; ``n`` counts judgments.

    Notes
    -----
    A verdict is invalid when it is missing (the judge's answer could not be parsed, or the call
    failed). Shi et al. report it as "Error" beside RS, PC and PF.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> j = pd.DataFrame({"pair_id": ["p1", "p1", "p2", "p2"], "judge": "g",
    ...                   "order": ["ab", "ba", "ab", "ba"], "repeat": 0,
    ...                   "verdict": ["a", None, "b", "b"], "p_a": float("nan")})
    >>> jk.invalid_rate(j, n_boot=0)[["metric", "estimate", "n"]]
                metric  estimate  n
    0     invalid_rate      0.25  4
    1  invalid_rate_ab      0.00  2
    2  invalid_rate_ba      0.50  2
    """
    frame, by_cols = _engine.run(
        judgments, pairs, by, family("invalid_rate"), n_boot=n_boot, ci=ci, seed=seed, splits=splits,
    )
    return _engine.select(frame, by_cols)
