"""The judgments of a :class:`ScannedTable` reduced by its engine to one row per (keys, judge,
pair) cell, and fetched batch by batch into integer arrays.

A cell's verdicts are packed into integers by one ibis aggregation, written once for every
backend: each (order, id_swap, repeat) combination is a *slot*; ``present`` ORs one bit per slot
judged and ``packed`` sums the verdict code (a, b, tie, invalid = 0..3) shifted to two bits per
slot. Thirty-one slots fit one pair of columns; more slots take more columns. Unpacked, they give
exactly the verdict array the pandas path builds (:mod:`judgekit.metrics._prepare`), so every
statistic and the bootstrap run unchanged on the cells in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgekit.scale._source import ScannedTable, _ibis
from judgekit.schema import ORDERS, VERDICTS

SLOTS_PER_WORD = 31
BATCH_ROWS = 1 << 20


@dataclass
class CellArrays:
    """One entry per cell (in the engine's order, not yet sorted)."""

    keys: dict[str, tuple[np.ndarray, pd.Index]]  # column -> (codes, values) for by columns
    judge: np.ndarray  # codes into ``judges``
    judges: pd.Index
    pair: np.ndarray  # codes into ``pairs``
    pairs: pd.Index
    first: np.ndarray | None  # smallest row order of the cell, None without an order
    codes: np.ndarray  # (cells, slots) int8 verdict codes, ABSENT (-1) where not judged
    swaps: np.ndarray  # the distinct id_swap values, sorted (slot layout)
    repeats: np.ndarray  # the distinct repeat values, sorted
    n_rows: int


class _Grower:
    """Codes for values arriving in batches, numbered in order of arrival."""

    def __init__(self) -> None:
        self.index = pd.Index([], dtype=object)

    def codes(self, values: np.ndarray) -> np.ndarray:
        pos = self.index.get_indexer(values)
        new = pos < 0
        if new.any():
            fresh = pd.unique(values[new])
            self.index = self.index.append(pd.Index(fresh, dtype=object))
            pos[new] = self.index.get_indexer(values[new])
        return pos.astype(np.int64)


def _column(t: Any, name: str, default: Any, typ: str) -> Any:
    ibis = _ibis()
    return t[name] if name in t.columns else ibis.literal(default, type=typ)


def _cases(value: Any, mapping: list[tuple[Any, int]], default: int) -> Any:
    ibis = _ibis()
    if not mapping:
        return ibis.literal(default, type="int64")
    return ibis.cases(*[(value == k, ibis.literal(v, type="int64")) for k, v in mapping],
                      else_=ibis.literal(default, type="int64"))


def _check_design(table: ScannedTable, t: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate order, verdict and repeat on the distinct combinations; the sorted id_swap and
    repeat values."""
    name = table.name
    missing = [c for c in ("pair_id", "judge", "order", "verdict") if c not in t.columns]
    if missing:
        raise ValueError(f"{name}: required column(s) {missing} are missing (present: "
                         f"{table.columns}); 'repeat' and 'id_swap' are filled in when absent")
    design = t.select(
        order=t["order"], verdict=t["verdict"],
        id_swap=_column(t, "id_swap", False, "boolean"),
        repeat=_column(t, "repeat", 0, "int64"),
    ).distinct().to_pandas()
    if len(design) == 0:
        raise ValueError(f"{name}: the table is empty (0 rows); there is nothing to measure")
    bad = sorted(set(design["order"].dropna()) - set(ORDERS)) + (
        ["<missing>"] if design["order"].isna().any() else [])
    if bad:
        raise ValueError(f"{name}: column 'order' must be one of {list(ORDERS)}; found {bad}")
    bad = sorted(set(design["verdict"].dropna()) - set(VERDICTS))
    if bad:
        raise ValueError(f"{name}: column 'verdict' must be one of {list(VERDICTS)} or missing; "
                         f"found {bad}")
    repeat = pd.to_numeric(design["repeat"], errors="coerce")
    if (repeat.isna() | (repeat < 0) | (repeat % 1 != 0)).any():
        raise ValueError(f"{name}: column 'repeat' must be an integer >= 0; found "
                         f"{sorted(design['repeat'][~(repeat >= 0)].astype(str).unique())[:5]}")
    if design["id_swap"].isna().any():
        raise ValueError(f"{name}: column 'id_swap' is missing in some rows")
    swaps = np.sort(pd.unique(design["id_swap"].to_numpy()))
    repeats = np.sort(pd.unique(repeat.astype(np.int64).to_numpy()))
    return swaps, repeats


def cell_expression(table: ScannedTable, keys: list[str], swaps: np.ndarray,
                    repeats: np.ndarray) -> Any:
    """The one ibis expression that reduces the judgments to cells."""
    ibis = _ibis()
    t = table.expr
    n_s, n_r = len(swaps), len(repeats)
    order = ibis.ifelse(t["order"] == "ba", 1, 0).cast("int64")
    swap = _cases(_column(t, "id_swap", False, "boolean"),
                  [(s.item() if hasattr(s, "item") else s, i) for i, s in enumerate(swaps)], 0)
    rep_col = _column(t, "repeat", 0, "int64").cast("int64")
    if np.array_equal(repeats, np.arange(n_r)):
        rep = rep_col
    else:
        rep = _cases(rep_col, [(int(r), i) for i, r in enumerate(repeats)], 0)
    slot = order * (n_s * n_r) + swap * n_r + rep
    verdict = t["verdict"]
    code = _cases(verdict, [("a", 0), ("b", 1), ("tie", 2)], 3)
    n_slots = 2 * n_s * n_r
    t = t.mutate(_jk_slot=slot, _jk_code=code,
                 _jk_pair=t["pair_id"].cast("string"), _jk_judge=t["judge"].cast("string"))
    aggs: dict[str, Any] = {"_jk_n": t.count()}
    for w in range(0, n_slots, SLOTS_PER_WORD):
        in_word = range(w, min(w + SLOTS_PER_WORD, n_slots))
        bit = _cases(t["_jk_slot"], [(s, 1 << (s - w)) for s in in_word], 0)
        shift = _cases(t["_jk_slot"], [(s, 1 << (2 * (s - w))) for s in in_word], 0)
        # a sum, not a bitwise OR (which not every backend compiles): a slot judged twice
        # carries into the next bit, so its popcount falls short of the count of rows
        aggs[f"_jk_present{w // SLOTS_PER_WORD}"] = bit.sum().cast("int64")
        aggs[f"_jk_packed{w // SLOTS_PER_WORD}"] = (shift * t["_jk_code"]).sum().cast("int64")
    if table.order is not None:
        aggs["_jk_first"] = t[table.order].min()
    return t.group_by([*keys, "_jk_judge", "_jk_pair"]).aggregate(**aggs)


def _popcount(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((x * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64)


def batches(table: ScannedTable, expr: Any, desc: str, unit: str,
            chunk_size: int = BATCH_ROWS) -> Iterator[Any]:
    """The non-empty Arrow batches of ``expr``, counted on a progress bar when the table asks for
    one (the bar is closed however the caller's loop ends)."""
    bar = None
    if table.progress:
        from tqdm.auto import tqdm

        bar = tqdm(desc=f"{table.name}: {desc}", unit=unit, unit_scale=True)
    try:
        for batch in expr.to_pyarrow_batches(chunk_size=chunk_size):
            if batch.num_rows:
                yield batch
                if bar is not None:
                    bar.update(batch.num_rows)
    finally:
        if bar is not None:
            bar.close()


def fetch_cells(table: ScannedTable, keys: list[str]) -> CellArrays:
    """Run the cell expression and decode it, one batch at a time."""
    t = table.expr
    for k in keys:
        if k not in t.columns:
            raise ValueError(f"by: column {k!r} is not in {table.name}")
    swaps, repeats = _check_design(table, t)
    expr = cell_expression(table, keys, swaps, repeats)
    n_slots = 2 * len(swaps) * len(repeats)
    words = range((n_slots + SLOTS_PER_WORD - 1) // SLOTS_PER_WORD)
    growers = {k: _Grower() for k in keys}
    judges, pairs = _Grower(), _Grower()
    parts: dict[str, list[np.ndarray]] = {}
    n_rows = 0
    for batch in batches(table, expr, "cells from the engine", " cells"):
        cols = {name: batch.column(name) for name in batch.schema.names}
        for col in ("_jk_judge", "_jk_pair"):
            if cols[col].null_count:
                which = "judge" if col == "_jk_judge" else "pair_id"
                raise ValueError(f"{table.name}: column {which!r} is missing in some rows")
        got = {
            "judge": judges.codes(cols["_jk_judge"].to_numpy(zero_copy_only=False)),
            "pair": pairs.codes(cols["_jk_pair"].to_numpy(zero_copy_only=False)),
            "n": cols["_jk_n"].to_numpy(zero_copy_only=False).astype(np.int64),
        }
        for k in keys:
            got[f"key:{k}"] = growers[k].codes(
                cols[k].to_pandas().astype(object).to_numpy())
        present = np.stack([cols[f"_jk_present{w}"].to_numpy(zero_copy_only=False).astype(np.int64)
                            for w in words], axis=1)
        packed = np.stack([cols[f"_jk_packed{w}"].to_numpy(zero_copy_only=False).astype(np.int64)
                           for w in words], axis=1)
        got["codes"] = _unpack(present, packed, n_slots)
        dup = _popcount(present).sum(axis=1) != got["n"]
        if dup.any():
            ids = list(dict.fromkeys(pairs.index[got["pair"][dup]]))[:5]
            raise ValueError(
                f"{table.name}: the same (pair, judge, order, id_swap, repeat) appears more "
                f"than once (pair_id: {', '.join(map(str, ids))})")
        if table.order is not None:
            got["first"] = cols["_jk_first"].to_numpy(zero_copy_only=False).astype(np.int64)
        n_rows += int(got.pop("n").sum())
        for name, arr in got.items():
            parts.setdefault(name, []).append(arr)
    if not parts:
        raise ValueError(f"{table.name}: the table is empty (0 rows); there is nothing to measure")
    joined = {name: np.concatenate(arrs) for name, arrs in parts.items()}
    return CellArrays(
        keys={k: (joined[f"key:{k}"], growers[k].index) for k in keys},
        judge=joined["judge"], judges=judges.index, pair=joined["pair"], pairs=pairs.index,
        first=joined.get("first"), codes=joined["codes"], swaps=swaps, repeats=repeats,
        n_rows=n_rows,
    )


def _unpack(present: np.ndarray, packed: np.ndarray, n_slots: int) -> np.ndarray:
    out = np.empty((len(present), n_slots), dtype=np.int8)
    for s in range(n_slots):
        w, off = divmod(s, SLOTS_PER_WORD)
        seen = (present[:, w] >> off) & 1
        code = (packed[:, w] >> (2 * off)) & 3
        out[:, s] = np.where(seen == 1, code, -1)
    return out
