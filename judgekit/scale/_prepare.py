"""The metrics' dense cells (:class:`judgekit.metrics._prepare.Prepared`) from a scanned table:
the engine returns one row per (keys, judge, pair) cell, which are ordered here exactly as the
pandas path orders them, so every statistic and bootstrap draw is the same."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgekit.metrics._prepare import Options, Prepared, _group_codes, finish
from judgekit.scale._cells import CellArrays, fetch_cells
from judgekit.scale._source import ScannedTable
from judgekit.schema import validate_pairs


def small_frame(table: Any, name: str) -> pd.DataFrame | None:
    """A small table (pairs) as a frame: scanned tables are read whole."""
    if table is None or isinstance(table, pd.DataFrame):
        return table
    if isinstance(table, ScannedTable):
        return table.to_pandas()
    raise TypeError(f"{name} must be a DataFrame or a ScannedTable, got {type(table).__name__}")


def pair_rank(cells: CellArrays) -> np.ndarray:
    """The rank of each distinct pair in the order the pandas path numbers them: order of first
    appearance in the rows when the table has an order, else sorted pair_id."""
    n_p = len(cells.pairs)
    if cells.first is not None:
        first = np.full(n_p, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, cells.pair, cells.first)
        order = np.argsort(first, kind="stable")
    else:
        order = np.argsort(np.asarray(cells.pairs, dtype=object).astype(str), kind="stable")
    rank = np.empty(n_p, dtype=np.int64)
    rank[order] = np.arange(n_p)
    return rank


def prepare_scanned(judgments: Any, pairs: Any, by: list[str], options: Options, *,
                    splits: Any = None, seed: int = 0) -> Prepared:
    """:func:`judgekit.metrics._prepare.prepare` for a :class:`ScannedTable`."""
    p = small_frame(pairs, "pairs")
    p = validate_pairs(p) if p is not None else None
    in_table = [c for c in by if c != "judge" and c in judgments.columns]
    from_pairs = [c for c in by if c != "judge" and c not in in_table]
    for col in from_pairs:
        if p is None or col not in p.columns:
            where = "judgments or pairs" if p is not None else "judgments (no pairs table was given)"
            raise ValueError(f"by: column {col!r} is not in {where}")
    cells = fetch_cells(judgments, in_table)
    pair_ids = np.asarray(cells.pairs, dtype=object)
    if p is not None:
        known = pd.Index(p["pair_id"]).get_indexer(pair_ids)
        if (known < 0).any():
            ids = [str(x) for x in pair_ids[known < 0][:5]]
            raise ValueError(f"{judgments.name}: {int((known < 0).sum())} pair_id(s) are not in "
                             f"pairs (pair_id: {', '.join(ids)})")

    # group of every cell: codes of each by column, combined, then the distinct combinations
    # grouped as the pandas path groups rows (sorted keys, missing keys a group of their own)
    parts, values = [], {}
    for col in by:
        if col == "judge":
            parts.append(cells.judge)
            values[col] = np.asarray(cells.judges, dtype=object)
        elif col in in_table:
            codes, uniq = cells.keys[col]
            parts.append(codes)
            values[col] = np.asarray(uniq, dtype=object)
        else:
            pcodes, puniq = pd.factorize(p[col].to_numpy()[known], use_na_sentinel=False)
            parts.append(pcodes[cells.pair])
            values[col] = np.asarray(puniq, dtype=object)
    if parts:
        combo = np.zeros(len(cells.pair), dtype=np.int64)
        for codes, col in zip(parts, by):
            combo = combo * len(values[col]) + codes
        distinct, inverse = np.unique(combo, return_inverse=True)
        digits, rest = [], distinct
        for col in reversed(by):
            rest, d = np.divmod(rest, len(values[col]))
            digits.append(d)
        combos = pd.DataFrame({col: values[col][d] for col, d in zip(by, reversed(digits))})
        for col in by:  # restore the dtypes the frame path would group
            src = p[col] if col in from_pairs else None
            if src is not None:
                combos[col] = combos[col].astype(src.dtype, copy=False)
        combo_group, keys = _group_codes(combos, by)
        cell_group = combo_group[inverse.reshape(-1)]
    else:
        cell_group = np.zeros(len(cells.pair), dtype=np.int64)
        keys = pd.DataFrame(index=range(1))
    keys = _key_dtypes(keys, judgments, by)

    judge_rank = np.argsort(np.argsort(np.asarray(cells.judges, dtype=object).astype(str),
                                       kind="stable"))
    p_rank = pair_rank(cells)
    cell_pcode = p_rank[cells.pair]
    sort = np.lexsort((cell_pcode, judge_rank[cells.judge], cell_group))
    cell_group = cell_group[sort]
    cell_pcode = cell_pcode[sort]
    cell_pair = pair_ids[cells.pair[sort]]
    n_s, n_r = len(cells.swaps), len(cells.repeats)
    V = cells.codes[sort].reshape(len(sort), 2, n_s, n_r)
    del cells
    cluster = None
    if "judge" not in by and len(judge_rank) > 1:
        cluster = np.unique(cell_group * np.int64(len(p_rank)) + cell_pcode,
                            return_inverse=True)[1].reshape(-1)
    return finish(p, by, keys, cell_group, cell_pair, V, cluster, options, splits, seed)


def _key_dtypes(keys: pd.DataFrame, table: ScannedTable, by: list[str]) -> pd.DataFrame:
    """The ``by`` columns as a frame would carry them (judge as str; others inferred)."""
    out = keys.copy()
    for col in by:
        if col == "judge":
            out[col] = out[col].astype(str)
        else:
            out[col] = out[col].infer_objects()
    return out
