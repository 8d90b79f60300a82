"""ResamplingResult intervals against hand computation and scipy.stats.bootstrap."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from statcore.results import ResamplingResult


def mean_bootstrap(sample, n_resamples, seed):
    """Replicates of the mean drawn exactly as scipy.stats.bootstrap draws them (one batch)."""
    idx = np.random.default_rng(seed).integers(0, len(sample), (n_resamples, len(sample)))
    reps = sample[idx].mean(axis=1)
    jack = np.array([np.delete(sample, i).mean() for i in range(len(sample))])
    return ResamplingResult(
        method="bootstrap of the mean",
        estimate=pd.Series([sample.mean()], index=["mean"]),
        replicates=pd.DataFrame({"mean": reps}),
        jackknife=pd.DataFrame({"mean": jack}),
        resampler=lambda n, rng: sample[rng.integers(0, len(sample), (n, len(sample)))].mean(
            axis=1
        )[:, None],
    )


@pytest.fixture
def skewed_sample():
    return np.random.default_rng(11).exponential(size=40)


@pytest.mark.parametrize(
    "method,scipy_method", [("percentile", "percentile"), ("basic", "basic"), ("bca", "BCa")]
)
def test_intervals_match_scipy_bootstrap(skewed_sample, method, scipy_method):
    res = mean_bootstrap(skewed_sample, 999, seed=5)
    ref = stats.bootstrap(
        (skewed_sample,),
        np.mean,
        n_resamples=999,
        method=scipy_method,
        rng=np.random.default_rng(5),
        vectorized=True,
        batch=None,
    )
    ci = res.conf_int(0.05, method=method)
    # identical replicates, identical formulas: only floating-point summation order differs
    np.testing.assert_allclose(
        [ci.loc["mean", "lower"], ci.loc["mean", "upper"]],
        [ref.confidence_interval.low, ref.confidence_interval.high],
        rtol=1e-10,
    )
    assert res.bse["mean"] == pytest.approx(ref.standard_error, rel=1e-12)


def test_normal_interval_bias_and_se_by_hand(skewed_sample):
    res = mean_bootstrap(skewed_sample, 500, seed=1)
    reps = res.replicates["mean"].to_numpy()
    bias = reps.mean() - skewed_sample.mean()
    se = reps.std(ddof=1)
    assert res.bias["mean"] == pytest.approx(bias, rel=1e-12)
    ci = res.conf_int(0.1, method="normal")
    z = stats.norm.ppf(0.95)
    assert ci.loc["mean", "lower"] == pytest.approx(skewed_sample.mean() - bias - z * se)
    tidy = res.tidy()
    assert list(tidy.columns) == ["term", "estimate", "std_error", "bias", "conf_low", "conf_high"]


def test_extend_adds_replicates_reproducibly(skewed_sample):
    res = mean_bootstrap(skewed_sample, 200, seed=2)
    a, b = res.extend(300, random_state=9), res.extend(300, random_state=9)
    assert a.n_resamples == 500 and res.n_resamples == 200
    pd.testing.assert_frame_equal(a.replicates, b.replicates)


def test_errors(skewed_sample):
    res = mean_bootstrap(skewed_sample, 50, seed=0)
    with pytest.raises(ValueError, match="`method` must be one of"):
        res.conf_int(method="studentized")
    with pytest.raises(ValueError, match="`alpha` must lie in"):
        res.conf_int(alpha=1.5)
    no_jack = ResamplingResult(method="m", estimate=res.estimate, replicates=res.replicates)
    with pytest.raises(ValueError, match="needs the jackknife"):
        no_jack.conf_int(method="bca")
    with pytest.raises(ValueError, match="no `resampler`"):
        no_jack.extend(10)
    with pytest.raises(ValueError, match="one column per term"):
        ResamplingResult(
            method="m", estimate=res.estimate, replicates=pd.DataFrame({"other": [1.0, 2.0]})
        )


def test_percentile_interval_coverage():
    """Coverage of the 90% percentile interval of a normal mean: 400 seeded data sets."""
    rng = np.random.default_rng(2026)
    n, reps, covered = 50, 400, 0
    for _ in range(reps):
        sample = rng.normal(1.0, 2.0, size=n)
        idx = rng.integers(0, n, (400, n))
        res = ResamplingResult(
            method="b",
            estimate=pd.Series([sample.mean()], index=["m"]),
            replicates=pd.DataFrame({"m": sample[idx].mean(axis=1)}),
        )
        lo, hi = res.conf_int(0.1).loc["m"]
        covered += lo <= 1.0 <= hi
    rate = covered / reps
    # percentile intervals undercover slightly at n = 50 (about 0.88-0.89); 3 Monte Carlo
    # standard errors of a rate near 0.9 over 400 replicates is 0.045.
    assert abs(rate - 0.89) < 3 * np.sqrt(0.9 * 0.1 / reps)


def test_plot(skewed_sample):
    import matplotlib

    matplotlib.use("Agg")
    ax = mean_bootstrap(skewed_sample, 100, seed=0).plot()
    assert "replicates" in ax.get_title()
