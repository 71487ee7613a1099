"""Every metric on a table small enough to compute by hand, plus the edge cases: invalid verdicts,
ties, missing labels or repeats, zero denominators, bad input.

The hand table (judge "J", K = 3 repeats, both orders; verdicts in response terms):

    pair  label  ab (a shown first)   ba (b shown first)
    p1    a      a a b                a a a
    p2    b      b b b                a b b
    p3    a      a a a                b b a
    p4    tie    tie a a              tie tie (invalid)

Expected values are worked out in the comments of each test from the definitions in docs/spec.md
(#accuracy, #bias, #consistency).
"""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.metrics._cells import expected_max_share

VERDICTS = {
    ("p1", "ab"): ["a", "a", "b"], ("p1", "ba"): ["a", "a", "a"],
    ("p2", "ab"): ["b", "b", "b"], ("p2", "ba"): ["a", "b", "b"],
    ("p3", "ab"): ["a", "a", "a"], ("p3", "ba"): ["b", "b", "a"],
    ("p4", "ab"): ["tie", "a", "a"], ("p4", "ba"): ["tie", "tie", None],
}


def _pairs() -> pd.DataFrame:
    return pd.DataFrame({
        "pair_id": ["p1", "p2", "p3", "p4"], "prompt": "q",
        "response_a": ["one two three", "x", "a b", "yy"],
        "response_b": ["one", "y y y", "c", "zz zz"],
        "label": ["a", "b", "a", "tie"], "task": ["t1", "t1", "t2", "t2"],
    })


def _judgments(judge: str = "J", verdicts: dict | None = None) -> pd.DataFrame:
    rows = []
    for (pid, order), vs in (verdicts or VERDICTS).items():
        for k, v in enumerate(vs):
            rows.append({"pair_id": pid, "judge": judge, "order": order, "repeat": k,
                         "verdict": v, "p_a": np.nan})
    return pd.DataFrame(rows)


def _est(frame: pd.DataFrame) -> pd.Series:
    return frame.set_index("metric")["estimate"]


def test_accuracy_by_hand():
    acc = _est(jk.accuracy(_judgments(), _pairs(), n_boot=0))
    # Z (picked y_c) per repeat: p1 cr=ab 110, rc=ba 111; p2 cr=ba 011, rc=ab 111;
    # p3 cr=ab 111, rc=ba 001; p4 is a tie label and does not count.
    assert acc["acc_cr"] == pytest.approx((2 / 3 + 2 / 3 + 1) / 3)  # 7/9
    assert acc["acc_rc"] == pytest.approx((1 + 1 + 1 / 3) / 3)  # 7/9
    assert acc["acc_ab"] == pytest.approx((2 / 3 + 1 + 1) / 3)  # 8/9
    assert acc["acc_ba"] == pytest.approx((1 + 2 / 3 + 1 / 3) / 3)  # 2/3
    # both orders right, matched by repeat: p1 110, p2 011, p3 001
    assert acc["acc_both"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3) / 3)  # 5/9
    assert acc["acc_random"] == pytest.approx((5 / 6 + 5 / 6 + 2 / 3) / 3)  # 7/9
    first = _est(jk.accuracy(_judgments(), _pairs(), repeats="first", n_boot=0))
    # first repeat: p1 cr a (right), p2 cr=ba a (wrong), p3 cr a (right)
    assert first["acc_cr"] == pytest.approx(2 / 3)


def test_flip_noise_and_position_bias_by_hand():
    q = _est(jk.flip_noise(_judgments(), _pairs(), n_boot=0))
    # K = 3: agreement is 1 when all repeats agree and 1/3 when they split 2-1.
    # cr requests: p1 (2-1), p2 (2-1), p3 (3-0) -> d_cr = 1 - 5/9 = 4/9
    # rc requests: p1 (3-0), p2 (3-0), p3 (1-2) -> d_rc = 1 - 7/9 = 2/9
    assert q["disagree_cr"] == pytest.approx(4 / 9)
    assert q["disagree_rc"] == pytest.approx(2 / 9)
    # consistent: q = (1 - sqrt(1 - 2d)) / 2
    assert q["q_cr"] == pytest.approx(1 / 3)
    q_rc = (1 - np.sqrt(5) / 3) / 2
    assert q["q_rc"] == pytest.approx(q_rc)
    assert q["scr_cr"] == pytest.approx(2 / 3)
    paper = _est(jk.flip_noise(_judgments(), _pairs(), flip_estimator="paper", n_boot=0))
    assert paper["q_cr"] == pytest.approx(4 / 9)
    pb = _est(jk.position_bias(_judgments(), _pairs(), n_boot=0))
    den_cr = (7 / 9 - 1 / 3) / (1 - 2 / 3)  # 4/3: de-noised values are not clipped
    den_rc = (7 / 9 - q_rc) / (1 - 2 * q_rc)
    assert pb["acc_cr_denoised"] == pytest.approx(den_cr)
    assert pb["position_bias"] == pytest.approx(den_cr - den_rc)


