"""Prediction-powered estimators against independent implementations: ppi-python, and the
papers' / Cochran's formulas written out here from scratch."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import judgekit as jk
from judgekit.inference import _fit

Z = stats.norm.ppf(0.975)


def _data(M=3000, frac=0.1, seed=1, ties=True):
    rng = np.random.default_rng(seed)
    y = rng.choice([0.0, 0.5, 1.0], M, p=[0.4, 0.1 if ties else 0.0, 0.5 if ties else 0.6])
    f = np.clip(0.6 * y + 0.2 + 0.3 * rng.standard_normal(M), 0, 1)
    lab = rng.random(M) < frac
    return y, f, lab


def _by_method(df):
    return df.set_index("method")


# --------------------------------------------------------------------------- the papers' formulas
def _paper_reference(Y, Yh, Yu, lam):
    """PPI++ for a mean, from Angelopoulos, Duchi, Zrnic (2023), eq. for mean estimation."""
    n, N = len(Y), len(Yu)
    theta = lam * Yu.mean() + (Y - lam * Yh).mean()
    se = np.sqrt(lam**2 * Yu.var() / N + (Y - lam * Yh).var() / n)
    return theta, theta - Z * se, theta + Z * se


def _paper_lambda(Y, Yh, Yu):
    n, N = len(Y), len(Yu)
    cov = np.mean((Y - Y.mean()) * (Yh - Yh.mean()))
    var = np.var(np.concatenate([Yh, Yu]), ddof=1)
    return float(np.clip(cov / ((1 + n / N) * var), 0, 1))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_paper_estimators_equal_the_formulas(seed):
    y, f, lab = _data(seed=seed)
    out = _by_method(jk.ppi_mean(np.where(lab, y, np.nan), f, small_sample=False))
    Y, Yh, Yu = y[lab], f[lab], f[~lab]
    lam = _paper_lambda(Y, Yh, Yu)
    assert out.loc["ppi++", "lam"] == pytest.approx(lam, abs=1e-12)
    for method, lm in (("classical", 0.0), ("ppi", 1.0), ("ppi++", lam)):
        theta, low, high = _paper_reference(Y, Yh, Yu, lm)
        row = out.loc[method]
        assert abs(row.estimate - theta) < 1e-10
        assert abs(row.ci_low - low) < 1e-10 and abs(row.ci_high - high) < 1e-10
    j = out.loc["judge_only"]
    assert abs(j.estimate - f.mean()) < 1e-12
    assert abs(j.se - f.std() / np.sqrt(len(f))) < 1e-12


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_paper_estimators_equal_ppi_python(seed):
    ppi_py = pytest.importorskip("ppi_py")
    y, f, lab = _data(seed=seed)
    out = _by_method(jk.ppi_mean(np.where(lab, y, np.nan), f, small_sample=False))
    Y, Yh, Yu = y[lab], f[lab], f[~lab]
    assert abs(out.loc["ppi++", "estimate"] - ppi_py.ppi_mean_pointestimate(Y, Yh, Yu)[0]) < 1e-8
    low, high = ppi_py.ppi_mean_ci(Y, Yh, Yu, alpha=0.05)
    assert abs(out.loc["ppi++", "ci_low"] - low[0]) < 1e-8
    assert abs(out.loc["ppi++", "ci_high"] - high[0]) < 1e-8
    low, high = ppi_py.ppi_mean_ci(Y, Yh, Yu, alpha=0.05, lam=1)
    assert abs(out.loc["ppi", "ci_low"] - low[0]) < 1e-8
    assert abs(out.loc["ppi", "ci_high"] - high[0]) < 1e-8
    assert abs(out.loc["ppi", "estimate"] - ppi_py.ppi_mean_pointestimate(Y, Yh, Yu, lam=1)[0]) < 1e-8
    low, high = ppi_py.classical_mean_ci(Y, alpha=0.05)
    assert abs(out.loc["classical", "ci_low"] - low) < 1e-8
    assert abs(out.loc["classical", "ci_high"] - high) < 1e-8


def test_small_sample_intervals_use_t_and_divisor_n_minus_1():
    y, f, lab = _data(M=2000, frac=0.03, seed=11)
    out = _by_method(jk.ppi_mean(np.where(lab, y, np.nan), f))
    Y, Yh, Yu = y[lab], f[lab], f[~lab]
    n, N = len(Y), len(Yu)
    lam = _paper_lambda(Y, Yh, Yu)
    t = stats.t.ppf(0.975, n - 1)
    for method, lm in (("classical", 0.0), ("ppi", 1.0), ("ppi++", lam)):
        theta = lm * Yu.mean() + (Y - lm * Yh).mean()
        se = np.sqrt(lm**2 * Yu.var() / N + (Y - lm * Yh).var(ddof=1) / n)
        assert abs(out.loc[method, "se"] - se) < 1e-12
        # the interval is the t interval widened where the labels' spread can understate the
        # variance: each end solves (θ̂ − θ)² = t² V(θ), V written out here from the docs
        r = Y - lm * Yh
        ss = np.sum((r - r.mean()) ** 2)
        excess = max(0.0, (ss + 1) / (n + 1) * n / (n - 1) - ss / (n - 1)) / n

        def V(th, se=se, excess=excess):
            return se**2 + max(excess, max(0.0, th * (1 - th) - Y.mean() * (1 - Y.mean())) / (n - 1))

        low, high = out.loc[method, ["ci_low", "ci_high"]]
        assert low <= theta - t * se and high >= theta + t * se
        for end in (low, high):
            assert abs((theta - end) ** 2 - t**2 * V(end)) < 1e-9


# ---------------------------------------------------------- survey-sampling forms (finite, strata)
def test_finite_population_is_cochrans_regression_estimator():
    """estimand="pairs": with n of M labelled at random, PPI++ is the regression estimator
    ȳ + b (F̄_M − f̄_n) with variance (1 − n/M) s²_e / n, s²_e with divisor n − 2; PPI is the
    difference estimator with divisor n − 1 (Cochran 1977, §7.1-7.3)."""
    y, f, lab = _data(seed=4)
    out = _by_method(jk.ppi_mean(np.where(lab, y, np.nan), f, estimand="pairs"))
    M, n = len(y), lab.sum()
    Y, F = y[lab], f[lab]
    b = np.clip(np.sum((Y - Y.mean()) * (F - F.mean())) / np.sum((F - F.mean()) ** 2), 0, 1)
    theta = Y.mean() + b * (f.mean() - F.mean())
    e = Y - Y.mean() - b * (F - F.mean())
    se = np.sqrt((1 - n / M) * np.sum(e**2) / (n - 2) / n)
    assert abs(out.loc["ppi++", "estimate"] - theta) < 1e-10
    assert abs(out.loc["ppi++", "se"] - se) < 1e-10
    d = Y - F
    se_ppi = np.sqrt((1 - n / M) * np.var(d, ddof=1) / n)
    assert abs(out.loc["ppi", "estimate"] - (f.mean() + d.mean())) < 1e-10
    assert abs(out.loc["ppi", "se"] - se_ppi) < 1e-10
    se_cl = np.sqrt((1 - n / M) * np.var(Y, ddof=1) / n)
    assert abs(out.loc["classical", "estimate"] - Y.mean()) < 1e-10
    assert abs(out.loc["classical", "se"] - se_cl) < 1e-10


def test_stratified_classical_is_the_stratified_mean():
    """With strata and no judge weight, the estimate is Σ W_h ȳ_h and, for the finite
    estimand, its variance Σ W_h² (1 − f_h) s²_h / n_h."""
    rng = np.random.default_rng(5)
    M = 4000
    strata = rng.choice(["x", "y", "z"], M, p=[0.5, 0.3, 0.2])
    y = (rng.random(M) < np.select([strata == "x", strata == "y"], [0.3, 0.6], 0.8)).astype(float)
    f = np.clip(y * 0.5 + 0.25 + 0.2 * rng.standard_normal(M), 0, 1)
    rate = np.select([strata == "x", strata == "y"], [0.02, 0.1], 0.3)
    lab = rng.random(M) < rate
    out = _by_method(jk.ppi_mean(np.where(lab, y, np.nan), f, strata=strata, estimand="pairs"))
    theta, var = 0.0, 0.0
    for h in "xyz":
        m = strata == h
        W, nh, Mh = m.mean(), (m & lab).sum(), m.sum()
        theta += W * y[m & lab].mean()
        var += W**2 * (1 - nh / Mh) * np.var(y[m & lab], ddof=1) / nh
    assert abs(out.loc["classical", "estimate"] - theta) < 1e-10
    # ddof: judgekit corrects once by n/(n - H) over all strata instead of per stratum
    assert out.loc["classical", "se"] == pytest.approx(np.sqrt(var), rel=0.02)
    # the unweighted mean of the labels is far off: the strata were labelled at different rates
    assert abs(y[lab].mean() - y.mean()) > 0.1
    assert abs(out.loc["ppi++", "estimate"] - y.mean()) < 3 * out.loc["ppi++", "se"]


def test_inverse_probability_weighting_is_horvitz_thompson_when_lambda_is_zero():
    rng = np.random.default_rng(6)
    M = 5000
    y = rng.binomial(1, 0.4, M).astype(float)
    f = np.clip(y + 0.4 * rng.standard_normal(M), 0, 1)
    pi = np.where(np.abs(f - 0.5) < 0.3, 0.3, 0.03)  # the judge's hard cases, labelled more
    lab = rng.random(M) < pi
    out = _by_method(jk.ppi_mean(np.where(lab, y, np.nan), f, sampling_prob=pi))
    # classical with weights: Hájek-type a + Σ (y - a)/π / M with a the (1-π)/π² weighted mean
    w = (1 - pi[lab]) / pi[lab] ** 2
    a = np.sum(w * y[lab]) / np.sum(w)
    theta = a + np.sum((y[lab] - a) / pi[lab]) / M
    assert abs(out.loc["classical", "estimate"] - theta) < 1e-10
    psi = np.full(M, a)
    psi[lab] += (y[lab] - a) / pi[lab]
    assert abs(out.loc["classical", "se"] - psi.std() / np.sqrt(M)) < 1e-10


def _clustered(rng, G=200, per=5, frac=0.5):
    effect = np.repeat(rng.normal(0, 0.25, G), per)  # an instruction moves all its pairs
    y = (rng.random(G * per) < np.clip(0.5 + effect, 0, 1)).astype(float)
    f = np.clip(0.5 + effect + 0.3 * (y - 0.5) + 0.1 * rng.standard_normal(G * per), 0, 1)
    lab = rng.random(G * per) < frac
    return np.where(lab, y, np.nan), f, np.repeat(np.arange(G), per)


def test_cluster_robust_se_reduces_to_iid_and_matches_the_spread_of_estimates():
    ys, f, clusters = _clustered(np.random.default_rng(7))
    iid = _by_method(jk.ppi_mean(ys, f))
    single = _by_method(jk.ppi_mean(ys, f, cluster=np.arange(len(f))))
    assert np.allclose(iid["se"], single["se"], rtol=0, atol=1e-14)
    # over replications, the clustered SE matches the real spread; the iid one is too small
    rng = np.random.default_rng(8)
    est, se_c, se_i = [], [], []
    for _ in range(300):
        ys, f, clusters = _clustered(rng)
        c = _by_method(jk.ppi_mean(ys, f, cluster=clusters, methods=["classical", "judge_only", "ppi++"]))
        i = _by_method(jk.ppi_mean(ys, f, methods=["classical", "judge_only", "ppi++"]))
        est.append(c["estimate"]), se_c.append(c["se"]), se_i.append(i["se"])
    sd = pd.DataFrame(est).std()
    assert np.allclose(pd.DataFrame(se_c).mean(), sd, rtol=0.12), (pd.DataFrame(se_c).mean(), sd)
    assert (pd.DataFrame(se_i).mean() < 0.85 * sd).all()


def test_bootstrap_agrees_with_clt_and_reestimates_lambda():
    y, f, lab = _data(M=4000, seed=8)
    out = jk.ppi_mean(np.where(lab, y, np.nan), f, interval="both", n_boot=2000, seed=3)
    wide = out.pivot(index="method", columns="interval", values="se")
    assert np.allclose(wide["bootstrap"], wide["clt"], rtol=0.1)
    # the point estimate is the same row for both kinds of interval
    assert out.groupby("method")["estimate"].nunique().eq(1).all()


def test_quick_path_equals_public_function():
    y, f, lab = _data(seed=9)
    ys = np.where(lab, y, np.nan)
    for estimand in ("population", "pairs"):
        quick = _fit.quick(ys, f, estimand)
        out = _by_method(jk.ppi_mean(ys, f, estimand=estimand))
        for method, (theta, se, _crit) in quick.items():
            assert theta == pytest.approx(out.loc[method, "estimate"], abs=1e-14)
            assert se == pytest.approx(out.loc[method, "se"], abs=1e-14)
        for method, (_, _, low, high) in _fit.quick_intervals(ys, f, estimand).items():
            assert (low, high) == pytest.approx(tuple(out.loc[method, ["ci_low", "ci_high"]]), abs=1e-14)


def test_all_labelled_gives_the_classical_estimate():
    y, f, _ = _data(M=500, seed=10)
    out = _by_method(jk.ppi_mean(y, f))
    assert np.allclose(out.loc[["ppi", "ppi++"], "estimate"], y.mean())


def test_ppi_mean_rejects_bad_input():
    with pytest.raises(ValueError, match="same length"):
        jk.ppi_mean([1.0, 0.0], [0.5])
    with pytest.raises(ValueError, match="finite prediction"):
        jk.ppi_mean([1.0, 0.0, np.nan], [0.5, np.nan, 0.1])
    with pytest.raises(ValueError, match="two items"):
        jk.ppi_mean([1.0, np.nan, np.nan], [0.5, 0.5, 0.1])
    with pytest.raises(ValueError, match="sampling_prob"):
        jk.ppi_mean([1.0, 0.0, np.nan], [0.5, 0.5, 0.1], sampling_prob=0.0)
    with pytest.raises(ValueError, match="methods"):
        jk.ppi_mean([1.0, 0.0, np.nan], [0.5, 0.5, 0.1], methods=["magic"])
    with pytest.raises(ValueError, match="estimand='pairs'"):
        jk.ppi_mean([1.0, 0.0, np.nan], [0.5, 0.5, 0.1], estimand="pairs", interval="bootstrap")
    assert isinstance(jk.ppi_mean([1.0, 0.0, np.nan], [0.5, 0.5, 0.1]), pd.DataFrame)
