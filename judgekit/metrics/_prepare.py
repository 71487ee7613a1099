"""From the two tables to dense arrays: validation, grouping, and the verdict array of every
(group, pair) cell.

A *cell* is one pair judged within one group (say one judge). Its verdicts sit in
``V[cell, order, id_swap, repeat]`` as small integer codes, so every per-pair statistic is an
array operation over cells (:mod:`judgekit.metrics._cells`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgekit._scanned import is_scanned
from judgekit.schema import validate_judgments, validate_pairs

A, B, TIE, INVALID, ABSENT = 0, 1, 2, 3, -1
VERDICT_CODE = {"a": A, "b": B, "tie": TIE}
RESERVED = ("metric", "estimate", "ci_low", "ci_high", "se", "n", "denoised", "n_invalid")


@dataclass(frozen=True)
class Options:
    """Estimator settings shared by every metric (validated once)."""

    repeats: str = "all"
    flip_estimator: str = "consistent"
    length: str | Callable[[str], float] = "chars"
    n_options: int | None = None
    lb_method: str = "joint"
    mixed_ties: str = "neutral"
    invalid: str = "disagree"
    pf_denominator: str = "valid"

    def __post_init__(self) -> None:
        if self.repeats not in ("all", "first"):
            raise ValueError(f"repeats must be 'all' or 'first', got {self.repeats!r}")
        if self.flip_estimator not in ("consistent", "paper"):
            raise ValueError(
                f"flip_estimator must be 'consistent' or 'paper', got {self.flip_estimator!r}"
            )
        if not (callable(self.length) or self.length in ("chars", "words")):
            raise ValueError(f"length must be 'chars', 'words' or a callable, got {self.length!r}")
        if self.n_options is not None and (
            not isinstance(self.n_options, (int, np.integer)) or self.n_options < 2
        ):
            raise ValueError(f"n_options must be an integer >= 2 or None, got {self.n_options!r}")
        if self.lb_method not in ("indicator", "joint"):
            raise ValueError(f"lb_method must be 'indicator' or 'joint', got {self.lb_method!r}")
        if self.mixed_ties not in ("neutral", "reference"):
            raise ValueError(f"mixed_ties must be 'neutral' or 'reference', got {self.mixed_ties!r}")
        if self.invalid not in ("disagree", "drop"):
            raise ValueError(f"invalid must be 'disagree' or 'drop', got {self.invalid!r}")
        if self.pf_denominator not in ("valid", "all"):
            raise ValueError(
                f"pf_denominator must be 'valid' or 'all', got {self.pf_denominator!r}"
            )


@dataclass
class Prepared:
    """Judgments reduced to dense arrays, one row per cell: a pair judged by one judge within one
    group (when ``by`` holds the judge column, simply a (group, pair)).

    The bootstrap resamples pairs within each group: ``cluster`` numbers the (group, pair) of
    every cell when several judges share a group (their verdicts on a pair move together), and is
    None when every cell is its own (group, pair).
    """

    by: list[str]
    keys: pd.DataFrame  # one row per group, the ``by`` columns
    group: np.ndarray  # (cells,) group code of each cell, sorted ascending
    pair_id: np.ndarray  # (cells,) pair id of each cell
    V: np.ndarray  # (cells, 2, S, R) int8 verdict codes, ABSENT where no judgment
    label: np.ndarray  # (cells,) int8: A, B or ABSENT (tie / unlabelled / no pairs)
    longer: np.ndarray  # (cells,) bool: the human-preferred response is the longer one
    has_ties: np.ndarray  # (n_groups,) bool: the group's judge ever answered "tie"
    has_labels: bool
    split: np.ndarray | None = None  # (cells,) split code, or None
    cluster: np.ndarray | None = None  # (cells,) (group, pair) code, ascending; None: the cell

    @property
    def n_groups(self) -> int:
        return len(self.keys)

    def clusters(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(first cell of each cluster, its group, its pair id), clusters in ascending order."""
        if self.cluster is None:
            first = np.arange(len(self.group))
        else:
            first = np.unique(self.cluster, return_index=True)[1]
        return first, self.group[first], self.pair_id[first]

    def pairs_per_group(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Distinct pairs per group (of the clusters whose first cell is in ``mask``)."""
        first, group, _ = self.clusters()
        keep = np.ones(len(first), dtype=bool) if mask is None else mask[first]
        return np.bincount(group[keep], minlength=self.n_groups).astype(np.int64)


def as_list(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    return list(by)


def _lengths(pairs: pd.DataFrame, length: str | Callable[[str], float]) -> tuple[np.ndarray, np.ndarray]:
    if length == "chars":
        return pairs["len_a"].to_numpy(float), pairs["len_b"].to_numpy(float)
    if length == "words":
        count = lambda s: float(len(s.split()))  # noqa: E731
    else:
        count = length  # type: ignore[assignment]
    la = np.array([count(t) for t in pairs["response_a"]], dtype=float)
    lb = np.array([count(t) for t in pairs["response_b"]], dtype=float)
    if not (np.isfinite(la).all() and np.isfinite(lb).all()):
        raise ValueError("length: the length function returned a non-finite value")
    return la, lb


def prepare(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None,
    by: str | Sequence[str] | None,
    options: Options,
    *,
    splits: Any = None,
    seed: int = 0,
) -> Prepared:
    """Validate the tables, group them and build the dense verdict array.

    A :class:`judgekit.ScannedTable` is reduced to its cells by its engine
    (:mod:`judgekit.scale`); a frame is reduced here.
    """
    by = check_by(by)
    if is_scanned(pairs) and not is_scanned(judgments):  # a small table: read it whole
        pairs = pairs.to_pandas()
    if is_scanned(judgments):
        return judgments.prepare_cells(pairs, by, options, splits=splits, seed=seed)
    j = validate_judgments(judgments, pairs)
    if len(j) == 0:
        raise ValueError("judgments: the table is empty (0 rows); there is nothing to measure")
    p = validate_pairs(pairs) if pairs is not None else None

    pair_pos = None
    for col in by:
        if col in j.columns:
            continue
        if p is not None and col in p.columns:
            if pair_pos is None:
                pair_pos = pd.Index(p["pair_id"]).get_indexer(j["pair_id"])
            j[col] = p[col].to_numpy()[pair_pos]
            continue
        where = "judgments or pairs" if p is not None else "judgments (no pairs table was given)"
        raise ValueError(f"by: column {col!r} is not in {where}")

    # groups
    g, keys = _group_codes(j, by)
    n_groups = len(keys)

    # cells: (group, judge, pair), sorted by group, judge, then pair in order of first
    # appearance. The judge is part of the cell unless ``by`` holds it: several judges pooled in
    # a group must not overwrite each other's verdicts.
    pcode, puniq = pd.factorize(j["pair_id"])
    n_p = len(puniq)
    if "judge" in by:
        jcode, n_j = np.zeros(len(j), dtype=np.int64), 1
    else:
        jcode, juniq = pd.factorize(j["judge"], sort=True)
        n_j = len(juniq)
    cell = (g * np.int64(n_j) + jcode) * np.int64(n_p) + pcode
    del g, jcode, pcode
    if n_groups * n_j * n_p <= 1 << 26:  # dense: a bitmap of the cells that occur
        seen = np.zeros(n_groups * n_j * n_p, dtype=bool)
        seen[cell] = True
        cells = np.flatnonzero(seen)
        rank = np.cumsum(seen, dtype=np.int64) - 1
        gp = rank[cell]
        del seen, rank
    else:
        cells, gp = np.unique(cell, return_inverse=True)
    del cell
    cell_group = cells // (n_j * n_p)
    cell_pcode = cells % n_p
    cell_pair = np.asarray(puniq)[cell_pcode]
    cluster = None
    if n_j > 1:  # clusters (group, pair), ascending in the same order as the cells' pairs
        cluster = np.unique(cell_group * np.int64(n_p) + cell_pcode, return_inverse=True)[1]

    order = (j["order"] == "ba").to_numpy(dtype=bool).astype(np.int8)
    swap_codes, swap_uniq = pd.factorize(j["id_swap"], sort=True)
    rep_codes, rep_uniq = pd.factorize(j["repeat"], sort=True)
    n_s, n_r = len(swap_uniq), len(rep_uniq)
    size = len(cells) * 2 * n_s * n_r
    if size > 400_000_000:
        raise MemoryError(
            f"judgments: {len(cells)} (group, pair) cells x {n_r} distinct repeat values is too "
            "large to analyse at once; renumber 'repeat' to 0..K-1 or analyse fewer groups"
        )
    V = np.full((len(cells), 2, n_s, n_r), ABSENT, dtype=np.int8)
    V[gp, order, swap_codes, rep_codes] = _verdict_codes(j["verdict"])
    del gp, order, swap_codes, rep_codes

    return finish(p, by, keys, cell_group, cell_pair, V, cluster, options, splits, seed)


def finish(p: pd.DataFrame | None, by: list[str], keys: pd.DataFrame, cell_group: np.ndarray,
           cell_pair: np.ndarray, V: np.ndarray, cluster: np.ndarray | None, options: Options,
           splits: Any, seed: int) -> Prepared:
    """The Prepared of sorted cells: ties seen, labels and lengths from the pairs, splits."""
    n_groups = len(keys)
    tie_seen = np.zeros(n_groups, dtype=bool)
    np.logical_or.at(tie_seen, cell_group, (V == TIE).any(axis=(1, 2, 3)))

    label = np.full(len(cell_group), ABSENT, dtype=np.int8)
    longer = np.zeros(len(cell_group), dtype=bool)
    has_labels = False
    if p is not None:
        ppos = pd.Index(p["pair_id"]).get_indexer(cell_pair)
        lab = p["label"].astype(object).to_numpy()[ppos]
        label = np.where(lab == "a", A, np.where(lab == "b", B, ABSENT)).astype(np.int8)
        has_labels = bool((label != ABSENT).any())
        la, lb = _lengths(p, options.length)
        la, lb = la[ppos], lb[ppos]
        longer = np.where(label == A, la - lb, lb - la) > 0

    split = None
    if splits is not None:
        split = _split_codes(splits, cell_pair, p, seed)

    return Prepared(
        by=by, keys=keys.reset_index(drop=True), group=cell_group, pair_id=cell_pair, V=V,
        label=label, longer=longer, has_ties=tie_seen, has_labels=has_labels, split=split,
        cluster=cluster,
    )


def check_by(by: str | Sequence[str] | None) -> list[str]:
    by = as_list(by)
    bad = [c for c in by if c in RESERVED]
    if bad:
        raise ValueError(f"by: {bad} are names of output columns; rename them first")
    if len(set(by)) != len(by):
        raise ValueError(f"by: columns repeat in {by}")
    return by


def _group_codes(j: pd.DataFrame, by: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Group code of every row (groups sorted by their keys, missing keys a group of their
    own) and the keys of each group."""
    if not by:
        return np.zeros(len(j), dtype=np.int64), pd.DataFrame(index=range(1))
    if len(by) == 1:
        codes, uniques = pd.factorize(j[by[0]], sort=True, use_na_sentinel=False)
        return codes.astype(np.int64, copy=False), pd.DataFrame({by[0]: uniques})
    grouped = j.groupby(by, sort=True, dropna=False, observed=True)
    codes = grouped.ngroup().to_numpy(np.int64)
    return codes, grouped.size().index.to_frame(index=False)[by]


def _verdict_codes(verdict: pd.Series) -> np.ndarray:
    """A, B or TIE per verdict, INVALID where missing (without a Python object per row)."""
    codes, uniques = pd.factorize(verdict)
    lut = np.array([VERDICT_CODE.get(u, INVALID) for u in uniques] + [INVALID], dtype=np.int8)
    return lut[codes]  # code -1 (missing) picks the trailing INVALID


def _split_codes(splits: Any, cell_pair: np.ndarray, pairs: pd.DataFrame | None, seed: int) -> np.ndarray:
    """Split code of each cell's pair from ``splits``: an int S (random, equal-sized, seeded), a
    column of ``pairs``, or a Series / mapping from pair_id to split."""
    if isinstance(splits, (int, np.integer)) and not isinstance(splits, bool):
        if splits < 2:
            raise ValueError(f"splits must be >= 2, got {splits}")
        ids = np.unique(cell_pair)
        rng = np.random.default_rng(seed)
        assign = np.empty(len(ids), dtype=np.int64)
        assign[rng.permutation(len(ids))] = np.arange(len(ids)) % splits
        return assign[np.searchsorted(ids, cell_pair)]
    if isinstance(splits, str):
        if pairs is None or splits not in pairs.columns:
            raise ValueError(f"splits: column {splits!r} is not in pairs")
        mapping = pd.Series(pairs[splits].to_numpy(), index=pairs["pair_id"].astype(str))
    elif isinstance(splits, pd.Series):
        mapping = splits.copy()
        mapping.index = mapping.index.astype(str)
    elif isinstance(splits, Mapping):
        mapping = pd.Series(dict(splits))
        mapping.index = mapping.index.astype(str)
    else:
        raise TypeError(
            "splits must be an int, a column name of pairs, or a Series / mapping from pair_id "
            f"to split; got {type(splits).__name__}"
        )
    values = mapping.reindex(cell_pair)
    missing = values.isna().to_numpy()
    if missing.any():
        ids = list(dict.fromkeys(cell_pair[missing]))[:5]
        raise ValueError(f"splits: no split given for {int(missing.sum())} pairs (pair_id: {', '.join(ids)})")
    codes, _ = pd.factorize(values, sort=True)
    return codes.astype(np.int64)
