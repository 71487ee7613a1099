"""Raw, swap-averaged, length-normalized and length-balanced win rates on tables computed by hand."""

import numpy as np
import pandas as pd
import pytest
from scipy import special

import judgekit as jk


def _pairs(rows):
    """rows: (pair_id, instruction, model_a, model_b, len_a, len_b)."""
    return pd.DataFrame([{
        "pair_id": pid, "prompt": f"prompt {inst}", "response_a": "a" * la, "response_b": "b" * lb,
        "label": None, "model_a": ma, "model_b": mb, "instruction_id": inst,
    } for pid, inst, ma, mb, la, lb in rows])


def _judg(rows):
    """rows: (pair_id, order, repeat, verdict, p_a)."""
    return pd.DataFrame([{"pair_id": p, "judge": "j", "order": o, "repeat": r, "verdict": v,
                          "p_a": pa} for p, o, r, v, pa in rows])


@pytest.fixture
def small():
    pairs = _pairs([
        ("p1", "x1", "base", "m", 100, 200),
        ("p2", "x2", "base", "m", 100, 50),
        ("p3", "x3", "m", "base", 300, 100),   # the model on side a
        ("p4", "x4", "base", "m", 100, 100),
    ])
    judg = _judg([
        ("p1", "ab", 0, "b", 0.2), ("p1", "ab", 1, "b", 0.4), ("p1", "ba", 0, "a", 0.6),
        ("p2", "ab", 0, "tie", np.nan), ("p2", "ba", 0, "a", np.nan),
        ("p3", "ab", 0, "a", 0.9),
        ("p4", "ab", 0, None, np.nan), ("p4", "ba", 0, "b", 0.3),
    ])
    return pairs, judg


def test_win_rate_averages_repeats_then_orders_then_pairs(small):
    pairs, judg = small
    wr = jk.win_rates(judg, pairs, n_boot=0).set_index("metric")
    # P(model preferred) per pair: p1 = mean(mean(0.8, 0.6), 0.4) = 0.55; p2 = mean(0.5, 0) = 0.25;
    # p3 = 0.9 (model is a); p4 = 0.7 (the invalid verdict is left out)
    assert wr.loc["win_rate", "estimate"] == pytest.approx(100 * (0.55 + 0.25 + 0.9 + 0.7) / 4)
    # discrete: p1 = mean(1, 0) = 0.5, p2 = 0.25, p3 = 1, p4 = 1
    assert wr.loc["discrete_win_rate", "estimate"] == pytest.approx(100 * (0.5 + 0.25 + 1 + 1) / 4)
    assert wr.loc["win_rate", "n"] == 4
    assert wr.loc["win_rate", "n_invalid"] == 1
    assert wr.loc["win_rate", "baseline"] == "base"
    assert wr.loc["win_rate", "orders"] == "ab/ab+ba/ba"  # p4's "ab" verdict is invalid


def test_preference_modes(small):
    pairs, judg = small
    verdict = jk.win_rates(judg, pairs, preference="verdict", n_boot=0).set_index("metric")
    prob = jk.win_rates(judg, pairs, preference="prob", n_boot=0).set_index("metric")
    assert verdict.loc["win_rate", "estimate"] == verdict.loc["discrete_win_rate", "estimate"]
    # prob: p2 has no probabilities (dropped, 2 invalid); p1 = 0.55, p3 = 0.9, p4 = 0.7
    assert prob.loc["win_rate", "estimate"] == pytest.approx(100 * (0.55 + 0.9 + 0.7) / 3)
    assert prob.loc["win_rate", "n_invalid"] == 3
    with pytest.raises(ValueError, match="preference must be one of"):
        jk.win_rates(judg, pairs, preference="soft")


def test_bootstrap_se_matches_the_textbook_standard_error_of_a_mean():
    rng = np.random.default_rng(0)
    n = 400
    pairs = _pairs([(f"p{i}", f"x{i}", "base", "m", 100, 100) for i in range(n)])
    p_model = rng.beta(0.5, 1.5, n)
    judg = _judg([(f"p{i}", "ab", 0, "b" if p_model[i] > 0.5 else "a", 1 - p_model[i])
                  for i in range(n)])
    wr = jk.win_rates(judg, pairs, n_boot=4000, seed=1).set_index("metric").loc["win_rate"]
    sem = 100 * p_model.std(ddof=1) / np.sqrt(n)
    assert wr["estimate"] == pytest.approx(100 * p_model.mean())
    assert wr["se"] == pytest.approx(sem, rel=0.06)
    assert wr["ci_low"] < wr["estimate"] < wr["ci_high"]
    assert (wr["ci_high"] - wr["ci_low"]) / (2 * 1.96) == pytest.approx(sem, rel=0.1)


