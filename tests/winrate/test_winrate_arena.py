"""Arena-Hard scores, Bradley-Terry ratings and style control, checked against statsmodels,
scipy, a transcription of the published formulas, and simulations of known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import optimize, special, stats

import judgekit as jk
from judgekit.winrate import _bt
from judgekit.winrate.style import markdown_counts, style_matrix


def _tables(rows: list[tuple[str, str, str]], judge: str = "j") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(model_a, model_b, verdict) games, each its own pair."""
    pairs = pd.DataFrame({"pair_id": [f"p{i}" for i in range(len(rows))], "prompt": "q",
                          "response_a": "x", "response_b": "y",
                          "model_a": [r[0] for r in rows], "model_b": [r[1] for r in rows]})
    judgments = pd.DataFrame({"pair_id": pairs["pair_id"], "judge": judge, "order": "ab",
                              "verdict": [r[2] for r in rows]})
    return pairs, judgments


def _random_games(n: int, models: list[str], truth: np.ndarray, seed: int, ties: float = 0.2):
    gen = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        i, j = gen.choice(len(models), size=2, replace=False)
        p = special.expit(np.log(10) * (truth[i] - truth[j]))
        u = gen.random()
        verdict = "tie" if u < ties else ("a" if gen.random() < p else "b")
        rows.append((models[i], models[j], verdict))
    return rows


def test_bradley_terry_equals_statsmodels_logit_on_the_doubled_battles():
    models = ["m0", "m1", "m2", "m3", "m4"]
    rows = _random_games(600, models, np.array([0, .2, -.1, .4, .1]), seed=0)
    pairs, judgments = _tables(rows)
    got = jk.bradley_terry(judgments, pairs, anchor="m0", n_boot=0).set_index("model")["rating"]
    # the published construction: every battle twice, a tie once won by each side; ±ln(10)
    X, y = [], []
    for a, b, v in rows:
        for copy in range(2):
            x = np.zeros(len(models) - 1)
            if a != "m0":
                x[models.index(a) - 1] += np.log(10)
            if b != "m0":
                x[models.index(b) - 1] -= np.log(10)
            X.append(x)
            y.append(1.0 if v == "a" or (v == "tie" and copy == 0) else 0.0)
    fit = sm.Logit(np.array(y), np.array(X)).fit(disp=0, tol=1e-12)
    want = pd.Series(1000 + 400 * np.r_[0.0, fit.params], index=models)
    np.testing.assert_allclose(got[models].to_numpy(), want.to_numpy(), atol=1e-6)


def test_bradley_terry_recovers_known_ratings_with_honest_intervals():
    models = [f"m{i}" for i in range(6)]
    truth = np.array([0.0, 0.15, 0.3, -0.2, 0.5, -0.35])       # log10 odds: 400 * truth Elo
    rows = _random_games(6000, models, truth, seed=4, ties=0.0)  # the BT model has no ties
    pairs, judgments = _tables(rows)
    bt = jk.bradley_terry(judgments, pairs, anchor="m0", n_boot=200, seed=2).set_index("model")
    bt = bt.loc[models]
    true_rating = pd.Series(1000 + 400 * truth, index=models)
    err = (bt["rating"] - true_rating).abs()
    assert (err < 3 * bt["se"].clip(lower=1)).all()
    inside = ((bt["ci_low"] <= true_rating) & (true_rating <= bt["ci_high"])).iloc[1:]
    assert inside.sum() >= 4  # 95% intervals: 5 free models, expect ~4.75 inside
    assert bt["rank"].loc["m4"] == 1 and bt["rank"].loc["m5"] == 6


def test_arena_hard_score_is_the_bradley_terry_fit_of_the_weighted_battles():
    sim = jk.sim.simulate_arena_hard(4, 120, seed=5)
    scores = jk.arena_hard_scores(sim.judgments, sim.pairs, n_boot=0).set_index("model")["score"]
    # the published route: battles (a significant win 3 times), BT by logistic regression,
    # then the predicted win rate against the baseline
    bt = jk.bradley_terry(sim.judgments, sim.pairs, weight=3, anchor="baseline", n_boot=0)
    elo = bt.set_index("model")["rating"]
    predicted = 100 / (1 + 10 ** ((elo["baseline"] - elo) / 400))
    np.testing.assert_allclose(scores[predicted.index], predicted, atol=1e-8)


