"""Recovery of known parameters from simulated judges, and bootstrap coverage.

Truth comes from :func:`judgekit.sim.simulate_judgments` (population values for the simulated pairs)
or, for the coverage study, from the generative model itself by quadrature.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special

import judgekit as jk
from judgekit import _bootstrap as bs
from judgekit.metrics import _engine
from judgekit.metrics._definitions import lookup
from judgekit.metrics._prepare import A, B, Options, Prepared

N, K = 5000, 5
SETTINGS = [  # (position bias logit, length bias logit)
    (0.0, 0.0),
    (1.0, 1.5),
    (-0.7, -1.0),
]


def _estimates(sim, **kw) -> dict[str, float]:
    frame, _ = _engine.run(
        sim.judgments, sim.pairs, [],
        ["acc_cr_denoised", "acc_rc_denoised", "position_bias", "length_bias", "q_cr", "q_rc",
         "acc_both_denoised"],
        n_boot=0, **kw,
    )
    return dict(zip(frame["metric"], frame["estimate"]))


@pytest.fixture(scope="module")
def sims():
    out = {}
    for q in (0.02, 0.1, 0.2):
        for i, (pb, lb) in enumerate(SETTINGS):
            out[q, i] = jk.sim.simulate_judgments(
                N, repeats=K, flip_q=q, position_bias=pb, length_bias=lb, seed=11 + i
            )
    return out


@pytest.mark.parametrize("q", [0.02, 0.1, 0.2])
@pytest.mark.parametrize("setting", range(len(SETTINGS)))
def test_consistent_estimator_recovers_accuracy_pb_lb(sims, q, setting):
    sim = sims[q, setting]
    truth = sim.truth
    est = _estimates(sim)  # lb_method="joint" by default
    assert est["q_cr"] == pytest.approx(q, abs=0.01)
    assert est["q_rc"] == pytest.approx(q, abs=0.01)
    assert est["acc_cr_denoised"] == pytest.approx(truth["acc_cr"], abs=0.02)
    assert est["acc_rc_denoised"] == pytest.approx(truth["acc_rc"], abs=0.02)
    assert est["position_bias"] == pytest.approx(truth["position_bias"], abs=0.02)
    assert est["acc_both_denoised"] == pytest.approx(truth["acc_both"], abs=0.02)
    assert est["length_bias"] == pytest.approx(truth["length_bias"], abs=0.03)
    if q <= 0.1:  # Wei et al.'s de-noising is close at small q only
        indicator = _estimates(sim, lb_method="indicator")
        assert indicator["length_bias"] == pytest.approx(truth["length_bias"], abs=0.03)


def test_paper_estimator_is_biased(sims):
    """q = d estimates 2q(1 - q), not q, and inflates every de-noised accuracy
    (docs/spec.md#accuracy)."""
    for q in (0.1, 0.2):
        sim = sims[q, 1]
        paper = _estimates(sim, flip_estimator="paper")
        consistent = _estimates(sim)
        assert paper["q_cr"] == pytest.approx(2 * q * (1 - q), abs=0.015)
        err_paper = paper["acc_cr_denoised"] - sim.truth["acc_cr"]
        err_consistent = consistent["acc_cr_denoised"] - sim.truth["acc_cr"]
        assert abs(err_consistent) < 0.02
        assert err_paper > (0.05 if q == 0.1 else 0.15)  # upward, and growing with q
        # the bias follows from plugging 2q(1-q) into (p - q) / (1 - 2q)
        p_obs = (1 - 2 * q) * sim.truth["acc_cr"] + q
        d = 2 * q * (1 - q)
        assert paper["acc_cr_denoised"] == pytest.approx((p_obs - d) / (1 - 2 * d), abs=0.02)


def test_without_repeats_nothing_is_denoised():
    sim = jk.sim.simulate_judgments(2000, repeats=1, flip_q=0.1, position_bias=0.5, seed=3)
    pb = jk.position_bias(sim.judgments, sim.pairs, n_boot=0).set_index("metric")
    assert not pb.loc["position_bias", "denoised"]
    raw = jk.accuracy(sim.judgments, sim.pairs, n_boot=0).set_index("metric")["estimate"]
    assert pb.loc["position_bias", "estimate"] == pytest.approx(raw["acc_cr"] - raw["acc_rc"])
    q = jk.flip_noise(sim.judgments, sim.pairs, n_boot=0).set_index("metric")["estimate"]
    assert np.isnan(q["q_cr"]) and np.isnan(q["scr_rc"])


# --------------------------------------------------------------------------------------------
# coverage of the 95% cluster-bootstrap intervals
# --------------------------------------------------------------------------------------------
COVER_N, COVER_REPS, COVER_B = 500, 200, 1000
COVER_Q, COVER_PB = 0.1, 0.6
COVERED = ("acc_cr", "acc_both", "acc_random", "position_bias", "acc_both_denoised", "q_cr",
           "position_consistency", "preference_fairness", "repetition_stability")


def _population_truth(judge: jk.sim.SimJudge, q: float) -> dict[str, float]:
    """Superpopulation values of the simulated judge, by Gauss-Hermite quadrature over the
    per-pair quality gap z (new pairs are drawn in every replication)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(120)
    w = weights / weights.sum()
    delta = judge.mu + judge.quality_scale * nodes
    x_cr = special.expit(delta + judge.position_bias)  # P(X = 1 | cr)
    x_rc = special.expit(delta - judge.position_bias)  # P(X = 1 | rc): y_c second
    z_cr, z_rc = (1 - 2 * q) * x_cr + q, (1 - 2 * q) * x_rc + q  # observed, per repeat
    # position terms for Shi's metrics: order ab shows y_c first (all labels are "a" here)
    first_ab, first_ba = z_cr, 1 - z_rc  # P(first position chosen)
    pcn = first_ab * first_ba
    rcn = (1 - first_ab) * (1 - first_ba)
    rs_one = (1 - q) ** 3 + q**3 + 3 * (1 - q) ** 2 * q * (2 / 3) + 3 * (1 - q) * q**2 * (2 / 3)
    return {
        "acc_cr": w @ z_cr,
        "acc_both": w @ (z_cr * z_rc),
        "acc_random": w @ ((z_cr + z_rc) / 2),
        "position_bias": w @ (x_cr - x_rc),
        "acc_both_denoised": w @ (x_cr * x_rc),
        "q_cr": q,
        "position_consistency": w @ (1 - pcn - rcn),
        "preference_fairness": w @ (rcn - pcn),
        # K = 3 repeats per request: the majority share is 1 or 2/3 whatever X is
        "repetition_stability": rs_one,
    }


def _simulate_cells(judge: jk.sim.SimJudge, q: float, n: int, k: int, rng: np.random.Generator) -> Prepared:
    """The dense verdict array of n fresh pairs (all labelled "a"), drawn from the same model as
    :class:`judgekit.sim.SimJudge` without building text: it is the input the metrics engine sees."""
    z = rng.standard_normal(n)
    delta = judge.mu + judge.quality_scale * z
    x_cr = rng.random(n) < special.expit(delta + judge.position_bias)
    x_rc = rng.random(n) < special.expit(delta - judge.position_bias)
    flips = rng.random((n, 2, k)) < q
    picked_c = np.stack([x_cr, x_rc], axis=1)[:, :, None] ^ flips  # Z per (pair, order, repeat)
    V = np.where(picked_c, A, B).astype(np.int8)[:, :, None, :]  # y_c = a
    return Prepared(
        by=[], keys=pd.DataFrame(index=range(1)), group=np.zeros(n, dtype=np.int64),
        pair_id=np.arange(n).astype(str), V=V, label=np.zeros(n, dtype=np.int8),
        longer=rng.random(n) < 0.5, has_ties=np.array([False]), has_labels=True,
    )


def test_bootstrap_intervals_cover_the_truth():
    """200 replications of 500 fresh pairs (K = 3, q = 0.1, position bias 0.6 logits), B = 1000.

    The 92-98% band is about +-2 binomial standard deviations at 200 replications, so with nine
    correlated metrics a miss somewhere is expected by chance: the core metrics (accuracy,
    Acc_both, de-noised PB, PC) are checked one by one, the rest on average and against gross
    failure. The seed was fixed before the first run; at it, PF covers 91% although its coverage
    over 2,000 replications is 95.4% (docs/metrics.md has that study for every metric).
    """
    judge = jk.sim.SimJudge(accuracy=0.75, position_bias=COVER_PB, seed=0)
    truth = _population_truth(judge, COVER_Q)
    options = Options()
    metrics = lookup(list(COVERED))
    rng = np.random.default_rng(2024)
    hits = {m: 0 for m in COVERED}
    chunk = 25  # replications evaluated together (the formulas are vectorised over resamples)
    for _ in range(COVER_REPS // chunk):
        sums = []
        for _ in range(chunk):
            comp = _engine.Computation(_simulate_cells(judge, COVER_Q, COVER_N, 3, rng), options, metrics)
            sums.append(bs.resample_sums(comp.S, COVER_B, rng))
        reps = comp.evaluate(np.stack(sums).transpose(2, 0, 1))  # statistics first
        for m in COVERED:
            lo, hi = np.quantile(reps[m][0], [0.025, 0.975], axis=1)
            hits[m] += int(((lo <= truth[m]) & (truth[m] <= hi)).sum())
    coverage = {m: hits[m] / COVER_REPS for m in COVERED}
    for m in ("acc_cr", "acc_both", "position_bias", "position_consistency"):
        assert 0.92 <= coverage[m] <= 0.98, (m, coverage)
    assert 0.92 <= np.mean(list(coverage.values())) <= 0.98, coverage
    assert min(coverage.values()) >= 0.90, coverage


def test_vectorised_bootstrap_equals_a_plain_loop():
    """Same seed, same resamples: the engine's intervals equal a per-resample pandas loop that
    recomputes Acc_both and PC from the resampled judgments."""
    sim = jk.sim.simulate_judgments(60, repeats=2, flip_q=0.1, position_bias=0.5, seed=5)
    out = jk.report_card(sim.judgments, sim.pairs, by=[], metrics=["acc_both", "position_consistency"],
                         n_boot=40, seed=9)
    rng = np.random.default_rng(np.random.SeedSequence(9).spawn(1)[0])
    j = sim.judgments.merge(sim.pairs[["pair_id", "label"]], on="pair_id")
    ids = pd.unique(sim.judgments["pair_id"])  # the engine keeps first-appearance order
    both, pc = [], []
    for _ in range(40):
        draw = ids[rng.integers(0, len(ids), len(ids))]
        wide = j.pivot_table(index=["pair_id", "repeat"], columns="order", values="verdict",
                             aggfunc="first").join(j.groupby("pair_id")["label"].first(), on="pair_id")
        per_pair = wide.assign(
            both=(wide["ab"] == wide["label"]) & (wide["ba"] == wide["label"]),
            same=wide["ab"] == wide["ba"],
        ).groupby(level="pair_id")[["both", "same"]].mean()
        chosen = per_pair.loc[draw]
        both.append(chosen["both"].mean())
        pc.append(chosen["same"].mean())
    assert out.loc[0, "acc_both_ci_low"] == pytest.approx(np.quantile(both, 0.025))
    assert out.loc[0, "acc_both_ci_high"] == pytest.approx(np.quantile(both, 0.975))
    assert out.loc[0, "position_consistency_ci_low"] == pytest.approx(np.quantile(pc, 0.025))
    assert out.loc[0, "position_consistency_ci_high"] == pytest.approx(np.quantile(pc, 0.975))


# --------------------------------------------------------------------------------------------
# length bias: the default de-noising is unbiased where Wei et al.'s shrinks it
# --------------------------------------------------------------------------------------------
LB_PB, LB_LB, LB_LEVELS = 0.5, 1.5, np.array([0.25, 0.5, 0.75])


def _lb_truth(judge: jk.sim.SimJudge) -> float:
    """Population LB of the generative model below, by quadrature over the quality gap."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(120)
    w = weights / weights.sum()
    delta = judge.mu + judge.quality_scale * nodes

    def both(sign: float) -> float:  # mean over the length levels of P(X_cr = 1 and X_rc = 1)
        return float(np.mean([w @ (special.expit(delta + LB_PB + sign * LB_LB * t)
                                   * special.expit(delta - LB_PB + sign * LB_LB * t))
                              for t in LB_LEVELS]))

    return both(+1.0) - both(-1.0)


def _lb_cells(judge: jk.sim.SimJudge, q: float, n: int, k: int, rng: np.random.Generator) -> Prepared:
    """n fresh labelled pairs ("a" preferred): the preferred response is the longer one with
    probability 1/2, the length effect lb * tanh(dlen / scale) takes the levels +-LB_LB * t."""
    longer = rng.random(n) < 0.5
    effect = np.where(longer, 1.0, -1.0) * LB_LB * rng.choice(LB_LEVELS, n)
    delta = judge.mu + judge.quality_scale * rng.standard_normal(n)
    x_cr = rng.random(n) < special.expit(delta + LB_PB + effect)
    x_rc = rng.random(n) < special.expit(delta - LB_PB + effect)
    picked_c = np.stack([x_cr, x_rc], axis=1)[:, :, None] ^ (rng.random((n, 2, k)) < q)
    return Prepared(
        by=[], keys=pd.DataFrame(index=range(1)), group=np.zeros(n, dtype=np.int64),
        pair_id=np.arange(n).astype(str), V=np.where(picked_c, A, B).astype(np.int8)[:, :, None, :],
        label=np.zeros(n, dtype=np.int8), longer=longer, has_ties=np.array([False]), has_labels=True,
    )


@pytest.mark.slow
def test_length_bias_default_is_unbiased_where_the_papers_shrinks_it():
    """N = 20,000 pairs, K = 5: the mean error of the default LB over 40 replications stays
    within 0.01 of the population value at q = 0.1, 0.2, 0.3, while Wei et al.'s indicator
    de-noising loses about two thirds of it at q = 0.3. (benchmarks/bench_length_bias.py runs
    the same study through simulate_judgments, with coverage at N = 20,000.)"""
    judge = jk.sim.SimJudge(accuracy=0.75, seed=0)
    truth = _lb_truth(judge)
    metrics = lookup(["length_bias"])
    rng = np.random.default_rng(11)
    for q in (0.1, 0.2, 0.3):
        errors = {"joint": [], "indicator": []}
        for _ in range(40):
            prep = _lb_cells(judge, q, 20_000, 5, rng)
            for method in errors:
                comp = _engine.Computation(prep, Options(lb_method=method), metrics)
                errors[method].append(comp.evaluate(comp.T)["length_bias"][0][0] - truth)
        bias = {m: float(np.mean(e)) for m, e in errors.items()}
        assert abs(bias["joint"]) < 0.01, (q, bias)
        if q == 0.3:
            assert bias["indicator"] < -0.5 * truth, (q, bias)


@pytest.mark.slow
def test_length_bias_intervals_cover_at_large_flip_noise():
    """q = 0.3: the default's 95% cluster-bootstrap interval covers the population LB in at
    least 90% of 200 replications of 2,000 fresh pairs (B = 1000)."""
    judge = jk.sim.SimJudge(accuracy=0.75, seed=0)
    truth = _lb_truth(judge)
    metrics = lookup(["length_bias"])
    rng = np.random.default_rng(12)
    hits = 0
    for _ in range(200):
        comp = _engine.Computation(_lb_cells(judge, 0.3, 2000, 5, rng), Options(), metrics)
        reps = comp.evaluate(bs.resample_sums(comp.S, 1000, rng).T)["length_bias"][0]
        lo, hi = np.nanquantile(reps, [0.025, 0.975])
        hits += int(lo <= truth <= hi)
    assert hits / 200 >= 0.90, hits / 200


@pytest.mark.parametrize("limit", [None, 2_000])
def test_batched_bootstrap_equals_one_group_at_a_time(monkeypatch, limit):
    """The report card's resample sums (groups sharing a pair set multiplied at once, chunked,
    statistics first) equal, to 1e-9, a plain loop that draws each group's counts from its pair
    set's seed and multiplies them into that group's per-pair sums. ``limit`` shrinks the chunks
    so that counts are also drawn again chunk by chunk."""
    if limit is not None:
        monkeypatch.setattr(_engine, "_BOOT_ELEMENTS", limit)
    pairs = jk.sim.simulate_pairs(150, seed=1)
    runs = [jk.sim.simulate_judgments(pairs, repeats=3, flip_q=0.1, position_bias=0.3 * i,
                                  judge_name=f"j{i}", seed=i).judgments for i in range(5)]
    runs.append(jk.sim.simulate_judgments(pairs.iloc[:90], repeats=3, judge_name="subset", seed=9).judgments)
    judgments = pd.concat(runs, ignore_index=True)
    metrics = ["acc_cr", "acc_both", "position_bias", "length_bias", "position_consistency",
               "preference_fairness", "repetition_stability", "q_cr"]
    B, seed = 300, 5
    card = jk.report_card(judgments, pairs, metrics=metrics, n_boot=B, seed=seed).set_index("judge")

    options = Options()
    prep = _engine.prepare(judgments, pairs, "judge", options)
    comp = _engine.Computation(prep, options, lookup(metrics))
    bounds = np.searchsorted(prep.group, np.arange(prep.n_groups + 1))
    codes = pd.factorize(prep.pair_id)[0]
    sets: dict[bytes, int] = {}
    seeds = None
    for gi, judge in enumerate(prep.keys["judge"]):
        key = sets.setdefault(codes[bounds[gi]:bounds[gi + 1]].tobytes(), len(sets))
        seeds = np.random.SeedSequence(seed).spawn(2)  # two pair sets, in order of appearance
        rows = comp.S[bounds[gi]:bounds[gi + 1]]
        W = bs.counts(len(rows), B, np.random.default_rng(seeds[key]))
        reps = comp.evaluate((W @ rows).T[:, None, :])
        for m in metrics:
            lo, hi = np.nanquantile(reps[m][0][0], [0.025, 0.975])
            assert card.loc[judge, f"{m}_ci_low"] == pytest.approx(lo, abs=1e-9, nan_ok=True), (judge, m)
            assert card.loc[judge, f"{m}_ci_high"] == pytest.approx(hi, abs=1e-9, nan_ok=True), (judge, m)
    assert len(sets) == 2
