"""What each (group, pair) cell says, as arrays: the building blocks of the per-pair statistics.

:class:`Cells` wraps the dense verdict array of :func:`judgekit.metrics._prepare.prepare` and
computes, once and only when a statistic asks for it, the intermediate arrays the statistics of
:mod:`judgekit.metrics._statistics` are made of: whether the judge picked the human-preferred
response (Z), per-order accuracies, repeat agreement, the (original, swapped) judgment pairs of
Shi et al., the majority share of each repeated request. Shapes: ``(cells, ...)``.
"""

from __future__ import annotations

from functools import cache, cached_property
from math import comb
from typing import NamedTuple

import numpy as np

from judgekit.metrics._prepare import ABSENT, INVALID, TIE, A, B, Options, Prepared


@cache
def expected_max_share(n: int, m: int) -> float:
    """E[max_k count_k] / n for n uniform draws over m options (exact, by counting sequences)."""
    if n <= 0:
        return float("nan")
    total = m**n
    # P(max <= t) * m^n = number of sequences whose counts are all <= t
    expected_max = 0.0
    for t in range(n):
        ways = [1] + [0] * n  # sequences over 0 letters: only the empty one
        for _ in range(m):
            new = [0] * (n + 1)
            for s in range(n + 1):
                acc = 0
                for c in range(min(t, s) + 1):
                    acc += comb(s, c) * ways[s - c]
                new[s] = acc
            ways = new
        expected_max += 1.0 - ways[n] / total  # P(max > t)
    return expected_max / n


def chance_rs(n_trials: np.ndarray, n_options: np.ndarray) -> np.ndarray:
    """Expected repetition stability of a uniformly random judge (vectorised lookup)."""
    out = np.zeros(np.shape(n_trials), dtype=float)
    for n, m in set(zip(np.ravel(n_trials).tolist(), np.ravel(n_options).tolist())):
        if n >= 2:
            out[(n_trials == n) & (n_options == m)] = expected_max_share(int(n), int(m))
    return out


def first_mask(mask: np.ndarray) -> np.ndarray:
    """Keep only the first True along the last axis."""
    return mask & (np.cumsum(mask, axis=-1) == 1)