def test_consistency_fairness_win_rate_by_hand():
    j, p = _judgments(), _pairs()
    pc = jk.position_consistency(j, p, n_boot=0).iloc[0]
    # judgment pairs (ab, ba) by repeat; p4 repeat 2 has an invalid verdict -> 11 valid pairs
    # consistent: p1 (a,a)(a,a); p2 (b,b)(b,b); p3 (a,a); p4 (tie,tie) -> 6
    assert pc["estimate"] == pytest.approx(6 / 11)
    assert pc["n"] == 11 and pc["n_invalid"] == 1
    pf = _est(jk.preference_fairness(j, p, n_boot=0))
    # primacy (first position both times: a in ab, b in ba): p3 r0, r1 -> 2
    # recency (b in ab, a in ba): p1 r2, p2 r0 -> 2; p4 r1 (a, tie) is a mixed tie
    assert pf["primacy"] == 2 and pf["recency"] == 2
    assert pf["primacy_rate"] == pytest.approx(0.5)
    assert pf["preference_fairness"] == pytest.approx(0.0)
    ref = _est(jk.preference_fairness(j, p, mixed_ties="reference", n_boot=0))
    # Shi et al.'s code counts (A, C) as primacy
    assert ref["primacy"] == 3 and ref["recency"] == 2
    assert ref["preference_fairness"] == pytest.approx((2 * 2 / 5 - 3 * 3 / 5) / 11)  # -1/11
    # Shi et al.'s code scales by every judgment pair, the invalid one (p4 repeat 2) included
    ref_all = jk.preference_fairness(j, p, mixed_ties="reference", pf_denominator="all", n_boot=0)
    ref_all = ref_all.set_index("metric").loc["preference_fairness"]
    assert ref_all["estimate"] == pytest.approx(-1 / 12) and ref_all["n"] == 12
    with pytest.raises(ValueError, match="pf_denominator must be 'valid' or 'all'"):
        jk.preference_fairness(j, p, pf_denominator="pairs")
    wr = _est(jk.overall_win_rate(j, p, n_boot=0))
    # a wins both orders: p1 x2, p3 x1; b both: p2 x2; everything else is half a win
    assert wr["win_rate"] == pytest.approx((3 + (11 - 3 - 2) / 2) / 11)
    assert wr["quality_gap"] == pytest.approx(6 / 11 - 0.5)


def test_mixed_ties_follow_shi_reference_code():
    """Shi et al.'s consistency_preference_calculation.py counts choice pairs (original, swapped)
    in position terms 'AA', 'AC', 'CA' as primacy and 'BB', 'BC', 'CB' as recency (not every
    mixed tie as primacy)."""
    # (ab verdict, ba verdict) -> position pair: a in ab = A, b in ba = A; b in ab = B, a in ba = B
    cases = {"AC": ("a", "tie"), "CA": ("tie", "b"), "BC": ("b", "tie"), "CB": ("tie", "a"),
             "AA": ("a", "b"), "CC": ("tie", "tie")}
    v = {(name, o): [x] for name, (x0, x1) in cases.items() for o, x in (("ab", x0), ("ba", x1))}
    j = _judgments(verdicts=v)
    neutral = _est(jk.preference_fairness(j, n_boot=0))
    assert (neutral["primacy"], neutral["recency"]) == (1, 0)  # AA only
    ref = _est(jk.preference_fairness(j, mixed_ties="reference", n_boot=0))
    assert (ref["primacy"], ref["recency"]) == (3, 2)  # AA, AC, CA / BC, CB
    assert ref["preference_fairness"] == pytest.approx((2 - 3) / 6)
    pc = jk.position_consistency(j, n_boot=0)
    assert pc.loc[0, "estimate"] == pytest.approx(1 / 6)  # only CC is consistent


