"""The cluster bootstrap behind every interval judgekit reports.

A *cluster* is the unit that is resampled with replacement: a pair (with all its orders and
repeats), an instruction (with every model's answer to it), a source pair of the bias suite. Every
estimator in judgekit is a function of per-cluster sums, so a resample is fully described by how
often each cluster was drawn: a row of multinomial counts. :func:`counts` draws those rows (one
``bincount`` of uniform integer draws per chunk, no Python loop per resample), :func:`resample_sums`
multiplies them into the per-cluster sums, and :func:`interval` turns replicates into a percentile
interval and a standard error.

The draws are the same as :func:`scipy.stats.bootstrap`'s: for a generator in the same state,
``counts(n, B, rng)`` counts the indices that ``scipy.stats.bootstrap(..., rng=rng,
method="percentile")`` resamples, so both give the same replicates of a mean (tested).

Nothing here is public; the subpackages document the intervals they report.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from judgekit._stack import caller_level
from judgekit.exceptions import MetricWarning

#: Resamples used when a function's caller does not say.
N_BOOT = 1000
#: Below this many clusters a percentile interval is unreliable and says so with a warning.
MIN_CLUSTERS = 5
#: An interval needs at least this share of finite replicates (the rest had zero denominators).
MIN_FINITE = 0.95
_MAX_CELLS = 1 << 22  # counts held at once (16 MiB in float32)


def check_args(n_boot: Any, ci: Any, *, minimum: int = 0) -> int:
    """Validate ``n_boot`` (an integer >= ``minimum``) and ``ci`` (in (0, 1)); return ``n_boot``."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer, float)) or (
        isinstance(n_boot, float) and not n_boot.is_integer()
    ):
        raise ValueError(f"n_boot must be an integer >= {minimum}, got {n_boot!r}")
    if n_boot < minimum:
        raise ValueError(f"n_boot must be an integer >= {minimum}, got {n_boot!r}")
    if isinstance(ci, bool) or not isinstance(ci, (int, float, np.floating)) or not 0 < ci < 1:
        raise ValueError(f"ci must be a number in (0, 1), got {ci!r}")
    return int(n_boot)


