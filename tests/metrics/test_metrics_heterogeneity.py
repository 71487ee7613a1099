"""Flip rates that vary by pair: the test, and the warning of position and length bias."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.exceptions import MetricWarning


def _judged(per_pair: bool, seed: int, n_pairs: int = 600, repeats: int = 3):
    # decisions without flips, then each repeat flipped with the pair's own rate (known truth)
    pairs, j, _ = jk.sim.simulate_judgments(n_pairs, accuracy=0.75, length_bias=1.0, repeats=repeats,
                                        seed=seed)
    rng = np.random.default_rng(seed)
    q_pair = rng.beta(0.4, 1.6, n_pairs) if per_pair else np.full(n_pairs, 0.2)
    q = pd.Series(q_pair, index=pairs["pair_id"]).reindex(j["pair_id"]).to_numpy()
    v = j["verdict"].to_numpy(dtype=object)
    return pairs, j.assign(verdict=np.where(rng.random(len(j)) < q, np.where(v == "a", "b", "a"), v))


def _table(q_pair: np.ndarray, seed: int, repeats: int = 3) -> pd.DataFrame:
    """A judgments table built directly: a decision per (pair, order), each repeat flipped with
    the pair's rate (no texts: fast enough for many replications)."""
    rng = np.random.default_rng(seed)
    n = len(q_pair)
    pair = np.repeat(np.arange(n), 2 * repeats)
    order = np.tile(np.repeat(["ab", "ba"], repeats), n)
    decision = np.repeat(rng.random((n, 2)) < 0.6, repeats, axis=1).ravel()
    flip = rng.random(2 * n * repeats) < q_pair[pair]
    return pd.DataFrame({"pair_id": [f"p{i}" for i in pair], "judge": "sim", "order": order,
                         "repeat": np.tile(np.arange(repeats), 2 * n), "id_swap": False,
                         "verdict": np.where(decision ^ flip, "a", "b")})


def test_one_flip_rate_is_not_rejected_more_often_than_alpha():
    # 40 judges with one flip rate (0.2 in one order, 0.1 in the other): a valid one-sided
    # test at 0.01 rejects about 0.4; 3 or more happen with probability 0.8% (binomial 40, 0.01)
    p = []
    for seed in range(40):
        j = _table(np.full(500, 0.2), seed)
        q_ba = np.where(j["order"] == "ba", 0.1, 0.2)
        rng = np.random.default_rng(seed)
        j = _table(np.zeros(500), seed)  # decisions only
        flip = rng.random(len(j)) < q_ba
        j["verdict"] = np.where(flip, np.where(j["verdict"] == "a", "b", "a"), j["verdict"])
        p.append(jk.flip_heterogeneity(j).loc[0, "p_value"])
    assert sum(x < 0.01 for x in p) <= 2
    # per-pair rates in the same design are found nearly always
    found = [jk.flip_heterogeneity(_table(np.random.default_rng(s).beta(0.4, 1.6, 500), s))
             .loc[0, "p_value"] < 0.01 for s in range(10)]
    assert sum(found) >= 9
    # and the statistic behaves: dispersion near 1
    t = jk.flip_heterogeneity(_judged(False, 99)[1])
    assert 0.8 < t.loc[0, "dispersion"] < 1.25


def test_per_pair_flip_rates_are_detected_and_the_biases_warn():
    pairs, j = _judged(True, 1)
    t = jk.flip_heterogeneity(j)
    assert t.loc[0, "repeats"] == 3 and t.loc[0, "n_pairs"] == 600
    assert t.loc[0, "p_value"] < 1e-6 and t.loc[0, "dispersion"] > 1.3
    assert t.loc[0, "both_unstable"] > t.loc[0, "expected_both"]
    with pytest.warns(MetricWarning, match="length_bias: the flip rate varies by pair"):
        jk.length_bias(j, pairs, n_boot=0)
    with pytest.warns(MetricWarning, match="position_bias: the flip rate varies by pair"):
        jk.position_bias(j, pairs, n_boot=0)
    pairs, j = _judged(False, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MetricWarning)
        jk.length_bias(j, pairs, n_boot=0)


def test_too_few_pairs_or_no_repeats_give_nan():
    _, j, _ = jk.sim.simulate_judgments(5, repeats=3, flip_q=0.2, seed=0)
    assert np.isnan(jk.flip_heterogeneity(j).loc[0, "p_value"])
    _, j, _ = jk.sim.simulate_judgments(50, repeats=1, seed=0)
    t = jk.flip_heterogeneity(j)
    assert t.loc[0, "n_pairs"] == 0 and np.isnan(t.loc[0, "p_value"])