def test_repetition_stability_by_hand():
    rs = _est(jk.repetition_stability(_judgments(), n_boot=0))
    # majority share of the 3 trials per request (Shi et al.: an invalid answer is a trial that
    # agrees with nothing): p1ab 2/3, p1ba 1, p2ab 1, p2ba 2/3, p3ab 1, p3ba 2/3, p4ab 2/3,
    # p4ba 2/3 (tie, tie, invalid)
    assert rs["repetition_stability"] == pytest.approx(19 / 24)
    # Shi et al.'s spread: sd (ddof 1) of "trial gave the majority answer"; a 2-of-3 query has
    # indicators (1, 1, 0), sd sqrt(1/3); five of the eight queries split
    assert rs["repetition_stability_sd"] == pytest.approx(5 * np.sqrt(1 / 3) / 8)
    # the judge said "tie", so m = 3 options; RS_0(3 trials) = 17/27 for every request
    rs0 = Fraction(17, 27)
    assert rs["repetition_stability_chance"] == pytest.approx(float(rs0))
    assert rs["repetition_stability_star"] == pytest.approx(float((Fraction(19, 24) - rs0) / (1 - rs0)))
    # invalid="drop": p4ba is 2 valid ties out of 2 -> 1; RS_0(2 trials) = 2/3
    drop = _est(jk.repetition_stability(_judgments(), invalid="drop", n_boot=0))
    assert drop["repetition_stability"] == pytest.approx(5 / 6)
    rs0_drop = (7 * Fraction(17, 27) + Fraction(2, 3)) / 8
    assert drop["repetition_stability_chance"] == pytest.approx(float(rs0_drop))
    assert drop["repetition_stability_star"] == pytest.approx(
        float((Fraction(5, 6) - rs0_drop) / (1 - rs0_drop)))
    two = _est(jk.repetition_stability(_judgments(), n_options=2, n_boot=0))
    # with two options RS_0 is 3/4 for both 3 and 2 trials
    assert two["repetition_stability_chance"] == pytest.approx(0.75)


def test_repetition_stability_counts_invalid_answers_as_disagreeing_trials():
    """Shi et al. (2024), eq. 1, as their code computes it: per query, the count of the most
    frequent valid choice over the number of trials, invalid ones included; a query without any
    valid answer is left out."""
    verdicts = {  # 4 trials per query; choices in position terms in the comments
        ("p1", "ab"): ["a", "a", None, "a"],      # A A - A      -> 3/4 (drop: 3/3)
        ("p1", "ba"): ["b", "a", None, None],     # A B - -      -> 1/4 (drop: 1/2)
        ("p2", "ab"): [None, None, None, None],   # no valid answer: not a query
        ("p2", "ba"): ["tie", "tie", "a", None],  # C C B -      -> 2/4 (drop: 2/3)
        ("p3", "ab"): ["b", "b", "b", "b"],       # B B B B      -> 1
        ("p3", "ba"): ["a", None, None, None],    # B - - -      -> 1/4 (drop: 1 valid, < 2)
    }
    j = _judgments(verdicts=verdicts)
    rs = jk.repetition_stability(j, n_boot=0).set_index("metric")
    assert rs.loc["repetition_stability", "estimate"] == pytest.approx((3 + 1 + 2 + 4 + 1) / 4 / 5)
    assert rs.loc["repetition_stability", "n"] == 5
    drop = jk.repetition_stability(j, invalid="drop", n_boot=0).set_index("metric")
    assert drop.loc["repetition_stability", "estimate"] == pytest.approx((1 + 1 / 2 + 2 / 3 + 1) / 4)
    assert drop.loc["repetition_stability", "n"] == 4
    # the chance level uses the same trials: 4 uniform draws over m = 3 options ("tie" was said)
    shares = [max(seq.count(c) for c in range(3)) / 4 for seq in itertools.product(range(3), repeat=4)]
    assert rs.loc["repetition_stability_chance", "estimate"] == pytest.approx(np.mean(shares))
    # the invalid share is reported beside it: 11 of 24 trials
    assert _est(jk.invalid_rate(j, n_boot=0))["invalid_rate"] == pytest.approx(11 / 24)


@pytest.mark.parametrize("n,m", [(2, 2), (3, 2), (3, 3), (5, 2), (4, 3), (5, 4)])
def test_chance_repetition_stability_matches_enumeration(n, m):
    shares = [max(seq.count(c) for c in range(m)) / n for seq in itertools.product(range(m), repeat=n)]
    assert expected_max_share(n, m) == pytest.approx(np.mean(shares))


def test_invalid_rate_by_hand():
    inv = _est(jk.invalid_rate(_judgments(), n_boot=0))
    assert inv["invalid_rate"] == pytest.approx(1 / 24)
    assert inv["invalid_rate_ab"] == 0 and inv["invalid_rate_ba"] == pytest.approx(1 / 12)


