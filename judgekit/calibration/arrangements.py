"""The four CalibraEval arrangements of option IDs and contents, and P(t1) in each.

CalibraEval (Li et al. 2024) shows a pair of responses o1 = response a and o2 = response b under
two option IDs t1/t2 (e.g. "A"/"B") in four arrangements::

    X0 = [(t1, o1); (t2, o2)]   order "ab", id_swap False
    X1 = [(t2, o2); (t1, o1)]   order "ba", id_swap True    (positions swapped)
    X2 = [(t1, o2); (t2, o1)]   order "ba", id_swap False   (IDs swapped)
    X3 = [(t2, o1); (t1, o2)]   order "ab", id_swap True    (both swapped)

``id_swap`` True means the first position carries the second ID, so t1 sits in the first position
exactly when ``id_swap`` is False, whatever the order. Response a carries t1 exactly when
``(order == "ab") != id_swap`` (X0 and X1), so

    s_j = P(t1 | X_j) = p_a        in X0, X1
    s_j = P(t1 | X_j) = 1 - p_a    in X2, X3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit._scanned import is_scanned
from judgekit._stamp import stamped
from judgekit.schema import validate_judgments

__all__ = ["ARRANGEMENTS", "arrangement_table", "with_arrangements"]

#: (order, id_swap) of each CalibraEval arrangement.
ARRANGEMENTS: dict[str, tuple[str, bool]] = {
    "X0": ("ab", False),
    "X1": ("ba", True),
    "X2": ("ba", False),
    "X3": ("ab", True),
}

_S_COLUMNS = ("s0", "s1", "s2", "s3")


_NAMES = np.array(list(ARRANGEMENTS))


def _arrangement_codes(order: pd.Series, id_swap: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Arrangement index (0..3 for X0..X3) and whether response a carries t1, per row.

    Vectorised on the column's own storage (no Python objects for Arrow strings).
    """
    ab = (order == "ab").to_numpy(dtype=bool)
    swap = id_swap.to_numpy(dtype=bool)
    # X0 = (ab, no swap), X1 = (ba, swap), X2 = (ba, no swap), X3 = (ab, swap)
    code = np.where(ab, np.where(swap, 3, 0), np.where(swap, 1, 2)).astype(np.int8)
    return code, ab != swap


@dataclass
class _Cells:
    """One row per (judge, pair) with P(t1) in each arrangement, built from integer codes.

    ``judges`` and ``pairs`` are the unique names (``pairs`` sorted, ``judges`` sorted or in
    order of appearance); ``judge``/``pair`` give each cell's codes, ``s`` its mean P(t1) in
    X0..X3 (NaN where none), ``n_repeats`` the most repeats averaged in any arrangement, and
    ``row_cell``/``row_judge`` map every judgment row to its cell and judge code.
    """

    judges: pd.Index
    pairs: pd.Index
    judge: np.ndarray
    pair: np.ndarray
    s: np.ndarray
    n_repeats: np.ndarray
    row_cell: np.ndarray
    row_judge: np.ndarray


def _cells(df: pd.DataFrame, p_t1: np.ndarray, code: np.ndarray, *, sort_judges: bool = True) -> _Cells:
    """:class:`_Cells` of a validated table, given P(t1) and the arrangement code of each row."""
    judge_codes, judges = pd.factorize(df["judge"], sort=sort_judges)
    pair_codes, pairs = pd.factorize(df["pair_id"], sort=True)
    n_pairs = max(len(pairs), 1)
    key = judge_codes.astype(np.int64) * n_pairs + pair_codes
    if len(judges) * n_pairs <= 8 * max(len(df), 1):  # dense lookup: no hashing or sorting
        present = np.zeros(len(judges) * n_pairs, dtype=bool)
        present[key] = True
        cells = np.flatnonzero(present)
        lookup = np.cumsum(present) - 1
        row_cell = lookup[key]
    else:
        row_cell, cells = pd.factorize(key, sort=True)
    n = len(cells)
    ok = ~np.isnan(p_t1)
    flat = row_cell[ok].astype(np.int64) * 4 + code[ok]
    count = np.bincount(flat, minlength=4 * n).reshape(n, 4)
    total = np.bincount(flat, weights=p_t1[ok], minlength=4 * n).reshape(n, 4)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(count > 0, total / count, np.nan)
    judge, pair = np.divmod(np.asarray(cells, dtype=np.int64), n_pairs)
    return _Cells(judges=pd.Index(judges), pairs=pd.Index(pairs), judge=judge, pair=pair, s=s,
                  n_repeats=count.max(axis=1, initial=0).astype(np.int64), row_cell=row_cell,
                  row_judge=judge_codes)


