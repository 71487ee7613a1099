"""The estimators behind :func:`judgekit.ppi_win_rates`, on plain arrays.

Everything here works on one *unit* (one judge, one target share, one model): per pair ``i`` of
the ``M`` pairs in scope, the human outcome ``y[i]`` (NaN where the pair is unlabelled), the
judge's prediction ``f[i]`` in [0, 1], the cluster (instruction) code and, for the weighted
estimators, the stratum code and the probability ``pi[i]`` that the pair was sent for labelling.

Two families:

``paper``
    Labels are a simple random sample and the estimand is the population rate. Classical
    (labels only), judge-only, PPI and PPI++ exactly as in Angelopoulos et al. (2023) and
    Angelopoulos, Duchi, Zrnic (2023): with ``n`` labelled and ``N`` unlabelled pairs,
    θ̂_λ = λ·mean_unlabelled(f) + mean_labelled(y − λ f), λ = 1 for PPI, 0 for the classical
    estimate, and λ̂ = Cov(y, f) / ((1 + n/N) Var(f)) clipped to [0, 1] for PPI++.

``weighted``
    Labels drawn with known (or per-stratum) probabilities π, or the estimand is the rate on the
    pairs at hand. The prediction is the fitted g = a_h + λ f (stratum intercepts, one slope) and
    θ̂ = (1/M) [Σ_all g + Σ_labelled (y − g)/π] (the augmented inverse-probability-weighted form
    of Zrnic and Candès 2024). With π = n/M and one stratum it is the regression estimator of
    survey sampling (Cochran 1977, ch. 7) and PPI++'s estimator again.

Each family gives per-pair columns whose totals determine every estimate, so the cluster
bootstrap (:mod:`judgekit._bootstrap`) resamples cluster sums and re-evaluates the formulas,
re-estimating λ in every resample. The CLT standard errors treat λ as fixed (as the papers do)
and sum per-pair influence terms within clusters (a cluster-robust sandwich; with one pair per
cluster it is the papers' formula to the last digit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Method names in output order.
METHODS: tuple[str, ...] = ("classical", "judge_only", "ppi", "ppi++")


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.broadcast_arrays(np.asarray(num, float), np.asarray(den, float))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def cluster_sums(values: np.ndarray, codes: np.ndarray, n_clusters: int) -> np.ndarray:
    """Sum the rows of ``values`` (pairs x k, or 1-d) within clusters."""
    values = np.asarray(values, float)
    if values.ndim == 1:
        return np.bincount(codes, weights=values, minlength=n_clusters)
    out = np.zeros((n_clusters, values.shape[1]))
    np.add.at(out, codes, values)
    return out


# ---------------------------------------------------------------------------------------------
# the paper's estimators (simple random labelling, population estimand)
# ---------------------------------------------------------------------------------------------

#: Per-pair columns of the paper estimators.
PAPER_COLUMNS = ("n", "y", "f", "yy", "ff", "yf", "N", "fu", "fufu")


def paper_columns(y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """(M, 9): labelled indicator, y, f, y², f², y·f on labelled pairs; unlabelled indicator, f,
    f² on unlabelled pairs."""
    lab = ~np.isnan(y)
    y0 = np.where(lab, y, 0.0)
    fl = np.where(lab, f, 0.0)
    fu = np.where(lab, 0.0, f)
    return np.column_stack([lab, y0, fl, y0 * y0, fl * fl, y0 * fl, ~lab, fu, fu * fu]).astype(float)


def paper_lambda(T: np.ndarray) -> np.ndarray:
    """PPI++'s power-tuning parameter from column totals (…, 9), clipped to [0, 1].

    λ̂ = Cov(y, f) / ((1 + n/N) Var(f)), the covariance over the labelled pairs (divisor n) and
    the variance over all pairs (divisor n + N − 1), as in Angelopoulos, Duchi, Zrnic (2023).
    Zero where the variance is zero or no pair is unlabelled.
    """
    n, sy, sf, _, sff, syf, N, sfu, sfufu = np.moveaxis(np.asarray(T, float), -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = syf / n - (sy / n) * (sf / n)
        tot = n + N
        var = (sff + sfufu - (sf + sfu) ** 2 / tot) / (tot - 1)
        lam = cov / ((1 + n / N) * var)
    lam = np.where(np.isfinite(lam) & (N > 0) & (var > 1e-15), lam, 0.0)
    return np.clip(lam, 0.0, 1.0)


def paper_estimates(T: np.ndarray, lam: np.ndarray | float | None = None) -> dict[str, np.ndarray]:
    """Every method's estimate from column totals ``T`` (…, 9); λ for PPI++ re-estimated from
    ``T`` unless given."""
    T = np.asarray(T, float)
    n, sy, sf, *_ = np.moveaxis(T, -1, 0)
    N, sfu = T[..., 6], T[..., 7]
    lam_pp = paper_lambda(T) if lam is None else np.broadcast_to(np.asarray(lam, float), n.shape)
    ybar, fbar, fubar = _safe_div(sy, n), _safe_div(sf, n), _safe_div(sfu, N)
    # with every pair labelled the rectified estimates are the classical one
    fubar = np.where(N > 0, fubar, fbar)
    return {
        "classical": ybar,
        "judge_only": _safe_div(sf + sfu, n + N),
        "ppi": fubar + ybar - fbar,
        "ppi++": lam_pp * fubar + ybar - lam_pp * fbar,
    }


def paper_influence(y: np.ndarray, f: np.ndarray, lam: float) -> np.ndarray:
    """Per-pair influence of θ̂_λ (λ fixed): λ(f − mean_u f)/N on unlabelled pairs and
    (r − mean r)/n with r = y − λ f on labelled pairs; their squares sum to the papers' variance."""
    lab = ~np.isnan(y)
    n, N = int(lab.sum()), int((~lab).sum())
    out = np.zeros(len(y))
    if n:
        r = y[lab] - lam * f[lab]
        out[lab] = (r - r.mean()) / n
    if N and lam:
        fu = f[~lab]
        out[~lab] = lam * (fu - fu.mean()) / N
    return out


