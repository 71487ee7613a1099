"""Per-pair statistics: the columns of the matrix S that every metric is a function of the sums of.

Each :class:`Stat` is one column, one value per (group, pair) cell, computed from the arrays of
:class:`judgekit.metrics._cells.Cells`. Metrics (:mod:`judgekit.metrics._definitions`) list the
statistics they read; the engine builds S with exactly the columns the requested metrics need,
sums it per group for the point estimate and multiplies it by resample counts for the bootstrap.
A statistic must be a per-pair quantity whose sum over pairs means something (a count, or a
per-pair mean that is later divided by the count of pairs where it is defined).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from judgekit.metrics._cells import Cells
from judgekit.metrics._prepare import TIE, A, B

ORDERS = ("ab", "ba")  # display orders, index 0 and 1
LABEL_ORDERS = ("cr", "rc")  # preferred response first / second
STRATA = ("longer", "shorter")  # the preferred response is the longer one / is not


@dataclass(frozen=True, eq=False)
class Stat:
    """One per-pair statistic (a column of S)."""

    name: str
    compute: Callable[[Cells], np.ndarray]
    doc: str = ""

    def __repr__(self) -> str:
        return f"Stat({self.name!r})"


def _family(name: str, keys: tuple[str, ...], compute: Callable[[Cells, str], np.ndarray]) -> dict[str, Stat]:
    """One statistic per key (an order or a stratum), named ``{name}_{key}``."""

    def make(key: str) -> Stat:
        return Stat(f"{name}_{key}", lambda c: compute(c, key))

    return {key: make(key) for key in keys}


_ALL_ORDERS = ORDERS + LABEL_ORDERS

# --- accuracy ---------------------------------------------------------------------------------
#: Z (picked the preferred response) averaged over a cell's judgments in each order, and the
#: indicator that the cell counts in that order (labelled and judged).
Z = _family("z", _ALL_ORDERS, lambda c, o: c.accuracy(o)[0])
H = _family("h", _ALL_ORDERS, lambda c, o: c.accuracy(o)[1])

#: Valid verdicts on labelled pairs in each order (a metric of them is NaN without any).
VALID = _family("valid", _ALL_ORDERS, lambda c, o: c.valid_labelled(o))

#: Labelled judgment pairs (both orders, matched by repeat) with a valid verdict in each.
VALID_BOTH = Stat("valid_both", lambda c: (c.judgment_pairs[1] & c.labelled[:, None, None]).sum(axis=(1, 2)))

#: Acc_both: both orders picked the preferred response (mean over matched repeats), the cells
#: judged in both orders, and Acc_random's per-pair mean of the two orders.
ZB = Stat("zb", lambda c: c.both_correct[0])
HB = Stat("hb", lambda c: c.both_correct[1])
ZR = Stat("zr", lambda c: np.where(c.both_correct[1],
                                   (c.accuracy("cr")[0] + c.accuracy("rc")[0]) / 2.0, 0.0))

# --- flip noise -------------------------------------------------------------------------------
#: Repeat agreement of Z per label-relative order, of the first-position choice per display
#: order, and the cells where it is defined (two or more trials; labelled for cr / rc).
AG = _family("ag", _ALL_ORDERS, lambda c, o: c.flip_agreement(o)[0])
M = _family("m", _ALL_ORDERS, lambda c, o: c.flip_agreement(o)[1])

#: The same restricted to the cells judged in both orders (for Acc_both de-noised jointly).
Z_B = _family("z_both", LABEL_ORDERS, lambda c, o: c.accuracy(o)[0] * c.both_correct[1])
AG_B = _family("ag_both", LABEL_ORDERS,
               lambda c, o: c.flip_agreement(o)[0] * (c.both_correct[1] & c.flip_agreement(o)[1]))
M_B = _family("m_both", LABEL_ORDERS, lambda c, o: c.both_correct[1] & c.flip_agreement(o)[1])


# --- length strata ----------------------------------------------------------------------------
def _stratum(c: Cells, stratum: str) -> np.ndarray:
    """Labelled cells judged in both orders, in the stratum."""
    longer = c.prep.longer
    return c.both_correct[1] & (longer if stratum == "longer" else ~longer)


#: Per stratum: cells, Acc_both, the indicator's own repeat agreement (Wei et al.'s method) and,
#: per label-relative order, the accuracies and agreements (the joint method).
HB_S = _family("hb", STRATA, _stratum)
ZB_S = _family("zb", STRATA, lambda c, s: c.both_correct[0] * _stratum(c, s))
AGB_S = _family("agb", STRATA, lambda c, s: c.both_flip_agreement[0]
                * (_stratum(c, s) & c.both_flip_agreement[1]))
MB_S = _family("mb", STRATA, lambda c, s: _stratum(c, s) & c.both_flip_agreement[1])


def _per_order_strata(name: str, compute: Callable[[Cells, str, np.ndarray], np.ndarray]) -> dict[str, dict[str, Stat]]:
    def make(o: str) -> dict[str, Stat]:
        return _family(f"{name}_{o}", STRATA, lambda c, s: compute(c, o, _stratum(c, s)))

    return {o: make(o) for o in LABEL_ORDERS}


Z_S = _per_order_strata("z", lambda c, o, w: c.accuracy(o)[0] * w)
AG_S = _per_order_strata("ag", lambda c, o, w: c.flip_agreement(o)[0] * (w & c.flip_agreement(o)[1]))
M_S = _per_order_strata("m", lambda c, o, w: w & c.flip_agreement(o)[1])


# --- Shi et al.: (original, swapped) judgment pairs, in position terms ------------------------
def _pairs_where(test: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[Cells], np.ndarray]:
    def compute(c: Cells) -> np.ndarray:
        _, _, v0, v1 = c.judgment_pairs
        return c.count_pairs(test(v0, v1))

    return compute


#: Valid judgment pairs, those with an invalid verdict, and the consistent ones (same response,
#: or both tie: in response terms the two verdicts are equal).
PAIRS = Stat("pc_n", lambda c: c.judgment_pairs[1].sum(axis=(1, 2)))
PAIRS_INVALID = Stat("pc_inv", lambda c: (c.judgment_pairs[0] & ~c.judgment_pairs[1]).sum(axis=(1, 2)))
CONSISTENT = Stat("pc_c", _pairs_where(lambda v0, v1: v0 == v1))
#: Primacy (first position both times) and recency (second position both times), and the mixed
#: ties that Shi et al.'s code counts with them: (A,C), (C,A) as primacy, (B,C), (C,B) as recency.
PRIMACY = Stat("pcn", _pairs_where(lambda v0, v1: (v0 == A) & (v1 == B)))
RECENCY = Stat("rcn", _pairs_where(lambda v0, v1: (v0 == B) & (v1 == A)))
PRIMACY_MIXED = Stat("pcm", _pairs_where(lambda v0, v1: ((v0 == A) & (v1 == TIE)) | ((v0 == TIE) & (v1 == B))))
RECENCY_MIXED = Stat("rcm", _pairs_where(lambda v0, v1: ((v0 == B) & (v1 == TIE)) | ((v0 == TIE) & (v1 == A))))
#: Response a won in both orders, response b won in both (for the overall win rate).
WINS_A = Stat("cwa", _pairs_where(lambda v0, v1: (v0 == A) & (v1 == A)))
WINS_B = Stat("cwb", _pairs_where(lambda v0, v1: (v0 == B) & (v1 == B)))

# --- repetition stability ---------------------------------------------------------------------
#: Requests asked twice or more; sums over a cell's queries of the majority share and of its
#: chance level, and the query count.
REPEATED = Stat("repeated", lambda c: (c.K >= 2).sum(axis=(1, 2)))
RS_SUM = Stat("rs_sum", lambda c: c.stability.share.sum(axis=(1, 2)))
RS0_SUM = Stat("rs0_sum", lambda c: c.stability.chance.sum(axis=(1, 2)))
QUERIES = Stat("rs_cnt", lambda c: c.stability.query.sum(axis=(1, 2)))

# --- judgments and invalid verdicts -----------------------------------------------------------
JUDGMENTS = Stat("nj", lambda c: c.present.sum(axis=(1, 2, 3)))
INVALID = Stat("ninv", lambda c: c.invalid.sum(axis=(1, 2, 3)))
JUDGMENTS_IN = _family("nj", ORDERS, lambda c, o: c.present[:, ORDERS.index(o)].sum(axis=(1, 2)))
INVALID_IN = _family("ninv", ORDERS, lambda c, o: c.invalid[:, ORDERS.index(o)].sum(axis=(1, 2)))
PAIR = Stat("pair", lambda c: np.ones(c.n))


def matrix(cells: Cells, stats: list[Stat]) -> np.ndarray:
    """S: one row per cell, one column per statistic (float64)."""
    S = np.empty((cells.n, len(stats)), dtype=float)
    for j, stat in enumerate(stats):
        S[:, j] = stat.compute(cells)
    return S
