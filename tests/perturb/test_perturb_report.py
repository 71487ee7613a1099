"""bias_report and bias_summary against hand-computed values and external references."""

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

import judgekit as jk


@pytest.fixture
def pairs():
    return pd.DataFrame({
        "pair_id": ["p1", "p2", "p3", "p4", "p5"],
        "prompt": ["q1", "q2", "q3", "q4", "q5"],
        "response_a": ["a1", "a2", "a3", "a4", "a5"],
        "response_b": ["b1", "b2", "b3", "b4", "b5"],
        "label": ["a", "a", "b", "b", "a"],
        "model_a": ["me", "me", "other", "other", "x"],
        "model_b": ["other", "other", "me", "me", "y"],
    })


def _judgments(rows):
    return pd.DataFrame(rows, columns=["pair_id", "judge", "order", "repeat", "verdict"]).assign(p_a=np.nan)


def _bandwagon_case(pairs):
    pert = jk.perturb_bandwagon(pairs, percents=[90], target="a")
    pert["favours"] = ["a", "b", "a", "b", "a"]  # hand-set for the test
    verdicts = {  # pair: (repeat 0, repeat 1 = reference, perturbed)
        "p1": ("a", "a", "b"), "p2": ("a", "b", "b"), "p3": ("b", "b", "a"), "p4": ("b", "b", "b"),
        "p5": ("a", "a", None),  # an invalid perturbed verdict: the instance is left out
    }
    rows = []
    for pid, (v0, v1, vp) in verdicts.items():
        rows += [(pid, "J", "ab", 0, v0), (pid, "J", "ab", 1, v1)]
        rows.append((pert.set_index("source_pair_id").at[pid, "pair_id"], "J", "ab", 0, vp))
    return pert, _judgments(rows)


def test_hand_computed_rates(pairs):
    pert, j = _bandwagon_case(pairs)
    rep = jk.bias_report(pairs, pert, j, n_boot=200).set_index("metric")
    expected = {
        "robustness": (2 / 4, 4),          # p2 and p4 keep the reference verdict
        "consistency": (3 / 4, 4),         # repeat 0 = reference for p1, p3, p4
        "gap": (2 / 4 - 3 / 4, 4),
        "favoured_shift": ((-1 + 0 + 1 + 0) / 4, 4),
        "flip_to_favoured": (1 / 2, 2),    # flips p1 (away) and p3 (toward)
        "acc_ori": ((1 + 0.5 + 1 + 1) / 4, 4),
        "acc_hack": (1 / 4, 4),
    }
    for metric, (value, n) in expected.items():
        assert rep.at[metric, "estimate"] == pytest.approx(value), metric
        assert rep.at[metric, "n"] == n, metric
        assert rep.at[metric, "ci_low"] <= value + 1e-12 <= rep.at[metric, "ci_high"] + 1e-12, metric
    assert list(rep.columns) == ["bias", "variant", "estimate", "ci_low", "ci_high", "n", "p_value"]


def test_self_preference_and_position_mapping_by_hand(pairs):
    own = jk.perturb_self_enhancement(pairs, "me")  # p1..p4; own answer a, a, b, b; gold a, a, b, b
    swapped = jk.perturb_position(pairs.iloc[:2])
    rows = []
    for pid, v0, v1 in (("p1", "a", "a"), ("p2", "b", "b"), ("p3", "b", "a"), ("p4", "a", "a"), ("p5", "a", "a")):
        rows += [(pid, "J", "ab", 0, v0), (pid, "J", "ab", 1, v1)]
    # the swapped pair shows b first; verdict "a" there means the source's b
    rows += [("p1::position/rot1/ba", "J", "ab", 0, "a"), ("p2::position/rot1/ba", "J", "ab", 0, "a")]
    pert = pd.concat([own, swapped], ignore_index=True)
    rep = jk.bias_report(pairs, pert, _judgments(rows), n_boot=100).set_index(["bias", "metric"])
    # own answer is gold in all four: accuracy 1.5/4 (p1 1, p2 0, p3 .5, p4 0)
    # and there is no other-gold pair, so self_preference is undefined and left out
    assert ("self_enhancement", "self_preference") not in rep.index
    assert rep.at[("self_enhancement", "acc_ori"), "estimate"] == pytest.approx(1.5 / 4)
    # position: both perturbed verdicts are the source's b (favoured: shown first); reference a, b
    assert rep.at[("position", "robustness"), "estimate"] == pytest.approx(1 / 2)
    assert rep.at[("position", "favoured_shift"), "estimate"] == pytest.approx((1 - 0 + 1 - 1) / 2)


