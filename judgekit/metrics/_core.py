"""The engine behind every reliability metric: per-pair sufficient statistics, one formula per
metric over their sums, a vectorised cluster bootstrap over pairs, and mean (std) over splits.

Every metric in this subpackage is a smooth function of *sums over pairs* of a few per-pair
statistics (how often the judge picked the human-preferred response in each order, how often its
repeats agreed, how its two orders related, ...). So the engine

1. turns the judgments of each group into a dense array ``V[gp, order, id_swap, repeat]`` of verdict
   codes (``gp`` = one pair within one group),
2. reduces it to a matrix ``S`` with one row per ``gp`` and one column per statistic,
3. evaluates the metric formulas on column sums of ``S``: once for the point estimate, and for the
   bootstrap on ``W @ S`` where each row of ``W`` holds how often each pair was drawn in one
   resample (multinomial counts built with one ``bincount`` per chunk of resamples; no Python loop
   per resample).

The public functions in the sibling modules select metrics and columns from the long frame this
module builds. Nothing here is public.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from math import comb
from typing import Any

import numpy as np
import pandas as pd

from judgekit.exceptions import MetricWarning
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["MetricWarning"]

A, B, TIE, INVALID, ABSENT = 0, 1, 2, 3, -1
_VERDICT_CODE = {"a": A, "b": B, "tie": TIE}
_MIN_DENOM = 0.05  # 1 - 2q at or below this gives NaN (SPEC §1)
_MAX_BOOT_NAN = 0.05  # bootstrap intervals need at least 95% finite replicates
_RESERVED = ("metric", "estimate", "ci_low", "ci_high", "se", "n", "denoised", "n_invalid")


# ---------------------------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# preparing the dense verdict array
# ---------------------------------------------------------------------------------------------

@dataclass
class Prepared:
    """Judgments reduced to dense per-(group, pair) arrays."""

    by: list[str]
    keys: pd.DataFrame  # one row per group, the ``by`` columns
    group: np.ndarray  # (n_gp,) group code of each gp, sorted ascending
    pair_id: np.ndarray  # (n_gp,) pair id of each gp
    V: np.ndarray  # (n_gp, 2, S, R) int8 verdict codes, ABSENT where no judgment
    label: np.ndarray  # (n_gp,) int8: A, B or ABSENT (tie / unlabelled / no pairs)
    longer: np.ndarray  # (n_gp,) bool: the human-preferred response is the longer one
    has_ties: np.ndarray  # (n_groups,) bool: the group's judge ever answered "tie"
    has_labels: bool
    split: np.ndarray | None = None  # (n_gp,) split code, or None

    @property
    def n_groups(self) -> int:
        return len(self.keys)


def _as_list(by: str | Sequence[str] | None) -> list[str]:
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
    """Validate the tables, group them and build the dense verdict array."""
    by = _as_list(by)
    bad = [c for c in by if c in _RESERVED]
    if bad:
        raise ValueError(f"by: {bad} are names of output columns; rename them first")
    if len(set(by)) != len(by):
        raise ValueError(f"by: columns repeat in {by}")
    j = validate_judgments(judgments, pairs)
    p = validate_pairs(pairs) if pairs is not None else None

    pair_pos = None
    if p is not None:
        pair_pos = pd.Index(p["pair_id"]).get_indexer(j["pair_id"])
    for col in by:
        if col in j.columns:
            continue
        if p is not None and col in p.columns:
            j[col] = p[col].to_numpy()[pair_pos]
            continue
        where = "judgments or pairs" if p is not None else "judgments (no pairs table was given)"
        raise ValueError(f"by: column {col!r} is not in {where}")

    # groups
    if by:
        grouped = j.groupby(by, sort=True, dropna=False, observed=True)
        g = grouped.ngroup().to_numpy(np.int64)
        keys = grouped.size().index.to_frame(index=False)[by]
    else:
        g = np.zeros(len(j), dtype=np.int64)
        keys = pd.DataFrame(index=range(1))
    n_groups = len(keys)

    # (group, pair) cells, sorted by group
    pcode, puniq = pd.factorize(j["pair_id"])
    cell = g * np.int64(len(puniq)) + pcode
    cells, gp = np.unique(cell, return_inverse=True)
    cell_group = cells // len(puniq)
    cell_pair = np.asarray(puniq)[cells % len(puniq)]

    order = (j["order"].to_numpy(object) == "ba").astype(np.int64)
    swap_codes, swap_uniq = pd.factorize(j["id_swap"], sort=True)
    rep_codes, rep_uniq = pd.factorize(j["repeat"], sort=True)
    n_s, n_r = len(swap_uniq), len(rep_uniq)
    size = len(cells) * 2 * n_s * n_r
    if size > 400_000_000:
        raise MemoryError(
            f"judgments: {len(cells)} (group, pair) cells x {n_r} distinct repeat values is too "
            "large to analyse at once; renumber 'repeat' to 0..K-1 or analyse fewer groups"
        )
    verdict = j["verdict"].astype(object).map(_VERDICT_CODE).fillna(INVALID).to_numpy(np.int8)
    V = np.full((len(cells), 2, n_s, n_r), ABSENT, dtype=np.int8)
    V[gp, order, swap_codes, rep_codes] = verdict

    tie_seen = np.zeros(n_groups, dtype=bool)
    np.logical_or.at(tie_seen, g, verdict == TIE)

    label = np.full(len(cells), ABSENT, dtype=np.int8)
    longer = np.zeros(len(cells), dtype=bool)
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
    )


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


# ---------------------------------------------------------------------------------------------
# per-pair sufficient statistics
# ---------------------------------------------------------------------------------------------

@cache
def _expected_max_share(n: int, m: int) -> float:
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
            out[(n_trials == n) & (n_options == m)] = _expected_max_share(int(n), int(m))
    return out


def _first_mask(mask: np.ndarray) -> np.ndarray:
    """Keep only the first True along the last axis."""
    return mask & (np.cumsum(mask, axis=-1) == 1)


def _agreement(k: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Share of agreeing ordered repeat pairs, and whether it is defined (K >= 2)."""
    ok = K >= 2
    Kf = np.where(ok, K, 2).astype(float)
    agr = (k * (k - 1.0) + (K - k) * (K - k - 1.0)) / (Kf * (Kf - 1.0))
    return np.where(ok, agr, 0.0), ok


