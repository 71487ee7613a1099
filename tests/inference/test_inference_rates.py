"""ppi_win_rates / ppi_compare on the two tables: predictions, ties, models, labelling checks,
weighting, and coverage of a known truth."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.exceptions import MetricWarning, NonRandomLabelsError
from judgekit.sim.labels import coverage_study


def _tables():
    pairs = pd.DataFrame({
        "pair_id": ["p1", "p2", "p3", "p4", "p5", "p6"],
        "prompt": ["q1", "q1", "q2", "q2", "q3", "q3"], "response_a": "x", "response_b": "yy",
        "label": ["a", "b", "tie", None, None, None],
        "model_a": ["m1", "m2", "m1", "m1", "m2", "m3"], "model_b": ["m2", "m1", "m3", "m2", "m3", "m1"],
    })
    rows = []
    for pid, (v_ab, v_ba) in zip(pairs["pair_id"], [("a", "a"), ("b", "a"), ("tie", "b"),
                                                     ("a", "b"), ("b", None), ("a", "a")]):
        rows += [{"pair_id": pid, "judge": "j", "order": "ab", "repeat": 0, "verdict": v_ab},
                 {"pair_id": pid, "judge": "j", "order": "ba", "repeat": 0, "verdict": v_ba}]
    return pairs, pd.DataFrame(rows)  # no p_a column at all: read defensively


def test_swap_averaged_prediction_ties_and_model_perspective():
    pairs, judgments = _tables()
    out = jk.ppi_win_rates(judgments, pairs, methods=["classical", "judge_only"], check_labels=False)
    row = out.set_index("method")
    # response a: human outcomes 1, 0, 1/2; judge: 1, 1/2, 1/4, 1/2, 0 (invalid order skipped), 1
    assert row.loc["classical", "estimate"] == pytest.approx(0.5)
    assert row.loc["judge_only", "estimate"] == pytest.approx((1 + 0.5 + 0.25 + 0.5 + 0 + 1) / 6)
    m1 = jk.ppi_win_rates(judgments, pairs, models="m1", methods=["classical", "judge_only"],
                          check_labels=False).set_index("method")
    # m1's pairs: p1 (a side, won), p2 (b side, won), p3 (a, tie), p4 (a), p6 (b)
    assert m1.loc["classical", "estimate"] == pytest.approx((1 + 1 + 0.5) / 3)
    assert m1.loc["judge_only", "estimate"] == pytest.approx((1 + 0.5 + 0.25 + 0.5 + 0) / 5)
    assert m1.loc["classical", "n_labelled"] == 3 and m1.loc["classical", "n_unlabelled"] == 2
    tie = jk.ppi_win_rates(judgments, pairs, target="tie", methods=["classical", "judge_only"],
                           check_labels=False).set_index("method")
    assert tie.loc["classical", "estimate"] == pytest.approx(1 / 3)
    assert tie.loc["judge_only", "estimate"] == pytest.approx(0.5 / 6)  # p3: tie in one order


def test_prediction_from_p_a_where_it_exists():
    pairs, judgments = _tables()
    judgments["p_a"] = np.where(judgments["pair_id"] == "p1", 0.8, np.nan)
    auto = jk.ppi_win_rates(judgments, pairs, methods=["judge_only"], check_labels=False)
    verdict = jk.ppi_win_rates(judgments, pairs, methods=["judge_only"], prediction="verdict",
                               check_labels=False)
    assert auto["estimate"].iloc[0] - verdict["estimate"].iloc[0] == pytest.approx((0.8 - 1) / 6)


def test_bad_input_is_named():
    pairs, judgments = _tables()
    with pytest.raises(ValueError, match="no 'label' column"):
        jk.ppi_win_rates(judgments, pairs.drop(columns="label"))
    with pytest.raises(ValueError, match="target must be"):
        jk.ppi_win_rates(judgments, pairs, target="winner")
    with pytest.raises(ValueError, match="not in pairs' model_a"):
        jk.ppi_win_rates(judgments, pairs, models="m9")
    with pytest.raises(ValueError, match="strata: column 'nope'"):
        jk.ppi_win_rates(judgments, pairs, strata="nope")
    with pytest.raises(ValueError, match="sampling_prob must be a probability"):
        jk.ppi_win_rates(judgments, pairs, sampling_prob=pd.Series({"p1": 0.5}))
    with pytest.raises(ValueError, match="no pair is labelled in stratum 'q3'"):
        jk.ppi_win_rates(judgments, pairs, strata="prompt", check_labels=False)


def _leaderboard(n=3000, seed=3, models=("m0", "m1", "m2", "m3")):
    """Labelled pairs of several models against a baseline, three models per instruction."""
    pairs, judgments, _ = jk.sim.simulate_judgments(n, accuracy=0.75, position_bias=0.2, seed=seed)
    rng = np.random.default_rng(seed)
    model = rng.choice(list(models), n)
    side = rng.random(n) < 0.5
    pairs = pairs.assign(model_a=np.where(side, model, "base"), model_b=np.where(side, "base", model),
                         model=model, instruction_id=(np.arange(n) // 3).astype(str))
    return pairs, judgments


# ------------------------------------------------------------------ labels missing not at random
@pytest.fixture(scope="module")
def sim():
    pairs, judgments, _ = jk.sim.simulate_judgments(3000, accuracy=0.75, position_bias=0.3, seed=11)
    return pairs, judgments


def test_random_labels_pass_the_check(sim):
    pairs, judgments = sim
    rng = np.random.default_rng(0)
    refused = 0
    for _ in range(40):
        keep = rng.random(len(pairs)) < 0.1
        try:
            jk.ppi_win_rates(judgments, pairs.assign(label=pairs["label"].where(keep)))
        except NonRandomLabelsError:
            refused += 1
    assert refused <= 1


def test_hard_cases_only_are_refused_with_a_clear_message(sim):
    pairs, judgments = sim
    f = judgments.groupby("pair_id")["p_a"].mean()
    hard = pairs["pair_id"].map((f - 0.5).abs() < 0.15)
    with pytest.raises(NonRandomLabelsError) as err:
        jk.ppi_win_rates(judgments, pairs.assign(label=pairs["label"].where(hard)))
    msg = str(err.value)
    assert "judge confidence" in msg and "sampling_prob=" in msg and "strata=" in msg
    assert "do not look like a random sample" in msg


def test_one_model_labelled_is_refused_and_strata_fix_it():
    pairs, judgments = _leaderboard()
    rng = np.random.default_rng(1)
    # m0 labelled at 40%, the others at 2%: not random overall, random within models
    rate = np.where(pairs["model"] == "m0", 0.4, 0.02)
    labelled = pairs.assign(label=pairs["label"].where(rng.random(len(pairs)) < rate))
    with pytest.raises(NonRandomLabelsError, match="model_a"):
        jk.ppi_win_rates(judgments, labelled, target="a")
    out = jk.ppi_win_rates(judgments, labelled, target="a", strata="model")
    truth = (pairs["label"] == "a").mean()
    row = out.set_index("method").loc["ppi++"]
    assert row.ci_low - 0.02 < truth < row.ci_high + 0.02


def test_inverse_probability_weights_remove_the_bias_of_hard_case_labelling():
    """Pairs the judge gave to a labelled 3x as often: the unweighted estimate is biased;
    weighting by the known probabilities recovers the truth (coverage over replications)."""
    from judgekit.sim.labels import simulate

    rng = np.random.default_rng(2)
    hits_w, hits_u, truth = [], [], 0.6
    for _ in range(300):
        y, f = simulate(3000, win_rate=truth, accuracy=0.8, asymmetry=0.05, flip_q=0.1,
                        repeats=2, rng=rng)
        pi = np.where(f > 0.5, 0.3, 0.1)
        ys = np.where(rng.random(3000) < pi, y, np.nan)
        w = jk.ppi_mean(ys, f, sampling_prob=pi, methods=["ppi++"]).iloc[0]
        u = jk.ppi_mean(ys, f, methods=["classical"]).iloc[0]
        hits_w.append(w.ci_low <= truth <= w.ci_high)
        hits_u.append(u.ci_low <= truth <= u.ci_high)
    assert 0.92 <= np.mean(hits_w) <= 0.98
    assert np.mean(hits_u) < 0.6


def test_sampling_prob_that_do_not_add_up_warn(sim):
    pairs, judgments = sim
    keep = np.arange(len(pairs)) % 10 == 0
    with pytest.warns(MetricWarning, match="sampling_prob sums"):
        jk.ppi_win_rates(judgments, pairs.assign(label=pairs["label"].where(keep)),
                         sampling_prob=0.5)


# ---------------------------------------------------------------------- models and differences
def test_compare_matches_the_two_rates_and_the_bootstrap():
    pairs, judgments = _leaderboard(seed=5)
    labelled = pairs.assign(label=pairs["label"].where(np.arange(len(pairs)) % 5 == 0))
    rates = jk.ppi_win_rates(judgments, labelled, models=["m0", "m1"],
                             methods=["ppi++"]).set_index("model")
    diff = jk.ppi_compare(judgments, labelled, ("m0", "m1"), methods=["ppi++"], interval="both")
    clt = diff[diff["interval"] == "clt"].iloc[0]
    assert clt.model == "m0 - m1"
    assert clt.estimate == pytest.approx(rates.loc["m0", "estimate"] - rates.loc["m1", "estimate"])
    # disjoint pairs: the variance of the difference is about the sum of the variances
    assert clt.se == pytest.approx(np.hypot(rates.loc["m0", "se"], rates.loc["m1", "se"]), rel=0.15)
    boot = diff[diff["interval"] == "bootstrap"].iloc[0]
    assert boot.se == pytest.approx(clt.se, rel=0.15)


def test_population_bootstrap_for_models_and_strata_runs(sim):
    pairs, judgments = sim
    keep = np.arange(len(pairs)) % 8 == 0
    out = jk.ppi_win_rates(judgments, pairs.assign(label=pairs["label"].where(keep),
                                                   task=np.arange(len(pairs)) % 3),
                           strata="task", interval="both", n_boot=400)
    wide = out.pivot(index="method", columns="interval", values="se")
    assert np.allclose(wide["bootstrap"], wide["clt"], rtol=0.2)


def test_too_few_labels_warn_and_give_nan():
    pairs, judgments = _tables()
    pairs.loc[pairs["pair_id"] != "p1", "label"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(MetricWarning, match="1 labelled"):
            jk.ppi_win_rates(judgments, pairs, check_labels=False)


# ---------------------------------------------------------------------- coverage of known truth
def test_coverage_light():
    """A lighter version of the 1,000-replication study in benchmarks/bench_ppi.py."""
    out = coverage_study(n_labels=(50, 300), n_pairs=(2000,), reps=200, seed=7)
    pp = out[out["method"].isin(["ppi", "ppi++"])]
    assert pp["coverage"].between(0.90, 0.99).all(), pp
    ratio = out[out["method"] == "ppi++"].set_index("judge")["width_vs_classical"]
    assert (ratio <= 1.02).all()
    assert (ratio.drop("weak (0.6)") < 0.95).all()
    judge_only = out[out["method"] == "judge_only"].set_index(["judge", "n_labels"])["coverage"]
    assert (judge_only.loc["good, very biased (0.9)"] < 0.3).all()


@pytest.mark.slow
def test_coverage_1000_replications():
    out = coverage_study(n_labels=(50, 500), n_pairs=(2000, 20000), reps=1000, seed=2025)
    pp = out[out["method"].isin(["ppi", "ppi++"])]
    # the score-type widening over-covers a little for an accurate judge at 50 labels (0.977)
    assert pp["coverage"].between(0.93, 0.98).all(), pp.sort_values("coverage")
    ratio = out[out["method"] == "ppi++"]["width_vs_classical"]
    assert (ratio <= 1.02).all()
