"""NOA: judgekit's default fit is the exact minimum of its convex loss and returns probabilities;
with settings="paper" the O(M) gradient is the true gradient and the fit does what the paper's
algorithm says."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, logit

import judgekit as jk
from judgekit.calibration._noa_paper import _dense_gradient, _Problem, _simplify
from judgekit.calibration.noa import _anchored_terms
from judgekit.exceptions import ConvergenceWarning

PAPER = {"settings": "paper"}
# the paper's settings rarely meet their own stopping rule; that warning is tested once below
pytestmark = pytest.mark.filterwarnings("ignore::judgekit.exceptions.ConvergenceWarning")


def _s(K=40, pos=0.0, tok=0.0, seed=0):
    delta = np.random.default_rng(seed).normal(0, 2, K)
    return np.column_stack([expit(delta + pos + tok), expit(delta - pos + tok),
                            expit(-delta + pos + tok), expit(-delta - pos + tok)])


@pytest.mark.parametrize("objective,maps", [("full", "shared"), ("l1", "shared"), ("l2", "shared"),
                                            ("four", "shared"), ("four", "position"),
                                            ("full", "position")])
def test_gradient_matches_central_finite_differences(objective, maps):
    rng = np.random.default_rng(1)
    problem = _Problem(_s(pos=0.6, tok=-0.8), objective, maps)
    d = problem.init() + rng.normal(0, 0.5, problem.n_params)  # away from the symmetric start
    _, grad = problem.loss_and_grad(d, 0.5)
    h = 1e-6
    fd = np.array([(problem.loss(d + h * e, 0.5) - problem.loss(d - h * e, 0.5)) / (2 * h)
                   for e in np.eye(len(d))])
    assert np.linalg.norm(fd - grad) / np.linalg.norm(grad) < 1e-6
    # and the straightforward O(M^2) Jacobian product gives the same numbers
    np.testing.assert_allclose(_dense_gradient(problem, d, 0.5, block=7), grad, rtol=0, atol=1e-12)


def test_grid_is_the_sorted_pooled_values_with_0_and_1_and_starts_at_d_equal_z():
    s = _s(K=5, tok=1.0)  # token bias only: s0 == s1 exactly, so the pool has ties
    problem = _Problem(s, "full", "shared")
    z = problem.z["shared"]
    # M = 3K + 1 (Li et al. 2024, §3.3): all 3K values, ties included, between 0 and 1
    assert len(z) == 3 * 5 + 2
    np.testing.assert_array_equal(z, np.sort(np.r_[0.0, s[:, :3].ravel(), 1.0]))
    for j in (0, 1, 2):
        np.testing.assert_array_equal(z[problem.idx[j]], s[:, j])
    g, w = problem.g_and_w(problem.init())
    np.testing.assert_allclose(w, np.exp(z) / np.exp(z).sum())  # centring does not change g
    assert g[-1] == 1.0 and np.all(np.diff(g) > 0)


def test_breaking_exact_ties_by_rounding_noise_barely_moves_the_fit():
    # a token-only judge gives s0 == s1 exactly in memory, but not through a real API (logprobs
    # are rounded differently per request); the fitted map must not depend on which
    s = _s(K=400, tok=1.0)
    noisy = s * (1 + np.random.default_rng(3).normal(0, 1e-13, s.shape))
    x = np.linspace(0, 1, 1001)
    for max_iter in (1, 5):
        a, b = (jk.noa_fit(x, max_iter=max_iter, **PAPER) for x in (s, noisy))
        assert np.abs(a(x) - b(x)).max() < 0.02, max_iter  # one grid weight is ~1/1200


def test_stopping_rule_and_iteration_limit():
    s = _s(K=60, tok=1.0)
    assert jk.noa_fit(s, tol=np.inf, **PAPER).n_iter == 1  # one step, then sum|Δd| < ε
    with pytest.warns(ConvergenceWarning, match="max_iter = 7"):
        capped = jk.noa_fit(s, tol=0.0, max_iter=7, **PAPER)
    assert capped.n_iter == 7 and not capped.converged and len(capped.loss) == 8
    assert capped.loss[-1] < capped.loss[0]  # descent lowers the loss


def test_token_bias_is_removed_and_ties_map_to_one_half():
    beta = 1.0
    fit = jk.noa_fit(_s(K=400, tok=beta), objective="full", max_iter=200, **PAPER)
    # s = σ(β) is a content tie shown under t1: calibrated to 0.5
    assert fit(np.array([expit(beta)]))[0] == pytest.approx(0.5, abs=0.03)
    s_new = _s(K=200, tok=beta, seed=5)
    v = fit(s_new)
    # consistent across the ID swap: g(s0) + g(s2) = 1 on new pairs
    assert np.abs(v[:, 0] + v[:, 2] - 1).mean() < 0.02
    assert np.abs(s_new[:, 0] + s_new[:, 2] - 1).mean() > 0.2


def test_the_paper_objective_reads_a_position_bias_as_an_id_bias():
    # position bias only: t1 sits first in X0 and X2, so NOA shifts P(t1) down everywhere,
    # which is right in X0/X2 but wrong in X1/X3, where t1 is second
    beta = 1.0
    fit = jk.noa_fit(_s(K=400, pos=beta), max_iter=200, **PAPER)
    new = _s(K=300, pos=beta, seed=7)
    v = fit(new)
    assert np.mean(v[:, 0] + v[:, 2] - 1) == pytest.approx(0, abs=0.05)   # X0/X2 fixed
    assert np.mean(v[:, 1] + v[:, 3] - 1) < np.mean(new[:, 1] + new[:, 3] - 1) - 0.1  # X1/X3 worse
    four = jk.noa_fit(_s(K=400, pos=beta), objective="four", maps="position", max_iter=200, **PAPER)
    v = four(new, t1_first=np.array([True, False, True, False]))
    assert np.abs(v[:, 0] - v[:, 1]).mean() < 0.02  # positions agree: the bias is gone


def test_recovers_the_true_map_when_stopped_early_and_sharpens_later():
    beta = 1.0
    s = _s(K=500, tok=beta)
    truth = expit(logit(s[:, 0]) - beta)
    early = jk.noa_fit(s, max_iter=1, **PAPER)(s[:, 0])
    late = jk.noa_fit(s, max_iter=300, **PAPER)(s[:, 0])
    raw_err = np.abs(s[:, 0] - truth).mean()
    assert np.abs(early - truth).mean() < raw_err  # a step or so moves toward the truth
    assert np.mean((late < 0.02) | (late > 0.98)) > 0.9  # the spread term makes it hard 0/1


def test_stored_knots_stay_within_knot_tol_of_the_fitted_map():
    s = _s(K=300, tok=0.5)
    # after a few dozen steps the map has long flat and straight stretches to simplify
    exact = jk.noa_fit(s, max_iter=50, knot_tol=0.0, **PAPER)
    small = jk.noa_fit(s, max_iter=50, knot_tol=1e-6, **PAPER)
    x = np.linspace(0, 1, 20001)
    assert len(small.knots["shared"][0]) < len(exact.knots["shared"][0])
    assert np.abs(small(x) - exact(x)).max() <= 1e-6 + 1e-12
    xs, ys = _simplify(np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.5, 1.0]), 1e-9)
    assert xs.tolist() == [0.0, 1.0]  # collinear knots are dropped


def test_clear_errors():
    s = _s(K=10)
    s[3, 1] = np.nan
    with pytest.raises(ValueError, match="X0, X1, X2"):
        jk.noa_fit(s)
    jk.noa_fit(s, objective="l1", max_iter=2)  # X1 is not needed there
    with pytest.raises(ValueError, match="maps='position'"):
        jk.noa_fit(_s(), objective="l1", maps="position")


# ---- judgekit's default settings -------------------------------------------------------------

def _noisy(K, pos=0.0, tok=0.0, noise=0.3, seed=0):
    rng = np.random.default_rng(seed)
    delta = rng.normal(0, 2, K)
    e = rng.normal(0, noise, (K, 4))
    return np.column_stack([expit(delta + pos + tok + e[:, 0]), expit(delta - pos + tok + e[:, 1]),
                            expit(-delta + pos + tok - e[:, 2]), expit(-delta - pos + tok - e[:, 3])])


@pytest.mark.parametrize("tok", [0.0, 1.0, -0.7])
def test_default_map_is_the_smooth_inverse_of_a_logit_shift(tok):
    # a judge whose P(t1) is its unbiased probability shifted by tok logits: the right map is
    # σ(logit s − tok), and for tok = 0 the identity; the paper's settings give a step instead
    s = _s(K=600, tok=tok, seed=2)
    fit = jk.noa_fit(s)
    assert fit.settings == "judgekit" and fit.objective == "four" and fit.converged
    x = np.linspace(0.01, 0.99, 197)
    assert np.abs(fit(x) - expit(logit(x) - tok)).max() < 0.01
    assert np.all(np.diff(fit(x)) > 0)  # strictly increasing over the data: no flat steps
    paper = jk.noa_fit(s, objective="full", **PAPER)(x)
    assert np.mean((paper < 0.01) | (paper > 0.99)) > 0.8


def test_default_fit_is_the_minimum_of_its_loss_checked_with_scipy():
    # position bias with one shared map: the monotone constraints are active, so the projected
    # gradient part of the solver matters. The loss is written out here from its definition and
    # minimised over the same knots by scipy's SLSQP.
    s = _noisy(150, pos=1.0, seed=4)
    lam = 2.0
    fit = jk.noa_fit(s, objective="full", lam=lam, n_knots=20)
    assert fit.n_iter > 0 and fit.converged
    x, y = fit.knots["shared"]
    c = 2 * expit((logit(s[:, 0]) - logit(s[:, 2])) / 2) - 1

    def loss(inner):
        g = lambda v: np.interp(v, x, np.r_[0.0, inner, 1.0])  # noqa: E731
        v0, v1, v2 = g(s[:, 0]), g(s[:, 1]), g(s[:, 2])
        return np.sum((v0 + v2 - 1) ** 2 + (v0 - v1) ** 2 + lam * (v0 - v2 - c) ** 2)

    n = len(x) - 2
    cons = {"type": "ineq", "fun": lambda t: np.diff(t), "jac": lambda t: np.diff(np.eye(n), axis=0)}
    ref = minimize(loss, x[1:-1], method="SLSQP", bounds=[(0, 1)] * n, constraints=[cons],
                   options={"ftol": 1e-14, "maxiter": 1000})
    assert ref.success
    assert np.diff(ref.x).min() < 1e-6  # some constraint binds
    assert loss(y[1:-1]) <= ref.fun + 1e-9
    np.testing.assert_allclose(y[1:-1], ref.x, atol=2e-5)
    assert fit.loss[-1] == pytest.approx(loss(y[1:-1]), rel=1e-9)
    assert fit.loss[0] == pytest.approx(loss(x[1:-1]), rel=1e-9)  # the identity map


def test_anchored_terms_per_pair_target_the_id_symmetrised_probability():
    # for λ = 1 the ID and spread terms of one pair are minimised at
    # g(s0) = σ((logit s0 − logit s2) / 2) and g(s2) = 1 − g(s0)
    s = _noisy(5, tok=0.8, seed=1)
    terms = _anchored_terms("l1", s, 1.0)
    v0 = expit((logit(s[:, 0]) - logit(s[:, 2])) / 2)
    v = {0: v0, 2: 1 - v0}
    for coefs, target, _ in terms:
        np.testing.assert_allclose(sum(c * v[j] for j, c in coefs.items()), target, atol=1e-12)


def test_unbiased_noisy_judge_is_left_essentially_untouched_and_position_maps_fix_position_bias():
    s = _noisy(1000, seed=5)
    fit = jk.noa_fit(s)
    x = np.linspace(0.01, 0.99, 99)
    assert np.abs(fit(x) - x).max() < 0.02
    assert np.sqrt(np.mean((fit(s) - s) ** 2)) < 0.01
    pos = _noisy(1000, pos=1.0, seed=6)
    four = jk.noa_fit(pos, maps="position")
    first = np.array([True, False, True, False])
    new, truth = _noisy(500, pos=1.0, seed=7), _noisy(500, seed=7)  # same draws, no bias
    rmse = lambda a: np.sqrt(np.mean((a - truth) ** 2))  # noqa: E731
    assert rmse(four(new, t1_first=first)) < 0.01 and rmse(new) > 0.1


def test_default_settings_warn_when_stopped_early_and_reject_paper_only_options():
    s = _noisy(150, pos=1.0, seed=4)
    with pytest.warns(ConvergenceWarning, match="settings='judgekit'"):
        fit = jk.noa_fit(s, objective="full", max_iter=1, n_knots=20)
    assert not fit.converged
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jk.noa_fit(s, objective="full", n_knots=20).converged
    with pytest.raises(ValueError, match="lr applies to settings='paper'"):
        jk.noa_fit(s, lr=1.0)
    with pytest.raises(ValueError, match="n_knots applies to settings='judgekit'"):
        jk.noa_fit(s, n_knots=10, **PAPER)
    with pytest.raises(ValueError, match="settings"):
        jk.noa_fit(s, settings="fast")
    assert jk.noa_fit(s, n_knots=5).n_grid == 7  # 5 knots at quantiles, plus 0 and 1


def test_degenerate_samples_fit_without_error():
    # every probability exactly 0 or 1 (nothing between to fit) and every one equal to 0.5
    for s in (np.tile([[1.0, 1.0, 0.0, 0.0]], (4, 1)), np.full((5, 4), 0.5)):
        for maps in ("shared", "position"):
            fit = jk.noa_fit(s, maps=maps)
            assert fit.converged
            np.testing.assert_allclose(fit(np.array([0.0, 0.5, 1.0])), [0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="at least 2"):
        jk.noa_fit(np.full((1, 4), 0.5))


def test_paper_minibatch_is_one_seeded_epoch_of_32_and_stays_near_the_true_map():
    # the paper trains with mini-batches of 32 for one epoch: ceil(K / 32) steps, each on the loss
    # of its own 32 samples. Known truth: a token bias of +1 logit, whose inverse is
    # sigma(logit s - 1). One epoch stays near it; the full-batch reading collapses to a step.
    K = 600
    s = _s(K=K, tok=1.0, seed=3)
    mini = jk.noa_fit(s, settings="paper_minibatch")
    assert mini.n_iter == -(-K // 32) and mini.converged and mini.settings == "paper_minibatch"
    assert len(mini.loss) == mini.n_iter + 1
    grid = np.linspace(0.05, 0.95, 19)
    truth = expit(logit(grid) - 1.0)
    err_mini = np.sqrt(np.mean((mini(grid) - truth) ** 2))
    err_full = np.sqrt(np.mean((jk.noa_fit(s, settings="paper")(grid) - truth) ** 2))
    assert err_mini < 0.08 < 0.25 < err_full
    # seeded: the same seed gives the same map, another seed another shuffle
    again = jk.noa_fit(s, settings="paper_minibatch", seed=0)
    np.testing.assert_array_equal(mini(grid), again(grid))
    other = jk.noa_fit(s, settings="paper_minibatch", seed=1)
    assert not np.array_equal(mini(grid), other(grid))
    # a batch is the paper's loss on its own samples: its gradient is the full gradient's share
    problem = _Problem(s[:64], "full", "shared")
    d = problem.init()
    _, g_all = problem.loss_and_grad(d, 0.5)
    _, g_a = problem.loss_and_grad(d, 0.5, np.arange(32))
    _, g_b = problem.loss_and_grad(d, 0.5, np.arange(32, 64))
    np.testing.assert_allclose(g_a + g_b, g_all, atol=1e-12)