def rng(seed: int | np.random.Generator | np.random.SeedSequence | None) -> np.random.Generator:
    """A generator from a seed, a seed sequence or a generator (returned as is)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def iter_counts(
    n: int, n_boot: int, seed: Any, *, dtype: Any = np.float32, max_cells: int = _MAX_CELLS,
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(start, W)`` where ``W`` holds resamples ``start, start + 1, ...`` as rows of
    multinomial counts over ``n`` clusters (each row sums to ``n``)."""
    gen = rng(seed)
    if n <= 0:
        if n_boot:
            yield 0, np.zeros((n_boot, 0), dtype=dtype)
        return
    chunk = max(1, min(n_boot, max_cells // n))
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        draws = gen.integers(0, n, size=(b, n))
        draws += (np.arange(b) * n)[:, None]
        yield start, np.bincount(draws.ravel(), minlength=b * n).reshape(b, n).astype(dtype)


def counts(n: int, n_boot: int, seed: Any, *, dtype: Any = np.float64) -> np.ndarray:
    """``(n_boot, n)`` multinomial counts: how often each of ``n`` clusters is drawn per resample.

    The rows are drawn in one batch, so they equal the resamples of
    :func:`scipy.stats.bootstrap` from a generator in the same state.
    """
    out = np.empty((n_boot, max(n, 0)), dtype=dtype)
    for start, w in iter_counts(n, n_boot, seed, dtype=dtype, max_cells=max(n, 1) * max(n_boot, 1)):
        out[start:start + len(w)] = w
    return out


def indices(n: int, n_boot: int, seed: Any) -> np.ndarray:
    """``(n_boot, n)`` cluster indices drawn with replacement, for statistics that are not
    functions of per-cluster sums (a rank correlation across models): the draws whose counts
    :func:`counts` returns for a generator in the same state."""
    return rng(seed).integers(0, n, size=(n_boot, n)) if n > 0 else np.zeros((n_boot, 0), dtype=np.int64)


def resample_sums(S: np.ndarray, n_boot: int, seed: Any, *, max_cells: int = _MAX_CELLS) -> np.ndarray:
    """Column sums of ``S`` (clusters x statistics) under ``n_boot`` resamples of its rows.

    Counts and sums are single precision in the product (counts are exact; a resample's sums
    carry a relative error near 1e-7, far below the resampling spread); the result is float64.
    """
    S = np.asarray(S)
    out = np.empty((n_boot, S.shape[1]))
    S32 = S.astype(np.float32)
    for start, w in iter_counts(S.shape[0], n_boot, seed, max_cells=max_cells):
        out[start:start + len(w)] = w @ S32
    return out


def interval(
    replicates: np.ndarray, ci: float, *, axis: int = -1, min_finite: float = MIN_FINITE,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile interval and standard error of bootstrap replicates along ``axis``.

    Non-finite replicates (a resample with a zero denominator) are left out; where fewer than
    ``min_finite`` of them are finite the interval and the standard error are NaN (callers warn).
    Returns ``(low, high, se)``, each with ``axis`` removed (0-d arrays for 1-d input).
    """
    reps = np.moveaxis(np.asarray(replicates, dtype=float), axis, -1)
    alpha = (1.0 - ci) / 2.0
    shape = reps.shape[:-1]
    low, high, se = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    if reps.shape[-1] == 0:
        return low, high, se
    finite = np.isfinite(reps)
    ok = finite.mean(axis=-1) >= min_finite
    if not ok.any():
        return low, high, se
    sub = reps[ok]
    if finite[ok].all():
        q = np.quantile(sub, [alpha, 1.0 - alpha], axis=-1)
        s = sub.std(axis=-1, ddof=1) if sub.shape[-1] > 1 else np.full(sub.shape[:-1], np.nan)
    else:
        sub = np.where(np.isfinite(sub), sub, np.nan)
        q = np.nanquantile(sub, [alpha, 1.0 - alpha], axis=-1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            s = np.nanstd(sub, axis=-1, ddof=1)
    low[ok], high[ok], se[ok] = q[0], q[1], s
    return low, high, se


def finite_share(replicates: np.ndarray, *, axis: int = -1) -> np.ndarray:
    """Share of finite replicates along ``axis`` (1.0 where there are none at all)."""
    reps = np.asarray(replicates, dtype=float)
    if reps.shape[axis] == 0:
        return np.ones(np.delete(reps.shape, axis % reps.ndim))
    return np.isfinite(reps).mean(axis=axis)


def p_value(estimate: Any, se: Any, null: float = 0.0) -> np.ndarray:
    """Two-sided normal p-value of ``estimate`` against ``null`` with bootstrap standard error ``se``
    (NaN where ``se`` is not positive and finite)."""
    est = np.asarray(estimate, dtype=float)
    s = np.asarray(se, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(est - null) / s
    erfc = np.vectorize(math.erfc, otypes=[float])
    out = erfc(z / math.sqrt(2.0))
    return np.where((s > 0) & np.isfinite(s) & np.isfinite(est), out, np.nan)


def warn_few_clusters(n_clusters: int, what: str, *, unit: str = "pairs") -> bool:
    """Warn (:class:`~judgekit.exceptions.MetricWarning`) when an interval rests on fewer than
    :data:`MIN_CLUSTERS` clusters; returns True when it warned."""
    if 0 < n_clusters < MIN_CLUSTERS:
        warnings.warn(
            f"{what}: the interval is resampled from only {n_clusters} {unit} (fewer than "
            f"{MIN_CLUSTERS}); it is unreliable",
            MetricWarning, stacklevel=caller_level(),
        )
        return True
    return False
