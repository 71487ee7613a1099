"""The engine behind every reliability metric: sums of per-pair statistics, the metric definitions
evaluated on them, a cluster bootstrap over pairs, splits, warnings, and the tidy long frame.

Every metric is a function of *sums over pairs* of a few per-pair statistics. So the engine

1. builds the matrix S (one row per (group, pair) cell, one column per statistic the requested
   metrics need; :mod:`judgekit.metrics._statistics`),
2. sums it per group and evaluates the definitions (:mod:`judgekit.metrics._definitions`) once
   for the point estimates,
3. for the bootstrap, multiplies S by multinomial resample counts (:mod:`judgekit._bootstrap`) and
   evaluates the same definitions on all resamples and many groups at once, keeping only the
   interval of each chunk of groups (no per-resample Python loop, memory bounded by the chunk).

The public functions in the sibling modules select metrics from the long frame built here.
Nothing here is public.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit import _bootstrap as bs
from judgekit._stack import caller_level
from judgekit.exceptions import MetricWarning
from judgekit.metrics import _statistics as st
from judgekit.metrics._cells import Cells
from judgekit.metrics._definitions import UNSTABLE, lookup
from judgekit.metrics._formulas import MIN_DENOM
from judgekit.metrics._metric import Est, Metric, Reason, Sums
from judgekit.metrics._prepare import Options, Prepared, prepare
from judgekit.metrics._statistics import Stat

_BOOT_ELEMENTS = 1 << 23  # elements of the arrays one chunk holds (64 MiB in double precision)


def group_sums(S: np.ndarray, codes: np.ndarray, n: int) -> np.ndarray:
    """Column sums of ``S`` per code, statistics first: shape (n_columns, n)."""
    out = np.empty((S.shape[1], n))
    for j in range(S.shape[1]):
        out[j] = np.bincount(codes, weights=S[:, j], minlength=n)
    return out


def evaluate(metrics: Sequence[Metric], T: np.ndarray, index: dict[Stat, int],
             options: Options) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every metric from sums ``T`` (statistics first, any trailing shape): name -> (value, n,
    unstable). A value is NaN where one of the metric's reasons holds."""
    t = Sums(T, index)
    out = {}
    for m in metrics:
        est: Est = m.estimate(t, options)
        value = np.asarray(est.value, dtype=float)
        unstable = np.zeros(t.shape, dtype=bool) if est.unstable is None else est.unstable
        if m.reasons:
            value = np.where(_any_reason(t, m.reasons), np.nan, value)
        out[m.name] = (value, np.asarray(est.n), unstable)
    return out


def holds(t: Sums, reason: Reason) -> np.ndarray:
    """Where ``reason`` holds (computed once per evaluation)."""
    return t.memo(("reason", reason), lambda: reason.when(t))


def _any_reason(t: Sums, reasons: tuple[Reason, ...]) -> np.ndarray:
    return t.memo(("any", reasons), lambda: np.logical_or.reduce([holds(t, r) for r in reasons]))


def _group_label(keys: pd.DataFrame, i: int) -> str:
    if keys.shape[1] == 0:
        return "all"
    return ", ".join(f"{c}={keys.iloc[i][c]!r}" for c in keys.columns)


def _groups(keys: pd.DataFrame, bad: np.ndarray) -> str:
    idx = np.flatnonzero(bad)
    names = "; ".join(_group_label(keys, i) for i in idx[:5])
    return names + (f" and {len(idx) - 5} more" if len(idx) > 5 else "")


def _warn_nan(found: dict[tuple[str, tuple[int, ...]], list[str]], keys: pd.DataFrame) -> None:
    """One warning per (reason, groups), naming every metric NaN for it."""
    for (why, groups), names in found.items():
        bad = np.isin(np.arange(len(keys)), groups)
        verb = "is" if len(names) == 1 else "are"
        warnings.warn(f"{', '.join(names)} {verb} NaN for {_groups(keys, bad)}: {why}",
                      MetricWarning, stacklevel=caller_level())


def _warn_few_pairs(prep: Prepared) -> None:
    """Percentile intervals from fewer than a handful of pairs say little (one pair: [x, x])."""
    pairs = prep.pairs_per_group()
    few = (pairs > 0) & (pairs < bs.MIN_CLUSTERS)
    if few.any():
        idx = np.flatnonzero(few)
        names = "; ".join(f"{_group_label(prep.keys, i)} ({pairs[i]} pair{'' if pairs[i] == 1 else 's'})"
                          for i in idx[:5])
        more = f" and {len(idx) - 5} more" if len(idx) > 5 else ""
        warnings.warn(f"bootstrap intervals for {names}{more} are resampled from fewer than "
                      f"{bs.MIN_CLUSTERS} pairs; they are unreliable", MetricWarning,
                      stacklevel=caller_level())


