"""The LC GLM solvers agree with statsmodels' binomial GLM (plain and ridge) on the same objective."""

import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import optimize, special

from judgekit.exceptions import ConvergenceWarning
from judgekit.winrate._glm import fit_joint, fit_small, soft_log_loss


def _problem(rng, n=400, p=3):
    X = np.column_stack([np.ones(n), np.tanh(rng.normal(size=n)), rng.normal(size=n)])[:, :p]
    beta = np.array([-1.0, 1.5, 0.8])[:p]
    y = special.expit(X @ beta + rng.normal(0, 0.5, n))  # soft labels
    w = rng.integers(1, 4, n).astype(float)
    return X, y, w


def test_unpenalised_fit_matches_statsmodels_binomial_glm_with_soft_labels_and_weights():
    rng = np.random.default_rng(0)
    X, y, w = _problem(rng)
    beta, ok = fit_small(X[None], y[None], w[None], np.zeros(3))
    ref = sm.GLM(y, X, family=sm.families.Binomial(), var_weights=w).fit(tol=1e-12)
    assert ok.all()
    np.testing.assert_allclose(beta[0], ref.params, atol=1e-8)


def test_ridge_with_prior_centre_matches_statsmodels_ridge_glm():
    rng = np.random.default_rng(1)
    X, y, w = _problem(rng)
    lam = np.array([2.0, 30.0, 5.0])
    mu = np.array([0.0, 1.2, 0.0])
    beta, ok = fit_small(X[None], y[None], w[None], lam, mu)
    # statsmodels minimises -loglike/nobs + sum(alpha * b**2) / 2: reparametrise b = beta - mu
    model = sm.GLM(y, X, family=sm.families.Binomial(), var_weights=w, offset=X @ mu)
    ref = model.fit_regularized(alpha=lam / len(y), L1_wt=0.0, opt_method="bfgs")
    assert ok.all()
    np.testing.assert_allclose(beta[0], ref.params + mu, atol=1e-5)


def test_batched_fit_equals_fitting_each_problem_alone():
    rng = np.random.default_rng(2)
    problems = [_problem(rng, n=300) for _ in range(4)]
    X = np.stack([p[0] for p in problems])
    y = np.stack([p[1] for p in problems])
    w = np.stack([p[2] for p in problems])
    lam = np.array([[0.1, 0.1, 0.1], [1, 1, 1], [10, 10, 10], [0, 5, 0]], dtype=float)
    batch, _ = fit_small(X, y, w, lam)
    for k in range(4):
        alone, _ = fit_small(X[k:k + 1], y[k:k + 1], w[k:k + 1], lam[k])
        np.testing.assert_allclose(batch[k], alone[0], atol=1e-12)


def test_zero_weight_rows_are_ignored():
    rng = np.random.default_rng(3)
    X, y, w = _problem(rng)
    w2 = w.copy()
    w2[:100] = 0.0
    y2 = y.copy()
    y2[:100] = 1.0 - y2[:100]  # garbage where the weight is 0
    a, _ = fit_small(X[None, 100:], y[None, 100:], w[None, 100:], 0.5)
    b, _ = fit_small(X[None], y2[None], w2[None], 0.5)
    np.testing.assert_allclose(a, b, atol=1e-12)


def test_backtracking_handles_a_start_far_from_the_optimum():
    rng = np.random.default_rng(4)
    X, y, w = _problem(rng)
    good, _ = fit_small(X[None], y[None], w[None], 0.1)
    far, ok = fit_small(X[None], y[None], w[None], 0.1, beta0=np.array([[40.0, -40.0, 40.0]]))
    assert ok.all()
    np.testing.assert_allclose(far, good, atol=1e-8)


def test_joint_fit_matches_statsmodels_ridge_on_the_dummy_coded_design():
    rng = np.random.default_rng(5)
    n_inst, n_model = 30, 4
    inst = np.repeat(np.arange(n_inst), n_model)
    model = np.tile(np.arange(n_model), n_inst)
    t = np.tanh(rng.normal(size=len(inst)))
    gamma = rng.normal(size=n_inst)
    y = special.expit(gamma[inst] + np.array([-1, 0, 0.5, 1])[model] + 1.5 * t)
    w = np.ones(len(inst))
    lam = 0.7
    g, c, ok = fit_joint(inst, model, t, y, w, n_inst, n_model, lam)
    design = np.hstack([np.eye(n_inst)[inst], np.eye(n_model)[model],
                        np.eye(n_model)[model] * t[:, None]])
    ref = sm.GLM(y, design, family=sm.families.Binomial()).fit_regularized(
        alpha=lam / len(y), L1_wt=0.0, opt_method="bfgs")

    def objective(b):
        eta = design @ b
        return float(np.sum(np.logaddexp(0, eta) - y * eta) + 0.5 * lam * b @ b)

    def gradient(b):
        return design.T @ (special.expit(design @ b) - y) + lam * b

    tight = optimize.minimize(objective, np.zeros(design.shape[1]), jac=gradient,
                              method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15})
    mine = np.concatenate([g, c[:, 0], c[:, 1]])
    assert ok
    # statsmodels' BFGS stops early (~1e-4); judgekit's Newton solution is at least as good ...
    np.testing.assert_allclose(mine, ref.params, atol=1e-3)
    assert objective(mine) <= objective(ref.params) + 1e-9
    # ... and equals a tightly converged quasi-Newton solution
    np.testing.assert_allclose(mine, tight.x, atol=1e-6)


def test_joint_fit_needs_a_positive_penalty_and_warns_when_it_cannot_converge():
    with pytest.raises(ValueError, match="positive L2"):
        fit_joint(np.zeros(2, int), np.zeros(2, int), np.zeros(2), np.ones(2) / 2, np.ones(2),
                  1, 1, 0.0)
    rng = np.random.default_rng(6)
    inst = np.arange(20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_joint(inst, np.zeros(20, int), rng.normal(size=20), (rng.random(20) > 0.5) * 1.0,
                  np.ones(20), 20, 1, 1e-3, max_iter=1)
    assert any("did not converge" in str(c.message) and c.category is ConvergenceWarning for c in caught)


def test_soft_log_loss_is_the_cross_entropy():
    eta = np.array([-2.0, 0.0, 3.0])
    y = np.array([0.1, 0.5, 1.0])
    q = special.expit(eta)
    expected = -np.sum(y * np.log(q) + (1 - y) * np.log(1 - q))
    assert soft_log_loss(eta, y, np.ones(3)) == pytest.approx(expected, rel=1e-12)