def test_self_preference_sign(pairs):
    mixed = pairs.assign(model_a=["me", "other", "me", "other", "x"], model_b=["other", "me", "other", "me", "y"])
    own = jk.perturb_self_enhancement(mixed, "me")  # own: a, b, a, b; gold a, a, b, b
    rows = []
    for pid, v in (("p1", "a"), ("p2", "b"), ("p3", "a"), ("p4", "b")):  # always picks its own
        rows += [(pid, "J", "ab", 0, v), (pid, "J", "ab", 1, v)]
    rep = jk.bias_report(mixed, own, _judgments(rows), n_boot=100).set_index("metric")
    # own-gold pairs p1, p4: right; other-gold pairs p2, p3: wrong -> 1 - 0
    assert rep.at["self_preference", "estimate"] == pytest.approx(1.0)


def test_bootstrap_interval_matches_the_binomial_standard_error():
    n = 600
    pairs = jk.sim.simulate_pairs(n, seed=2)
    pert = jk.perturb_cot(pairs)
    rng = np.random.default_rng(3)
    same = rng.random(n) < 0.7
    rows = []
    for pid, pp, s in zip(pairs["pair_id"], pert["pair_id"], same):
        rows += [(pid, "J", "ab", 0, "a"), (pid, "J", "ab", 1, "a"), (pp, "J", "ab", 0, "a" if s else "b")]
    rep = jk.bias_report(pairs, pert, _judgments(rows), n_boot=4000, ci=0.95).set_index("metric")
    p = same.mean()
    width = rep.at["robustness", "ci_high"] - rep.at["robustness", "ci_low"]
    assert width == pytest.approx(2 * 1.96 * np.sqrt(p * (1 - p) / n), rel=0.12)


def test_holm_matches_statsmodels():
    p = np.array([0.001, 0.02, 0.04, 0.3, 0.012, 0.0001])
    report = pd.DataFrame({
        "bias": [f"b{k}" for k in range(len(p))], "variant": "all", "metric": "favoured_shift",
        "estimate": [0.2, 0.1, -0.1, 0.0, -0.3, 0.4], "ci_low": np.nan, "ci_high": np.nan, "n": 50,
        "p_value": p,
    })
    s = jk.bias_summary(report, alpha=0.05).set_index("bias")
    reject, adjusted, _, _ = multipletests(p, alpha=0.05, method="holm")
    np.testing.assert_allclose(s["p_holm"].to_numpy(), adjusted)
    assert s["detected"].tolist() == reject.tolist()
    assert s["direction"].tolist() == ["toward", "none", "none", "none", "away", "toward"]
    # a bias without a p-value is not tested: Holm runs over the others, it is never "detected"
    missing = report.assign(p_value=np.r_[p[:-1], np.nan])
    m = jk.bias_summary(missing, alpha=0.05).set_index("bias")
    np.testing.assert_allclose(m["p_holm"].to_numpy()[:-1],
                               multipletests(p[:-1], alpha=0.05, method="holm")[1])
    assert np.isnan(m.at["b5", "p_holm"]) and not m.at["b5", "detected"]
    assert m.at["b5", "direction"] == "none"


def test_errors_name_what_is_wrong(pairs):
    pert, j = _bandwagon_case(pairs)
    with pytest.raises(ValueError, match="repeats 0 and 1"):
        jk.bias_report(pairs, pert, j[j["repeat"] == 0])
    with pytest.raises(ValueError, match="one judge"):
        jk.bias_report(pairs, pert, pd.concat([j, j.assign(judge="K")]))
    with pytest.raises(ValueError, match="no verdict rows"):
        jk.bias_report(pairs, pert, j[~j["pair_id"].str.startswith("p3::")])
    with pytest.raises(ValueError, match="source_pair_id"):
        jk.bias_report(pairs.iloc[1:], pert, j)
    with pytest.raises(ValueError, match="ci"):
        jk.bias_report(pairs, pert, j, ci=95)


