"""TestResult: unpacking, critical values, htest print, tidy rows, inapplicable tests."""

import numpy as np
import pytest
from scipy import stats

from statcore.exceptions import NotApplicableWarning
from statcore.results import TestResult


def chi2_result():
    return TestResult(
        method="Pearson's chi-squared test",
        statistic=7.5,
        pvalue=float(stats.chi2(3).sf(7.5)),
        alternative="greater",
        df=3,
        distribution="chi2(3)",
        reference=stats.chi2(3),
        null_hypothesis="independence",
        nobs=120,
    )


def test_unpacks_to_statistic_and_pvalue_only():
    res = chi2_result()
    stat, p = res
    assert stat == 7.5 and p == pytest.approx(stats.chi2(3).sf(7.5))
    assert TestResult.__test__ is False


def test_critical_values_from_reference_and_draws():
    res = chi2_result()
    assert res.critical_value(0.05) == pytest.approx(stats.chi2(3).ppf(0.95))
    draws = np.random.default_rng(0).normal(size=5000)
    two = TestResult(method="perm", statistic=0.1, pvalue=0.9, null_distribution=draws)
    lo, hi = two.critical_value(0.1)
    assert (lo, hi) == (
        pytest.approx(np.quantile(draws, 0.05)),
        pytest.approx(np.quantile(draws, 0.95)),
    )
    less = TestResult(
        method="t", statistic=-1.0, pvalue=0.16, alternative="less", reference=stats.norm()
    )
    assert less.critical_value(0.05) == pytest.approx(stats.norm.ppf(0.05))
    with pytest.raises(ValueError, match="neither a reference"):
        TestResult(method="x", statistic=1.0, pvalue=0.3).critical_value()


def test_htest_style_print():
    text = repr(chi2_result())
    assert "\tPearson's chi-squared test" in text
    assert "chi-squared = 7.5000, df = 3, p-value = 0.0576" in text
    # a chi-square test rejects for large values only: no direction to print (R's htest)
    assert "alternative hypothesis" not in text
    assert "null hypothesis: independence" in text
    named = TestResult(method="t", statistic=1.0, pvalue=0.3, statistic_name="X-squared")
    assert "X-squared = 1.0000" in repr(named) and "alternative hypothesis: two-sided" in repr(
        named
    )


def test_tidy_glance_and_conf_int():
    res = TestResult(
        method="z test",
        statistic=2.0,
        pvalue=0.0455,
        estimate=0.4,
        std_error=0.2,
        distribution="N(0,1)",
    )
    tidy = res.tidy()
    assert list(tidy.columns) == [
        "statistic",
        "p_value",
        "df",
        "distribution",
        "method",
        "alternative",
        "estimate",
        "conf_low",
        "conf_high",
    ]
    assert tidy["conf_low"].iloc[0] == pytest.approx(0.4 - stats.norm.ppf(0.975) * 0.2)
    assert res.glance().equals(tidy)
    assert "p-value" in res.summary().as_text()
    with pytest.raises(ValueError, match="no estimate with a standard error"):
        chi2_result().conf_int()


def test_not_applicable_is_nan_with_reason():
    with pytest.warns(NotApplicableWarning, match="constant regressor"):
        res = TestResult.not_applicable("MMDD test", "constant regressor")
    assert np.isnan(res.statistic) and np.isnan(res.pvalue)
    assert res.notes == ("Not applicable: constant regressor",)


def test_bad_alternative():
    with pytest.raises(
        ValueError, match="`alternative` must be one of 'two-sided', 'less', 'greater'"
    ):
        TestResult(method="x", statistic=1.0, pvalue=0.3, alternative="larger")


def test_plot_null_and_reference():
    import matplotlib

    matplotlib.use("Agg")
    draws = np.random.default_rng(1).chisquare(3, size=500)
    with_draws = TestResult(method="perm", statistic=7.5, pvalue=0.06, null_distribution=draws)
    assert "null distribution" in with_draws.plot().get_title()
    assert chi2_result().plot().get_title().endswith("chi2(3)")