def agreement(k: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Share of agreeing ordered repeat pairs, and whether it is defined (K >= 2)."""
    ok = K >= 2
    Kf = np.where(ok, K, 2).astype(float)
    agr = (k * (k - 1.0) + (K - k) * (K - k - 1.0)) / (Kf * (Kf - 1.0))
    return np.where(ok, agr, 0.0), ok


def mean_over(values: np.ndarray, mask: np.ndarray, axis: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Mean of ``values`` where ``mask`` over ``axis`` (0 where empty) and the indicator."""
    cnt = mask.sum(axis=axis)
    tot = np.where(mask, values, 0).sum(axis=axis)
    return np.where(cnt > 0, tot / np.maximum(cnt, 1), 0.0), cnt > 0


class Stability(NamedTuple):
    """Repetition stability per request; see :attr:`Cells.stability`."""

    share: np.ndarray  # majority share of the trials (0 where not a query)
    chance: np.ndarray  # its expectation for a uniformly random judge (0 where not a query)
    query: np.ndarray  # the request counts: two or more trials, a valid answer
    trials: np.ndarray  # n_j: every trial, or the valid ones with invalid="drop"


class Cells:
    """Lazily computed per-cell arrays of one prepared table under one set of options.

    Display orders are indexed 0 (``ab``) and 1 (``ba``); ``cr`` is the display order that shows
    the human-preferred response first (``ab`` for a pair labelled "a").
    """

    def __init__(self, prep: Prepared, options: Options) -> None:
        self.prep = prep
        self.options = options
        self.V = prep.V
        self.n = prep.V.shape[0]
        self.rows = np.arange(self.n)

    # --- verdicts -------------------------------------------------------------------------
    @cached_property
    def present(self) -> np.ndarray:
        return self.V != ABSENT

    @cached_property
    def valid(self) -> np.ndarray:
        return self.present & (self.V != INVALID)

    @cached_property
    def invalid(self) -> np.ndarray:
        return self.V == INVALID

    @cached_property
    def labelled(self) -> np.ndarray:
        return self.prep.label != ABSENT

    @cached_property
    def Z(self) -> np.ndarray:
        """Picked the human-preferred response (labelled cells only)."""
        return self.present & (self.prep.label.astype(np.int16)[:, None, None, None] == self.V)

    @cached_property
    def K(self) -> np.ndarray:
        """Trials (present repeats) per request, shape (cells, 2, id_swap)."""
        return self.present.sum(axis=3)

    @cached_property
    def cr(self) -> np.ndarray:
        """Display index of the order showing the preferred response first."""
        return np.where(self.prep.label == B, 1, 0)

    def by_label(self, per_order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cr, rc) columns of a (cells, 2) array indexed by display order."""
        return per_order[self.rows, self.cr], per_order[self.rows, 1 - self.cr]

    # --- accuracy per order ---------------------------------------------------------------
    @cached_property
    def selected(self) -> np.ndarray:
        """Judgments that enter accuracies: all repeats, or the first (``repeats="first"``)."""
        return first_mask(self.present) if self.options.repeats == "first" else self.present

    @cached_property
    def accuracy_by_order(self) -> tuple[np.ndarray, np.ndarray]:
        """(z, h): mean of Z over a cell's selected judgments per display order, and whether the
        cell counts there (labelled and judged in that order)."""
        z, h = mean_over(self.Z, self.selected, axis=(2, 3))
        h &= self.labelled[:, None]
        return np.where(h, z, 0.0), h

    @cached_property
    def accuracy_cr_rc(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(z_cr, h_cr, z_rc, h_rc)."""
        z, h = self.accuracy_by_order
        (z_cr, z_rc), (h_cr, h_rc) = self.by_label(z), self.by_label(h)
        return z_cr, h_cr, z_rc, h_rc

    @cached_property
    def flip_agreement_by_order(self) -> tuple[np.ndarray, np.ndarray]:
        """(ag, m): repeat agreement of Z per display order (mean over ID arrangements), and
        whether it is defined (labelled, two or more trials)."""
        agr, ok = agreement(self.Z.sum(axis=3), self.K)
        ag, m = mean_over(agr, ok, axis=(2,))
        m &= self.labelled[:, None]
        return np.where(m, ag, 0.0), m

    @cached_property
    def flip_agreement_cr_rc(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(ag_cr, m_cr, ag_rc, m_rc)."""
        ag, m = self.flip_agreement_by_order
        (ag_cr, ag_rc), (m_cr, m_rc) = self.by_label(ag), self.by_label(m)
        return ag_cr, m_cr, ag_rc, m_rc

    def accuracy(self, order: str) -> tuple[np.ndarray, np.ndarray]:
        """(z, h) in a display order ("ab", "ba") or a label-relative one ("cr", "rc")."""
        if order in ("ab", "ba"):
            z, h = self.accuracy_by_order
            i = ("ab", "ba").index(order)
            return z[:, i], h[:, i]
        z_cr, h_cr, z_rc, h_rc = self.accuracy_cr_rc
        return (z_cr, h_cr) if order == "cr" else (z_rc, h_rc)

    @cached_property
    def valid_labelled_by_order(self) -> np.ndarray:
        """Valid verdicts among a labelled cell's selected judgments, per display order."""
        counts = (self.valid & self.selected).sum(axis=(2, 3))
        return counts * self.labelled[:, None]

    def valid_labelled(self, order: str) -> np.ndarray:
        """Valid verdicts on a labelled cell in a display or label-relative order."""
        counts = self.valid_labelled_by_order
        if order in ("ab", "ba"):
            return counts[:, ("ab", "ba").index(order)]
        cr, rc = self.by_label(counts)
        return cr if order == "cr" else rc

    def flip_agreement(self, order: str) -> tuple[np.ndarray, np.ndarray]:
        """(ag, m): repeat agreement on the preferred response in a label-relative order
        ("cr", "rc"), or on the first position in a display order ("ab", "ba")."""
        if order in ("ab", "ba"):
            ag, m = self.position_flip_agreement
            i = ("ab", "ba").index(order)
            return ag[:, i], m[:, i]
        ag_cr, m_cr, ag_rc, m_rc = self.flip_agreement_cr_rc
        return (ag_cr, m_cr) if order == "cr" else (ag_rc, m_rc)

    # --- both orders ----------------------------------------------------------------------
    @cached_property
    def both_present(self) -> np.ndarray:
        """Both orders judged, matched by (id_swap, repeat): shape (cells, id_swap, repeat)."""
        return self.present[:, 0] & self.present[:, 1]

    @cached_property
    def both_correct(self) -> tuple[np.ndarray, np.ndarray]:
        """(zb, hb): Acc_both indicator averaged over a cell's matched repeats, and whether the
        cell counts (labelled, judged in both orders)."""
        both = self.both_present
        sel = first_mask(both) if self.options.repeats == "first" else both
        zb, hb = mean_over(self.Z[:, 0] & self.Z[:, 1], sel, axis=(1, 2))
        hb &= self.labelled
        return np.where(hb, zb, 0.0), hb

    @cached_property
    def both_flip_agreement(self) -> tuple[np.ndarray, np.ndarray]:
        """(agB, mB): repeat agreement of the Acc_both indicator and whether it is defined."""
        zb_rep = self.Z[:, 0] & self.Z[:, 1]
        agr, ok = agreement(zb_rep.sum(axis=2), self.both_present.sum(axis=2))
        return mean_over(agr, ok, axis=(1,))

    # --- position terms (no labels needed) ------------------------------------------------
    @cached_property
    def positions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(first, second, tie): the judge chose the first position / the second / a tie."""
        V, valid = self.V, self.valid
        order = np.array([0, 1], dtype=np.int8)[None, :, None, None]
        first = valid & (((V == A) & (order == 0)) | ((V == B) & (order == 1)))
        second = valid & (((V == B) & (order == 0)) | ((V == A) & (order == 1)))
        return first, second, V == TIE

    @cached_property
    def position_flip_agreement(self) -> tuple[np.ndarray, np.ndarray]:
        """(ag, m) per display order of the first-position choice."""
        agr, ok = agreement(self.positions[0].sum(axis=3), self.K)
        return mean_over(agr, ok, axis=(2,))

    # --- Shi et al.: (original, swapped) judgment pairs -----------------------------------
    @cached_property
    def judgment_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(selected, valid, v0, v1): judgment pairs matched by (id_swap, repeat), those without
        an invalid verdict, and the verdict codes in the original (ab) and swapped (ba) order."""
        both = self.both_present
        sel = first_mask(both) if self.options.repeats == "first" else both
        v0, v1 = self.V[:, 0], self.V[:, 1]
        ok = sel & (v0 != INVALID) & (v1 != INVALID)
        return sel, ok, v0, v1

    def count_pairs(self, mask: np.ndarray) -> np.ndarray:
        """Valid judgment pairs per cell where ``mask`` (over (id_swap, repeat)) holds."""
        return (self.judgment_pairs[1] & mask).sum(axis=(1, 2))

    # --- repetition stability -------------------------------------------------------------
    @cached_property
    def stability(self) -> Stability:
        """Per request (cells, order, id_swap): the majority share of its trials, the same for a
        uniformly random judge, whether the request counts as a query, and its trials.

        Shi et al. divide by every trial, so an invalid answer agrees with nothing
        (``invalid="disagree"``); ``invalid="drop"`` leaves invalid answers out first. A query
        needs two trials and a valid answer.
        """
        first, second, tie = self.positions
        counts = np.stack([first.sum(axis=3), second.sum(axis=3), tie.sum(axis=3)])
        n_valid = self.valid.sum(axis=3)
        n_trials = n_valid if self.options.invalid == "drop" else self.K
        query = (n_trials >= 2) & (n_valid >= 1)
        rs = np.where(query, counts.max(axis=0) / np.maximum(n_trials, 1), 0.0)
        if self.options.n_options is not None:
            m = np.full(self.n, self.options.n_options)
        else:
            m = np.where(self.prep.has_ties[self.prep.group], 3, 2)
        rs0 = chance_rs(n_trials, np.broadcast_to(m[:, None, None], n_trials.shape))
        return Stability(rs, np.where(query, rs0, 0.0), query, n_trials)
