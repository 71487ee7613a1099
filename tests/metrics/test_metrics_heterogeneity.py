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


def _position_judge(n: int, seed: int, p_cr: float = 0.8, p_rc: float = 0.65, repeats: int = 3):
    """Pairs and a judge built directly (no simulator): in each pair's two orders the judge decides
    once, picking the human-preferred response with probability p_cr when it is shown first and
    p_rc when it is shown second (true de-noised PB = p_cr - p_rc), and each of ``repeats``
    requests flips that decision with the pair's own rate, Beta(0.4, 1.6) (mean 0.2)."""
    rng = np.random.default_rng(seed)
    label = np.where(rng.random(n) < 0.5, "a", "b")
    pairs = pd.DataFrame({"pair_id": [f"p{i}" for i in range(n)], "prompt": "q", "response_a": "x",
                          "response_b": "y", "label": label})
    q = rng.beta(0.4, 1.6, n)
    order = np.array(["ab", "ba"])
    first_is_preferred = (label == "a")[:, None] == (order == "ab")[None, :]   # n x 2: cr order?
    picks_preferred = rng.random((n, 2)) < np.where(first_is_preferred, p_cr, p_rc)
    picks_preferred = np.repeat(picks_preferred[:, :, None], repeats, axis=2)
    picks_preferred ^= rng.random((n, 2, repeats)) < q[:, None, None]
    preferred = np.repeat(np.repeat(label[:, None], 2, axis=1)[:, :, None], repeats, axis=2)
    verdict = np.where(picks_preferred, preferred, np.where(preferred == "a", "b", "a"))
    j = pd.DataFrame({"pair_id": np.repeat(pairs["pair_id"].to_numpy(), 2 * repeats), "judge": "sim",
                      "order": np.tile(np.repeat(order, repeats), n),
                      "repeat": np.tile(np.arange(repeats), 2 * n), "id_swap": False,
                      "verdict": verdict.ravel()})
    return pairs, j, p_cr - p_rc


@pytest.mark.slow  # 3 judges of 8,000 pairs x 6 requests: about 5 s, 16 s on a loaded machine
def test_per_pair_flip_rates_widen_the_position_bias_interval_to_cover_the_truth():
    # per-pair rates Beta(0.4, 1.6), mean 0.2: the one-rate de-noising shrinks PB toward 0 by
    # about 20% (it reads the mean flip rate as 0.12); with 8,000 pairs its interval misses the
    # truth nearly always. The widened interval spans both bounds of the mean flip rate.
    missed, covered, ratio = 0, 0, []
    for seed in range(3):
        pairs, j, truth = _position_judge(8000, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MetricWarning)
            one = jk.position_bias(j, pairs, n_boot=200, seed=seed, flip_rates="one")
        with pytest.warns(MetricWarning, match="interval is widened"):
            auto = jk.position_bias(j, pairs, n_boot=200, seed=seed)
        one, auto = one.set_index("metric"), auto.set_index("metric")
        for key in ("position_bias", "acc_cr_denoised", "acc_rc_denoised"):
            assert auto.loc[key, "estimate"] == one.loc[key, "estimate"]   # not moved
            assert auto.loc[key, "ci_low"] <= one.loc[key, "ci_low"]
            assert auto.loc[key, "ci_high"] >= one.loc[key, "ci_high"]
        o, a = one.loc["position_bias"], auto.loc["position_bias"]
        missed += not o["ci_low"] <= truth <= o["ci_high"]
        covered += bool(a["ci_low"] <= truth <= a["ci_high"])
        assert a["se"] > o["se"]
        ratio.append((a["ci_high"] - a["ci_low"]) / (o["ci_high"] - o["ci_low"]))
    assert missed == 3          # the one-rate interval: too narrow and off centre
    assert covered == 3
    assert max(ratio) < 4.0     # widened by the gap between the bounds, not without limit


def test_one_flip_rate_leaves_the_interval_as_it_was():
    pairs, j = _judged(False, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MetricWarning)
        auto = jk.position_bias(j, pairs, n_boot=100, seed=1)
    one = jk.position_bias(j, pairs, n_boot=100, seed=1, flip_rates="one")
    pd.testing.assert_frame_equal(auto, one)
    with pytest.raises(ValueError, match="flip_rates"):
        jk.position_bias(j, pairs, n_boot=0, flip_rates="many")


def test_report_card_widens_as_the_tidy_functions_do():
    pairs, j = _judged(True, 1)
    with pytest.warns(MetricWarning, match="report_card: .*interval is widened"):
        card = jk.report_card(j, pairs, metrics=["position_bias", "length_bias"], n_boot=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MetricWarning)
        narrow = jk.report_card(j, pairs, metrics=["position_bias", "length_bias"], n_boot=100,
                                flip_rates="one")
        for fn, key in ((jk.position_bias, "position_bias"), (jk.length_bias, "length_bias")):
            tidy = fn(j, pairs, n_boot=100).set_index("metric").loc[key]
            assert card.loc[0, f"{key}_ci_low"] == pytest.approx(tidy["ci_low"])
            assert card.loc[0, f"{key}_ci_high"] == pytest.approx(tidy["ci_high"])
            assert card.loc[0, f"{key}_ci_high"] > narrow.loc[0, f"{key}_ci_high"]
