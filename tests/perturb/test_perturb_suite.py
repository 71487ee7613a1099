"""End to end on the simulated judge server (real openai SDK over loopback HTTP): the suite recovers
the biases a simulated judge was given, with their direction, and reports none where none was
given; robustness falls with the authority sensitivity; the CALM sets run."""

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.sim.perturbations import SIM_OWN_STYLE


def _own_pairs(n: int, seed: int) -> pd.DataFrame:
    """Simulated pairs where one response (a seeded coin) is the judge's own, in its own style."""
    pairs = jk.sim.simulate_pairs(n, median_length=300, seed=seed)
    own_a = np.random.default_rng(seed).random(n) < 0.5
    pairs["response_a"] = np.where(own_a, pairs["response_a"] + " " + SIM_OWN_STYLE, pairs["response_a"])
    pairs["response_b"] = np.where(~own_a, pairs["response_b"] + " " + SIM_OWN_STYLE, pairs["response_b"])
    pairs["model_a"] = np.where(own_a, "sim", "other")
    pairs["model_b"] = np.where(own_a, "other", "sim")
    return jk.validate_pairs(pairs.drop(columns=["len_a", "len_b"]))


GIVEN = {"authority": 6.0, "bandwagon": 6.0, "distraction": -6.0, "verbosity": 6.0, "self_enhancement": 3.0}
BIASES = ["position", "compassion_fade", "bandwagon", "distraction", "authority", "diversity", "cot",
          "verbosity", "fallacy_oversight", "sentiment", "self_enhancement"]
OPTIONS = {"bandwagon": {"percents": [80]}, "authority": {"kinds": ["quote"]},
           "diversity": {"identities": ["refugee"]}, "sentiment": {"emotions": ["angry"]},
           "verbosity": {"target": "random"}}


def run_recovery(n: int, seed: int, cache, n_boot: int = 1000, sim_seed: int = 5):
    """The recovery experiment: a simulated judge with the GIVEN sensitivities and a primacy bias."""
    pairs = _own_pairs(n, seed=seed)
    sim = jk.sim.ContentSimJudge(accuracy=0.75, quality_scale=1.0, flip_q=0.05, position_bias=2.0,
                             sensitivities=GIVEN, seed=sim_seed)
    server = jk.sim.SimServer(sim, signal_detector=jk.sim.detect_signals, handlers=[jk.sim.sim_rewrite_handler])
    with server as url:
        # rewrites first, so that the simulated judge knows the labels of every pair it is shown
        pert = jk.perturb_all(pairs, BIASES, options=OPTIONS, self_models=["sim"], rewriter="sim",
                              rewrite_options={"base_url": url, "progress": False, "cache": cache})
        server.register_pairs(jk.sim.simulation_pairs(pairs, pert))
        judge = jk.Judge("sim", "mtbench_pair[noties]", base_url=url, seed=0)
        return pairs, jk.bias_suite(pairs, judge, [], perturbed=pert, n_boot=n_boot, details=True,
                                    progress=False, cache=cache, concurrency=32)


def test_suite_recovers_the_given_biases_and_their_direction_and_no_others(tmp_path):
    pairs, out = run_recovery(60, seed=11, cache=str(tmp_path / "c.sqlite"))
    summary = out.summary.set_index("bias")
    assert set(summary.index) == set(BIASES)
    expected = {b: ("toward" if s > 0 else "away") for b, s in GIVEN.items()} | {"position": "toward"}
    for bias in BIASES:
        assert summary.at[bias, "direction"] == expected.get(bias, "none"), (bias, summary.loc[bias].to_dict())
    # the judge's own noise is measured: consistency below 1 (flip_q = 0.05 per call)
    assert 0.8 < summary.at["bandwagon", "consistency"] < 0.99
    # a large sensitivity moves verdicts beyond that noise
    assert summary.at["authority", "gap_ci_high"] < 0
    # every perturbed pair was judged once; self-enhancement needs no call of its own
    counts = out.judgments.groupby("pair_id").size()
    judged = out.perturbed[out.perturbed["bias"] != "self_enhancement"]["pair_id"]
    assert (counts.reindex(judged) == 1).all()
    assert len(out.perturbed[out.perturbed["bias"] == "self_enhancement"]) == len(pairs)
    # the fallacy rewrite moved the gold label to the intact response
    fallacy = out.perturbed[out.perturbed["bias"] == "fallacy_oversight"]
    src = pairs.set_index("pair_id")["label"].reindex(fallacy["source_pair_id"]).to_numpy()
    assert (fallacy["label"].to_numpy() != src).all()
    report = out.report.set_index(["bias", "variant", "metric"])
    # a judge that overlooks fallacies keeps its verdicts, so it is mostly wrong after the rewrite
    assert report.at[("fallacy_oversight", "all", "acc_hack"), "estimate"] < 0.5