def test_bootstrap_resamples_instructions_not_pairs():
    # a second, identical pair per instruction adds no information: resampling instructions gives
    # exactly the same standard error (resampling pairs would shrink it by sqrt(2))
    rng = np.random.default_rng(2)
    n = 200
    p_model = rng.random(n)
    pairs = _pairs([(f"p{i}", f"x{i}", "base", "m", 100, 100) for i in range(n)])
    judg = _judg([(f"p{i}", "ab", 0, "b", 1 - p_model[i]) for i in range(n)])
    twice = pd.concat([pairs, pairs.assign(pair_id=pairs["pair_id"] + "-copy")], ignore_index=True)
    judg2 = pd.concat([judg, judg.assign(pair_id=judg["pair_id"] + "-copy")], ignore_index=True)
    one = jk.win_rates(judg, pairs, n_boot=300, seed=4).iloc[0]
    two = jk.win_rates(judg2, twice, n_boot=300, seed=4).iloc[0]
    assert two["n"] == 2 * one["n"]
    assert two["se"] == pytest.approx(one["se"], rel=1e-12)


def test_identity_pairs_give_the_baseline_row():
    pairs = _pairs([("p1", "x1", "base", "base", 10, 10), ("p2", "x1", "base", "m", 10, 20)])
    judg = _judg([("p1", "ab", 0, "tie", 0.5), ("p2", "ab", 0, "a", 0.7)])
    wr = jk.win_rates(judg, pairs, baseline="base", n_boot=0)
    base = wr[(wr["model"] == "base") & (wr["metric"] == "win_rate")].iloc[0]
    assert base["estimate"] == 50.0


def test_clear_errors_for_tables_that_do_not_describe_a_baseline_comparison(small):
    pairs, judg = small
    with pytest.raises(ValueError, match="model_a.*model_b"):
        jk.win_rates(judg, pairs.drop(columns=["model_a"]))
    other = pd.concat([pairs, _pairs([("p9", "x9", "y", "z", 5, 5)])], ignore_index=True)
    with pytest.raises(ValueError, match=r"cannot infer the baseline"):
        jk.win_rates(judg, other)
    with pytest.raises(ValueError, match=r"absent from 1 row \(pair_id: p9\)"):
        jk.win_rates(judg, other, baseline="base")
    with pytest.raises(ValueError, match="pair_id.*not in the pairs table"):
        jk.win_rates(judg.head(1).assign(pair_id="nope"), pairs)
    with pytest.raises(ValueError, match="n_boot"):
        jk.win_rates(judg, pairs, n_boot=-1)


def test_length_normalized_win_rate_formula(small):
    pairs, judg = small
    wr = jk.win_rates(judg, pairs, n_boot=0).set_index("metric").loc["win_rate", "estimate"]
    ln = jk.length_normalized_win_rates(judg, pairs, temperature=100.0, n_boot=0).iloc[0]
    len_model = np.mean([200, 50, 300, 100])
    len_base = np.mean([100, 100, 100, 100])
    assert ln["metric"] == "ln_win_rate"
    assert ln["estimate"] == pytest.approx(wr * 2 * special.expit((len_base - len_model) / 100.0))
    with pytest.raises(ValueError, match="temperature"):
        jk.length_normalized_win_rates(judg, pairs, temperature=0)


def test_length_balanced_win_rate_averages_the_longer_and_shorter_strata(small):
    pairs, judg = small
    lb = jk.length_balanced_win_rates(judg, pairs, n_boot=0).iloc[0]
    # longer: p1 (0.55), p3 (0.9); shorter: p2 (0.25); p4 has equal lengths
    assert lb["estimate"] == pytest.approx(100 * ((0.55 + 0.9) / 2 + 0.25) / 2)
    assert (lb["n_longer"], lb["n_shorter"], lb["n"]) == (2, 1, 4)


def test_length_balanced_falls_back_to_the_overall_rate_for_an_empty_stratum():
    pairs = _pairs([("p1", "x1", "base", "m", 10, 20), ("p2", "x2", "base", "m", 10, 30)])
    judg = _judg([("p1", "ab", 0, "b", 0.2), ("p2", "ab", 0, "a", 0.6)])
    lb = jk.length_balanced_win_rates(judg, pairs, n_boot=0).iloc[0]
    assert lb["estimate"] == pytest.approx(100 * 0.6)
    assert lb["n_shorter"] == 0


def test_several_judges_get_separate_rows(small):
    pairs, judg = small
    both = pd.concat([judg, judg.assign(judge="k", p_a=1 - judg["p_a"],
                                        verdict=judg["verdict"].map({"a": "b", "b": "a", "tie": "tie"}))])
    wr = jk.win_rates(both, pairs, n_boot=0)
    est = wr[wr["metric"] == "win_rate"].set_index("judge")["estimate"]
    assert est["j"] + est["k"] == pytest.approx(100.0)


# ---- nothing silent ----------------------------------------------------------------------------