def test_preference_fairness_equals_shi_min_max_formula():
    """PF_raw = rcn*irr - pcn*ipr scaled from [-n, n] to [-1, 1], on random count tables (one
    judge per table, all computed in one call)."""
    rng = np.random.default_rng(0)
    rows, expected = [], {}
    for t in range(20):
        pcn, rcn, cons = (int(x) for x in rng.integers(0, 15, 3))
        kinds = ["A"] * pcn + ["B"] * rcn + ["C"] * (cons + 1)
        for i, kind in enumerate(kinds):
            v_ab, v_ba = {"A": ("a", "b"), "B": ("b", "a"), "C": ("a", "a")}[kind]
            for order, v in (("ab", v_ab), ("ba", v_ba)):
                rows.append({"pair_id": f"x{i}", "judge": f"J{t:02d}", "order": order,
                             "repeat": 0, "verdict": v, "p_a": np.nan})
        n = len(kinds)
        ipr = pcn / (pcn + rcn) if pcn + rcn else 0.0
        irr = rcn / (pcn + rcn) if pcn + rcn else 0.0
        raw = rcn * irr - pcn * ipr
        expected[f"J{t:02d}"] = (raw - (-n)) / (n - (-n)) * 2 - 1
    pf = jk.preference_fairness(pd.DataFrame(rows), n_boot=0)
    ours = pf[pf["metric"] == "preference_fairness"].set_index("judge")["estimate"]
    assert ours.to_dict() == pytest.approx(expected)


@pytest.mark.filterwarnings("ignore::judgekit.MetricWarning")  # tiny, very noisy table
def test_splits_give_mean_and_std_over_splits():
    split = {"p1": 0, "p2": 0, "p3": 1, "p4": 1}
    acc = jk.accuracy(_judgments(), _pairs(), splits=split).set_index("metric")
    # acc_cr: split 0 -> (2/3 + 2/3)/2 = 2/3, split 1 -> p3 only = 1
    assert acc.loc["acc_cr", "estimate"] == pytest.approx(5 / 6)
    assert acc.loc["acc_cr", "se"] == pytest.approx(1 / 6)  # np.std, ddof=0
    assert np.isnan(acc.loc["acc_cr", "ci_low"]) and acc.loc["acc_cr", "n_splits"] == 2
    card = jk.report_card(_judgments(), _pairs(), splits=pd.Series(split))
    assert card.loc[0, "acc_cr_std"] == pytest.approx(1 / 6)
    with pytest.raises(ValueError, match="p4"):
        jk.accuracy(_judgments(), _pairs(), splits={"p1": 0, "p2": 0, "p3": 1})


