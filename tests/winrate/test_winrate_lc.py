"""Length-controlled win rates on simulated leaderboards whose true parameters are known."""

import numpy as np
import pandas as pd
import pytest
from scipy import special

import judgekit as jk


@pytest.fixture(scope="module")
def soft():
    """A judge that reports the GLM's probability exactly: the fit must recover the truth."""
    return jk.sim.simulate_leaderboard(10, 300, soft=True, seed=11)


@pytest.fixture(scope="module")
def binary():
    """Verdicts drawn from the GLM (p_a missing): recovery within the sampling error."""
    sim = jk.sim.simulate_leaderboard(16, 300, seed=5)
    diff = jk.instruction_difficulty(sim.judgments, sim.pairs)
    lb = jk.lc_win_rates(sim.judgments, sim.pairs, difficulty=diff, n_boot=100, seed=1)
    return sim, diff, lb


def test_soft_labels_recover_the_true_lc_win_rates_and_length_slopes(soft):
    lb = jk.lc_win_rates(soft.judgments, soft.pairs, n_boot=0).set_index("model")
    err = lb.loc[soft.truth.index, "lc_win_rate"] - soft.truth["lc_win_rate"]
    assert err.abs().max() < 0.3
    np.testing.assert_allclose(lb.loc[soft.truth.index, "phi"], soft.truth["phi"], atol=0.05)
    np.testing.assert_allclose(lb.loc[soft.truth.index, "length_scale"],
                               soft.truth["length_scale"], rtol=1e-9)
    # the raw win rate is what the judge said, length bias included
    assert (lb.loc[soft.truth.index, "win_rate"] - soft.truth["win_rate"]).abs().max() < 1e-9


def test_joint_fit_recovers_the_instruction_difficulties(soft):
    d = jk.instruction_difficulty(soft.judgments, soft.pairs)
    assert d.gamma.index.name == "instruction_id"
    assert d.gamma.corr(soft.gamma) > 0.999
    assert d.length_prior == pytest.approx(1.5, abs=0.05)
    assert set(d.cv.columns) == {"l2", "log_loss"} and d.l2 in set(d.cv["l2"])
    assert list(d.terms.columns) == ["theta", "phi", "length_scale"]


def test_binary_verdicts_recover_the_truth_within_the_bootstrap_error(binary):
    sim, _, lb = binary
    lb = lb.set_index("model").loc[sim.truth.index]
    z = (lb["lc_win_rate"] - sim.truth["lc_win_rate"]) / lb["lc_se"]
    assert z.abs().mean() < 1.3
    assert z.abs().max() < 3.0
    inside = (lb["lc_ci_low"] <= sim.truth["lc_win_rate"]) & (sim.truth["lc_win_rate"] <= lb["lc_ci_high"])
    assert inside.mean() >= 0.8


def test_bootstrap_se_matches_the_spread_over_replicated_leaderboards_and_sem_fitted_does_not():
    # 16 independent leaderboards from the same parameters (new instructions, lengths, verdicts);
    # strengths fixed so each fit is cheap
    kw = dict(difficulty_l2=1.0, l2=0.1, n_boot=50)
    models = ["model_1", "model_2", "model_4"]
    lcs, ses, sems = [], [], []
    for rep in range(16):
        sim = jk.sim.simulate_leaderboard(6, 200, theta=[-2, -1.5, -1, -0.5, 0, 0.5], seed=100 + rep)
        lb = jk.lc_win_rates(sim.judgments, sim.pairs, seed=rep, **kw).set_index("model")
        lcs.append(lb.loc[models, "lc_win_rate"].to_numpy())
        ses.append(lb.loc[models, "lc_se"].to_numpy())
        sems.append(lb.loc[models, "sem_fitted"].to_numpy())
    spread = np.std(lcs, axis=0, ddof=1)
    assert 0.7 < np.mean(np.mean(ses, axis=0) / spread) < 1.4
    # the reference implementation's SEM of fitted values is not a sampling error: about half
    assert np.mean(np.mean(sems, axis=0) / spread) < 0.7