# ---- the vectorised table handling equals the straightforward row-by-row version ----------------

def _map_to_source_loop(verdict, slots):
    v, s = verdict.to_numpy(dtype=object), slots.to_numpy(dtype=object)
    out = v.copy()
    for k in range(len(v)):
        if isinstance(s[k], str) and v[k] in ("a", "b", "c", "d"):
            out[k] = s[k]["abcd".index(v[k])]
    return out


def _favoured_loop(slots, order, favours):
    return np.array([s["abcd".index(o[0])] if isinstance(s, str) else f
                     for s, o, f in zip(slots, order, favours)], dtype=object)


def _eq_loop(x, y):
    return np.array([a == b for a, b in zip(x, y)], dtype=float)


def _random_rows(n, seed):
    rng = np.random.default_rng(seed)
    slots = pd.Series(rng.choice(np.array(["ab", "ba", "bca", "cab", "abcd", "dcba", None], dtype=object), n))
    width = slots.map(lambda s: len(s) if isinstance(s, str) else 2)
    verdict = pd.Series([rng.choice(["a", "b", "c", "d", "tie", None][: w] + ["tie", None]) for w in width],
                        dtype=object)
    order = pd.Series([("abcd"[:w])[::-1] if rng.random() < 0.5 else "abcd"[:w] for w in width])
    favours = pd.Series(rng.choice(np.array(["a", "b", None], dtype=object), n))
    return verdict, slots, order, favours


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_helpers_equal_the_row_by_row_versions(seed):
    from judgekit.perturb import report

    verdict, slots, order, favours = _random_rows(500, seed)
    same = lambda a, b: pd.Series(a, dtype=object).equals(pd.Series(b, dtype=object))  # noqa: E731
    assert same(report._map_to_source(verdict, slots), _map_to_source_loop(verdict, slots))
    assert same(report._favoured(slots, order, favours), _favoured_loop(slots, order, favours))
    x, y = verdict.to_numpy(dtype=object), np.roll(verdict.to_numpy(dtype=object), 1)
    np.testing.assert_array_equal(report._eq(x, y), _eq_loop(x, y))
    orders = pd.Series(["abc", "acb", "bca", "abcd", "dcab", "abd", "aab", "", "a", "b", None, "abcde"])
    expected = [isinstance(o, str) and sorted(o) == list("abcd"[: len(o)]) for o in orders]
    assert report._valid_wide_order(orders).tolist() == expected
    with pytest.raises(ValueError, match="beyond the 2 responses"):
        report._map_to_source(pd.Series(["c"]), pd.Series(["ab"]))


def test_report_is_identical_with_the_row_by_row_helpers(monkeypatch):
    from judgekit.perturb import report

    rng = np.random.default_rng(4)
    pairs = jk.sim.simulate_pairs(60, seed=3)
    pairs["response_c"] = "a third answer"
    pert = pd.concat([jk.perturb_position(pairs), jk.perturb_bandwagon(pairs, percents=[60, 90])],
                     ignore_index=True)
    rows = [(pid, "J", order, rep, rng.choice(np.array(["a", "b", "tie", None], dtype=object)))
            for pid in pairs["pair_id"] for rep in (0, 1) for order in ("ab", "ba", "abc")]
    for pid, slots in zip(pert["pair_id"], pert["slots"]):
        three = isinstance(slots, str) and len(slots) == 3
        choices = np.array(["a", "b", "c", None] if three else ["a", "b", None], dtype=object)
        rows.append((pid, "J", "abc" if three else "ab", 0, rng.choice(choices)))
    j = _judgments(rows)
    fast = jk.bias_report(pairs, pert, j, n_boot=100)
    monkeypatch.setattr(report, "_map_to_source", _map_to_source_loop)
    monkeypatch.setattr(report, "_favoured", _favoured_loop)
    monkeypatch.setattr(report, "_eq", _eq_loop)
    slow = jk.bias_report(pairs, pert, j, n_boot=100)
    pd.testing.assert_frame_equal(fast, slow)
    assert set(fast["bias"]) == {"position", "bandwagon"} and len(fast) > 20