@pytest.mark.filterwarnings("ignore::judgekit.MetricWarning")  # tiny, very noisy table
def test_report_card_columns_and_unavailable_metrics():
    required = ["acc_ab", "acc_ba", "acc_cr", "acc_rc", "acc_both", "acc_random", "q_cr", "q_rc",
                "scr_cr", "scr_rc", "position_bias", "length_bias", "position_consistency",
                "primacy", "recency", "preference_fairness", "repetition_stability",
                "invalid_rate", "n_pairs"]
    card = jk.report_card(_judgments(), _pairs(), n_boot=50)
    for c in required:
        assert c in card.columns
        if c != "n_pairs":
            assert f"{c}_ci_low" in card.columns and f"{c}_ci_high" in card.columns
    assert card.loc[0, "n_pairs"] == 4 and card.loc[0, "n_labelled"] == 3
    # no labels and no repeats: NaN without a warning (the tables cannot define them); the only
    # warning is that four pairs are too few for an interval
    single = _judgments()[lambda d: d["repeat"] == 0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bare = jk.report_card(single, None, n_boot=20)
    assert [str(w.message) for w in caught] == [
        "bootstrap intervals for judge='J' (4 pairs) are resampled from fewer than 5 pairs; "
        "they are unreliable"]
    for c in ("acc_cr", "acc_both", "position_bias", "length_bias", "q_cr", "repetition_stability"):
        assert np.isnan(bare.loc[0, c]), c
    assert bare.loc[0, "position_consistency"] == pytest.approx(2 / 4)
    assert not bare.loc[0, "denoised"]


@pytest.mark.filterwarnings("ignore::judgekit.MetricWarning")  # tiny, very noisy table
def test_report_card_groups_by_pair_columns():
    card = jk.report_card(_judgments(), _pairs(), by=["judge", "task"], n_boot=0)
    assert card["task"].tolist() == ["t1", "t2"]
    assert card.set_index("task").loc["t2", "acc_cr"] == pytest.approx(1.0)  # p3 only


def test_breakdown_of_denoising_is_nan_with_a_warning():
    # every request's two repeats disagree: d = 1 -> q = 0.5 -> 1 - 2q = 0
    v = {(f"p{i}", o): ["a", "b"] for i in (1, 2, 3) for o in ("ab", "ba")}
    with pytest.warns(jk.MetricWarning, match="1 - 2q"):
        pb = jk.position_bias(_judgments(verdicts=v), _pairs(), n_boot=0)
    assert pb["estimate"].isna().all()


def test_zero_denominator_is_nan_with_a_warning():
    only_ab = _judgments()[lambda d: d["order"] == "ab"]
    with pytest.warns(jk.MetricWarning, match="position_consistency is NaN"):
        pc = jk.position_consistency(only_ab, n_boot=0)
    assert np.isnan(pc.loc[0, "estimate"]) and pc.loc[0, "n"] == 0


def test_length_options_agree():
    p, j, _ = jk.sim.simulate_judgments(300, repeats=2, length_bias=1.0, seed=1)
    chars = jk.length_bias(j, p, n_boot=0)["estimate"]
    by_len = jk.length_bias(j, p, length=len, n_boot=0)["estimate"]
    words = jk.length_bias(j, p, length="words", n_boot=0)["estimate"]
    by_split = jk.length_bias(j, p, length=lambda s: len(s.split()), n_boot=0)["estimate"]
    pd.testing.assert_series_equal(chars, by_len)
    pd.testing.assert_series_equal(words, by_split)
    assert np.isfinite(chars).all()


def test_id_swap_arrangements_pair_within_arrangement():
    j = _judgments()
    j2 = j.assign(id_swap=True, verdict=j["verdict"].map({"a": "b", "b": "a"}).where(j["verdict"] != "tie", "tie"))
    both = pd.concat([j.assign(id_swap=False), j2], ignore_index=True)
    pc = jk.position_consistency(both, n_boot=0).iloc[0]
    # relabelling a <-> b inside one arrangement keeps every pair's (in)consistency
    assert pc["estimate"] == pytest.approx(6 / 11) and pc["n"] == 22


def test_mutual_agreement_and_disagreement_match_a_direct_count():
    j1 = _judgments("J")
    j2 = _judgments("K", {k: [{"a": "b", "b": "a"}.get(v, v) if i == 0 else v for i, v in enumerate(vs)]
                          for k, vs in VERDICTS.items()})
    j3 = _judgments("L", {k: ["a"] * 3 for k in VERDICTS})
    all_j = pd.concat([j1, j2, j3], ignore_index=True)
    with pytest.warns(jk.MetricWarning, match="resampled from only 4 pairs"):
        ma = jk.mutual_agreement(all_j, n_boot=30).set_index(["metric", "judge_1", "judge_2"])
    key = ["pair_id", "order", "repeat"]
    for a, b in [("J", "K"), ("J", "L"), ("K", "L")]:
        m = all_j[all_j.judge == a].merge(all_j[all_j.judge == b], on=key)
        ok = m["verdict_x"].notna() & m["verdict_y"].notna()
        same = (m["verdict_x"] == m["verdict_y"]) & ok
        nt = ok & (m["verdict_x"] != "tie") & (m["verdict_y"] != "tie")
        row = ma.loc[("agreement", a, b)]
        assert row["estimate"] == pytest.approx(same.sum() / ok.sum()) and row["n"] == ok.sum()
        assert ma.loc[("agreement", b, a), "estimate"] == pytest.approx(row["estimate"])
        assert ma.loc[("agreement_no_ties", a, b), "estimate"] == pytest.approx((same & nt).sum() / nt.sum())
    assert ma.loc[("agreement", "J", "J"), "estimate"] == 1.0
    dis = jk.disagreement(all_j).set_index(["pair_id", "order", "repeat"])
    # p1 ab repeat 0: J a, K b, L a -> majority a, one dissent
    row = dis.loc[("p1", "ab", 0)]
    assert (row["n_a"], row["n_b"], row["majority"], row["disagreement"]) == (2, 1, "a", 1)
    # p4 ba repeat 2: J invalid, K invalid, L a -> one valid verdict
    assert dis.loc[("p4", "ba", 2), "n_judges"] == 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"by": "nope"}, "column 'nope'"),
        ({"repeats": "last"}, "repeats must be"),
        ({"flip_estimator": "mle"}, "flip_estimator must be"),
        ({"metrics": ["acc_everything"]}, "unknown metric"),
        ({"lb_method": "exact"}, "lb_method must be"),
        ({"n_boot": -1}, "n_boot must be"),
        ({"by": ["metric"]}, "names of output columns"),
    ],
)
def test_bad_options_raise_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        jk.report_card(_judgments(), _pairs(), **kwargs)


def test_bad_tables_are_rejected_by_the_validators():
    bad = _judgments().assign(order="AB")
    with pytest.raises(ValueError, match="column 'order'"):
        jk.accuracy(bad, _pairs())
    unknown = _judgments().replace({"pair_id": {"p1": "p9"}})
    with pytest.raises(ValueError, match="not in the pairs table"):
        jk.accuracy(unknown, _pairs())


