"""The shared cluster bootstrap, checked against scipy.stats.bootstrap."""

import inspect
import warnings

import numpy as np
import pytest
from scipy import stats

from judgekit import _bootstrap as bs
from judgekit.exceptions import MetricWarning


def test_counts_are_scipys_resamples_and_give_its_percentile_interval():
    x = np.random.default_rng(1).gamma(2.0, size=57)
    W = bs.counts(len(x), 2000, np.random.default_rng(7))
    assert W.shape == (2000, 57)
    assert (W.sum(axis=1) == 57).all()
    ours = W @ x / len(x)
    low, high, se = bs.interval(ours, 0.9)
    # scipy >= 1.15 calls the generator `rng`; older versions `random_state`
    seed_arg = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state"
    ref = stats.bootstrap((x,), np.mean, n_resamples=2000, method="percentile",
                          confidence_level=0.9, vectorized=True,
                          **{seed_arg: np.random.default_rng(7)})
    assert low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    assert se == pytest.approx(ref.standard_error, rel=1e-9)


def test_chunked_draws_are_multinomial():
    n, B = 40, 30_000
    chunks = list(bs.iter_counts(n, B, 3, max_cells=n * 1000))
    assert len(chunks) == 30
    W = np.vstack([w for _, w in chunks])
    assert W.shape == (B, n) and (W.sum(axis=1) == n).all()
    # marginal of one cell is Binomial(n, 1/n): mean 1, variance 1 - 1/n
    col = W[:, 5]
    assert col.mean() == pytest.approx(1.0, abs=0.02)
    assert col.var() == pytest.approx(1 - 1 / n, abs=0.03)
    # two cells are negatively correlated: cov = -1/n
    assert np.cov(W[:, 0], W[:, 1])[0, 1] == pytest.approx(-1 / n, abs=0.015)


def test_resample_sums_equal_counts_times_rows():
    S = np.random.default_rng(0).random((25, 3))
    sums = bs.resample_sums(S, 50, 11)
    W = bs.counts(25, 50, 11)
    np.testing.assert_allclose(sums, W @ S, rtol=1e-5)


def test_interval_leaves_out_nonfinite_and_gives_up_below_the_share():
    reps = np.arange(100, dtype=float)
    reps[:3] = np.nan
    low, high, se = bs.interval(reps, 0.9)
    assert low == pytest.approx(np.quantile(reps[3:], 0.05))
    reps[:10] = np.inf
    low, high, se = bs.interval(reps, 0.9)
    assert np.isnan(low) and np.isnan(high) and np.isnan(se)
    lows, highs, _ = bs.interval(np.vstack([np.arange(10.0), np.full(10, np.nan)]), 0.5)
    assert np.isfinite(lows[0]) and np.isnan(lows[1])


@pytest.mark.parametrize("n_boot, ci", [(-1, 0.9), (1.5, 0.9), ("10", 0.9), (True, 0.9),
                                        (10, 0), (10, 1), (10, "0.9")])
def test_check_args_refuses(n_boot, ci):
    with pytest.raises(ValueError, match="n_boot|ci"):
        bs.check_args(n_boot, ci)


def test_check_args_minimum():
    assert bs.check_args(10.0, 0.95) == 10
    with pytest.raises(ValueError, match=">= 1"):
        bs.check_args(0, 0.95, minimum=1)


def test_p_value_is_the_normal_two_sided_tail():
    assert bs.p_value(1.96, 1.0) == pytest.approx(2 * stats.norm.sf(1.96))
    assert np.isnan(bs.p_value(1.0, 0.0))


def test_few_clusters_warn():
    with pytest.warns(MetricWarning, match="only 3 pairs"):
        assert bs.warn_few_clusters(3, "accuracy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not bs.warn_few_clusters(5, "accuracy")


def test_indices_are_the_draws_counts_counts():
    idx = bs.indices(12, 300, np.random.default_rng(5))
    W = bs.counts(12, 300, np.random.default_rng(5))
    counted = np.stack([np.bincount(row, minlength=12) for row in idx])
    np.testing.assert_array_equal(counted, W)


def test_arena_rank_correlation_replicates_are_scipys_spearman():
    from judgekit.winrate.arena import _row_pearson

    rng = np.random.default_rng(2)
    x, e = rng.normal(size=9).round(1), rng.normal(size=9)   # rounding makes ties
    idx = bs.indices(9, 200, rng)
    ours = _row_pearson(stats.rankdata(x[idx], axis=1), stats.rankdata(e[idx], axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # constant resamples: scipy warns and gives NaN
        ref = np.array([stats.spearmanr(x[i], e[i]).statistic for i in idx])
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12, equal_nan=True)
