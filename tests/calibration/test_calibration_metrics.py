"""Selection-bias metrics against published tables and an independent library (pingouin)."""

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa

import judgekit as jk
from judgekit.calibration.selection_bias import _kappa_weighted

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8],
                          [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], dtype=float)
# ... and their Table 4 values
PUBLISHED = {"icc21": 0.29, "icc2k": 0.62, "icc31": 0.71, "icc3k": 0.91}


def _pingouin(x):
    long = pd.DataFrame(x).reset_index().melt(id_vars="index", var_name="rater", value_name="y")
    icc = pg.intraclass_corr(long, targets="index", raters="rater", ratings="y").set_index("Type")
    # pingouin 0.5 names them ICC2k/ICC3k, newer ones ICC(A,k)/ICC(C,k) (McGraw & Wong)
    names = {"icc21": ("ICC2", "ICC(A,1)"), "icc2k": ("ICC2k", "ICC(A,k)"),
             "icc31": ("ICC3", "ICC(C,1)"), "icc3k": ("ICC3k", "ICC(C,k)")}
    return {k: float(icc.loc[next(n for n in v if n in icc.index), "ICC"]) for k, v in names.items()}


def test_icc_reproduces_shrout_fleiss_table_and_pingouin():
    ours = jk.icc_two_way(SHROUT_FLEISS)
    for key, value in PUBLISHED.items():
        assert round(ours[key], 2) == value
    for key, value in _pingouin(SHROUT_FLEISS).items():
        assert ours[key] == pytest.approx(value, abs=1e-12)


def test_icc_matches_pingouin_on_random_data():
    x = np.random.default_rng(0).normal(size=(50, 4)) + np.arange(4) * 0.3
    x += np.random.default_rng(1).normal(size=(50, 1))
    ours, ref = jk.icc_two_way(x), _pingouin(x)
    for key in ref:
        assert ours[key] == pytest.approx(ref[key], abs=1e-12)


def test_bootstrap_weights_equal_replicating_the_targets():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(12, 3)) + rng.normal(size=(12, 1))
    w = rng.multinomial(12, np.full(12, 1 / 12), size=3).astype(float)
    weighted = jk.icc_two_way(x, w)
    for b in range(3):
        replicated = jk.icc_two_way(np.repeat(x, w[b].astype(int), axis=0))
        for key in replicated:
            assert weighted[key][b] == pytest.approx(replicated[key], abs=1e-10)
    counts = np.stack([(x > 0).sum(axis=1), (x <= 0).sum(axis=1)], axis=1).astype(float)
    for b in range(3):
        rep = np.repeat(counts, w[b].astype(int), axis=0)
        assert _kappa_weighted(counts, w[b:b + 1])[0] == pytest.approx(fleiss_kappa(rep), abs=1e-12)


def test_fleiss_kappa_reproduces_the_textbook_example():
    # the worked example of Fleiss' kappa (10 subjects, 14 raters, 5 categories): κ = 0.210
    table = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
                      [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
                      [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]], dtype=float)
    assert round(fleiss_kappa(table), 3) == 0.210
    # judgekit's bootstrap kappa with unit weights is statsmodels' kappa (0.20993 here)
    assert _kappa_weighted(table, np.ones((1, 10)))[0] == pytest.approx(fleiss_kappa(table), abs=1e-12)


def test_metrics_read_p_o1_across_arrangements_as_the_paper_does():
    pairs, j, _ = jk.sim.simulate_judgments(150, token_bias=0.8, position_bias=-0.5,
                                        id_swap=(False, True), seed=4)
    m = jk.selection_bias_metrics(j, pairs, n_boot=0).set_index("metric")
    # independent construction: P(o1) = P(response a) per arrangement, straight from the table
    wide = j.pivot_table(index="pair_id", columns=["order", "id_swap"], values="p_a")
    x = wide[[("ab", False), ("ba", True), ("ba", False), ("ab", True)]].to_numpy()
    ref = _pingouin(x)
    assert m.loc["icc2k", "estimate"] == pytest.approx(ref["icc2k"], abs=1e-12)
    assert m.loc["icc3k", "estimate"] == pytest.approx(ref["icc3k"], abs=1e-12)
    a = (x > 0.5).sum(axis=1)
    assert m.loc["fleiss_kappa", "estimate"] == pytest.approx(
        fleiss_kappa(np.stack([a, 4 - a], axis=1)), abs=1e-12)
    assert m.loc["all_agree", "estimate"] == pytest.approx(np.mean((a == 0) | (a == 4)))
    lab = pairs.set_index("pair_id").loc[wide.index, "label"].to_numpy()
    choice = np.where(x > 0.5, "a", "b")
    rec_a = (choice[lab == "a"] == "a").mean(axis=0)
    rec_b = (choice[lab == "b"] == "b").mean(axis=0)
    rstd = np.std(np.stack([rec_a, rec_b]), axis=0, ddof=1).mean()
    assert m.loc["rstd", "estimate"] == pytest.approx(rstd, abs=1e-12)
    assert m.loc["accuracy", "estimate"] == pytest.approx((choice == lab[:, None]).mean(), abs=1e-12)