def test_splits_from_sample_splits():
    pairs, judgments, _ = jk.sim.simulate_judgments(900, repeats=2, flip_q=0.05, seed=8)
    sp = jk.sample_splits(pairs, n=100, splits=3, seed=1)
    j = judgments[judgments["pair_id"].isin(sp["pair_id"])]
    acc = jk.accuracy(j, sp, splits="split").set_index("metric")
    per_split = [
        jk.accuracy(j[j["pair_id"].isin(s["pair_id"])], s, n_boot=0).set_index("metric")
        .loc["acc_both", "estimate"]
        for _, s in sp.groupby("split")
    ]
    assert acc.loc["acc_both", "n_splits"] == 3
    assert acc.loc["acc_both", "estimate"] == pytest.approx(np.mean(per_split))
    assert acc.loc["acc_both", "se"] == pytest.approx(np.std(per_split))


def test_a_split_whose_denoising_breaks_down_is_left_out_with_a_warning():
    # split 1: every request's two repeats disagree (d = 1, q = 0.5); split 0: no noise
    v = {("p1", "ab"): ["a", "a"], ("p1", "ba"): ["a", "a"], ("p2", "ab"): ["b", "b"],
         ("p2", "ba"): ["a", "a"], ("p3", "ab"): ["a", "b"], ("p3", "ba"): ["b", "a"]}
    split = {"p1": 0, "p2": 0, "p3": 1}
    with pytest.warns(jk.MetricWarning, match="1 of 2 splits have 1 - 2q"):
        pb = jk.position_bias(_judgments(verdicts=v), _pairs(), splits=split).set_index("metric")
    # split 0 alone: cr = p1 ab (right), p2 ba (a: wrong); rc = p1 ba (right), p2 ab (right)
    assert pb.loc["acc_cr_denoised", "estimate"] == pytest.approx(0.5)
    assert pb.loc["position_bias", "estimate"] == pytest.approx(0.5 - 1.0)
    assert pb.loc["position_bias", "n_splits"] == 1


@pytest.mark.parametrize("invalid_share", [0.2, 0.5, 0.8])
def test_repetition_stability_equals_the_definition_on_an_error_prone_judge(invalid_share):
    """A simulated 3-option judge loses a share of its answers at random; RS must equal eq. 1
    of Shi et al. written out in pandas (the most frequent valid choice over all trials), which
    falls with the invalid share, while dropping invalid answers hides it."""
    sim = jk.sim.simulate_judgments(300, repeats=4, flip_q=0.1, tie_rate=0.1, seed=7)
    j = sim.judgments.copy()
    lost = np.random.default_rng(1).random(len(j)) < invalid_share
    j.loc[lost, "verdict"] = None
    pos = jk.position_of(j["verdict"], j["order"])
    query = [j["pair_id"], j["order"]]
    trials = j.groupby(query).size()
    top = pos.groupby(query).value_counts().groupby(level=[0, 1]).max()
    expected = (top / trials.loc[top.index]).mean()  # queries without a valid answer drop out
    rs = jk.repetition_stability(j, n_boot=0).set_index("metric")
    assert rs.loc["repetition_stability", "estimate"] == pytest.approx(expected, abs=1e-12)
    assert rs.loc["repetition_stability", "n"] == len(top)
    # the spread: per query, the sample sd of the indicators "trial gave the modal valid answer"
    # over all its trials (an invalid trial is 0)
    modal = pos.groupby(query).agg(lambda s: s.mode().iloc[0] if s.notna().any() else None)
    key = pd.MultiIndex.from_arrays(query)
    agrees = pd.Series((pos.to_numpy() == modal.reindex(key).to_numpy()).astype(float), index=j.index)
    sd = agrees.groupby(query).std(ddof=1).loc[top.index]
    assert rs.loc["repetition_stability_sd", "estimate"] == pytest.approx(sd.mean(), abs=1e-12)
    drop = jk.repetition_stability(j, invalid="drop", n_boot=0).set_index("metric")
    assert drop.loc["repetition_stability", "estimate"] > expected + invalid_share / 4


# ------------------------------------------------------------------------------ nothing silent

def _all_invalid(j: pd.DataFrame) -> pd.DataFrame:
    return j.assign(verdict=None, error="api: HTTP 401: invalid key")


def test_all_invalid_verdicts_are_nan_with_a_warning_not_zero_bias():
    """Every call failed: no accuracy, bias, consistency or stability can be measured; the card
    says so instead of reporting position bias 0 in [0, 0]."""
    pairs, judgments, _ = jk.sim.simulate_judgments(300, accuracy=0.8, position_bias=1.0, repeats=2,
                                                seed=0)
    failed = _all_invalid(judgments)
    with pytest.warns(jk.MetricWarning) as caught:
        card = jk.report_card(failed, pairs, n_boot=200)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    assert "judge='sim'" in messages[0] and "every verdict is invalid" in messages[0]
    for m in jk.REPORT_CARD_METRICS:
        if m == "invalid_rate":
            assert card.loc[0, m] == 1.0
            continue
        assert m in messages[0], m
        assert np.isnan(card.loc[0, m]), m
        assert np.isnan(card.loc[0, f"{m}_ci_low"]) and np.isnan(card.loc[0, f"{m}_ci_high"]), m
    for fn in (jk.accuracy, jk.position_bias, jk.length_bias, jk.flip_noise,
               jk.repetition_stability, jk.position_consistency, jk.preference_fairness,
               jk.overall_win_rate):
        with pytest.warns(jk.MetricWarning, match="judge='sim'.*every verdict is invalid"):
            out = fn(failed, pairs, n_boot=0)
        assert out["estimate"].isna().all(), fn.__name__


