"""Temperature selection (Wei et al. Table 1), stepwise regression by AIC, and rankings."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

import judgekit as jk

# Wei et al. (2024), Tables 1 and 4-6: temperature, SCR (y_c, y_r), SCR (y_r, y_c), Acc_both and
# its std over splits, for each (model / template, dataset). They chose 0.1 in every case.
TEMPS = [0.0, 0.1, 0.3, 0.5, 0.7]
WEI_TABLES = {
    ("gpt-4o/rafailov", "tldr"): ([.977, .973, .963, .953, .946], [.971, .967, .956, .949, .927],
                                  [.665, .666, .668, .663, .657],
                                  [.003, .004, .003, .003, .0]),
    ("gpt-4o/rafailov", "hh"): ([.974, .966, .950, .942, .934], [.967, .957, .944, .926, .914],
                                [.573, .575, .574, .579, .577],
                                [.005, .005, .005, .009, .006]),
    ("gpt-4o/chen-zeng", "tldr"): ([.976, .972, .964, .954, .939], [.972, .968, .963, .951, .941],
                                   [.659, .660, .661, .655, .650],
                                   [.002, .003, .006, .003, .004]),
    ("gpt-4o/chen-zeng", "hh"): ([.973, .965, .947, .942, .924], [.973, .966, .944, .926, .916],
                                 [.585, .585, .586, .579, .578],
                                 [.002, .003, .003, .009, .008]),
    ("gpt-4o-mini/rafailov", "tldr"): ([.989, .986, .974, .972, .961], [.991, .985, .982, .978, .973],
                                       [.631, .630, .627, .629, .622],
                                       [.001, .001, .003, .004, .003]),
    ("gpt-4o-mini/rafailov", "hh"): ([.987, .983, .970, .965, .960], [.990, .988, .968, .967, .957],
                                     [.589, .591, .593, .587, .585],
                                     [.003, .003, .003, .003, .006]),
    ("gpt-3.5-turbo/rafailov", "tldr"): ([.948, .925, .876, .824, .780], [.936, .907, .856, .807, .772],
                                         [.554, .548, .538, .516, .498],
                                         [.004, .008, .003, .008, .006]),
    ("gpt-3.5-turbo/rafailov", "hh"): ([.970, .964, .941, .925, .901], [.951, .948, .906, .889, .853],
                                       [.371, .369, .373, .375, .382],
                                       [.003, .002, .006, .01, .008]),
}


def test_recommendation_rule_reproduces_wei_et_al_choice():
    rows = []
    for (judge, data), (scr_cr, scr_rc, acc, std) in WEI_TABLES.items():
        rows += [{"judge": judge, "dataset": data, "temperature": t, "scr_cr": a, "scr_rc": b,
                  "acc_both": c, "acc_both_std": e}
                 for t, a, b, c, e in zip(TEMPS, scr_cr, scr_rc, acc, std)]
    rec = jk.recommend_temperature(pd.DataFrame(rows), by=["judge", "dataset"])
    assert len(rec) == 8
    assert (rec["temperature"] == 0.1).all(), rec
    with_zero = jk.recommend_temperature(pd.DataFrame(rows), by=["judge", "dataset"], exclude_zero=False)
    assert (with_zero["temperature"] == 0.0).all()  # the most consistent, if 0 is allowed


def test_temperature_table_on_a_judge_whose_noise_grows_with_temperature():
    pairs = jk.sim.simulate_pairs(1500, seed=4)
    runs = []
    for t in (0.0, 0.3, 0.7, 1.0):
        # the same decisions X at every temperature (same seed); only the flip noise grows
        _, j, _ = jk.sim.simulate_judgments(pairs, accuracy=0.8, position_bias=0.4, flip_q=0.02 + 0.15 * t,
                                        repeats=4, judge_name=f"sim@{t}", seed=5)
        runs.append(j.assign(model="sim", temperature=t))
    table = jk.temperature_table(pd.concat(runs, ignore_index=True), pairs, by="model", n_boot=100)
    assert table["temperature"].tolist() == [0.0, 0.3, 0.7, 1.0]
    true_q = np.array([0.02, 0.065, 0.125, 0.17])
    assert table["scr_cr"].to_numpy() == pytest.approx(1 - true_q, abs=0.015)
    assert table["scr_rc"].to_numpy() == pytest.approx(1 - true_q, abs=0.015)
    assert table["scr_cr"].is_monotonic_decreasing
    # raw Acc_both falls with the noise, so only 0.3 is within 0.01 of the best non-zero one
    assert table.loc[table["recommended"], "temperature"].tolist() == [0.3]
    assert (table["scr_cr_ci_low"] < table["scr_cr"]).all()


def _subsets(items):
    for r in range(len(items) + 1):
        yield from itertools.combinations(items, r)


def test_stepwise_finds_the_generating_terms_and_the_best_aic():
    rng = np.random.default_rng(3)
    n = 400
    d = pd.DataFrame({
        "gap": rng.random(n), "len_out": rng.normal(500, 100, n), "len_in": rng.normal(80, 10, n),
        "judge": rng.choice(["a", "b", "c", "d"], n), "task": rng.choice(["t1", "t2", "t3"], n),
    })
    d["pc"] = (0.4 + 0.5 * d["gap"] + d["judge"].map({"a": 0, "b": 0.1, "c": -0.1, "d": 0.2})
               + rng.normal(0, 0.08, n))
    preds = ["gap", "len_out", "len_in", "judge", "task"]
    res = jk.stepwise_ols(d, "pc", preds, categorical=["judge", "task"])
    assert set(res.table["term"].dropna()) == {"gap", "judge"}
    # the stepwise optimum is the exhaustive one here, and its AIC is statsmodels'
    best = min(
        (smf.ols("pc ~ " + (" + ".join(f"C({t})" if t in ("judge", "task") else t for t in s) or "1"),
                 d).fit().aic, s)
        for s in _subsets(preds)
    )
    assert set(best[1]) == {"gap", "judge"}
    assert res.model.aic == pytest.approx(best[0])
    none_row = res.table[res.table["term"].isna()].iloc[0]
    assert none_row["aic"] == pytest.approx(res.model.aic) and none_row["rss"] == pytest.approx(res.model.ssr)
    # each "removed" row is the model without that term; the most important term comes last
    gap = res.table.set_index("term").loc["gap"]
    drop = smf.ols("pc ~ C(judge)", d).fit()
    assert gap["rss"] == pytest.approx(drop.ssr) and gap["aic"] == pytest.approx(drop.aic)
    assert gap["df"] == 1 and gap["sum_sq"] == pytest.approx(drop.ssr - res.model.ssr)
    assert res.table["aic"].is_monotonic_increasing
    forward = jk.stepwise_ols(d, "pc", preds, categorical=["judge", "task"], start="null")
    assert set(forward.table["term"].dropna()) == {"gap", "judge"}
    assert forward.history["action"].tolist()[0] == "start"


def test_stepwise_rejects_bad_input():
    d = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 6], "x": [1.0, 2, 3, 4, 5, 7], "k": "same"})
    with pytest.raises(ValueError, match="single value"):
        jk.stepwise_ols(d, "y", ["x", "k"], categorical=["k"])
    with pytest.raises(ValueError, match="missing column"):
        jk.stepwise_ols(d, "y", ["zz"])
    with pytest.raises(ValueError, match="not predictors"):
        jk.stepwise_ols(d, "y", ["x"], categorical=["k"])


def test_rank_judges_within_and_overall():
    card = pd.DataFrame({
        "model": ["gpt", "gpt", "gpt", "llama", "llama"],
        "template": ["a", "b", "c", "a", "b"],
        "n_pairs": 100,
        "acc_both": [0.6, 0.7, 0.7, 0.5, np.nan],
        "acc_both_std": [0.01, 0.02, 0.03, 0.04, np.nan],
        "position_bias": [0.1, -0.2, 0.0, 0.3, 0.1],
        "position_bias_std": [0.01] * 5,
    })
    within = jk.rank_judges(card, within="model", columns=["acc_both", "position_bias"])
    assert within["template"].tolist() == ["b", "c", "a", "a", "b"]
    assert within["rank"].tolist()[:4] == [1, 1, 3, 1] and within["rank"].isna().tolist()[4]
    overall = jk.rank_judges(card, top=2, columns=["acc_both"], as_text=True)
    assert overall["template"].tolist() == ["b", "c"] and overall["acc_both"].tolist() == [
        "0.700 (0.020)", "0.700 (0.030)"]
    with pytest.raises(ValueError, match="within"):
        jk.rank_judges(card, within="acc_both", columns=["acc_both"])


def test_stepwise_reports_aliased_terms_whatever_their_place():
    """A length that is a function of the task (and a sum of two other predictors) adds nothing
    once the task is in: it is aliased whether listed before or after the task, and no term of
    the final table has 0 degrees of freedom."""
    rng = np.random.default_rng(5)
    n = 300
    task = rng.choice(["t1", "t2", "t3", "t4"], n)
    d = pd.DataFrame({
        "task": task, "judge": rng.choice(["a", "b"], n), "gap": rng.random(n),
        "input_length": pd.Series(task).map({"t1": 120.0, "t2": 340.0, "t3": 95.0, "t4": 410.0}),
        "output_length": rng.normal(800, 150, n),
    })
    d["prompt_length"] = d["input_length"] + d["output_length"]  # exact sum of the two
    d["pc"] = (0.5 + 0.4 * d["gap"] + d["task"].map({"t1": 0, "t2": 0.1, "t3": -0.1, "t4": 0.05})
               + 2e-4 * d["output_length"] + rng.normal(0, 0.05, n))
    lengths = ["input_length", "output_length", "prompt_length"]
    tables = []
    for preds in ([*lengths, "gap", "judge", "task"], ["task", "judge", "gap", *lengths]):
        with pytest.warns(UserWarning, match="aliased"):
            res = jk.stepwise_ols(d, "pc", preds, categorical=["judge", "task"])
        # input_length lies in the span of the task dummies; prompt_length = input + output
        assert res.aliased == ["input_length", "prompt_length"], preds
        assert (res.table["df"].dropna() >= 1).all()
        assert res.table.set_index("term").loc["task", "df"] == 3  # all its levels, not 2
        tables.append(res.table.set_index("term").sort_index())
        assert res.model.aic == pytest.approx(
            smf.ols("pc ~ " + " + ".join(f"C({t})" if t in ("judge", "task") else t
                                          for t in res.table["term"].dropna()), d).fit().aic)
    pd.testing.assert_frame_equal(tables[0], tables[1])