def judge_influence(f: np.ndarray) -> np.ndarray:
    """Per-pair influence of the judge-only mean over all pairs."""
    return (f - f.mean()) / len(f)


# ---------------------------------------------------------------------------------------------
# the weighted estimators (known sampling probabilities, strata, or the finite estimand)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Weighted:
    """Per-pair inputs of the weighted estimators for one unit."""

    y: np.ndarray  # (M,) NaN where unlabelled
    f: np.ndarray  # (M,)
    pi: np.ndarray  # (M,) probability of being labelled, in (0, 1]
    stratum: np.ndarray  # (M,) int codes 0..H-1
    n_strata: int

    @property
    def lab(self) -> np.ndarray:
        return ~np.isnan(self.y)


#: Per-stratum columns of the weighted estimators, then three global ones.
WEIGHTED_STRATUM = ("m", "inv_pi", "w", "wf", "wff", "wy", "wyf")
WEIGHTED_GLOBAL = ("f_all", "f_over_pi", "y_over_pi")


def _fit_weights(pi: np.ndarray) -> np.ndarray:
    """Weights of the least-squares fit of g: (1 − π)/π² (the variance of an estimate that
    corrects a prediction by its inverse-probability weighted residuals); 1/π² where π = 1
    everywhere (nothing left to predict)."""
    w = (1.0 - pi) / pi**2
    return w if np.any(w > 0) else 1.0 / pi**2


def weighted_columns(u: Weighted) -> np.ndarray:
    """(M, 7 H + 3) per-pair columns; see :data:`WEIGHTED_STRATUM` and :data:`WEIGHTED_GLOBAL`."""
    lab = u.lab
    M, H = len(u.y), u.n_strata
    y0 = np.where(lab, u.y, 0.0)
    inv = np.where(lab, 1.0 / u.pi, 0.0)
    w = np.where(lab, _fit_weights(u.pi), 0.0)
    per = np.column_stack([np.ones(M), inv, w, w * u.f, w * u.f * u.f, w * y0, w * y0 * u.f])
    out = np.zeros((M, 7 * H + 3))
    if H == 1:
        out[:, :7] = per
    else:
        cols = (u.stratum[:, None] * 7 + np.arange(7)[None, :])
        np.put_along_axis(out, cols, per, axis=1)
    out[:, 7 * H:] = np.column_stack([u.f, inv * u.f, inv * y0])
    return out


