"""PPI intervals at extreme rates and few labels: coverage of a known truth, the [0, 1] range,
and the warning for labels that are all the same."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import judgekit as jk
from judgekit.exceptions import MetricWarning
from judgekit.inference._fit import quick_intervals
from judgekit.sim.labels import simulate

REPS = 300
# coverage over REPS seeded replications has binomial SE sqrt(0.95 * 0.05 / 300) = 0.0126 at the
# nominal level; 0.92 is 2.4 SE below 0.95 (a correct interval fails this about 1% of the time
# per cell), while the intervals before the fix covered 0.62-0.88 in these cells
FLOOR = 0.92


@pytest.mark.parametrize(("rate", "accuracy", "n"), [(0.92, 0.95, 20), (0.92, 0.85, 50),
                                                     (0.92, 0.95, 50), (0.98, 0.85, 50)])
def test_coverage_at_extreme_rates_and_few_labels(rate, accuracy, n):
    rng = np.random.default_rng(int(rate * 100) * 1000 + n)
    hits: dict[str, list[bool]] = {}
    inside = True
    for _ in range(REPS):
        y, f = simulate(2000, win_rate=rate, accuracy=accuracy, rng=rng)
        ys = np.full(len(y), np.nan)
        idx = rng.choice(len(y), n, replace=False)
        ys[idx] = y[idx]
        for method, (_, _, low, high) in quick_intervals(ys, f).items():
            hits.setdefault(method, []).append(low <= rate <= high)
            inside &= 0.0 <= low <= high <= 1.0
    coverage = {m: float(np.mean(h)) for m, h in hits.items() if m != "judge_only"}
    assert min(coverage.values()) >= FLOOR, coverage
    assert inside


def test_mid_rate_intervals_stay_close_to_the_t_interval():
    # where the t interval already covers, the score-type bound widens it only a little
    rng = np.random.default_rng(5)
    ratio = []
    for _ in range(100):
        y, f = simulate(2000, win_rate=0.6, tie_rate=0.1, accuracy=0.75, flip_q=0.1, rng=rng)
        ys = np.full(len(y), np.nan)
        idx = rng.choice(len(y), 300, replace=False)
        ys[idx] = y[idx]
        _, se, low, high = quick_intervals(ys, f)["ppi++"]
        ratio.append((high - low) / (2 * stats.t.ppf(0.975, 299) * se))
    assert min(ratio) >= 1.0 and np.mean(ratio) < 1.03


def test_intervals_stay_in_the_unit_interval_for_every_option():
    rng = np.random.default_rng(3)
    y, f = simulate(3000, win_rate=0.97, accuracy=0.9, rng=rng)
    ys = np.where(np.arange(len(y)) < 40, y, np.nan)
    for small in (True, False):
        for interval in ("clt", "bootstrap"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MetricWarning)
                out = jk.ppi_mean(ys, f, small_sample=small, interval=interval, n_boot=200)
            assert out["ci_low"].between(0, 1).all() and out["ci_high"].between(0, 1).all(), out
    # a score outside [0, 1] is not clipped
    out = jk.ppi_mean(ys * 10 + 5, f * 10 + 5)
    assert (out["ci_high"] > 1).all()


def test_constant_labels_warn_and_do_not_give_a_zero_width_interval():
    rng = np.random.default_rng(4)
    y, f = simulate(2000, win_rate=0.92, accuracy=0.9, rng=rng)
    ys = np.full(len(y), np.nan)
    ones = np.flatnonzero(y == 1)[:20]
    ys[ones] = 1.0
    with pytest.warns(MetricWarning, match="all 20 labels of judge '' are 1"):
        out = jk.ppi_mean(ys, f).set_index("method")
    assert out.loc["classical", "estimate"] == 1.0
    # Wilson's interval for 20 of 20 reaches down to 0.84; the classical one contains it
    assert out.loc["classical", "ci_low"] < 0.84 and out.loc["classical", "ci_high"] == 1.0
    assert (out["ci_high"] - out["ci_low"]).drop("judge_only").min() > 0.05