def test_unbiased_judge_is_consistent_and_bias_lowers_kappa_with_intervals_around_it():
    _, fair, _ = jk.sim.simulate_judgments(400, id_swap=(False, True), seed=5)
    _, biased, _ = jk.sim.simulate_judgments(400, token_bias=1.5, id_swap=(False, True), seed=5)
    f = jk.selection_bias_metrics(fair, n_boot=200).set_index("metric")
    b = jk.selection_bias_metrics(biased, n_boot=200).set_index("metric")
    assert f.loc["fleiss_kappa", "estimate"] == 1.0 and f.loc["icc2k", "estimate"] == 1.0
    assert b.loc["fleiss_kappa", "ci_high"] < 0.8
    row = b.loc["fleiss_kappa"]
    assert row["ci_low"] < row["estimate"] < row["ci_high"]


def test_missing_arrangements_are_named():
    _, j, _ = jk.sim.simulate_judgments(20, seed=0)  # X0 and X2 only
    with pytest.raises(ValueError, match="present: X0, X2"):
        jk.selection_bias_metrics(j)
    m = jk.selection_bias_metrics(j, arrangements=("X0", "X2"), n_boot=0)
    assert set(m["n"]) == {20}


def test_rstd_ddof_0_is_the_reference_codes_population_value():
    # CalibraEval's code: np.std of the per-class recalls (ddof 0); the appendix: the sample std
    pairs, j, _ = jk.sim.simulate_judgments(300, token_bias=1.0, id_swap=(False, True), seed=2)
    sample = jk.selection_bias_metrics(j, pairs, n_boot=50).set_index("metric").loc["rstd"]
    population = jk.selection_bias_metrics(j, pairs, n_boot=50, rstd_ddof=0).set_index("metric").loc["rstd"]
    wide = j.pivot_table(index="pair_id", columns=["order", "id_swap"], values="p_a")
    x = wide[[("ab", False), ("ba", True), ("ba", False), ("ab", True)]].to_numpy()
    lab = pairs.set_index("pair_id").loc[wide.index, "label"].to_numpy()
    recalls = np.stack([((x > 0.5)[lab == "a"]).mean(axis=0), ((x < 0.5)[lab == "b"]).mean(axis=0)])
    assert population["estimate"] == pytest.approx(np.std(recalls, axis=0, ddof=0).mean(), abs=1e-12)
    assert sample["estimate"] == pytest.approx(np.sqrt(2) * population["estimate"], abs=1e-12)
    assert sample["ci_high"] == pytest.approx(np.sqrt(2) * population["ci_high"], abs=1e-12)
    with pytest.raises(ValueError, match="rstd_ddof"):
        jk.selection_bias_metrics(j, pairs, rstd_ddof=2)


def test_nothing_silent_in_the_selection_bias_metrics():
    pairs, j, _ = jk.sim.simulate_judgments(40, token_bias=1.0, id_swap=(False, True), seed=3)
    broken = j.assign(judge="broken", p_a=np.nan)  # every call failed
    with pytest.warns(jk.MetricWarning, match=r"judge 'broken'.*has a probability"):
        m = jk.selection_bias_metrics(pd.concat([j, broken]), n_boot=0)
    assert m.loc[m["judge"] == "broken", "estimate"].isna().all()
    assert m.loc[m["judge"] == "sim", "estimate"].notna().all()
    with pytest.warns(jk.MetricWarning, match="is NaN for judge 'broken'"):
        jk.selection_bias_metrics(broken, n_boot=0)  # no probability anywhere: NaN, not an error
    with pytest.raises(ValueError, match="empty"):
        jk.selection_bias_metrics(j.iloc[:0])
    with pytest.warns(jk.MetricWarning, match="only 3 pairs"):
        jk.selection_bias_metrics(j[j["pair_id"].isin(j["pair_id"].unique()[:3])], n_boot=20)
    with pytest.warns(jk.MetricWarning, match=r"rstd and accuracy are NaN.*labelled a or b"):
        m = jk.selection_bias_metrics(j, pairs.assign(label=None), n_boot=0)
    assert m.set_index("metric").loc[["rstd", "accuracy"], "estimate"].isna().all()
    same = j.assign(p_a=0.9)  # every choice is "a": κ is undefined
    with pytest.warns(jk.MetricWarning, match="fleiss_kappa is NaN"):
        assert np.isnan(jk.selection_bias_metrics(same, n_boot=0).set_index("metric").loc["fleiss_kappa", "estimate"])
