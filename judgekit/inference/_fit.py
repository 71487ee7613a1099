"""Fitting one unit (or the difference of two): estimates, CLT and cluster-bootstrap intervals."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from judgekit import _bootstrap
from judgekit._stack import caller_level
from judgekit.exceptions import MetricWarning
from judgekit.inference import _estimators as est
from judgekit.inference._prepare import Unit


@dataclass
class Fitted:
    """One unit, ready for intervals: per method the estimate, λ and per-pair terms."""

    unit: Unit
    path: str  # "paper" or "weighted"
    estimand: str
    estimates: dict[str, float]
    lam: dict[str, float]
    # population: per-pair influence (sums within clusters give the variance)
    # pairs: per-pair design terms c with variance sum (1 - pi) c^2
    terms: dict[str, np.ndarray]
    n_params: dict[str, int]
    weighted: est.Weighted | None = None

    @property
    def n_labelled(self) -> int:
        return int((~np.isnan(self.unit.y)).sum())


def _weighted_inputs(u: Unit) -> est.Weighted:
    lab = ~np.isnan(u.y)
    if u.pi is not None:
        pi = u.pi
    else:  # labels drawn at random within each stratum: π = n_h / M_h
        H = len(u.strata)
        n_h = np.bincount(u.stratum, weights=lab.astype(float), minlength=H)
        m_h = np.bincount(u.stratum, minlength=H).astype(float)
        empty = (n_h == 0) & (m_h > 0)
        if empty.any():
            names = [u.strata[h] for h in np.flatnonzero(empty)][:5]
            raise ValueError(
                f"strata: no pair is labelled in stratum {', '.join(map(repr, names))} "
                f"(judge {u.judge!r}{', model ' + repr(u.model) if u.model else ''}): its human "
                "rate cannot be estimated; label some of its pairs or leave it out"
            )
        pi = (n_h / m_h)[u.stratum]
    return est.Weighted(y=u.y, f=u.f, pi=pi, stratum=u.stratum, n_strata=len(u.strata))


def fit_unit(u: Unit, estimand: str, small_sample: bool = False) -> Fitted:
    """Estimates of every method for one unit, and the per-pair terms of their variances
    (``small_sample``: the labelled pairs' terms with divisor n − 1 instead of n)."""
    paper = u.pi is None and len(u.strata) == 1 and estimand == "population"
    lab = ~np.isnan(u.y)
    if paper:
        T = est.paper_columns(u.y, u.f).sum(axis=0)
        lam_pp = float(est.paper_lambda(T))
        estimates = {k: float(v) for k, v in est.paper_estimates(T, lam_pp).items()}
        lam = {"classical": 0.0, "ppi": 1.0, "ppi++": lam_pp}
        if lab.all():
            lam = dict.fromkeys(lam, 0.0)
        terms = {m: est.paper_influence(u.y, u.f, lam[m]) for m in ("classical", "ppi", "ppi++")}
        n = int(lab.sum())
        if small_sample and n > 1:
            for m in ("classical", "ppi", "ppi++"):
                terms[m] = np.where(lab, terms[m] * math.sqrt(n / (n - 1)), terms[m])
        terms["judge_only"] = est.judge_influence(u.f)
        return Fitted(u, "paper", estimand, estimates, lam, terms,
                      dict.fromkeys(est.METHODS, 0))
    w = _weighted_inputs(u)
    M, H = len(u.y), len(u.strata)
    estimates, lam, terms, n_params = {}, {}, {}, {}
    totals = est.weighted_columns(w).sum(axis=0)
    for method in ("classical", "ppi", "ppi++"):
        lam_m, a = est.weighted_fit(w, method, totals)
        psi, e = est.weighted_psi(w, lam_m, a)
        estimates[method], lam[method] = float(psi.mean()), lam_m
        terms[method] = (psi - psi.mean()) / M if estimand == "population" else np.where(
            lab, e / (w.pi * M), 0.0)
        n_params[method] = H + (method == "ppi++")
    estimates["judge_only"] = float(u.f.mean())
    lam["judge_only"] = np.nan
    terms["judge_only"] = est.judge_influence(u.f)
    n_params["judge_only"] = 0
    return Fitted(u, "weighted", estimand, {k: estimates[k] for k in est.METHODS}, lam, terms,
                  n_params, w)


def _codes(keys: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniq = pd.factorize(keys)
    return codes.astype(np.int64), len(uniq)


def clt_se(fits: list[Fitted], signs: list[float], method: str) -> float:
    """CLT standard error of Σ sign_k θ̂_k over units that may share pairs and clusters."""
    if fits[0].estimand == "population" or method == "judge_only":
        keys = np.concatenate([f.unit.cluster for f in fits])
        phi = np.concatenate([s * f.terms[method] for f, s in zip(fits, signs)])
        codes, G = _codes(keys)
        sums = est.cluster_sums(phi, codes, G)
        return float(math.sqrt(np.sum(sums * sums)))
    ids = np.concatenate([f.unit.pair_id for f in fits])
    c = np.concatenate([s * f.terms[method] for f, s in zip(fits, signs)])
    pi = np.concatenate([f.weighted.pi for f in fits])
    codes, P = _codes(ids)
    csum = est.cluster_sums(c, codes, P)
    pi_p = np.zeros(P)
    pi_p[codes] = pi
    var = float(np.sum((1.0 - pi_p) * csum * csum))
    n = sum(f.n_labelled for f in fits)
    p = sum(f.n_params[method] for f in fits)
    if n > p:
        var *= n / (n - p)
    return math.sqrt(var)


def _columns(f: Fitted) -> tuple[np.ndarray, callable]:
    u = f.unit
    if f.path == "paper":
        return est.paper_columns(u.y, u.f), lambda T: est.paper_estimates(T)
    H = len(u.strata)
    return est.weighted_columns(f.weighted), lambda T: est.weighted_estimates(T, H)[0]


def bootstrap(fits: list[Fitted], signs: list[float], n_boot: int, seed: int) -> dict[str, np.ndarray]:
    """Cluster-bootstrap replicates of Σ sign_k θ̂_k for every method (λ re-estimated in each
    resample); the units are resampled together, cluster by cluster."""
    keys = np.concatenate([f.unit.cluster for f in fits])
    codes, G = _codes(keys)
    blocks, evals, start = [], [], 0
    for f in fits:
        cols, ev = _columns(f)
        m = len(f.unit.y)
        blocks.append(est.cluster_sums(cols, codes[start:start + m], G))
        evals.append(ev)
        start += m
    S = np.hstack(blocks)
    T = _bootstrap.resample_sums(S, n_boot, seed)
    out: dict[str, np.ndarray] = {}
    col = 0
    for s, ev, block in zip(signs, evals, blocks):
        k = block.shape[1]
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = ev(T[:, col:col + k])
        for method, values in reps.items():
            out[method] = out.get(method, 0.0) + s * np.asarray(values, float)
        col += k
    return out


def critical(ci: float, n_labelled: int, method: str, small_sample: bool) -> float:
    """The normal quantile, or Student's t with n − 1 degrees of freedom for the estimates that
    rest on the n labels when ``small_sample``."""
    if small_sample and method != "judge_only" and n_labelled > 1:
        return float(stats.t.ppf(0.5 + ci / 2, n_labelled - 1))
    return float(stats.norm.ppf(0.5 + ci / 2))


def _range(fits: list[Fitted], signs: list[float]) -> tuple[float, float] | None:
    """The range the estimand lies in when every outcome and prediction lies in [0, 1]: [0, 1]
    for a rate, [-1, 1] for a difference of two; None otherwise (e.g. a score)."""
    for f in fits:
        y = f.unit.y[~np.isnan(f.unit.y)]
        if y.size == 0 or y.min() < 0 or y.max() > 1 or f.unit.f.min() < 0 or f.unit.f.max() > 1:
            return None
    return (0.0, 1.0) if len(fits) == 1 else (-1.0, 1.0)


def _score_extra(f: Fitted, method: str, z: float) -> tuple[float, float, int]:
    """What the score-type interval adds to the variance: the residuals' shrunk excess and the
    labels' centre ȳ (1 − ȳ), and n (see :func:`score_interval`)."""
    lab = ~np.isnan(f.unit.y)
    y = f.unit.y[lab]
    n = len(y)
    r = y - f.lam[method] * f.unit.f[lab]
    ss = float(np.sum((r - r.mean()) ** 2))
    # one pseudo-pair whose residual sits 1 from the mean (a disagreement): the residuals'
    # variance is not read as ~0 from labels that happen to contain no disagreement
    excess = max(0.0, (ss + 1.0) / (n + 1.0) * n / (n - 1.0) - ss / (n - 1.0)) / n
    ybar = float(y.mean())
    return excess, ybar * (1.0 - ybar), n


def score_interval(estimate: float, se: float, z: float, excess: float, centre: float, n: int,
                   bounds: tuple[float, float] = (0.0, 1.0)) -> tuple[float, float]:
    """The smallest interval holding {θ : |θ̂ − θ| <= z sqrt(V(θ))}, within ``bounds``, where
    V(θ) = se² + max(excess, (θ(1 − θ) − ȳ(1 − ȳ)) / (n − 1)) and ``centre`` is ȳ(1 − ȳ): the
    CLT interval widened where the labels' own spread, or their residuals', can understate the
    variance (a rare class, or a rare disagreement with the judge).

    θ(1 − θ) − ȳ(1 − ȳ) is the gap between the outcome's variance if the rate were θ and the one
    the labels show (for outcomes in [0, 1], Var y = θ(1 − θ) − E[y(1 − y)] exactly); with
    λ = 0 and binary labels the interval contains Wilson's. The accepted set is the union of
    |θ − θ̂| <= z sqrt(se² + excess) and the solutions of a quadratic inequality, both intervals,
    so its ends are closed-form.
    """
    lo, hi = bounds
    half = z * math.sqrt(se * se + excess)
    low, high = estimate - half, estimate + half
    # (θ − θ̂)² <= z² (se² + (θ − θ² − c)/(n − 1)):  (1 + k) θ² − (2 θ̂ + k) θ + θ̂² − z² se² + k c <= 0
    k = z * z / (n - 1.0)
    a, b, c = 1.0 + k, -(2.0 * estimate + k), estimate * estimate - z * z * se * se + k * centre
    disc = b * b - 4.0 * a * c
    if disc > 0:
        root = math.sqrt(disc)
        low, high = min(low, (-b - root) / (2 * a)), max(high, (-b + root) / (2 * a))
    return float(np.clip(low, lo, hi)), float(np.clip(high, lo, hi))


def clt_interval(fits: list[Fitted], signs: list[float], method: str, estimate: float, se: float,
                 z: float, small_sample: bool) -> tuple[float, float]:
    """The CLT interval: estimate ± z se, within the estimand's range for outcomes in [0, 1]; with
    ``small_sample`` on the papers' path (one unit) and a method resting on labels, the
    score-type interval of :func:`score_interval`."""
    bounds = _range(fits, signs)
    low, high = estimate - z * se, estimate + z * se
    if bounds is None:
        return low, high
    f = fits[0]
    if small_sample and len(fits) == 1 and f.path == "paper" and method != "judge_only" \
            and f.n_labelled >= 2 and not (~np.isnan(f.unit.y)).all():
        excess, centre, n = _score_extra(f, method, z)
        return score_interval(estimate, se, z, excess, centre, n, bounds)
    return float(np.clip(low, *bounds)), float(np.clip(high, *bounds))


def _warn_constant(fits: list[Fitted], small_sample: bool) -> None:
    for f in fits:
        y = f.unit.y[~np.isnan(f.unit.y)]
        if y.size and np.all(y == y[0]):
            who = f"judge {f.unit.judge!r}{', model ' + repr(f.unit.model) if f.unit.model else ''}"
            how = ("the CLT intervals use the score-type bound (small_sample=True), wide by design"
                   if small_sample and f.path == "paper" else
                   "the label-only interval has zero width and the others rest on the judge alone; "
                   "treat them as unreliable")
            warnings.warn(f"ppi: all {y.size} labels of {who} are {y[0]:g}: their spread says "
                          f"nothing about the uncertainty; {how}. Label more pairs",
                          MetricWarning, stacklevel=caller_level())


def rows(fits: list[Fitted], signs: list[float], *, label: dict, methods: list[str],
         interval: str, n_boot: int, ci: float, seed: int, small_sample: bool) -> list[dict]:
    """Output rows (one per method and interval kind) for Σ sign_k θ̂_k."""
    base = {**label,
            "n_labelled": sum(f.n_labelled for f in fits),
            "n_unlabelled": sum(len(f.unit.y) - f.n_labelled for f in fits),
            "n_clusters": len(pd.unique(np.concatenate([f.unit.cluster for f in fits]))),
            "n_invalid": sum(f.unit.n_invalid for f in fits),
            "estimand": fits[0].estimand}
    out = []
    _warn_constant(fits, small_sample)
    bounds = _range(fits, signs)
    boot = bootstrap(fits, signs, n_boot, seed) if interval in ("bootstrap", "both") else None
    if boot is not None:
        _bootstrap.warn_few_clusters(base["n_clusters"], "ppi_win_rates", unit="clusters")
    for method in methods:
        estimate = float(sum(s * f.estimates[method] for f, s in zip(fits, signs)))
        lam = fits[0].lam.get(method, np.nan) if len(fits) == 1 else np.nan
        common = {**base, "method": method, "estimate": estimate, "lam": lam}
        if interval in ("clt", "both"):
            se = clt_se(fits, signs, method)
            z = critical(ci, min(f.n_labelled for f in fits), method, small_sample)
            low, high = clt_interval(fits, signs, method, estimate, se, z, small_sample)
            out.append({**common, "interval": "clt", "se": se, "ci_low": low, "ci_high": high})
        if boot is not None:
            low, high, se = _bootstrap.interval(boot[method], ci)
            if not np.isfinite(se):
                warnings.warn(f"ppi_win_rates: too many bootstrap resamples of {method} were "
                              "undefined (a resample without labelled pairs); interval is NaN",
                              MetricWarning, stacklevel=caller_level())
            if bounds is not None:
                low, high = np.clip(low, *bounds), np.clip(high, *bounds)
            out.append({**common, "interval": "bootstrap", "se": float(se),
                        "ci_low": float(low), "ci_high": float(high)})
    return out


def quick(y: np.ndarray, f: np.ndarray, estimand: str = "population", *, ci: float = 0.95,
          small_sample: bool = True) -> dict[str, tuple[float, float, float]]:
    """(estimate, CLT standard error, critical value) per method for one unit of independent
    items, without building frames: the inner loop of simulations and label-subset studies."""
    M = len(y)
    unit = Unit(judge="", model=None, pair_id=np.arange(M), y=y, f=f, cluster=np.arange(M),
                stratum=np.zeros(M, dtype=np.int64), strata=["all"], pi=None, n_invalid=0)
    return _quick(fit_unit(unit, estimand, small_sample), ci, small_sample)


def _quick(fitted: Fitted, ci: float, small_sample: bool) -> dict[str, tuple[float, float, float]]:
    out = {}
    for method in est.METHODS:
        t = fitted.terms[method]
        if fitted.estimand == "population" or method == "judge_only":
            var = float(np.sum(t * t))
        else:
            var = float(np.sum((1.0 - fitted.weighted.pi) * t * t))
            n, p = fitted.n_labelled, fitted.n_params[method]
            if n > p:
                var *= n / (n - p)
        out[method] = (fitted.estimates[method], math.sqrt(var),
                       critical(ci, fitted.n_labelled, method, small_sample))
    return out


def quick_intervals(y: np.ndarray, f: np.ndarray, estimand: str = "population", *,
                    ci: float = 0.95, small_sample: bool = True
                    ) -> dict[str, tuple[float, float, float, float]]:
    """(estimate, CLT standard error, ci_low, ci_high) per method, as :func:`ppi_mean` reports
    them, for one unit of independent items."""
    M = len(y)
    unit = Unit(judge="", model=None, pair_id=np.arange(M), y=y, f=f, cluster=np.arange(M),
                stratum=np.zeros(M, dtype=np.int64), strata=["all"], pi=None, n_invalid=0)
    fitted = fit_unit(unit, estimand, small_sample)
    out = {}
    for method, (theta, se, z) in _quick(fitted, ci, small_sample).items():
        out[method] = (theta, se, *clt_interval([fitted], [1.0], method, theta, se, z, small_sample))
    return out
