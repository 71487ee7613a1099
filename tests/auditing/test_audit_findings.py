"""The three-valued findings (judgekit.auditing.findings): the equivalence test against
statsmodels, the unit counts against statsmodels' power solver and a simulation, and the
error rates of the three kinds against a simulation of known truth."""

import math

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.weightstats import ttost_paired, ztost

from judgekit.auditing.findings import effect_finding, units_to_decide


def _read(x, margin, **kw):
    se = x.std(ddof=1) / math.sqrt(len(x))
    return effect_finding(x.mean(), se=se, margin=margin, n=len(x), **kw)


@pytest.mark.parametrize("seed", range(5))
def test_tost_p_value_equals_statsmodels_ztost(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(rng.uniform(-0.3, 0.3), 1.0, size=int(rng.integers(30, 400)))
    got = _read(x, 0.2)
    p_sm = ztost(x, -0.2, 0.2)[0]
    assert got.p_equivalence == pytest.approx(p_sm, rel=1e-10, abs=1e-14)


def test_tost_agrees_with_paired_t_tost_on_large_samples():
    # the z and t forms of the TOST agree once n is large (paired differences: one-sample)
    rng = np.random.default_rng(7)
    a = rng.normal(0, 1, 3000)
    b = a + rng.normal(0.02, 0.5, 3000)
    got = _read(b - a, 0.05)
    p_t = ttost_paired(b, a, -0.05, 0.05)[0]
    assert got.p_equivalence == pytest.approx(p_t, rel=0.02)
    assert got.p_equivalence < 0.05 and p_t < 0.05


@pytest.mark.parametrize("delta", [0.1, 0.25, 0.5])
def test_units_to_detect_match_statsmodels_power_solver(delta):
    # far from the margin, showing the effect is what decides: the one-sample two-sided z-test
    n = units_to_decide(delta, 1.0, delta / 4)
    want = NormalIndPower().solve_power(effect_size=delta, alpha=0.05, power=0.8, ratio=0)
    assert n == math.ceil(want)


def test_units_to_show_equivalence_reach_the_power_in_simulation():
    margin, sd = 0.2, 1.0
    n = units_to_decide(0.0, sd, margin)
    assert n == pytest.approx(((1.6449 + 1.2816) / margin) ** 2, rel=0.03)  # z_{1-a}, z_{1-b/2}
    rng = np.random.default_rng(3)
    x = rng.normal(0.0, sd, size=(4000, n))
    se = x.std(axis=1, ddof=1) / math.sqrt(n)
    lo90 = x.mean(axis=1) - 1.6449 * se
    hi90 = x.mean(axis=1) + 1.6449 * se
    power = np.mean((lo90 > -margin) & (hi90 < margin))
    assert 0.77 <= power <= 0.83


def test_the_three_kinds_and_their_sentences():
    effect = effect_finding(0.3, ci=(0.1, 0.5), margin=0.1, n=200, what="length bias")
    assert effect.kind == "effect" and effect.sentence.startswith("evidence of length bias: +0.30")
    absent = effect_finding(0.01, ci=(-0.03, 0.05), margin=0.1, n=2000, what="length bias")
    assert absent.kind == "no_material_effect" and "within ±0.10" in absent.sentence
    # notebook 10's ChatGPT/Vanilla: an interval reaching +0.37 is no evidence of no bias
    unsure = effect_finding(0.18, ci=(-0.01, 0.37), margin=0.1, n=100, what="length bias")
    assert unsure.kind == "inconclusive"
    assert "no length bias" not in unsure.sentence and ": inconclusive" in unsure.sentence
    assert unsure.n_needed > 100 and f"{unsure.n_needed:,} pairs" in unsure.sentence
    # a narrow interval around 0 that still reaches past the margin does not say "no bias"
    wide = effect_finding(0.0, ci=(-0.15, 0.15), margin=0.1, n=300, what="position bias")
    assert wide.kind == "inconclusive" and wide.n_needed > 300
    with pytest.raises(ValueError, match="margin"):
        effect_finding(0.1, ci=(0, 0.2), margin=0)


def test_no_interval_is_inconclusive():
    got = effect_finding(0.4, margin=0.1, what="length bias")
    assert got.kind == "inconclusive" and "no interval" in got.sentence


@pytest.mark.parametrize("truth,n,allowed", [
    (0.0, 2000, {"no_material_effect", "inconclusive"}),   # unbiased: "effect" at most ~alpha
    (0.2, 2000, {"effect", "inconclusive"}),                # beyond the margin: never "no effect"
])
def test_error_rates_under_known_truth(truth, n, allowed):
    rng = np.random.default_rng(11)
    kinds = [_read(rng.normal(truth, 1.0, n), 0.1).kind for _ in range(400)]
    wrong = np.mean([k not in allowed for k in kinds])
    assert wrong <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 400)
    # and with this many units the right answer is the usual one
    right = "no_material_effect" if truth == 0 else "effect"
    assert np.mean([k == right for k in kinds]) >= 0.9


def test_too_few_units_is_inconclusive():
    rng = np.random.default_rng(5)
    kinds = [_read(rng.normal(0.03, 1.0, 40), 0.1).kind for _ in range(400)]
    assert np.mean([k == "inconclusive" for k in kinds]) >= 0.9
