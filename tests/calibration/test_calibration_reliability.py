"""Reliability of P(first) from single arrangements: recovers a known position shift and calibration."""

import numpy as np
import pytest

import judgekit as jk


def test_summary_recovers_the_simulated_position_shift_and_sampled_verdicts_are_calibrated():
    # one random order per pair, as in AlpacaEval; verdicts are draws from the judge's P(first)
    pairs, j, _ = jk.sim.simulate_judgments(3000, position_bias=0.8, quality_scale=1.5, seed=11)
    rng = np.random.default_rng(0)
    keep = np.where(rng.random(len(pairs)) < 0.5, "ab", "ba")
    one = j[j["order"].to_numpy() == np.tile(keep, 2)]
    s = jk.first_position_summary(one, n_boot=200).set_index("metric")
    assert s.loc["logit_shift", "ci_low"] < 0.8 < s.loc["logit_shift", "ci_high"]
    assert s.loc["mean_p_first", "estimate"] > 0.55
    assert s.loc["ece", "estimate"] < 0.05
    r = jk.first_position_reliability(one, n_bins=5, strategy="quantile")
    assert r["n"].sum() == len(one)
    inside = (r["ci_low"] - 0.02 <= r["mean_predicted"]) & (r["mean_predicted"] <= r["ci_high"] + 0.02)
    assert inside.all()


def test_an_overconfident_judge_shows_up_in_the_reliability_table():
    _, j, _ = jk.sim.simulate_judgments(3000, seed=12)
    sharp = j.assign(p_a=np.clip((j["p_a"] - 0.5) * 3 + 0.5, 0, 1))  # claims more than it does
    r = jk.first_position_reliability(sharp, n_bins=10)
    top = r[r["bin"] == 9].iloc[0]
    assert top["ci_high"] < top["mean_predicted"]
    assert jk.first_position_summary(sharp, n_boot=0).set_index("metric").loc["ece", "estimate"] > 0.05
    with pytest.raises(ValueError, match="strategy"):
        jk.first_position_reliability(j, strategy="kmeans")


def test_nothing_silent_in_the_single_arrangement_diagnostics():
    import pandas as pd

    _, j, _ = jk.sim.simulate_judgments(60, position_bias=0.5, seed=1)
    broken = j.assign(judge="broken", p_a=np.nan)
    with pytest.warns(jk.MetricWarning, match=r"\['broken'\].*probability"):
        s = jk.first_position_summary(pd.concat([j, broken]), n_boot=20)
    assert s.loc[s["judge"] == "broken", "estimate"].isna().all()
    assert s.loc[s["judge"] == "sim", "estimate"].notna().all()
    with pytest.warns(jk.MetricWarning, match=r"\['broken'\]"):
        assert set(jk.first_position_reliability(pd.concat([j, broken]))["judge"]) == {"sim"}
    with pytest.raises(ValueError, match="empty"):
        jk.first_position_summary(j.iloc[:0])
    with pytest.warns(jk.MetricWarning, match="only 3 clusters"):
        jk.first_position_summary(j[j["pair_id"].isin(j["pair_id"].unique()[:3])], n_boot=20)
    no_verdict = j.assign(verdict=None)
    with pytest.warns(jk.MetricWarning, match="first_chosen_rate, brier and ece are NaN"):
        s = jk.first_position_summary(no_verdict, n_boot=20).set_index("metric")
    assert np.isnan(s.loc["first_chosen_rate", "estimate"]) and np.isfinite(s.loc["mean_p_first", "estimate"])