def test_robustness_falls_with_authority_sensitivity_and_equals_consistency_without_it(tmp_path):
    pairs = jk.sim.simulate_pairs(50, median_length=300, seed=21)
    levels = (0.0, 1.5, 4.0)
    judges = {f"s{s:g}": jk.sim.ContentSimJudge(flip_q=0.1, sensitivities={"authority": s}, seed=2) for s in levels}
    pert = jk.perturb_authority(pairs, kinds=["book"], target="rejected", seed=3)
    rows = {}
    with jk.sim.SimServer(judges, pairs=jk.sim.simulation_pairs(pairs, pert), signal_detector=jk.sim.detect_signals) as url:
        for name in judges:
            judge = jk.Judge(name, "calibraeval_default", base_url=url, seed=0)
            rep = jk.bias_suite(pairs, judge, [], perturbed=pert, n_boot=500, progress=False,
                                cache=str(tmp_path / "c.sqlite"), concurrency=32)
            rows[name] = rep.set_index("metric")
    gaps = [rows[f"s{s:g}"].at["gap", "estimate"] for s in levels]
    robust = [rows[f"s{s:g}"].at["robustness", "estimate"] for s in levels]
    none = rows["s0"]
    # without sensitivity the citation changes nothing beyond the judge's own noise
    assert none.at["gap", "ci_low"] <= 0 <= none.at["gap", "ci_high"]
    assert abs(none.at["robustness", "estimate"] - none.at["consistency", "estimate"]) < 0.05
    assert none.at["consistency", "estimate"] < 0.95  # and that noise is real (q = 0.1)
    # the drop grows with the sensitivity, and every flip goes toward the cited response
    assert robust[0] > robust[1] > robust[2]
    assert gaps[0] > gaps[1] > gaps[2]
    assert rows["s4"].at["gap", "ci_high"] < 0
    assert rows["s4"].at["favoured_shift", "ci_low"] > 0
    assert rows["s4"].at["flip_to_favoured", "estimate"] > 0.8


def test_position_with_three_answers_by_rotation(tmp_path):
    rng = np.random.default_rng(4)
    n = 40
    triples = pd.DataFrame({
        "pair_id": [f"t{i}" for i in range(n)],
        "prompt": [f"Question {i}?" for i in range(n)],
        **{f"response_{s}": [f"Answer {s} to {i}, version {rng.integers(1e6)}." for i in range(n)] for s in "abc"},
        "label": None,
    })
    judges = {"biased": jk.sim.ContentSimJudge(position_bias=2.0, seed=1), "fair": jk.sim.ContentSimJudge(seed=1)}
    summary = {}
    with jk.sim.SimServer(judges, signal_detector=jk.sim.detect_signals) as url:
        for name in judges:
            judge = jk.Judge(name, "nway", base_url=url, seed=0)
            # a 1% family-wise level: the fair judge's position effect is pure noise
            out = jk.bias_suite(triples, judge, ["position"], n_boot=500, progress=False, details=True,
                                cache=str(tmp_path / "c.sqlite"), alpha=0.01)
            summary[name] = out.summary.set_index("bias").loc["position"]
            assert set(out.judgments["order"]) == {"abc"}  # no two-response call is needed
            assert len(out.perturbed) == 2 * n
    assert summary["biased"]["direction"] == "toward"
    assert summary["fair"]["direction"] == "none"
    assert abs(summary["fair"]["effect"]) < 0.15


