"""The simulator draws what its documented model says, deterministically."""

import numpy as np
import pandas as pd
import pytest
from scipy import special

import judgekit as jk


def test_mu_solves_for_the_requested_accuracy():
    judge = jk.sim.SimJudge(accuracy=0.8, quality_scale=2.0)
    z = np.random.default_rng(0).standard_normal(2_000_000)
    assert special.expit(judge.mu + 2.0 * z).mean() == pytest.approx(0.8, abs=1e-3)


def test_unbiased_judge_is_as_accurate_as_asked_in_both_orders():
    _, _, truth = jk.sim.simulate_judgments(20_000, accuracy=0.7, seed=1)
    assert truth["acc_cr"] == pytest.approx(0.7, abs=0.01)
    assert truth["acc_rc"] == pytest.approx(0.7, abs=0.01)
    assert truth["position_bias"] == pytest.approx(0.0, abs=0.01)


def test_observed_accuracy_matches_the_flip_model():
    # p[Z=1] = p[X=1](1 - 2q) + q for each order (Wei et al. 2024, A.4)
    pairs, j, truth = jk.sim.simulate_judgments(
        20_000, accuracy=0.75, position_bias=0.7, flip_q=(0.05, 0.2), repeats=3, seed=2
    )
    j = j.merge(pairs[["pair_id", "label"]], on="pair_id")
    j["rel"] = jk.schema.label_order(j["order"], j["label"])
    j["z"] = j["verdict"] == j["label"]
    observed = j.groupby("rel")["z"].mean()
    for rel, q in (("cr", 0.05), ("rc", 0.2)):
        expected = truth["realized"][f"acc_{rel}"] * (1 - 2 * q) + q
        assert observed[rel] == pytest.approx(expected, abs=0.01)


def test_flips_are_independent_across_repeats_with_the_given_rate():
    _, j, _ = jk.sim.simulate_judgments(20_000, flip_q=0.15, repeats=2, seed=3)
    wide = j.pivot_table(index=["pair_id", "order"], columns="repeat", values="verdict", aggfunc="first")
    disagree = (wide[0] != wide[1]).mean()
    assert disagree == pytest.approx(2 * 0.15 * 0.85, abs=0.01)


def test_same_seed_same_draws_regardless_of_table_order():
    pairs = jk.sim.simulate_pairs(300, seed=4)
    a = jk.sim.simulate_judgments(pairs, flip_q=0.2, repeats=2, seed=9).judgments
    b = jk.sim.simulate_judgments(pairs.iloc[::-1], flip_q=0.2, repeats=2, seed=9).judgments
    key = ["pair_id", "order", "repeat"]
    pd.testing.assert_frame_equal(
        a.sort_values(key).reset_index(drop=True), b.sort_values(key).reset_index(drop=True)
    )
    c = jk.sim.simulate_judgments(pairs, flip_q=0.2, repeats=2, seed=10).judgments
    assert not a["verdict"].equals(c["verdict"])


def test_decide_from_texts_equals_table_simulation():
    pairs = jk.sim.simulate_pairs(50, seed=5)
    judge = jk.sim.SimJudge(position_bias=0.4, flip_q=0.1, seed=7)
    j = jk.sim.simulate_judgments(pairs, judge=judge, orders=("ba",), repeats=2)
    one = j.judgments[j.judgments["repeat"] == 1].reset_index(drop=True)
    d = judge.decide(pairs["prompt"], pairs["response_b"], pairs["response_a"],
                     first_is_preferred=(pairs["label"] == "b").tolist(), repeat=1)
    expected = np.where(d["choice"] == "first", "b", "a")
    assert one["verdict"].tolist() == expected.tolist()


def test_token_bias_follows_the_id_not_the_position():
    _, j, _ = jk.sim.simulate_judgments(5_000, token_bias=1.5, id_swap=(False, True), seed=6)
    p_first = np.where(j["order"] == "ab", j["p_a"], 1 - j["p_a"])
    by_swap = pd.Series(p_first).groupby(j["id_swap"].to_numpy()).mean()
    assert by_swap[False] > 0.6 > 0.4 > by_swap[True]


def test_ties_appear_at_the_requested_rate():
    _, j, _ = jk.sim.simulate_judgments(20_000, tie_rate=0.2, seed=8)
    assert (j["verdict"] == "tie").mean() == pytest.approx(0.2, abs=0.01)


@pytest.mark.parametrize("bad", [{"accuracy": 1.0}, {"flip_q": 0.6}, {"tie_rate": -0.1},
                                 {"flip_q": {"xx": 0.1}}])
def test_bad_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        jk.sim.SimJudge(**bad)


def test_bad_orders_and_repeats():
    with pytest.raises(ValueError, match="orders"):
        jk.sim.simulate_judgments(10, orders=("ab", "xy"))
    with pytest.raises(ValueError, match="repeats"):
        jk.sim.simulate_judgments(10, repeats=0)