@stamped
def with_arrangements(judgments: pd.DataFrame, prob: str = "p_a") -> pd.DataFrame:
    """Add the arrangement (``"X0"``..``"X3"``), where t1 sits, and P(t1) to each judgment.

    Parameters
    ----------
    judgments : DataFrame
        A judgments table (see :mod:`judgekit.schema`); ``id_swap`` defaults to False.
    prob : str
        The column holding the probability that response a is preferred (``"p_a"`` or
        ``"p_a_calibrated"``).

    Returns
    -------
    DataFrame
        The validated judgments plus ``arrangement``, ``t1_first`` (bool: t1 is in the first
        position, i.e. ``not id_swap``), ``a_has_t1`` (bool) and ``p_t1`` (P(t1) from ``prob``).

    Examples
    --------
    >>> import judgekit as jk
    >>> _, j, _ = jk.sim.simulate_judgments(2, id_swap=(False, True), seed=0)
    >>> jk.with_arrangements(j).groupby("arrangement")[["order", "id_swap"]].first()
                order  id_swap
    arrangement
    X0             ab    False
    X1             ba     True
    X2             ba    False
    X3             ab     True
    """
    df = validate_judgments(judgments, require=(prob,) if prob != "p_a" else ())
    return _add_arrangements(df, prob)


def _add_arrangements(df: pd.DataFrame, prob: str = "p_a") -> pd.DataFrame:
    """:func:`with_arrangements` on an already validated table (adds columns in place)."""
    p = pd.to_numeric(df[prob], errors="coerce").astype("float64").to_numpy()
    bad = ~np.isnan(p) & ((p < 0) | (p > 1))
    if bad.any():
        raise ValueError(f"judgments: column {prob!r} must be a probability in [0, 1]; "
                         f"{int(bad.sum())} rows are outside")
    code, a_t1 = _arrangement_codes(df["order"], df["id_swap"])
    df["arrangement"] = _NAMES[code]
    df["t1_first"] = ~df["id_swap"].to_numpy(dtype=bool)
    df["a_has_t1"] = a_t1
    df["p_t1"] = np.where(a_t1, p, 1.0 - p)
    return df


@stamped
def arrangement_table(
    judgments: pd.DataFrame, prob: str = "p_a", *, complete: tuple[str, ...] = ()
) -> pd.DataFrame:
    """One row per (judge, pair) with P(t1) in each arrangement: ``s0``, ``s1``, ``s2``, ``s3``.

    Repeats of the same request are averaged (their logprobs agree for a deterministic judge).
    A missing arrangement, or one whose probability is missing, gives NaN.

    Parameters
    ----------
    judgments : DataFrame or ScannedTable
        A judgments table, or one an engine holds (:func:`scan_table`): then the engine sums
        P(t1) per (judge, pair, arrangement) and only this table is held in memory.
    prob : str
        Probability column to read (``"p_a"`` or ``"p_a_calibrated"``).
    complete : tuple of str
        Arrangements (e.g. ``("X0", "X1", "X2")``) that must all be present: rows missing any of
        them are dropped.

    Returns
    -------
    DataFrame
        Columns ``judge``, ``pair_id``, ``s0``..``s3`` (P(t1) in X0..X3) and ``n_repeats`` (the
        largest number of repeats averaged in any arrangement).

    Examples
    --------
    >>> import judgekit as jk
    >>> _, j, _ = jk.sim.simulate_judgments(3, token_bias=1.0, id_swap=(False, True), seed=0)
    >>> jk.arrangement_table(j).columns.tolist()
    ['judge', 'pair_id', 's0', 's1', 's2', 's3', 'n_repeats']
    """
    unknown = set(complete) - set(ARRANGEMENTS)
    if unknown:
        raise ValueError(f"complete: unknown arrangements {sorted(unknown)}; use X0..X3")
    if is_scanned(judgments):  # the engine sums P(t1) per (judge, pair, arrangement)
        return _complete(judgments.arrangement_cells(prob), complete)
    return _arrangement_table(with_arrangements(judgments, prob), complete)


def _complete(wide: pd.DataFrame, complete: tuple[str, ...]) -> pd.DataFrame:
    if complete:
        cols = [f"s{name[1]}" for name in complete]
        wide = wide[wide[cols].notna().all(axis=1)].reset_index(drop=True)
    return wide


def _arrangement_table(df: pd.DataFrame, complete: tuple[str, ...] = ()) -> pd.DataFrame:
    """:func:`arrangement_table` from a table that already has the arrangement columns."""
    code = pd.Index(list(ARRANGEMENTS)).get_indexer(df["arrangement"])
    cells = _cells(df, df["p_t1"].to_numpy(dtype=float), code.astype(np.int8))
    wide = pd.DataFrame({
        "judge": cells.judges.take(cells.judge),
        "pair_id": cells.pairs.take(cells.pair),
        **{col: cells.s[:, j] for j, col in enumerate(_S_COLUMNS)},
        "n_repeats": cells.n_repeats,
    })
    return _complete(wide, complete)