def test_only_the_judge_without_valid_verdicts_is_nan():
    pairs, good, _ = jk.sim.simulate_judgments(200, repeats=2, judge_name="good", seed=1)
    _, bad, _ = jk.sim.simulate_judgments(pairs, repeats=2, judge_name="bad", seed=2)
    with pytest.warns(jk.MetricWarning) as caught:
        card = jk.report_card(pd.concat([good, _all_invalid(bad)]), pairs, n_boot=0)
    card = card.set_index("judge")
    assert np.isnan(card.loc["bad", "acc_both"]) and np.isfinite(card.loc["good", "acc_both"])
    assert all("judge='bad'" in str(w.message) and "'good'" not in str(w.message) for w in caught)


def test_one_order_without_valid_verdicts():
    """Response b shown first never parsed: what needs that order is NaN (not 'always wrong'),
    what needs only the other order is not."""
    j = _judgments()
    j.loc[j["order"] == "ba", "verdict"] = None
    with pytest.warns(jk.MetricWarning) as caught:
        acc = _est(jk.accuracy(j, _pairs(), n_boot=0))
    assert acc["acc_ab"] == pytest.approx(8 / 9)
    assert np.isnan(acc["acc_ba"])
    # cr and rc mix both display orders: their invalid verdicts count as wrong, as always
    assert acc["acc_cr"] == pytest.approx((2 / 3 + 0 + 1) / 3)  # p2 shows y_c first in ba
    assert acc["acc_rc"] == pytest.approx((0 + 1 + 0) / 3)
    # no pair has a valid verdict in both orders: Acc_both is unknown, not 0
    assert np.isnan(acc["acc_both"])
    text = " | ".join(str(w.message) for w in caught)
    assert ("acc_ba is NaN for judge='J': no labelled pair judged with response b shown first has "
            "a valid verdict") in text
    assert "acc_both is NaN for judge='J': no labelled pair has a valid verdict in both orders" in text
    with pytest.warns(jk.MetricWarning, match="every .original, swapped. judgment pair has an invalid verdict"):
        pc = jk.position_consistency(j, n_boot=0)
    assert np.isnan(pc.loc[0, "estimate"]) and pc.loc[0, "n_invalid"] == 12
    with pytest.warns(jk.MetricWarning, match="q_ba, scr_ba are NaN for judge='J': no judgment "
                                              "with response b shown first has a valid verdict"):
        q = _est(jk.flip_noise(j, n_boot=0))
    assert np.isnan(q["q_ba"]) and np.isfinite(q["q_ab"])


def test_repetition_stability_without_valid_repeats_is_nan():
    v = {("p1", "ab"): ["a", None], ("p1", "ba"): [None, None],
         ("p2", "ab"): [None, None], ("p2", "ba"): ["b", None]}
    with pytest.warns(jk.MetricWarning, match="no repeated request has enough valid answers"):
        rs = _est(jk.repetition_stability(_judgments(verdicts=v), invalid="drop", n_boot=0))
    assert np.isnan(rs["repetition_stability"])
    # by Shi et al.'s definition the two requests with a valid answer are queries: RS = 1/2
    assert _est(jk.repetition_stability(_judgments(verdicts=v), n_boot=0))["repetition_stability"] == 0.5


@pytest.mark.parametrize("fn", [jk.report_card, jk.accuracy, jk.position_bias, jk.length_bias,
                                jk.flip_noise, jk.repetition_stability, jk.position_consistency,
                                jk.preference_fairness, jk.overall_win_rate, jk.invalid_rate,
                                jk.mutual_agreement, jk.disagreement])
def test_an_empty_table_is_an_error(fn):
    with pytest.raises(ValueError, match="judgments: the table is empty"):
        fn(_judgments().iloc[:0], _pairs())