def test_identity_a_model_judged_equal_to_the_baseline_gets_exactly_50(soft):
    pairs, judg = soft.pairs, soft.judgments
    base = pairs[pairs["model_b"] == "model_0"].copy()
    clone = base.assign(model_b="clone", response_b=base["response_a"],
                        pair_id="clone/" + base["instruction_id"])
    tie = pd.DataFrame({"pair_id": clone["pair_id"], "judge": "sim-judge", "order": "ab",
                        "repeat": 0, "verdict": "tie", "p_a": 0.5})
    lb = jk.lc_win_rates(pd.concat([judg, tie]), pd.concat([pairs, clone]), n_boot=20)
    row = lb.set_index("model").loc["clone"]
    assert row["lc_win_rate"] == 50.0
    assert (row["theta"], row["psi"]) == (0.0, 0.0)
    # with no length difference φ has no data and sits at the centre of its penalty
    assert row["phi"] == pytest.approx(row["length_prior"] * 20 / (20 + row["l2"]))
    assert row["lc_se"] == 0.0
    base_row = lb.set_index("model").loc["baseline"]
    assert (base_row["lc_win_rate"], base_row["theta"]) == (50.0, 0.0)


def test_symmetry_swapping_model_and_baseline_gives_100_minus_the_lc(binary):
    sim, diff, lb = binary
    pairs = sim.pairs[sim.pairs["model_b"] == "model_7"]
    judg = sim.judgments[sim.judgments["pair_id"].isin(pairs["pair_id"])]
    swapped = pairs.assign(model_a=pairs["model_b"], model_b=pairs["model_a"],
                           response_a=pairs["response_b"], response_b=pairs["response_a"])
    judg_swapped = judg.assign(verdict=judg["verdict"].map({"a": "b", "b": "a", "tie": "tie"}))
    forward = jk.lc_win_rates(judg, pairs, difficulty=diff, n_boot=0).set_index("model")
    backward = jk.lc_win_rates(judg_swapped, swapped, baseline="model_7", difficulty=diff,
                               n_boot=0).set_index("model")
    assert forward.loc["model_7", "lc_win_rate"] + backward.loc["baseline", "lc_win_rate"] == \
        pytest.approx(100.0, abs=1e-9)
    assert backward.loc["baseline", "theta"] == pytest.approx(-forward.loc["model_7", "theta"], abs=1e-9)
    assert backward.loc["baseline", "phi"] == pytest.approx(forward.loc["model_7", "phi"], abs=1e-9)
    # the fitted leaderboard row equals the fresh fit of the same model alone
    assert forward.loc["model_7", "lc_win_rate"] == pytest.approx(
        lb.set_index("model").loc["model_7", "lc_win_rate"], abs=1e-10)


def test_adding_models_does_not_change_the_others_once_gamma_is_fixed(binary):
    sim, diff, lb = binary
    keep = sim.pairs["model_b"].isin(["model_1", "model_9"])
    few = jk.lc_win_rates(sim.judgments[keep.to_numpy()], sim.pairs[keep], difficulty=diff,
                          n_boot=100, seed=1).set_index("model")
    full = lb.set_index("model")
    for m in ("model_1", "model_9"):
        for col in ("lc_win_rate", "theta", "phi", "psi", "l2", "sem_fitted"):
            assert few.loc[m, col] == pytest.approx(full.loc[m, col], abs=1e-10), (m, col)


def test_predicted_matrix_is_antisymmetric_and_its_baseline_column_is_the_leaderboard(binary):
    sim, diff, lb = binary
    long = jk.lc_win_rate_matrix(lb, diff)
    mat = long.pivot(index="model", columns="versus", values="lc_win_rate")
    assert list(long.columns) == ["model", "versus", "lc_win_rate"]
    np.testing.assert_allclose(mat.to_numpy() + mat.to_numpy().T, 100.0, atol=1e-12)
    assert (np.diag(mat.to_numpy()) == 50.0).all()
    col = mat["baseline"].drop("baseline")
    np.testing.assert_allclose(col, lb.set_index("model").loc[col.index, "lc_win_rate"], atol=1e-9)
    # hand formula for one cell
    t = lb.set_index("model")
    cell = 100 * special.expit(t.loc["model_3", "theta"] - t.loc["model_8", "theta"]
                               + (t.loc["model_3", "psi"] - t.loc["model_8", "psi"]) * diff.gamma).mean()
    assert mat.loc["model_3", "model_8"] == pytest.approx(cell, abs=1e-12)
    sub = jk.lc_win_rate_matrix(lb, diff, models=["model_8", "model_3"])
    assert sub["model"].tolist() == ["model_8", "model_8", "model_3", "model_3"]
    with pytest.raises(ValueError, match="not in the leaderboard"):
        jk.lc_win_rate_matrix(lb, diff, models=["nope"])


