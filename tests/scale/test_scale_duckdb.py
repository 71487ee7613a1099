"""Metrics on a judgments log read by DuckDB (through ibis) equal the pandas path on the same rows.

The reference is the pandas path, which the rest of the suite checks against published tables,
other libraries and simulations with known truth; here the engine path must reproduce it (to
1e-9) on logs with several judges, repeats, id swaps, ties, invalid verdicts and shuffled rows
spread over several parquet files.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import judgekit as jk

ibis = pytest.importorskip("ibis", reason="the scale tests need the [duckdb] extra")
pytest.importorskip("duckdb", reason="the scale tests need the [duckdb] extra")

from judgekit.inference import _prepare as ppi_prepare  # noqa: E402

TOL = {"rtol": 1e-9, "atol": 1e-12}


def _log(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Three judges on 80 pairs, 2 orders x 2 id swaps x 3 repeats, ties and invalid verdicts,
    rows shuffled (so that first appearance differs from pair_id order)."""
    pairs, j0, _ = jk.sim.simulate_judgments(80, accuracy=0.8, position_bias=0.5, flip_q=0.1,
                                         tie_rate=0.1, repeats=3, id_swap=(False, True),
                                         judge_name="alpha", seed=seed)
    frames = [j0]
    for k, name in enumerate(("beta", "gamma"), start=1):
        _, jk_, _ = jk.sim.simulate_judgments(pairs, accuracy=0.7, position_bias=-0.3 * k,
                                          flip_q=0.2, repeats=3, id_swap=(False, True),
                                          judge_name=name, seed=seed + k)
        frames.append(jk_)
    j = pd.concat(frames, ignore_index=True)
    rng = np.random.default_rng(seed)
    j.loc[rng.random(len(j)) < 0.03, "verdict"] = None
    j = j.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    pairs = pairs.assign(dataset=np.where(np.arange(len(pairs)) % 3 == 0, "x", "y"))
    return pairs, j


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    pairs, j = _log()
    folder = tmp_path_factory.mktemp("log")
    bounds = [0, len(j) // 3, 2 * len(j) // 3, len(j)]
    for i in range(3):  # three files, read back in name order
        j.iloc[bounds[i]:bounds[i + 1]].to_parquet(folder / f"part-{i}.parquet", index=False)
    return pairs, pd.read_parquet(folder), folder


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def test_folder_reads_back_as_pandas_does(log):
    pairs, j, folder = log
    assert jk.scan_table(folder, progress=False).count() == len(j)
    assert len(j) == 3 * 80 * 2 * 2 * 3


@pytest.mark.parametrize("by", [("judge",), None, ("judge", "dataset")])
def test_report_card_equals_the_pandas_path(log, by):
    pairs, j, folder = log
    scan = jk.scan_table(folder, progress=False)
    ours = _quiet(jk.report_card, scan, pairs, by=by, n_boot=100, seed=3)
    ref = _quiet(jk.report_card, j, pairs, by=by, n_boot=100, seed=3)
    pd.testing.assert_frame_equal(ours, ref, **TOL)
    assert ref["position_bias_ci_low"].notna().all()  # the intervals were compared, not NaN


def test_tidy_metrics_and_splits_equal_the_pandas_path(log):
    pairs, j, folder = log
    scan = jk.scan_table(folder, progress=False)
    for func in (jk.position_bias, jk.flip_noise, jk.accuracy, jk.position_consistency):
        pd.testing.assert_frame_equal(_quiet(func, scan, pairs, n_boot=100),
                                      _quiet(func, j, pairs, n_boot=100), **TOL)
    pd.testing.assert_frame_equal(_quiet(jk.report_card, scan, pairs, splits=4),
                                  _quiet(jk.report_card, j, pairs, splits=4), **TOL)


def test_an_ibis_table_without_row_order_takes_pairs_in_pair_id_order(log):
    pairs, j, folder = log
    con = ibis.duckdb.connect()
    table = con.create_table("log", ibis.memtable(j))
    ours = _quiet(jk.report_card, jk.scan_table(table, progress=False), pairs, n_boot=100)
    ref = _quiet(jk.report_card, j.sort_values("pair_id", kind="stable"), pairs, n_boot=100)
    pd.testing.assert_frame_equal(ours, ref, **TOL)
    shuffled = _quiet(jk.report_card, j, pairs, n_boot=100)
    assert not np.allclose(ours["position_bias_ci_low"], shuffled["position_bias_ci_low"])


def _win_log(tmp_path):
    sim = jk.sim.simulate_leaderboard(n_models=3, n_instructions=60, seed=1)
    j = sim.judgments.sample(frac=1.0, random_state=0).reset_index(drop=True)
    rng = np.random.default_rng(1)
    p_a = rng.random(len(j))
    j = j.assign(p_a=np.where(rng.random(len(j)) < 0.5, p_a, np.nan))
    j.loc[rng.random(len(j)) < 0.05, "verdict"] = None
    path = tmp_path / "win.parquet"
    j.to_parquet(path, index=False)
    return sim.pairs, j, path


def test_win_rates_and_lc_equal_the_pandas_path(tmp_path):
    pairs, j, path = _win_log(tmp_path)
    scan = jk.scan_table(path, progress=False)
    for preference in ("auto", "verdict", "prob"):
        pd.testing.assert_frame_equal(_quiet(jk.win_rates, scan, pairs, preference=preference),
                                      _quiet(jk.win_rates, j, pairs, preference=preference), **TOL)
    pd.testing.assert_frame_equal(_quiet(jk.lc_win_rates, scan, pairs, n_boot=50),
                                  _quiet(jk.lc_win_rates, j, pairs, n_boot=50), **TOL)


def test_ppi_predictions_and_estimates_equal_the_pandas_path(tmp_path):
    pairs, j, path = _win_log(tmp_path)
    rng = np.random.default_rng(2)
    pairs = pairs.assign(label=np.where(rng.random(len(pairs)) < 0.5,
                                        rng.choice(["a", "b", "tie"], len(pairs)), None))
    scan = jk.scan_table(path, progress=False)
    frame, _ = ppi_prepare.load_tables(j, pairs)
    keys = ["judge", "pair_id"]
    for target in ("win", "b", "tie"):
        for prediction in ("auto", "verdict", "prob"):
            ours = ppi_prepare.predictions(scan, target, prediction)
            ref = ppi_prepare.predictions(frame, target, prediction)
            pd.testing.assert_frame_equal(ours.sort_values(keys).reset_index(drop=True),
                                          ref.sort_values(keys).reset_index(drop=True), **TOL)
    pd.testing.assert_frame_equal(_quiet(jk.ppi_win_rates, scan, pairs),
                                  _quiet(jk.ppi_win_rates, j, pairs), **TOL)
    with pytest.raises(TypeError, match="in memory"):
        jk.plan_labels(scan, pairs)


def test_bad_logs_are_named_like_the_frame_path(tmp_path):
    pairs, j = _log(seed=5)
    j = j[j["judge"] == "alpha"]
    cases = {
        "more than once": pd.concat([j, j.iloc[:1]]),
        "'order' must be one of": j.assign(order=np.where(np.arange(len(j)) == 7, "AB", j["order"])),
        "'verdict' must be one of": j.assign(verdict=np.where(np.arange(len(j)) == 3, "A",
                                                              j["verdict"].astype(object))),
        "not in pairs": j.assign(pair_id=np.where(np.arange(len(j)) == 0, "nope", j["pair_id"])),
    }
    for i, (message, bad) in enumerate(cases.items()):
        path = tmp_path / f"bad{i}.parquet"
        bad.to_parquet(path, index=False)
        with pytest.raises(ValueError, match=message):
            jk.report_card(jk.scan_table(path, progress=False), pairs, n_boot=0)
    with pytest.raises(ValueError, match="required column"):
        path = tmp_path / "nojudge.parquet"
        j.drop(columns="judge").to_parquet(path)
        jk.report_card(jk.scan_table(path, progress=False), pairs, n_boot=0)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        jk.scan_table(tmp_path / "missing.parquet")


def test_arrangement_table_and_noa_fit_equal_the_pandas_path(tmp_path):
    _, j, _ = jk.sim.simulate_judgments(150, token_bias=1.0, position_bias=0.3, repeats=2,
                                    id_swap=(False, True), seed=4)
    j = j.sample(frac=1.0, random_state=4).reset_index(drop=True)
    j.loc[np.random.default_rng(4).random(len(j)) < 0.05, "p_a"] = np.nan
    j.to_parquet(tmp_path / "ids.parquet", index=False)
    scan = jk.scan_table(tmp_path / "ids.parquet", progress=False)
    for complete in ((), ("X0", "X1", "X2")):
        ours = jk.arrangement_table(scan, complete=complete)
        ref = jk.arrangement_table(j, complete=complete)
        pd.testing.assert_frame_equal(ours, ref, **TOL)
    cols = ["s0", "s1", "s2", "s3"]
    fit_ours, fit_ref = jk.noa_fit(ours[cols].to_numpy()), jk.noa_fit(ref[cols].to_numpy())
    grid = np.linspace(0.01, 0.99, 9)
    np.testing.assert_allclose(fit_ours(grid), fit_ref(grid), rtol=1e-9)
    assert not np.allclose(fit_ref(grid), grid)  # the map is not the identity