def _stratum_fit(Ts: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Slope λ (…) and stratum intercepts a_h (…, H) of g from the per-stratum totals (…, H, 7)."""
    sw, swf, swff, swy, swyf = (Ts[..., k] for k in range(2, 7))
    fbar, ybar = _safe_div(swf, sw), _safe_div(swy, sw)
    if method == "classical":
        lam = np.zeros(Ts.shape[:-2])
    elif method == "ppi":
        lam = np.ones(Ts.shape[:-2])
    else:
        with np.errstate(invalid="ignore"):
            sxy = np.nansum(swyf - swy * fbar, axis=-1)
            sxx = np.nansum(swff - swf * fbar, axis=-1)
        lam = np.clip(np.where(sxx > 1e-12, _safe_div(sxy, sxx), 0.0), 0.0, 1.0)
    a = ybar - lam[..., None] * fbar
    return lam, a


def weighted_estimates(T: np.ndarray, n_strata: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every method's estimate from totals ``T`` (…, 7 H + 3), and PPI++'s λ."""
    T = np.asarray(T, float)
    H = n_strata
    Ts = T[..., : 7 * H].reshape(*T.shape[:-1], H, 7)
    f_all, f_pi, y_pi = T[..., 7 * H], T[..., 7 * H + 1], T[..., 7 * H + 2]
    m_h, inv_h = Ts[..., 0], Ts[..., 1]
    M = m_h.sum(axis=-1)
    out, lam_pp = {}, None
    for method in ("classical", "ppi", "ppi++"):
        lam, a = _stratum_fit(Ts, method)
        with np.errstate(invalid="ignore"):
            total = np.sum(a * (m_h - inv_h), axis=-1) + lam * (f_all - f_pi) + y_pi
        out[method] = _safe_div(total, M)
        if method == "ppi++":
            lam_pp = lam
    out["judge_only"] = _safe_div(f_all, M)
    return {k: out[k] for k in METHODS}, lam_pp


def weighted_fit(u: Weighted, method: str, totals: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """λ and the stratum intercepts of ``method`` on the data (``totals``: the column totals of
    :func:`weighted_columns`, computed when not given)."""
    if totals is None:
        totals = weighted_columns(u).sum(axis=0)
    Ts = np.asarray(totals)[: 7 * u.n_strata].reshape(u.n_strata, 7)
    lam, a = _stratum_fit(Ts, method)
    return float(lam), a


def weighted_psi(u: Weighted, lam: float, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ψ_i = g_i + ξ_i (y_i − g_i)/π_i (its mean is the estimate) and the residuals y − g."""
    g = a[u.stratum] + lam * u.f
    lab = u.lab
    e = np.where(lab, np.where(lab, u.y, 0.0) - g, 0.0)
    psi = g + np.where(lab, e / u.pi, 0.0)
    return psi, e


def weighted_se(u: Weighted, lam: float, a: np.ndarray, *, estimand: str,
                codes: np.ndarray, n_clusters: int, n_params: int) -> float:
    """CLT standard error of the weighted estimate with (λ, a) fixed.

    ``estimand="population"``: the cluster-robust variance of the mean of ψ over clusters.
    ``estimand="pairs"``: the design variance of labelling pair by pair with probabilities π,
    Σ_labelled (1 − π)/π² e² / M², scaled by n/(n − p) for the p fitted coefficients (with
    π = n/M this is (1 − n/M) S²_e / n, the regression estimator's variance in Cochran 1977).
    """
    psi, e = weighted_psi(u, lam, a)
    M = len(psi)
    if estimand == "population":
        s = cluster_sums(psi - psi.mean(), codes, n_clusters)
        return float(np.sqrt(np.sum(s * s)) / M)
    lab = u.lab
    n = int(lab.sum())
    var = np.sum(((1.0 - u.pi) / u.pi**2 * e * e)[lab]) / M**2
    if n > n_params:
        var *= n / (n - n_params)
    return float(np.sqrt(var))