def _mean_over(values: np.ndarray, mask: np.ndarray, axis: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Mean of ``values`` where ``mask`` over ``axis`` (0 where empty) and the indicator."""
    cnt = mask.sum(axis=axis)
    tot = np.where(mask, values, 0).sum(axis=axis)
    return np.where(cnt > 0, tot / np.maximum(cnt, 1), 0.0), cnt > 0


COLUMNS: tuple[str, ...] = (
    # accuracy per display order and per label-relative order (labelled pairs)
    "h_ab", "z_ab", "h_ba", "z_ba", "h_cr", "z_cr", "h_rc", "z_rc",
    # flip agreement per label-relative order
    "ag_cr", "m_cr", "ag_rc", "m_rc",
    # both orders
    "hb", "zb", "zr",
    # strata for length bias: L = y_c longer, S = not longer
    *[f"{c}{s}" for s in ("L", "S") for c in ("hb", "zb", "agB", "mB", "zcr", "zrc", "agcr", "mcr", "agrc", "mrc")],
    # flip agreement per display order in position terms (no labels needed)
    "ag_ab", "m_ab", "ag_ba", "m_ba",
    # Shi et al.: judgment pairs (original ab, swapped ba)
    "pc_n", "pc_c", "pc_inv", "pcn", "rcn", "pcm", "rcm", "cwa", "cwb", "ct",
    # repetition stability
    "rs_sum", "rs_cnt", "rs0_sum",
    # invalid verdicts
    "nj", "ninv", "nj_ab", "ninv_ab", "nj_ba", "ninv_ba",
    # pairs
    "pair",
)
COL = {name: i for i, name in enumerate(COLUMNS)}


def pair_stats(prep: Prepared, options: Options) -> np.ndarray:
    """The matrix S: one row per (group, pair) cell, one column per entry of :data:`COLUMNS`."""
    V = prep.V
    n = V.shape[0]
    S = np.zeros((n, len(COLUMNS)), dtype=float)

    def put(name: str, value: np.ndarray) -> None:
        S[:, COL[name]] = value

    present = V != ABSENT
    valid = present & (V != INVALID)
    labelled = prep.label != ABSENT
    lab = prep.label.astype(np.int16)[:, None, None, None]
    Z = present & (lab == V)  # picked the human-preferred response (labelled cells only)
    first_all = options.repeats == "first"

    # --- accuracy per display order: mean of Z over (id_swap, repeat) per order
    sel = _first_mask(present) if first_all else present
    z_o, h_o = _mean_over(Z, sel, axis=(2, 3))  # (n, 2)
    h_o &= labelled[:, None]
    z_o = np.where(h_o, z_o, 0.0)
    put("h_ab", h_o[:, 0]), put("z_ab", z_o[:, 0]), put("h_ba", h_o[:, 1]), put("z_ba", z_o[:, 1])
    cr = np.where(prep.label == B, 1, 0)  # display index of the order showing y_c first
    rows = np.arange(n)
    h_cr, h_rc = h_o[rows, cr], h_o[rows, 1 - cr]
    z_cr, z_rc = z_o[rows, cr], z_o[rows, 1 - cr]
    put("h_cr", h_cr), put("z_cr", z_cr), put("h_rc", h_rc), put("z_rc", z_rc)

    # --- flip agreement per request (cell, order, id_swap) over all repeats, in Z terms
    K = present.sum(axis=3)
    agr, ok = _agreement(Z.sum(axis=3), K)  # (n, 2, S)
    ag_o, m_o = _mean_over(agr, ok, axis=(2,))  # (n, 2)
    m_o &= labelled[:, None]
    ag_o = np.where(m_o, ag_o, 0.0)
    ag_cr, m_cr, ag_rc, m_rc = ag_o[rows, cr], m_o[rows, cr], ag_o[rows, 1 - cr], m_o[rows, 1 - cr]
    put("ag_cr", ag_cr), put("m_cr", m_cr), put("ag_rc", ag_rc), put("m_rc", m_rc)

    # --- both orders, matched by (id_swap, repeat)
    both = present[:, 0] & present[:, 1]  # (n, S, R)
    Zb = Z[:, 0] & Z[:, 1]
    sel_b = _first_mask(both) if first_all else both
    zb, hb = _mean_over(Zb, sel_b, axis=(1, 2))
    hb &= labelled
    zb = np.where(hb, zb, 0.0)
    zr = np.where(hb, (z_cr + z_rc) / 2.0, 0.0)
    put("hb", hb), put("zb", zb), put("zr", zr)
    agB_s, okB = _agreement(Zb.sum(axis=2), both.sum(axis=2))  # (n, S)
    agB, mB = _mean_over(agB_s, okB, axis=(1,))
    for suffix, stratum in (("L", prep.longer), ("S", ~prep.longer)):
        w = hb & stratum
        put(f"hb{suffix}", w), put(f"zb{suffix}", zb * w)
        put(f"agB{suffix}", agB * (w & mB)), put(f"mB{suffix}", w & mB)
        put(f"zcr{suffix}", z_cr * w), put(f"zrc{suffix}", z_rc * w)
        put(f"agcr{suffix}", ag_cr * (w & m_cr)), put(f"mcr{suffix}", w & m_cr)
        put(f"agrc{suffix}", ag_rc * (w & m_rc)), put(f"mrc{suffix}", w & m_rc)

    # --- flip agreement per display order in position terms (labels not needed)
    order_idx = np.array([0, 1], dtype=np.int8)[None, :, None, None]
    first = valid & (((V == A) & (order_idx == 0)) | ((V == B) & (order_idx == 1)))
    second = valid & (((V == B) & (order_idx == 0)) | ((V == A) & (order_idx == 1)))
    tie = V == TIE
    agp, okp = _agreement(first.sum(axis=3), K)
    ag_d, m_d = _mean_over(agp, okp, axis=(2,))
    put("ag_ab", ag_d[:, 0]), put("m_ab", m_d[:, 0]), put("ag_ba", ag_d[:, 1]), put("m_ba", m_d[:, 1])

    # --- Shi et al.: (original, swapped) judgment pairs matched by (id_swap, repeat)
    sel_pc = _first_mask(both) if first_all else both
    v0, v1 = V[:, 0], V[:, 1]
    ok_pair = sel_pc & (v0 != INVALID) & (v1 != INVALID)
    put("pc_n", ok_pair.sum(axis=(1, 2)))
    put("pc_inv", (sel_pc & ~ok_pair).sum(axis=(1, 2)))
    put("pc_c", (ok_pair & (v0 == v1)).sum(axis=(1, 2)))
    put("pcn", (ok_pair & (v0 == A) & (v1 == B)).sum(axis=(1, 2)))  # first position both times
    put("rcn", (ok_pair & (v0 == B) & (v1 == A)).sum(axis=(1, 2)))  # second position both times
    # mixed ties in position terms: (A,C) or (C,A) name the first position, (B,C) or (C,B) the
    # second; Shi et al.'s code counts them as primacy / recency respectively (not all as
    # primacy, as SPEC §2 says), used with mixed_ties="reference"
    put("pcm", (ok_pair & (((v0 == A) & (v1 == TIE)) | ((v0 == TIE) & (v1 == B)))).sum(axis=(1, 2)))
    put("rcm", (ok_pair & (((v0 == B) & (v1 == TIE)) | ((v0 == TIE) & (v1 == A)))).sum(axis=(1, 2)))
    put("cwa", (ok_pair & (v0 == A) & (v1 == A)).sum(axis=(1, 2)))
    put("cwb", (ok_pair & (v0 == B) & (v1 == B)).sum(axis=(1, 2)))
    put("ct", (ok_pair & (v0 == TIE) & (v1 == TIE)).sum(axis=(1, 2)))

    # --- repetition stability per request (query): the majority share of its trials. Shi et
    # al. divide by every trial, so an invalid answer agrees with nothing (invalid="disagree");
    # invalid="drop" leaves invalid answers out first. A query needs two trials and a valid one.
    counts = np.stack([first.sum(axis=3), second.sum(axis=3), tie.sum(axis=3)])  # (3, n, 2, S)
    n_valid = valid.sum(axis=3)
    if options.invalid == "drop":
        n_trials = n_valid
    else:
        n_trials = K
    q_ok = (n_trials >= 2) & (n_valid >= 1)
    rs = np.where(q_ok, counts.max(axis=0) / np.maximum(n_trials, 1), 0.0)
    if options.n_options is not None:
        m_opt = np.full(n, options.n_options)
    else:
        m_opt = np.where(prep.has_ties[prep.group], 3, 2)
    rs0 = chance_rs(n_trials, np.broadcast_to(m_opt[:, None, None], n_trials.shape))
    put("rs_sum", rs.sum(axis=(1, 2))), put("rs_cnt", q_ok.sum(axis=(1, 2)))
    put("rs0_sum", np.where(q_ok, rs0, 0.0).sum(axis=(1, 2)))

    # --- invalid verdicts
    inv = V == INVALID
    put("nj", present.sum(axis=(1, 2, 3))), put("ninv", inv.sum(axis=(1, 2, 3)))
    put("nj_ab", present[:, 0].sum(axis=(1, 2))), put("ninv_ab", inv[:, 0].sum(axis=(1, 2)))
    put("nj_ba", present[:, 1].sum(axis=(1, 2))), put("ninv_ba", inv[:, 1].sum(axis=(1, 2)))
    put("pair", 1.0)
    return S


# ---------------------------------------------------------------------------------------------
# metric formulas over sums (vectorised over any leading shape)
# ---------------------------------------------------------------------------------------------

def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def flip_q(disagree: np.ndarray, estimator: str) -> np.ndarray:
    """Flip probability from the two-repeat disagreement d (SPEC §1)."""
    if estimator == "paper":
        return disagree
    d = np.clip(disagree, 0.0, 0.5)
    return (1.0 - np.sqrt(1.0 - 2.0 * d)) / 2.0


def denoise(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p - q) / (1 - 2q); q NaN means no de-noising. Returns value and 'unstable' mask."""
    q0 = np.where(np.isnan(q), 0.0, q)
    unstable = (1.0 - 2.0 * q0) <= _MIN_DENOM
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(unstable, np.nan, (p - q0) / np.where(unstable, 1.0, 1.0 - 2.0 * q0))
    return value, unstable


@dataclass(frozen=True)
class MetricDef:
    """How a metric is computed from the sums: value, n, and (optional) extras."""

    name: str
    needs: str  # "labels", "repeats", "both" (labels and repeats), or "" (always available)
    description: str


METRICS: dict[str, MetricDef] = {
    m.name: m
    for m in [
        MetricDef("acc_ab", "labels", "accuracy when response a is shown first"),
        MetricDef("acc_ba", "labels", "accuracy when response b is shown first"),
        MetricDef("acc_cr", "labels", "accuracy when the human-preferred response is shown first"),
        MetricDef("acc_rc", "labels", "accuracy when the human-preferred response is shown second"),
        MetricDef("acc_both", "labels", "share of pairs where both orders picked the preferred response"),
        MetricDef("acc_random", "labels", "mean of the two orders' accuracies (expectation of Acc_random)"),
        MetricDef("acc_cr_denoised", "labels", "acc_cr de-noised with q_cr"),
        MetricDef("acc_rc_denoised", "labels", "acc_rc de-noised with q_rc"),
        MetricDef("acc_both_denoised", "labels", "Acc_both de-noised jointly from both orders' flips"),
        MetricDef("q_cr", "both", "flip probability, preferred response shown first"),
        MetricDef("q_rc", "both", "flip probability, preferred response shown second"),
        MetricDef("scr_cr", "both", "self-consistency rate 1 - q_cr"),
        MetricDef("scr_rc", "both", "self-consistency rate 1 - q_rc"),
        MetricDef("disagree_cr", "both", "probability that two repeats disagree, cr order"),
        MetricDef("disagree_rc", "both", "probability that two repeats disagree, rc order"),
        MetricDef("q_ab", "repeats", "flip probability of the first-position choice, a shown first"),
        MetricDef("q_ba", "repeats", "flip probability of the first-position choice, b shown first"),
        MetricDef("scr_ab", "repeats", "self-consistency rate 1 - q_ab"),
        MetricDef("scr_ba", "repeats", "self-consistency rate 1 - q_ba"),
        MetricDef("position_bias", "labels", "de-noised acc_cr - acc_rc (> 0 favours the first position)"),
        MetricDef("length_bias", "labels", "de-noised Acc_both(preferred longer) - Acc_both(not longer)"),
        MetricDef("acc_both_longer", "labels", "de-noised Acc_both where the preferred response is longer"),
        MetricDef("acc_both_shorter", "labels", "de-noised Acc_both where it is not longer"),
        MetricDef("q_longer", "both", "flip probability of the both-orders indicator, preferred longer"),
        MetricDef("q_shorter", "both", "flip probability of the both-orders indicator, not longer"),
        MetricDef("repetition_stability", "repeats", "mean share of the most frequent choice over repeats (RS)"),
        MetricDef("repetition_stability_chance", "repeats", "RS of a uniformly random judge (RS_0)"),
        MetricDef("repetition_stability_star", "repeats", "chance-corrected RS* = (RS - RS_0)/(1 - RS_0)"),
        MetricDef("position_consistency", "", "share of (original, swapped) judgment pairs that agree (PC)"),
        MetricDef("primacy", "", "count of judgment pairs choosing the first position both times (pcn)"),
        MetricDef("recency", "", "count of judgment pairs choosing the second position both times (rcn)"),
        MetricDef("primacy_rate", "", "ipr = pcn / (pcn + rcn)"),
        MetricDef("recency_rate", "", "irr = rcn / (pcn + rcn)"),
        MetricDef("preference_fairness", "", "PF = (rcn*irr - pcn*ipr) / n in [-1, 1] (> 0 recency)"),
        MetricDef("win_rate", "", "overall win rate of response a, inconsistent pairs as ties (owr)"),
        MetricDef("quality_gap", "", "answer quality gap |owr - 0.5|"),
        MetricDef("invalid_rate", "", "share of judgments without a valid verdict"),
        MetricDef("invalid_rate_ab", "", "invalid share when a is shown first"),
        MetricDef("invalid_rate_ba", "", "invalid share when b is shown first"),
    ]
}


def evaluate(T: np.ndarray, options: Options) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every metric from column sums ``T`` (shape ``(..., len(COLUMNS))``).

    Returns name -> (value, n, unstable) where ``unstable`` marks NaN caused by 1 - 2q <= 0.05.
    """

    def t(name: str) -> np.ndarray:
        return T[..., COL[name]]

    est = options.flip_estimator
    zero = np.zeros(T.shape[:-1], dtype=bool)
    out: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def add(name: str, value: np.ndarray, n: np.ndarray, unstable: np.ndarray | None = None) -> None:
        out[name] = (value, n, zero if unstable is None else unstable)

    for o in ("ab", "ba", "cr", "rc"):
        add(f"acc_{o}", _ratio(t(f"z_{o}"), t(f"h_{o}")), t(f"h_{o}"))
    add("acc_both", _ratio(t("zb"), t("hb")), t("hb"))
    add("acc_random", _ratio(t("zr"), t("hb")), t("hb"))

    q: dict[str, np.ndarray] = {}
    for o in ("cr", "rc", "ab", "ba"):
        d = 1.0 - _ratio(t(f"ag_{o}"), t(f"m_{o}"))
        q[o] = flip_q(d, est)
        if o in ("cr", "rc"):
            add(f"disagree_{o}", d, t(f"m_{o}"))
        add(f"q_{o}", q[o], t(f"m_{o}"))
        add(f"scr_{o}", 1.0 - q[o], t(f"m_{o}"))

    den_cr, un_cr = denoise(out["acc_cr"][0], q["cr"])
    den_rc, un_rc = denoise(out["acc_rc"][0], q["rc"])
    add("acc_cr_denoised", den_cr, t("h_cr"), un_cr)
    add("acc_rc_denoised", den_rc, t("h_rc"), un_rc)
    add("position_bias", den_cr - den_rc, np.minimum(t("h_cr"), t("h_rc")), un_cr | un_rc)

    strata = {}
    for s in ("L", "S"):
        hb = t(f"hb{s}")
        pB = _ratio(t(f"zb{s}"), hb)
        qB = flip_q(1.0 - _ratio(t(f"agB{s}"), t(f"mB{s}")), est)
        pc = _ratio(t(f"zcr{s}"), hb)
        pr = _ratio(t(f"zrc{s}"), hb)
        qc = flip_q(1.0 - _ratio(t(f"agcr{s}"), t(f"mcr{s}")), est)
        qr = flip_q(1.0 - _ratio(t(f"agrc{s}"), t(f"mrc{s}")), est)
        if options.lb_method == "indicator":
            value, unstable = denoise(pB, qB)
        else:
            value, unstable = _joint_both(pB, pc, pr, qc, qr)
        strata[s] = (value, unstable, hb, qB, t(f"mB{s}"))
    (vL, uL, nL, qL, mL), (vS, uS, nS, qS, mS) = strata["L"], strata["S"]
    add("acc_both_longer", vL, nL, uL)
    add("acc_both_shorter", vS, nS, uS)
    add("length_bias", vL - vS, np.minimum(nL, nS), uL | uS)
    add("q_longer", qL, mL)
    add("q_shorter", qS, mS)

    # Acc_both de-noised jointly over all labelled pairs (strata pooled)
    hb = t("hbL") + t("hbS")
    pB = _ratio(t("zbL") + t("zbS"), hb)
    pc = _ratio(t("zcrL") + t("zcrS"), hb)
    pr = _ratio(t("zrcL") + t("zrcS"), hb)
    qc = flip_q(1.0 - _ratio(t("agcrL") + t("agcrS"), t("mcrL") + t("mcrS")), est)
    qr = flip_q(1.0 - _ratio(t("agrcL") + t("agrcS"), t("mrcL") + t("mrcS")), est)
    value, unstable = _joint_both(pB, pc, pr, qc, qr)
    add("acc_both_denoised", value, hb, unstable)

    rs = _ratio(t("rs_sum"), t("rs_cnt"))
    rs0 = _ratio(t("rs0_sum"), t("rs_cnt"))
    add("repetition_stability", rs, t("rs_cnt"))
    add("repetition_stability_chance", rs0, t("rs_cnt"))
    add("repetition_stability_star", _ratio(rs - rs0, 1.0 - rs0), t("rs_cnt"))

    n_pc = t("pc_n")
    add("position_consistency", _ratio(t("pc_c"), n_pc), n_pc)
    pcn, rcn = t("pcn"), t("rcn")
    if options.mixed_ties == "reference":
        pcn, rcn = pcn + t("pcm"), rcn + t("rcm")
    add("primacy", np.where(n_pc > 0, pcn, np.nan), n_pc)
    add("recency", np.where(n_pc > 0, rcn, np.nan), n_pc)
    add("primacy_rate", _ratio(pcn, pcn + rcn), pcn + rcn)
    add("recency_rate", _ratio(rcn, pcn + rcn), pcn + rcn)
    # rcn*irr - pcn*ipr = (rcn^2 - pcn^2)/(rcn + pcn) = rcn - pcn (0 when both are 0)
    if options.pf_denominator == "all":  # the reference code: every judgment pair, valid or not
        add("preference_fairness", _ratio(rcn - pcn, n_pc + t("pc_inv")), n_pc + t("pc_inv"))
    else:
        add("preference_fairness", _ratio(rcn - pcn, n_pc), n_pc)
    owr = _ratio(t("cwa") + (n_pc - t("cwa") - t("cwb")) / 2.0, n_pc)
    add("win_rate", owr, n_pc)
    add("quality_gap", np.abs(owr - 0.5), n_pc)

    add("invalid_rate", _ratio(t("ninv"), t("nj")), t("nj"))
    add("invalid_rate_ab", _ratio(t("ninv_ab"), t("nj_ab")), t("nj_ab"))
    add("invalid_rate_ba", _ratio(t("ninv_ba"), t("nj_ba")), t("nj_ba"))
    return out


def _joint_both(
    pB: np.ndarray, pc: np.ndarray, pr: np.ndarray, qc: np.ndarray, qr: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """P(X_cr = 1 and X_rc = 1) from E[Z_cr Z_rc], the marginals and both orders' flips.

    With independent flips, E[Z_cr Z_rc] = (1-2q_c)(1-2q_r) P11 + (1-q_c) q_r p_c + q_c (1-q_r) p_r
    + q_c q_r (1 - p_c - p_r), where p_c, p_r are the de-noised marginals.
    """
    qc0 = np.where(np.isnan(qc), 0.0, qc)
    qr0 = np.where(np.isnan(qr), 0.0, qr)
    dc, uc = denoise(pc, qc)
    dr, ur = denoise(pr, qr)
    unstable = uc | ur
    with np.errstate(invalid="ignore", divide="ignore"):
        num = pB - (1 - qc0) * qr0 * dc - qc0 * (1 - qr0) * dr - qc0 * qr0 * (1 - dc - dr)
        value = num / ((1 - 2 * qc0) * (1 - 2 * qr0))
    return np.where(unstable, np.nan, value), unstable


def _denoised_flag(T: np.ndarray) -> dict[str, np.ndarray]:
    """Whether each de-noisable metric was actually de-noised (its flips were estimable)."""

    def t(name: str) -> np.ndarray:
        return T[..., COL[name]]

    cr, rc = t("m_cr") > 0, t("m_rc") > 0
    both = cr & rc
    lb = (t("mBL") > 0) & (t("mBS") > 0)
    return {
        "acc_cr_denoised": cr, "acc_rc_denoised": rc, "position_bias": both,
        "acc_both_denoised": both, "length_bias": lb, "acc_both_longer": t("mBL") > 0,
        "acc_both_shorter": t("mBS") > 0,
    }


# ---------------------------------------------------------------------------------------------
# sums, bootstrap, splits, and the long output frame
# ---------------------------------------------------------------------------------------------

def group_sums(S: np.ndarray, codes: np.ndarray, n: int) -> np.ndarray:
    """Column sums of ``S`` per code (shape (n, n_columns))."""
    return np.stack(
        [np.bincount(codes, weights=S[:, j], minlength=n) for j in range(S.shape[1])], axis=1
    ).reshape(n, S.shape[1])


def bootstrap_sums(S: np.ndarray, n_boot: int, rng: np.random.Generator, max_cells: int = 1 << 22) -> np.ndarray:
    """Column sums of ``S`` under ``n_boot`` resamples of its rows with replacement.

    Multinomial row counts come from one ``bincount`` of uniform draws per chunk of resamples (a
    chunk holds at most ``max_cells`` counts), and the sums are one matrix product per chunk, in
    single precision (relative error ~1e-6 on a resample's sums, far below the resampling
    spread; counts are exact).
    """
    n = S.shape[0]
    out = np.empty((n_boot, S.shape[1]))
    S32 = S.astype(np.float32)
    chunk = max(1, min(n_boot, max_cells // max(n, 1)))
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        draws = rng.integers(0, n, size=(b, n))
        draws += (np.arange(b) * n)[:, None]
        W = np.bincount(draws.ravel(), minlength=b * n).reshape(b, n).astype(np.float32)
        out[start : start + b] = W @ S32
    return out


def _group_label(keys: pd.DataFrame, i: int) -> str:
    if keys.shape[1] == 0:
        return "all"
    return ", ".join(f"{c}={keys.iloc[i][c]!r}" for c in keys.columns)


def _warn(metric: str, reason: str, keys: pd.DataFrame, bad: np.ndarray) -> None:
    idx = np.flatnonzero(bad)
    names = "; ".join(_group_label(keys, i) for i in idx[:5])
    more = f" and {len(idx) - 5} more" if len(idx) > 5 else ""
    warnings.warn(f"{metric} is NaN for {names}{more}: {reason}", MetricWarning, stacklevel=4)


def _bootstrap_replicates(
    prep: Prepared, S: np.ndarray, options: Options, metrics: Sequence[str], n_boot: int, seed: int,
    max_elements: int = 1 << 23,
) -> np.ndarray:
    """Bootstrap replicates of every metric for every group, shape (len(metrics), G, n_boot).

    Each group resamples its own pairs. Groups judged on exactly the same pairs (e.g. several
    judges on one dataset) draw the same resamples, seeded per distinct pair set: each group's
    intervals are unchanged in distribution, and comparisons between those judges are paired.
    Resample sums are evaluated for many groups at once (the formulas are vectorised).
    """
    G = prep.n_groups
    bounds = np.searchsorted(prep.group, np.arange(G + 1))
    # distinct pair sets, seeded in order of first appearance
    set_of: list[int] = []
    keys: dict[bytes, int] = {}
    codes = pd.factorize(prep.pair_id)[0]
    for gi in range(G):
        k = codes[bounds[gi] : bounds[gi + 1]].tobytes()
        set_of.append(keys.setdefault(k, len(keys)))
    seeds = np.random.SeedSequence(seed).spawn(max(len(keys), 1))
    cache: dict[int, np.ndarray] = {}
    out = np.full((len(metrics), G, n_boot), np.nan)
    M = S.shape[1]
    per_chunk = max(1, max_elements // (n_boot * M))
    for start in range(0, G, per_chunk):
        groups = range(start, min(G, start + per_chunk))
        Tb = np.zeros((len(groups), n_boot, M))
        for j, gi in enumerate(groups):
            rows = S[bounds[gi] : bounds[gi + 1]]
            n = len(rows)
            if n == 0:
                continue
            key = set_of[gi]
            if key in cache:
                Tb[j] = cache[key] @ rows.astype(np.float32)
            elif n * n_boot <= max_elements:
                rng = np.random.default_rng(seeds[key])
                draws = rng.integers(0, n, size=(n_boot, n))
                draws += (np.arange(n_boot) * n)[:, None]
                W = np.bincount(draws.ravel(), minlength=n_boot * n).reshape(n_boot, n)
                cache[key] = W.astype(np.float32)
                Tb[j] = cache[key] @ rows.astype(np.float32)
            else:  # too large to keep: regenerate the same draws from the pair set's seed
                Tb[j] = bootstrap_sums(rows, n_boot, np.random.default_rng(seeds[key]))
        reps = evaluate(Tb, options)
        for i, m in enumerate(metrics):
            out[i, start : start + len(groups)] = reps[m][0]
    return out


def compute(
    prep: Prepared,
    options: Options,
    metrics: Sequence[str],
    *,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    warn_unavailable: bool = True,
    S: np.ndarray | None = None,
) -> pd.DataFrame:
    """The long frame: ``by`` columns, metric, estimate, ci_low, ci_high, se, n, denoised, n_invalid.

    ``S`` is :func:`pair_stats` of ``prep`` when the caller has it already.
    """
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {sorted(METRICS)}")
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    if n_boot < 0 or int(n_boot) != n_boot:
        raise ValueError(f"n_boot must be an integer >= 0, got {n_boot}")
    if S is None:
        S = pair_stats(prep, options)
    G = prep.n_groups
    T = group_sums(S, prep.group, G)
    point = evaluate(T, options)
    flags = _denoised_flag(T)

    low = np.full((len(metrics), G), np.nan)
    high = np.full((len(metrics), G), np.nan)
    se = np.full((len(metrics), G), np.nan)
    estimate = np.stack([point[m][0] for m in metrics])
    n = np.stack([point[m][1] for m in metrics])

    if prep.split is not None:
        n_split = int(prep.split.max()) + 1
        Ts = group_sums(S, prep.group * n_split + prep.split, G * n_split).reshape(G, n_split, -1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            per_split = evaluate(Ts, options)
            for i, m in enumerate(metrics):
                vals = per_split[m][0]
                estimate[i] = np.nanmean(vals, axis=1)
                se[i] = np.nanstd(vals, axis=1, ddof=0)
        n_splits = np.isfinite(np.stack([per_split[m][0] for m in metrics])).sum(axis=2)
        # a split whose de-noising broke down (1 - 2q <= 0.05) is NaN there and left out of the
        # mean: say so, since leaving out the noisiest splits is not neutral
        for m in metrics:
            bad = per_split[m][2].sum(axis=1)
            for gi in np.flatnonzero(bad):
                warnings.warn(
                    f"{m}: {int(bad[gi])} of {n_split} splits have 1 - 2q <= {_MIN_DENOM} for "
                    f"{_group_label(prep.keys, gi)}; they are NaN and left out of the mean and "
                    "std over splits (see n_splits)",
                    MetricWarning, stacklevel=3,
                )
    elif n_boot > 0:
        alpha = (1.0 - ci) / 2.0
        reps = _bootstrap_replicates(prep, S, options, metrics, int(n_boot), seed)
        for i, m in enumerate(metrics):
            vals = reps[i]  # (G, n_boot)
            finite = np.isfinite(vals)
            share_nan = 1.0 - finite.mean(axis=1)
            usable = np.isfinite(estimate[i]) & finite.any(axis=1)
            too_many = usable & (share_nan > _MAX_BOOT_NAN)
            for gi in np.flatnonzero(too_many):
                warnings.warn(
                    f"{m}: {share_nan[gi]:.0%} of bootstrap replicates are NaN for "
                    f"{_group_label(prep.keys, gi)} (zero denominators or 1 - 2q <= "
                    f"{_MIN_DENOM}); no interval reported",
                    MetricWarning, stacklevel=3,
                )
            ok = usable & ~too_many
            if not ok.any():
                continue
            sub = vals[ok]
            if finite[ok].all():
                q = np.quantile(sub, [alpha, 1.0 - alpha], axis=1)
                s_ = sub.std(axis=1, ddof=1)
            else:
                q = np.nanquantile(sub, [alpha, 1.0 - alpha], axis=1)
                s_ = np.nanstd(sub, axis=1, ddof=1)
            low[i, ok], high[i, ok], se[i, ok] = q[0], q[1], s_

    # warnings for NaN point estimates
    for i, m in enumerate(metrics):
        value, cnt, unstable = point[m]
        if prep.split is not None:
            value = estimate[i]
        nan = ~np.isfinite(value)
        if not nan.any():
            continue
        if unstable.any():
            _warn(m, f"1 - 2q <= {_MIN_DENOM}: the flip noise is too large to de-noise", prep.keys, nan & unstable)
        rest = nan & ~unstable
        if rest.any() and warn_unavailable:
            need = METRICS[m].needs
            why = {
                "labels": "no labelled pairs (label 'a'/'b') were judged in both required orders",
                "repeats": "fewer than two valid repeats of any request",
                "both": "no labelled pair has two or more repeats in this order",
                "": "zero denominator (no valid (original, swapped) judgment pairs)",
            }[need]
            _warn(m, why, prep.keys, rest)

    rows_out = []
    keys = prep.keys
    for i, m in enumerate(metrics):
        frame = keys.copy()
        frame["metric"] = m
        frame["estimate"] = estimate[i]
        frame["ci_low"] = low[i]
        frame["ci_high"] = high[i]
        frame["se"] = se[i]
        frame["n"] = n[i].astype(np.int64)
        if m in flags:
            frame["denoised"] = pd.array(flags[m], dtype="boolean")
        else:
            frame["denoised"] = pd.array([pd.NA] * G, dtype="boolean")
        frame["n_invalid"] = T[:, COL["pc_inv"]].astype(np.int64) if m in _PC_METRICS else T[:, COL["ninv"]].astype(np.int64)
        if prep.split is not None:
            frame["n_splits"] = n_splits[i]
        rows_out.append(frame)
    out = pd.concat(rows_out, ignore_index=True)
    return out


_PC_METRICS = frozenset({
    "position_consistency", "primacy", "recency", "primacy_rate", "recency_rate",
    "preference_fairness", "win_rate", "quality_gap",
})


def select(frame: pd.DataFrame, by: list[str], extras: Sequence[str] = ()) -> pd.DataFrame:
    """The documented columns of a tidy metric frame, in order."""
    cols = [*by, "metric", "estimate", "ci_low", "ci_high", "n", *extras]
    if "n_splits" in frame.columns:
        cols += ["se", "n_splits"]
    elif "se" not in extras:
        cols += ["se"]
    return frame[cols].reset_index(drop=True)


def run(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None,
    by: str | Sequence[str] | None,
    metrics: Sequence[str],
    *,
    repeats: str = "all",
    flip_estimator: str = "consistent",
    length: str | Callable[[str], float] = "chars",
    n_options: int | None = None,
    lb_method: str = "joint",
    mixed_ties: str = "neutral",
    invalid: str = "disagree",
    pf_denominator: str = "valid",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
    warn_unavailable: bool = True,
) -> tuple[pd.DataFrame, list[str]]:
    """Prepare, compute and return (long frame, by columns)."""
    options = Options(repeats=repeats, flip_estimator=flip_estimator, length=length,
                      n_options=n_options, lb_method=lb_method, mixed_ties=mixed_ties,
                      invalid=invalid, pf_denominator=pf_denominator)
    prep = prepare(judgments, pairs, by, options, splits=splits, seed=seed)
    frame = compute(prep, options, metrics, n_boot=n_boot, ci=ci, seed=seed,
                    warn_unavailable=warn_unavailable)
    return frame, prep.by