def test_labels_and_missing_games_as_each_version_counts_them():
    pairs = pd.DataFrame({"pair_id": ["q1", "q2"], "prompt": "q", "response_a": "base",
                          "response_b": "mine", "model_a": "base", "model_b": "m"})
    judgments = pd.DataFrame({
        "pair_id": ["q1", "q1", "q2", "q2"], "judge": "j", "order": ["ab", "ba", "ab", "ba"],
        "score": ["B<A", "A>>B", "A=B", None],        # game 2, A>>B: the model won significantly
        "margin": [1, -2, 0, None], "verdict": ["a", "b", "tie", None]})
    with pytest.warns(jk.MetricWarning, match=r"labels \{'B<A': 1\} are left out"):
        v01 = jk.arena_hard_scores(judgments, pairs, n_boot=0).set_index("model")
    # v0.1: B<A is not one of its labels, the missing game is left out: 3 wins + a tie
    assert v01.loc["m", "score"] == pytest.approx(100 * 3.5 / 4) and v01.loc["m", "n_dropped"] == 2
    v2 = jk.arena_hard_scores(judgments, pairs, version="v2.0", n_boot=0).set_index("model")
    # v2.0: every label counts, but q2 loses both games (one has no label)
    assert v2.loc["m", "score"] == pytest.approx(100 * 3 / 4) and v2.loc["m", "n_dropped"] == 2
    assert v2.loc["m", "n_battles"] == 4


def test_bootstrap_resamples_battles_and_matches_the_binomial_spread():
    pairs, judgments = _tables([("base", "m", "b")] * 300 + [("base", "m", "a")] * 700)
    s = jk.arena_hard_scores(judgments, pairs, n_boot=2000, seed=1).set_index("model").loc["m"]
    assert s["score"] == pytest.approx(30.0)
    assert s["se"] == pytest.approx(100 * np.sqrt(0.3 * 0.7 / 1000), rel=0.1)
    assert s["ci_low"] < 30 < s["ci_high"]


def test_style_features_follow_the_published_normalisation():
    gen = np.random.default_rng(0)
    a = gen.integers(0, 50, size=(200, 4)).astype(float)
    b = gen.integers(0, 50, size=(200, 4)).astype(float)
    w = gen.integers(1, 4, size=200).astype(float)
    z, kept, equal = style_matrix(a, b, w, ("length", "header", "list", "bold"), who="t")
    # transcription of construct_style_matrices: rows repeated by weight, (a-b)/(a+b+1),
    # centred and divided by the population sd over the (repeated) battles
    rep = np.repeat(np.arange(200), w.astype(int))
    d = ((a - b) / (a + b + 1))[rep]
    want = (d - d.mean(axis=0)) / d.std(axis=0)
    np.testing.assert_allclose(z[rep], want, atol=1e-12)
    assert kept == ["length", "header", "list", "bold"]
    np.testing.assert_allclose(equal, -d.mean(axis=0) / d.std(axis=0))  # z where a = b


def test_markdown_is_counted_as_the_published_metadata_counts_it():
    text = ("# Title\n## Part\n####### not a header\n\n1. **one**\n2. two\n   - nested\n* star\n"
            "__under__ and **bold**\n```python\n# comment\n- not a list\n```\n")
    assert markdown_counts(text) == (2, 4, 3)
    assert markdown_counts("plain text") == (0, 0, 0)


def test_style_controlled_fit_equals_the_penalised_objective_minimised_by_scipy():
    sim = jk.sim.simulate_arena_hard(3, 80, seed=2)
    feats = jk.style_features(sim.pairs)
    pairs, judgments = sim.pairs, sim.judgments
    got = jk.bradley_terry(judgments, pairs, control="length", n_boot=0)
    # sklearn's LogisticRegression(C=1) objective on the published doubled battles:
    # sum of log losses + ½‖coef‖², here with the length feature standardised as published
    merged = judgments.merge(pairs[["pair_id", "model_a", "model_b"]], on="pair_id")
    merged = merged.merge(feats, on="pair_id")
    models = sorted(set(merged["model_a"]) | set(merged["model_b"]))
    y = np.where(merged["verdict"] == "a", 1.0, np.where(merged["verdict"] == "b", 0.0, 0.5))
    d = (merged["length_a"] - merged["length_b"]) / (merged["length_a"] + merged["length_b"] + 1)
    zz = ((d - d.mean()) / d.std(ddof=0)).to_numpy()
    ia = np.array([models.index(m) for m in merged["model_a"]])
    ib = np.array([models.index(m) for m in merged["model_b"]])

    def loss(theta):
        eta = np.log(10) * (theta[ia] - theta[ib]) + theta[-1] * zz
        # doubled: a non-tie twice with its label, a tie once each way
        ll = 2 * (np.logaddexp(0, eta) - y * eta)
        return ll.sum() + 0.5 * theta @ theta

    best = optimize.minimize(loss, np.zeros(len(models) + 1), method="BFGS",
                             options={"gtol": 1e-9}).x
    rating = got.set_index("model")["rating"]
    np.testing.assert_allclose((rating[models] - 1000) / 400, best[:-1], atol=1e-5)
    assert got["coef_length"].iloc[0] == pytest.approx(best[-1], abs=1e-5)