def test_length_penalty_pulls_phi_to_its_centre(soft):
    d = jk.instruction_difficulty(soft.judgments, soft.pairs, l2=1.0)
    hard = jk.lc_win_rates(soft.judgments, soft.pairs, difficulty=d, n_boot=0,
                           length_penalty=1e7, length_prior=0.25).set_index("model")
    assert np.allclose(hard.loc[soft.truth.index, "phi"], 0.25, atol=1e-3)
    assert (hard["length_prior"] == 0.25).all() and (hard["length_penalty"] == 1e7).all()
    free = jk.lc_win_rates(soft.judgments, soft.pairs, difficulty=d, n_boot=0, length_penalty=0,
                           l2=0.0).set_index("model")
    np.testing.assert_allclose(free.loc[soft.truth.index, "phi"], soft.truth["phi"], atol=0.05)


def test_cross_validation_picks_a_strength_from_the_grid_per_model(binary):
    _, _, lb = binary
    fitted = lb[lb["model"] != "baseline"]
    assert set(fitted["l2"]) <= set(jk.winrate.lc.L2_GRID)
    assert fitted["converged"].all()
    assert (fitted["formula"] == jk.winrate.lc.FORMULA_NAME).all()


def test_row_order_does_not_matter(soft):
    d = jk.instruction_difficulty(soft.judgments, soft.pairs, l2=1.0)
    a = jk.lc_win_rates(soft.judgments, soft.pairs, difficulty=d, n_boot=30)
    b = jk.lc_win_rates(soft.judgments.sample(frac=1, random_state=1),
                        soft.pairs.sample(frac=1, random_state=2), difficulty=d, n_boot=30)
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9)


def test_refitting_gamma_in_the_bootstrap_gives_a_similar_standard_error():
    sim = jk.sim.simulate_leaderboard(6, 200, seed=8)
    kw = dict(difficulty_l2=1.0, l2=0.1, n_boot=30, seed=3)
    fixed = jk.lc_win_rates(sim.judgments, sim.pairs, **kw).set_index("model")
    refit = jk.lc_win_rates(sim.judgments, sim.pairs, bootstrap_difficulty=True, **kw).set_index("model")
    ratio = refit.loc[sim.truth.index, "lc_se"] / fixed.loc[sim.truth.index, "lc_se"]
    assert ratio.between(0.6, 1.8).all()


def test_clear_errors(soft):
    pairs, judg = soft.pairs, soft.judgments
    d = jk.instruction_difficulty(judg, pairs, l2=1.0)
    partial = jk.InstructionDifficulty(gamma=d.gamma.iloc[:10], length_prior=1.0, l2=1.0)
    with pytest.raises(ValueError, match="has no γ for 290 instruction"):
        jk.lc_win_rates(judg, pairs, difficulty=partial, n_boot=0)
    two = pd.concat([judg, judg.assign(judge="other")])
    with pytest.raises(ValueError, match="several judges"):
        jk.lc_win_rates(two, pairs, difficulty=d, n_boot=0)
    with pytest.raises(ValueError, match="no entry for judge"):
        jk.lc_win_rates(two, pairs, difficulty={"sim-judge": d}, n_boot=0)
    with pytest.raises(ValueError, match="several judges"):
        jk.instruction_difficulty(two, pairs)
    with pytest.raises(ValueError, match="length_penalty"):
        jk.lc_win_rates(judg, pairs, difficulty=d, length_penalty=-1)
    with pytest.raises(ValueError, match="l2 must be"):
        jk.lc_win_rates(judg, pairs, difficulty=d, l2="aic")
    with pytest.raises(ValueError, match="l2_grid"):
        jk.lc_win_rates(judg, pairs, difficulty=d, l2_grid=[-1.0])


def test_leaderboard_ln_and_lb_columns_are_the_tidy_functions(soft):
    lb = jk.lc_win_rates(soft.judgments, soft.pairs, n_boot=0, difficulty_l2=1.0).set_index("model")
    ln = jk.length_normalized_win_rates(soft.judgments, soft.pairs, n_boot=0).set_index("model")
    bal = jk.length_balanced_win_rates(soft.judgments, soft.pairs, n_boot=0).set_index("model")
    np.testing.assert_allclose(lb.loc[ln.index, "ln_win_rate"], ln["estimate"], rtol=1e-12)
    np.testing.assert_allclose(lb.loc[bal.index, "lb_win_rate"], bal["estimate"], rtol=1e-12)


def test_two_judges_are_fitted_separately(soft):
    pairs, judg = soft.pairs, soft.judgments
    other = judg.assign(judge="other")
    lb = jk.lc_win_rates(pd.concat([judg, other]), pairs, n_boot=0, difficulty_l2=1.0)
    by = lb.pivot(index="model", columns="judge", values="lc_win_rate")
    np.testing.assert_allclose(by["other"], by["sim-judge"], atol=1e-12)
