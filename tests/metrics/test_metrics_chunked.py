"""Tables too large for one statistics matrix are computed chunk by chunk of groups, with the same
numbers: every group's bootstrap is seeded by its pair set as in one pass."""

import warnings

import numpy as np
import pandas as pd

import judgekit as jk
from judgekit.metrics import _engine


def _judges() -> tuple[pd.DataFrame, pd.DataFrame]:
    pairs, j, _ = jk.sim.simulate_judgments(60, accuracy=0.8, position_bias=0.4, flip_q=0.1,
                                        repeats=2, judge_name="j0", seed=0)
    frames = [j]
    for k in range(1, 6):  # judges 3 and 5 see a subset of the pairs: a second pair set
        _, jj, _ = jk.sim.simulate_judgments(pairs, accuracy=0.7, position_bias=0.1 * k, flip_q=0.2,
                                         repeats=2, judge_name=f"j{k}", seed=k)
        if k in (3, 5):
            jj = jj[jj["pair_id"].isin(pairs["pair_id"].iloc[:40])]
        frames.append(jj)
    return pairs, pd.concat(frames, ignore_index=True)


def test_chunks_of_groups_give_the_numbers_of_one_pass(monkeypatch):
    pairs, j = _judges()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = jk.report_card(j, pairs, n_boot=200, seed=4)
        tidy = jk.position_bias(j, pairs, n_boot=200, seed=4)
        monkeypatch.setattr(_engine, "S_ELEMENTS", 60 * 60)  # about one judge per chunk
        calls = []
        real = _engine._slice
        monkeypatch.setattr(_engine, "_slice", lambda *a: calls.append(a[1:]) or real(*a))
        chunked = jk.report_card(j, pairs, n_boot=200, seed=4)
        chunked_tidy = jk.position_bias(j, pairs, n_boot=200, seed=4)
    assert len(calls) >= 6  # really chunked (report card and tidy metric)
    pd.testing.assert_frame_equal(chunked, whole, rtol=1e-12, atol=0)
    pd.testing.assert_frame_equal(chunked_tidy, tidy, rtol=1e-12, atol=0)
    assert np.isfinite(whole["position_consistency_ci_low"]).all()