class Computation:
    """One table, one set of options, the statistics a list of metrics needs."""

    def __init__(self, prep: Prepared, options: Options, metrics: Sequence[Metric],
                 extra: Sequence[Stat] = ()) -> None:
        self.prep = prep
        self.options = options
        self.metrics = list(metrics)
        stats = [s for m in self.metrics for s in m.needed()] + list(extra)
        self.stats = list(dict.fromkeys(stats))
        self.index = {s: i for i, s in enumerate(self.stats)}
        self.S = st.matrix(Cells(prep, options), self.stats)
        self.T = group_sums(self.S, prep.group, prep.n_groups)

    def total(self, stat: Stat) -> np.ndarray:
        return self.T[self.index[stat]]

    def evaluate(self, T: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        return evaluate(self.metrics, T, self.index, self.options)

    # --- bootstrap ------------------------------------------------------------------------
    def intervals(self, estimate: np.ndarray, n_boot: int, ci: float, seed: int,
                  sets: tuple[np.ndarray, int] | None = None,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Percentile intervals and standard errors of every metric for every group, shape
        (metrics, groups) each, and the share of NaN replicates.

        Each group resamples its own pairs. Groups judged on exactly the same pairs (several
        judges on one dataset) draw the same resamples, seeded per distinct pair set in order of
        first appearance: each group's intervals are unchanged in distribution, comparisons
        between those judges are paired, and their resample sums are one matrix product. The
        sums are exact (double precision), laid out statistic by statistic; replicates exist
        for one chunk of groups at a time and only their quantiles are kept.
        """
        prep, S = self.prep, self.S
        G, M, nm = prep.n_groups, S.shape[1], len(self.metrics)
        low, high, se = (np.full((nm, G), np.nan) for _ in range(3))
        nan_share = np.zeros((nm, G))
        first, group, pair_id = prep.clusters()
        if prep.cluster is not None:  # several judges per group: sum their cells per pair
            S = group_sums(S, prep.cluster, len(first)).T.copy()
        bounds = np.searchsorted(group, np.arange(G + 1))
        set_of, n_sets = pair_sets(prep) if sets is None else sets
        seeds = np.random.SeedSequence(seed).spawn(max(n_sets, 1))
        for key in np.unique(set_of):
            members = np.flatnonzero(set_of == key)
            n = int(bounds[members[0] + 1] - bounds[members[0]])
            if n == 0:
                continue
            # counts of one pair set: kept when small enough (the same draws as
            # scipy.stats.bootstrap's from that seed) and multiplied into many groups at once;
            # else drawn again, chunk by chunk, for each chunk of groups
            WT = None
            if n * n_boot <= _BOOT_ELEMENTS:
                WT = bs.counts(n, n_boot, np.random.default_rng(seeds[key])).T.copy()
                per_chunk = max(1, _BOOT_ELEMENTS // (M * max(n_boot, n)))
            else:
                per_chunk = max(1, _BOOT_ELEMENTS // (M * n_boot))
            for start in range(0, len(members), per_chunk):
                groups = members[start:start + per_chunk]
                if WT is not None:
                    rows = np.concatenate([np.arange(bounds[g], bounds[g + 1]) for g in groups])
                    X = S[rows].reshape(len(groups), n, M).transpose(2, 0, 1)
                    Tb = (X.reshape(M * len(groups), n) @ WT).reshape(M, len(groups), n_boot)
                else:
                    Tb = np.empty((M, len(groups), n_boot))
                    for b0, w in bs.iter_counts(n, n_boot, np.random.default_rng(seeds[key]),
                                                dtype=np.float64):
                        for j, g in enumerate(groups):
                            Tb[:, j, b0:b0 + len(w)] = (w @ S[bounds[g]:bounds[g + 1]]).T
                reps = self.evaluate(Tb)
                for i, m in enumerate(self.metrics):
                    vals = reps[m.name][0]  # (groups, n_boot)
                    share = 1.0 - bs.finite_share(vals)
                    lo, hi, s = bs.interval(vals, ci)
                    usable = np.isfinite(estimate[i, groups]) & (share < 1.0)
                    low[i, groups] = np.where(usable, lo, np.nan)
                    high[i, groups] = np.where(usable, hi, np.nan)
                    se[i, groups] = np.where(usable, s, np.nan)
                    nan_share[i, groups] = np.where(usable, share, 0.0)
        return low, high, se, nan_share


def pair_sets(prep: Prepared) -> tuple[np.ndarray, int]:
    """The pair set of each group, numbered in order of first appearance (groups judged on the
    same pairs share a set, and so their bootstrap draws), and the number of sets."""
    first, group, pair_id = prep.clusters()
    bounds = np.searchsorted(group, np.arange(prep.n_groups + 1))
    codes = pd.factorize(pair_id)[0]
    keys: dict[bytes, int] = {}
    set_of = np.array([keys.setdefault(codes[bounds[g]:bounds[g + 1]].tobytes(), len(keys))
                       for g in range(prep.n_groups)], dtype=np.int64)
    return set_of, len(keys)


def _slice(prep: Prepared, g0: int, g1: int) -> Prepared:
    """The cells of groups g0..g1-1 as a Prepared of their own."""
    c0, c1 = np.searchsorted(prep.group, [g0, g1])
    cut = slice(int(c0), int(c1))
    cluster = None
    if prep.cluster is not None:
        cluster = prep.cluster[cut] - (prep.cluster[c0] if c1 > c0 else 0)
    return Prepared(
        by=prep.by, keys=prep.keys.iloc[g0:g1].reset_index(drop=True),
        group=prep.group[cut] - g0, pair_id=prep.pair_id[cut], V=prep.V[cut],
        label=prep.label[cut], longer=prep.longer[cut], has_ties=prep.has_ties[g0:g1],
        has_labels=prep.has_labels, split=None if prep.split is None else prep.split[cut],
        cluster=cluster,
    )


class Totals:
    """The per-group sums of a computation done chunk by chunk (what callers read of it; each
    chunk's statistics matrix is dropped as soon as the chunk is done)."""

    def __init__(self, parts: list[Computation | Totals]) -> None:
        self.stats, self.index = parts[0].stats, parts[0].index
        self.T = np.concatenate([c.T for c in parts], axis=1)

    def total(self, stat: Stat) -> np.ndarray:
        return self.T[self.index[stat]]


#: cells x statistics above which groups are computed in chunks (the matrix S of one chunk at
#: most this many doubles: 256 MiB); the numbers are the same, the memory is bounded
S_ELEMENTS = 1 << 25


def _chunked(prep: Prepared, options: Options, metrics: Sequence[str], n_stats: int,
             **kwargs: Any) -> tuple[pd.DataFrame, Totals]:
    """:func:`compute` over chunks of groups, with each group's bootstrap seeded as in one go."""
    sets = pair_sets(prep) if prep.split is None else None
    counts = np.bincount(prep.group, minlength=prep.n_groups)
    frames, parts, g0 = [], [], 0
    while g0 < prep.n_groups:
        g1, cells = g0, 0
        while g1 < prep.n_groups and (g1 == g0 or (cells + counts[g1]) * n_stats <= S_ELEMENTS):
            cells += counts[g1]
            g1 += 1
        sub_sets = None if sets is None else (sets[0][g0:g1], sets[1])
        frame, comp = compute(_slice(prep, g0, g1), options, metrics, _sets=sub_sets, **kwargs)
        frame["_group"] = np.tile(np.arange(g0, g1), len(frame) // (g1 - g0))
        frames.append(frame)
        parts.append(Totals([comp]))  # keep the sums, not the chunk's matrix S
        del comp
        g0 = g1
    names = list(dict.fromkeys(metrics))
    long = pd.concat(frames, ignore_index=True)
    long["_metric"] = long["metric"].map({m: i for i, m in enumerate(names)})
    long = long.sort_values(["_metric", "_group"], kind="stable")
    return long.drop(columns=["_metric", "_group"]).reset_index(drop=True), Totals(parts)


def bs_max_nan() -> float:
    """Share of NaN replicates above which no interval is reported."""
    return 1.0 - bs.MIN_FINITE


def compute(
    prep: Prepared,
    options: Options,
    metrics: Sequence[str],
    *,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    warn_design: bool = True,
    extra: Sequence[Stat] = (),
    _sets: tuple[np.ndarray, int] | None = None,
) -> tuple[pd.DataFrame, Computation | Totals]:
    """The long frame (``by`` columns, metric, estimate, ci_low, ci_high, se, n, denoised,
    n_invalid and, with splits, n_splits) and the computation behind it.

    ``warn_design=False`` leaves metrics NaN without a warning where the tables cannot define
    them by design (no labels, no repeats); every other NaN warns.
    """
    defs = lookup(list(metrics))
    n_boot = bs.check_args(n_boot, ci)
    n_stats = len({s for m in defs for s in m.needed()} | set(extra))
    if len(prep.group) * n_stats > S_ELEMENTS and prep.n_groups > 1 and _sets is None:
        return _chunked(prep, options, metrics, n_stats, n_boot=n_boot, ci=ci, seed=seed,
                        warn_design=warn_design, extra=extra)
    comp = Computation(prep, options, defs, extra)
    G = prep.n_groups
    point = comp.evaluate(comp.T)
    estimate = np.stack([point[m.name][0] for m in defs])
    n = np.stack([point[m.name][1] for m in defs])
    low, high, se = (np.full((len(defs), G), np.nan) for _ in range(3))

    if prep.split is not None:
        n_split = int(prep.split.max()) + 1
        Ts = group_sums(comp.S, prep.group * n_split + prep.split, G * n_split)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            per_split = comp.evaluate(Ts.reshape(len(comp.stats), G, n_split))
            for i, m in enumerate(defs):
                vals = per_split[m.name][0]
                estimate[i] = np.nanmean(vals, axis=1)
                se[i] = np.nanstd(vals, axis=1, ddof=0)
        n_splits = np.isfinite(np.stack([per_split[m.name][0] for m in defs])).sum(axis=2)
        # a split whose de-noising broke down (1 - 2q <= 0.05) is NaN there and left out of the
        # mean: say so, since leaving out the noisiest splits is not neutral
        for m in defs:
            bad = per_split[m.name][2].sum(axis=1)
            for gi in np.flatnonzero(bad):
                warnings.warn(
                    f"{m.name}: {int(bad[gi])} of {n_split} splits have 1 - 2q <= {MIN_DENOM} for "
                    f"{_group_label(prep.keys, gi)}; they are NaN and left out of the mean and "
                    "std over splits (see n_splits)",
                    MetricWarning, stacklevel=caller_level(),
                )
    elif n_boot > 0:
        _warn_few_pairs(prep)
        low, high, se, nan_share = comp.intervals(estimate, n_boot, ci, seed, _sets)
        for i, m in enumerate(defs):
            too_many = nan_share[i] > bs_max_nan()
            for gi in np.flatnonzero(too_many):
                warnings.warn(
                    f"{m.name}: {nan_share[i, gi]:.0%} of bootstrap replicates are NaN for "
                    f"{_group_label(prep.keys, gi)} (zero denominators or 1 - 2q <= "
                    f"{MIN_DENOM}); no interval reported",
                    MetricWarning, stacklevel=caller_level(),
                )

    # warnings for NaN estimates: the first reason that explains each group
    t = Sums(comp.T, comp.index)
    found: dict[tuple[str, tuple[int, ...]], list[str]] = {}

    def note(why: str, where: np.ndarray, name: str) -> None:
        found.setdefault((why, tuple(np.flatnonzero(where).tolist())), []).append(name)

    for i, m in enumerate(defs):
        rest = ~np.isfinite(estimate[i])
        for reason in m.reasons:
            hit = rest & holds(t, reason)
            if hit.any() and (warn_design or not reason.design):
                note(reason.why, hit, m.name)
            rest &= ~hit
        unstable = rest & point[m.name][2]
        if unstable.any():
            note(UNSTABLE, unstable, m.name)
        rest &= ~unstable
        if rest.any() and warn_design:
            note("zero denominator", rest, m.name)
    _warn_nan(found, prep.keys)

    frames = []
    for i, m in enumerate(defs):
        frame = prep.keys.copy()
        frame["metric"] = m.name
        frame["estimate"] = estimate[i]
        frame["ci_low"] = low[i]
        frame["ci_high"] = high[i]
        frame["se"] = se[i]
        frame["n"] = n[i].astype(np.int64)
        if m.denoised is not None:
            frame["denoised"] = pd.array(m.denoised(t, options), dtype="boolean")
        else:
            frame["denoised"] = pd.array([pd.NA] * G, dtype="boolean")
        frame["n_invalid"] = comp.total(m.invalid).astype(np.int64)
        if prep.split is not None:
            frame["n_splits"] = n_splits[i]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True), comp


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
    warn_design: bool = True,
) -> tuple[pd.DataFrame, list[str]]:
    """Prepare, compute and return (long frame, by columns)."""
    options = Options(repeats=repeats, flip_estimator=flip_estimator, length=length,
                      n_options=n_options, lb_method=lb_method, mixed_ties=mixed_ties,
                      invalid=invalid, pf_denominator=pf_denominator)
    prep = prepare(judgments, pairs, by, options, splits=splits, seed=seed)
    frame, _ = compute(prep, options, metrics, n_boot=n_boot, ci=ci, seed=seed,
                       warn_design=warn_design)
    return frame, prep.by