def test_intervals_from_few_pairs_carry_a_warning():
    one = _judgments()[lambda d: d["pair_id"] == "p1"]
    with pytest.warns(jk.MetricWarning, match=r"judge='J' \(1 pair\) are resampled from fewer than 5"):
        card = jk.report_card(one, _pairs(), metrics=["acc_ab", "position_consistency"], n_boot=50)
    # one pair: every resample is that pair, the interval has no width
    assert card.loc[0, "acc_ab_ci_low"] == pytest.approx(card.loc[0, "acc_ab"], abs=1e-7)
    assert card.loc[0, "acc_ab_ci_high"] == pytest.approx(card.loc[0, "acc_ab"], abs=1e-7)
    five = jk.sim.simulate_judgments(5, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jk.report_card(five.judgments, five.pairs, metrics=["acc_ab"], n_boot=50)
    with pytest.warns(jk.MetricWarning, match=r"fewer than 5"):
        jk.mutual_agreement(pd.concat([one, one.assign(judge="K")]), n_boot=50)


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="invalid must be 'disagree' or 'drop'"):
        jk.repetition_stability(_judgments(), invalid="count")
    with pytest.raises(ValueError, match="lb_method must be 'indicator' or 'joint'"):
        jk.length_bias(_judgments(), _pairs(), lb_method="both")


@pytest.mark.filterwarnings("ignore::judgekit.MetricWarning")  # LB: 6% NaN resamples at N = 120
def test_pooling_judges_loses_nothing():
    """by=[] (or any grouping without the judge column) pools judges: every judgment counts, and
    the bootstrap resamples pairs with all their judges' verdicts. Two identical copies of a
    judge pooled give that judge's rates and intervals, and twice its counts."""
    pairs, j, _ = jk.sim.simulate_judgments(120, repeats=2, flip_q=0.1, position_bias=0.5, seed=3)
    pooled_in = pd.concat([j, j.assign(judge="copy")], ignore_index=True)
    metrics = ["acc_ab", "acc_both", "position_bias", "length_bias", "position_consistency",
               "primacy", "preference_fairness", "repetition_stability", "invalid_rate"]
    single = jk.report_card(j, pairs, by=[], metrics=metrics, n_boot=200, seed=4)
    pooled = jk.report_card(pooled_in, pairs, by=[], metrics=metrics, n_boot=200, seed=4)
    assert pooled.loc[0, "n_judgments"] == len(pooled_in) == 2 * single.loc[0, "n_judgments"]
    assert pooled.loc[0, "n_pairs"] == single.loc[0, "n_pairs"] == 120
    for m in metrics:
        factor = 2 if m == "primacy" else 1
        for col in (m, f"{m}_ci_low", f"{m}_ci_high"):
            assert pooled.loc[0, col] == pytest.approx(factor * single.loc[0, col], abs=1e-12, nan_ok=True), col
    # two different judges pooled: the rates lie between theirs, weighted by their pairs
    _, k, _ = jk.sim.simulate_judgments(pairs, repeats=2, accuracy=0.9, judge_name="k", seed=5)
    both = jk.report_card(pd.concat([j, k]), pairs, by=[], metrics=["acc_ab"], n_boot=0)
    each = jk.report_card(pd.concat([j, k]), pairs, metrics=["acc_ab"], n_boot=0)
    assert both.loc[0, "acc_ab"] == pytest.approx(each["acc_ab"].mean())


def test_agreement_without_shared_valid_verdicts_warns():
    j = pd.concat([_judgments("J"), _all_invalid(_judgments("K"))], ignore_index=True)
    with pytest.warns(jk.MetricWarning, match="agreement is NaN for J / K, K / K: no instance has a valid"):
        ma = jk.mutual_agreement(j, n_boot=0).set_index(["metric", "judge_1", "judge_2"])
    assert np.isnan(ma.loc[("agreement", "J", "K"), "estimate"])
    assert ma.loc[("agreement", "J", "J"), "estimate"] == 1.0


def test_an_empty_length_stratum_warns_on_the_report_card_as_in_the_tidy_function():
    # labels and both orders exist, but every preferred response is the longer one: LB is NaN
    # because of the data, not the design, so the report card warns like jk.length_bias does
    pairs, j, _ = jk.sim.simulate_judgments(200, accuracy=0.8, repeats=2, flip_q=0.1, seed=0)
    a_pref = (pairs["label"] == "a").to_numpy()
    lo = np.minimum(pairs["len_a"], pairs["len_b"]).to_numpy()
    hi = np.maximum(pairs["len_a"], pairs["len_b"]).to_numpy() + 10
    pairs = pairs.assign(len_a=np.where(a_pref, hi, lo), len_b=np.where(a_pref, lo, hi))
    why = "no labelled pair judged in both orders where the preferred response is not the longer one"
    with pytest.warns(jk.MetricWarning, match=f"length_bias.*NaN for judge='sim': {why}"):
        tidy = jk.length_bias(j, pairs, n_boot=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        card = jk.report_card(j, pairs, n_boot=0)
    assert np.isnan(tidy.set_index("metric").loc["length_bias", "estimate"])
    assert np.isnan(card.loc[0, "length_bias"])
    assert [str(w.message) for w in caught] == [f"length_bias is NaN for judge='sim': {why}"]