def test_suite_runs_on_the_calm_sets_from_the_mirror(tmp_path):
    calm = jk.load_pairs("calm", sets=["verbosity", "fallacy_oversight", "sentiment", "authority", "refinement"],
                         progress=False)
    keep = (calm["item"] < 8) | (calm["dataset"].eq("refinement") & (calm["item"] < 30))
    pairs, pert = jk.calm_perturbations(calm[keep])
    assert set(pert["bias"]) == {"verbosity", "fallacy_oversight", "sentiment", "authority", "refinement_aware"}
    sim = jk.sim.ContentSimJudge(flip_q=0.05, sensitivities={"authority": 4.0, "refinement_aware": 4.0}, seed=8)
    with jk.sim.SimServer(sim, pairs=jk.sim.simulation_pairs(pairs, pert), signal_detector=jk.sim.detect_signals) as url:
        judge = jk.Judge("sim", "mtbench_pair[noties]", base_url=url, seed=0)
        out = jk.bias_suite(pairs, judge, [], perturbed=pert, n_boot=500, progress=False, details=True,
                            cache=str(tmp_path / "c.sqlite"), concurrency=32)
    rep = out.report.set_index(["bias", "variant", "metric"])
    for bias in ("verbosity", "fallacy_oversight", "sentiment", "authority", "refinement_aware"):
        assert rep.at[(bias, "all", "robustness"), "n"] == (pert["bias"] == bias).sum()
    assert {"book", "url", "quote"} <= {v for b, v, _ in rep.index if b == "authority"}
    assert {"cheerful", "sad", "angry", "fearful"} <= {v for b, v, _ in rep.index if b == "sentiment"}
    # CALM's own citations reach the simulated judge: its authority sensitivity shows
    assert rep.at[("authority", "all", "favoured_shift"), "ci_low"] > 0
    assert rep.at[("refinement_aware", "all", "favoured_shift"), "ci_low"] > 0
    # gold exists for the CALM bias sets (answer1 is the better answer): accuracy is reported
    assert rep.at[("fallacy_oversight", "all", "acc_hack"), "n"] > 0
    assert ("refinement_aware", "all", "acc_ori") not in rep.index  # refinement pairs have no gold


def test_bad_calls_are_refused_with_clear_errors():
    pairs = jk.sim.simulate_pairs(4, seed=0)
    judge = jk.Judge("sim", "mtbench_pair", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="rewriter"):
        jk.bias_suite(pairs, judge, ["verbosity"], progress=False)
    with pytest.raises(ValueError, match="unknown bias"):
        jk.bias_suite(pairs, judge, ["flattery"], progress=False)
    with pytest.raises(TypeError, match="Judge"):
        jk.bias_suite(pairs, "gpt-4o", ["cot"], progress=False)
    with pytest.raises(ValueError, match="orders"):
        jk.bias_suite(pairs, judge, ["cot"], orders=("abc",), progress=False)
    with pytest.raises(ValueError, match="self_models"):
        jk.perturb_all(pairs, ["self_enhancement"])


def test_chain_of_thought_as_an_instruction_and_as_a_template(tmp_path):
    pairs = jk.sim.simulate_pairs(15, median_length=200, seed=31)
    with jk.sim.SimServer(jk.sim.ContentSimJudge(flip_q=0.1, seed=4), pairs=pairs, signal_detector=jk.sim.detect_signals) as url:
        judge = jk.Judge("sim", "calibraeval_default", base_url=url, seed=0)
        out = jk.bias_suite(pairs, judge, ["cot"], cot_template="mtbench_pair[noties]", n_boot=200,
                            progress=False, details=True, cache=str(tmp_path / "c.sqlite"))
    assert set(out.judgments["judge"]) == {judge.id}
    used = set(out.judgments["template"])
    assert used == {"calibraeval_default", "mtbench_pair[noties]"}
    rep = out.report.set_index(["variant", "metric"])
    for variant in ("on", "template:mtbench_pair[noties]"):
        assert rep.at[(variant, "robustness"), "n"] == len(pairs)
        assert (variant, "acc_hack") in rep.index
    swapped = out.judgments[out.judgments["pair_id"].str.contains("::cot/template:")]
    assert (swapped["template"] == "mtbench_pair[noties]").all() and swapped["verdict"].notna().all()