def test_nothing_usable_gives_nan_and_a_warning_not_a_zero_division():
    # the reliability repro: every verdict missing, or preference="prob" without p_a
    lb = jk.sim.simulate_leaderboard(3, 60, seed=0)
    for j, kw, why in ((lb.judgments.assign(verdict=None, p_a=np.nan), {}, "every verdict is missing"),
                       (lb.judgments.assign(p_a=np.nan), {"preference": "prob"}, "needs p_a")):
        with pytest.warns(jk.MetricWarning, match=rf"judge 'sim-judge' and model\(s\) \['model_0'.*{why}"):
            out = jk.win_rates(j, lb.pairs, n_boot=20, **kw)
        assert out["estimate"].isna().all() and (out["n"] == 0).all() and len(out) == 6
        with pytest.warns(jk.MetricWarning, match="lc_win_rate is NaN"):
            lc = jk.lc_win_rates(j, lb.pairs, n_boot=0, **kw)
        assert lc["lc_win_rate"].isna().all() and len(lc) == 3
        for fn in (jk.length_normalized_win_rates, jk.length_balanced_win_rates):
            with pytest.warns(jk.MetricWarning):
                assert fn(j, lb.pairs, n_boot=5, **kw)["estimate"].isna().all()


def test_one_unusable_model_is_a_nan_row_beside_the_others(small):
    pairs, judg = small
    pairs = pd.concat([pairs, _pairs([("p5", "x5", "base", "dead", 100, 90)])], ignore_index=True)
    judg = pd.concat([judg, _judg([("p5", "ab", 0, None, np.nan)])], ignore_index=True)
    with pytest.warns(jk.MetricWarning, match=r"\['dead'\]"):
        out = jk.win_rates(judg, pairs, baseline="base", n_boot=0)
    dead = out[out["model"] == "dead"]
    assert dead["estimate"].isna().all() and (dead["n_invalid"] == 1).all()
    assert out.loc[out["model"] == "m", "estimate"].notna().all()


def test_empty_tables_are_errors_and_few_instructions_warn(small):
    pairs, judg = small
    with pytest.raises(ValueError, match="judgments: the table is empty"):
        jk.win_rates(judg.iloc[:0], pairs)
    with pytest.raises(ValueError, match="pairs: the table is empty"):
        jk.win_rates(judg, pairs.iloc[:0])
    with pytest.warns(jk.MetricWarning, match=r"resampled from only 4 instructions"):
        jk.win_rates(judg, pairs, n_boot=50)


# ---- the vectorised preparation equals the straightforward pandas version ----------------------

def _prepare_reference(judgments, pairs, baseline):
    """The preference rows built with merges and groupbys on the id strings."""
    pairs = jk.validate_pairs(pairs)
    j = jk.validate_judgments(judgments, pairs)
    base_a = pairs["model_a"] == baseline
    p = pd.DataFrame({"pair_id": pairs["pair_id"],
                      "model": np.where(base_a, pairs["model_b"], pairs["model_a"]),
                      "model_side": np.where(base_a, "b", "a"),
                      "instruction": pairs["instruction_id"]})
    j = j.merge(p, on="pair_id")
    v = j["verdict"].astype(object)
    s_verdict = np.select([v == j["model_side"], v == "tie", v.isin(["a", "b"])], [1.0, 0.5, 0.0], np.nan)
    p_model = np.where(j["model_side"] == "a", j["p_a"], 1 - j["p_a"])
    j["s"] = np.where(j["p_a"].isna(), s_verdict, p_model)
    j["s_discrete"] = s_verdict
    j = j[j["s"].notna()]
    per_order = j.groupby(["judge", "pair_id", "model", "instruction", "order"]).agg(
        s=("s", "mean"), s_discrete=("s_discrete", "mean"), n=("s", "size")).reset_index()
    return per_order.groupby(["judge", "pair_id", "model", "instruction"]).agg(
        y=("s", "mean"), y_discrete=("s_discrete", "mean"), n_judgments=("n", "sum"),
        orders=("order", lambda o: "+".join(sorted(o)))).reset_index()


def test_vectorised_preparation_equals_the_groupby_version():
    from judgekit.winrate._data import prepare

    sim = jk.sim.simulate_leaderboard(4, 80, soft=True, seed=3)
    j = sim.judgments.copy()
    rng = np.random.default_rng(0)
    j.loc[rng.random(len(j)) < 0.2, "p_a"] = np.nan
    j.loc[rng.random(len(j)) < 0.1, "verdict"] = None
    swapped = j.sample(frac=0.5, random_state=1).assign(
        order="ba", repeat=0, p_a=lambda d: 1 - d["p_a"],
        verdict=lambda d: d["verdict"].map({"a": "b", "b": "a", "tie": "tie"}))
    j = pd.concat([j, swapped, j.assign(judge="second", p_a=np.nan)], ignore_index=True)
    ref = _prepare_reference(j, sim.pairs, "baseline")
    for judge, prep in prepare(j, sim.pairs, "baseline").items():
        mine = prep.rows.set_index("pair_id").sort_index()
        theirs = ref[ref["judge"] == judge].set_index("pair_id").sort_index()
        assert mine.index.tolist() == theirs.index.tolist()
        np.testing.assert_allclose(mine[["y", "y_discrete"]].to_numpy(float),
                                   theirs[["y", "y_discrete"]].to_numpy(float), rtol=1e-15, atol=0)
        assert (mine["n_judgments"] == theirs["n_judgments"]).all()
        assert (mine["orders"] == theirs["orders"]).all()
        assert (mine["model"] == theirs["model"]).all()
        assert prep.rows["pair_id"].tolist() == [p for p in sim.pairs["pair_id"] if p in set(mine.index)]
