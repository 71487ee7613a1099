"""The labelling planner's predicted half-widths against simulated studies, its costs and chart."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.inference import _fit, _prepare
from judgekit.sim.labels import simulate


def _simulated_half_width(n, P, *, a_dec, q, repeats, win_rate, reps, rng):
    hw = {"classical": [], "ppi++": []}
    for _ in range(reps):
        y, f = simulate(P, win_rate=win_rate, accuracy=a_dec, flip_q=q, repeats=repeats, rng=rng)
        ys = np.full(P, np.nan)
        idx = rng.choice(P, n, replace=False)
        ys[idx] = y[idx]
        res = _fit.quick(ys, f)
        for m in hw:
            hw[m].append(res[m][1] * res[m][2])
    return {m: float(np.mean(v)) for m, v in hw.items()}


@pytest.mark.slow
@pytest.mark.parametrize("a_dec,q", [(0.6, 0.0), (0.75, 0.1), (0.9, 0.05), (0.9, 0.2)])
def test_assumed_judge_half_width_matches_simulation(a_dec, q):
    rng = np.random.default_rng(int(a_dec * 100 + q * 10))
    a_call = a_dec * (1 - q) + (1 - a_dec) * q  # what jk.accuracy would report
    worst = 0.0
    for P in (2000, 20000):
        for repeats in (1, 3):
            plan = jk.plan_labels(half_width=0.05, accuracy=a_call, flip_q=q, win_rate=0.6,
                                  n_labels=[50, 200, 500], n_pairs=[P], repeats=[repeats])
            for n in (50, 200, 500):
                sim = _simulated_half_width(n, P, a_dec=a_dec, q=q, repeats=repeats,
                                            win_rate=0.6, reps=150, rng=rng)
                rows = plan.table[plan.table["n_labels"] == n].set_index("method")["half_width"]
                for method in ("classical", "ppi++"):
                    worst = max(worst, abs(rows[method] / sim[method] - 1))
    assert worst < 0.15, worst


@pytest.mark.slow
def test_pilot_half_width_matches_simulated_studies():
    judge = jk.sim.SimJudge(accuracy=0.8, position_bias=0.5, flip_q=0.1, seed=3)
    pilot_pairs, pilot, _ = jk.sim.simulate_judgments(600, judge=judge, repeats=2, seed=3)
    pilot_pairs = pilot_pairs.assign(label=pilot_pairs["label"].where(pilot_pairs.index % 2 == 0))
    plan = jk.plan_labels(pilot, pilot_pairs, half_width=0.05, n_labels=[100, 400],
                          n_pairs=[3000], prediction="verdict")
    assert plan.answer["repeats"].unique().tolist() == [2]
    rng = np.random.default_rng(0)
    sims = {100: [], 400: []}
    for rep in range(25):
        pairs, judgments, _ = jk.sim.simulate_judgments(
            3000, judge=jk.sim.SimJudge(accuracy=0.8, position_bias=0.5, flip_q=0.1, seed=100 + rep),
            repeats=2, seed=100 + rep)
        j, p = _prepare.load_tables(judgments, pairs)
        (u,) = _prepare.build_units(j, p, target="win", models=None, prediction="verdict",
                                    strata=None, sampling_prob=None, cluster="pair",
                                    estimand="population")
        for n in sims:
            for _ in range(8):
                ys = np.full(len(u.y), np.nan)
                idx = rng.choice(len(u.y), n, replace=False)
                ys[idx] = u.y[idx]
                theta, se, crit = _fit.quick(ys, u.f)["ppi++"]
                sims[n].append(se * crit)
    t = plan.table[plan.table["method"] == "ppi++"].set_index("n_labels")["half_width"]
    for n, v in sims.items():
        assert t[n] == pytest.approx(np.mean(v), rel=0.15), (n, t[n], np.mean(v))


def test_answer_is_the_smallest_label_count_that_reaches_the_target():
    plan = jk.plan_labels(half_width=0.03, accuracy=0.8, flip_q=0.05, n_pairs=[5000],
                          repeats=[1], label_cost_usd=0.5, cost_per_call_usd=0.001)
    ans = plan.answer.set_index("method")
    n = int(ans.loc["ppi++", "labels_needed"])
    from judgekit.inference.planner import _assumed_moments, _half_width
    m = _assumed_moments(0.8, 0.05, 0.5)
    z = plan.moments["z"]
    assert _half_width(m, n, 5000, 2, z, "ppi++") <= 0.03 < _half_width(m, n - 1, 5000, 2, z, "ppi++")
    assert ans.loc["ppi++", "labels_needed"] < ans.loc["classical", "labels_needed"]
    assert ans.loc["ppi++", "judge_cost_usd"] == pytest.approx(5000 * 2 * 0.001)
    assert ans.loc["ppi++", "label_cost_usd"] == pytest.approx(0.5 * n)
    # the classical label count solves z² σ² / h² with σ² = 1/4 (t quantile, divisor n - 1)
    assert ans.loc["classical", "labels_needed"] == pytest.approx((1.96 * 0.5 / 0.03) ** 2, rel=0.01)


def test_difference_needs_about_four_times_the_labels():
    one = jk.plan_labels(half_width=0.04, accuracy=0.75, n_pairs=[20000], repeats=[1])
    two = jk.plan_labels(half_width=0.04, accuracy=0.75, n_pairs=[20000], repeats=[1],
                         difference=True)
    r = (two.answer.set_index("method")["labels_needed"] / one.answer.set_index("method")["labels_needed"])
    assert r.between(3.8, 4.2).all(), r


def test_cost_from_estimate_cost_and_chart_spec():
    pairs, judgments, _ = jk.sim.simulate_judgments(200, accuracy=0.8, flip_q=0.1, repeats=2, seed=1)
    judge = jk.Judge("gpt-4o-mini", "rafailov_tldr")
    plan = jk.plan_labels(judgments, pairs, half_width=0.05, judge=judge, n_pairs=[1000])
    per_call = plan.moments["cost_per_call_usd"]
    est = jk.estimate_cost(pairs.head(200), judge, orders=("ab",), repeats=1)
    assert per_call == pytest.approx(est["cost_usd_typical"].iloc[0] / 200)
    row = plan.answer.set_index("method").loc["ppi++"]
    assert row.judge_cost_usd == pytest.approx(per_call * 1000 * 2 * 2)
    spec = jk.viz.plan_chart(plan).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["field"] == "n_labels"
    assert spec["layer"][1]["mark"]["type"] == "rule"


def test_bias_planner_scales_the_pilot_se():
    pairs, judgments, _ = jk.sim.simulate_judgments(500, position_bias=0.8, flip_q=0.1, repeats=3, seed=2)
    plan = jk.plan_bias(judgments, pairs, half_width=0.05, n_boot=200, n_pairs=[500, 2000])
    se3 = plan.moments["se_repeats_3"]
    need = plan.answer.set_index("repeats").loc[3, "labels_needed"]
    assert need == pytest.approx(500 * (plan.table["half_width"].iloc[0] / 0.05) ** 2 / (
        plan.table["half_width"].iloc[0] / (1.959963984540054 * se3)) ** 2, rel=0.01)
    pb = jk.position_bias(judgments, pairs, n_boot=200)
    assert se3 == pytest.approx(pb.set_index("metric").loc["position_bias", "se"])


def test_planner_rejects_bad_input():
    with pytest.raises(ValueError, match="pilot .* or an assumed accuracy"):
        jk.plan_labels()
    with pytest.raises(ValueError, match="impossible"):
        jk.plan_labels(accuracy=0.95, flip_q=0.4)
    pairs, judgments, _ = jk.sim.simulate_judgments(100, seed=0)
    with pytest.raises(ValueError, match="cannot say what more repeats would buy"):
        jk.plan_labels(judgments, pairs, repeats=[3])
    few = pairs.assign(label=pairs["label"].where(pairs.index < 5))
    with pytest.raises(ValueError, match="at least 10"):
        jk.plan_labels(judgments, few)
    with pytest.raises(ValueError, match="metric must be"):
        jk.plan_bias(judgments, pairs, metric="accuracy")
    assert isinstance(jk.plan_labels(accuracy=0.7).table, pd.DataFrame)
