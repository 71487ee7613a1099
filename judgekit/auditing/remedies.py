"""What to add to measure more: for each audit section the data cannot support, the one thing
that would let it be measured. Used by the report page, the command line and
:meth:`judgekit.Audit.to_measure_more`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from judgekit.auditing.core import Audit

#: Human labels suggested for a first accuracy estimate: with this many labels on a random
#: subset, a 95% interval of an agreement rate is at most +-1.96 * sqrt(0.25 / n) wide.
LABELS_SUGGESTED = 200


def _half_width(n: int) -> float:
    """The widest 95% normal interval half-width of a proportion from ``n`` draws (p = 0.5)."""
    return 1.96 * math.sqrt(0.25 / n)


def remedy(key: str, judgments: pd.DataFrame, pairs: pd.DataFrame | None,
           baseline: str | None = None) -> str | None:
    """The one thing to add so that section ``key`` can be measured, or None when nothing the
    data could carry would enable it (the section needs no more than it has)."""
    if key == "consistency":
        return ("a second order: judge each pair again with the two responses swapped, and give "
                "each judgment's order in an 'order' column ('ab' when response a was shown "
                "first, 'ba' when second)")
    if key == "stability":
        return ("repeats: ask the identical request (same pair, order and judge settings) at "
                "least twice, and number the answers in a 'repeat' column (0, 1, ...); "
                "jk.run_judges(..., repeats=2) does this")
    if key == "accuracy":
        where = ("a pairs table (pairs= / --pairs) with a 'label' column" if pairs is None
                 else "a 'label' column")
        return (f"human labels: {where} ('a', 'b' or 'tie') on a random subset of the judged "
                f"pairs (random, so the accuracy holds for all of them); {LABELS_SUGGESTED} "
                f"labels put an agreement rate within ±{_half_width(LABELS_SUGGESTED):.2f} "
                "(95%)")
    if key == "win_rates":
        if pairs is None or not {"model_a", "model_b"} <= set(pairs.columns):
            return ("which model wrote each response: 'model_a' and 'model_b' columns"
                    + (" in a pairs table (pairs= / --pairs)" if pairs is None else ""))
        judged = pairs[pairs["pair_id"].isin(judgments["pair_id"])]
        if judged[["model_a", "model_b"]].isna().any(axis=None):
            return "'model_a' and 'model_b' filled in for every judged pair"
        return ("a baseline: one model in every pair, named with baseline= (--baseline); keep "
                "only the pairs with it")
    if key == "calibration":
        return ("the judge's probabilities: a 'p_a' column, the probability it gives response a "
                "(from the verdict token's logprobs; jk.run_judges records it when the endpoint "
                "returns logprobs)")
    return None


def to_measure_more(audit: Audit) -> dict[str, str]:
    """Section key -> what to add, for every section of ``audit`` that was not measured."""
    out = {}
    for key, s in audit.sections.items():
        if s.status == "unsupported":
            fix = remedy(key, audit.judgments, audit.pairs, audit.options.get("baseline"))
            if fix:
                out[key] = fix
    return out