def test_fitter_holds_the_reference_and_refuses_disconnected_battles():
    ia, ib = np.array([0, 0, 2]), np.array([1, 1, 3])
    with pytest.raises(ValueError, match="split the models into 2 groups"):
        _bt.check_connected(ia, ib, np.ones(3), ["a", "b", "c", "d"], "judge 'j'")


def test_style_control_recovers_quality_when_the_judge_rewards_style():
    sim = jk.sim.simulate_arena_hard(10, 300, length_effect=1.5, markdown_effect=0.8, seed=3)
    boards = jk.arena_hard_scores(sim.judgments, sim.pairs, control=[None, "style"], n_boot=0)
    wide = boards.pivot(index="model", columns="control", values="score").drop("baseline")
    truth = sim.truth.set_index("model")["quality"]
    rho_raw = stats.spearmanr(wide["none"], truth[wide.index]).statistic
    rho_style = stats.spearmanr(wide["style"], truth[wide.index]).statistic
    assert rho_style == pytest.approx(1.0) and rho_raw < rho_style
    bt = jk.bradley_terry(sim.judgments, sim.pairs, weight=3, control="style", n_boot=0)
    assert bt["coef_length"].iloc[0] > 0.2 and bt["coef_list"].iloc[0] > 0.1
    # a style-blind judge: the controlled board stays where the raw one is
    blind = jk.sim.simulate_arena_hard(10, 300, length_effect=0, markdown_effect=0, seed=3)
    b = jk.arena_hard_scores(blind.judgments, blind.pairs, control=[None, "style"], n_boot=0)
    w = b.pivot(index="model", columns="control", values="score")
    assert (w["style"] - w["none"]).abs().max() < 2.5


def test_heavy_tailed_lengths_are_named_and_do_not_move_the_controlled_score():
    import warnings

    sim = jk.sim.simulate_arena_hard(3, 400, length_effect=2.0, markdown_effect=0, seed=7)
    clean = sim.pairs.assign(len_a=sim.pairs["response_a"].str.len(),
                             len_b=sim.pairs["response_b"].str.len())
    tails = clean.copy()
    tails.loc[tails.index[tails["model_b"] == "model-02"][:8], "len_b"] = 80_000
    with warnings.catch_warnings():
        warnings.simplefilter("error", jk.MetricWarning)
        before = jk.lc_win_rates(sim.judgments, clean, n_boot=0).set_index("model")
    with pytest.warns(jk.MetricWarning, match=r"heavy-tailed length differences for model-02 "
                                              r"\(sd 10,9\d\d vs robust scale"):
        after = jk.lc_win_rates(sim.judgments, tails, n_boot=0).set_index("model")
    assert after.loc["model-02", "length_scale"] > 10 * before.loc["model-02", "length_scale"]

    def controlled(pairs):
        s = jk.arena_hard_scores(sim.judgments, pairs, control="length", n_boot=0)
        return s.set_index("model")["score"]["model-02"]

    assert controlled(tails) == pytest.approx(controlled(clean), abs=0.5)


def test_a_model_against_itself_adds_nothing_to_the_ratings_and_newton_converges():
    import warnings

    models = ["m0", "m1", "m2"]
    rows = _random_games(300, models, np.array([0.0, 0.3, -0.2]), seed=9)
    pairs, judgments = _tables(rows + [("m1", "m1", "a")] * 40)
    base_pairs, base_j = _tables(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error", jk.ConvergenceWarning)
        got = jk.bradley_terry(judgments, pairs, anchor="m0", n_boot=0).set_index("model")["rating"]
    want = jk.bradley_terry(base_j, base_pairs, anchor="m0", n_boot=0).set_index("model")["rating"]
    np.testing.assert_allclose(got[models], want[models], atol=1e-8)
    # Newton's quadratic convergence: a handful of steps, however many self-battles there are
    ia = np.array([0, 1, 1, 2, 1] * 50)
    ib = np.array([1, 2, 0, 0, 1] * 50)
    y = np.array([1.0, 0.0, 0.5, 0.5, 1.0] * 50)
    _, ok = _bt.fit(ia, ib, y, np.ones(len(y)), 3, max_iter=10)
    assert ok
