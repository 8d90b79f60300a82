"""What users see: summaries that name the fit and fit the screen, no all-NaN inference columns,
tests printed as R prints them, predictions on the response scale, documented plots."""

import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from _models import LogisticMLE, OLSFixture
from scipy import special, stats

from statcore.results import (
    EstimationResults,
    LikelihoodResults,
    ResamplingResult,
    Results,
    Summary,
    TestResult,
    compare,
)
from statcore.results.plotting import plot_coefficients

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    import matplotlib.pyplot as plt

    yield
    plt.close("all")


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


# --- summaries ---------------------------------------------------------------------------------


def test_title_names_the_method_and_the_formula(regression_frame):
    res = OLSFixture.from_formula("y ~ x + C(g)", regression_frame).fit()
    assert res.summary().title == "OLS: y ~ x + C(g)"
    arrays = OLSFixture(regression_frame["y"], regression_frame[["x"]]).fit()
    assert arrays.summary().title == "OLS: y ~ x"
    bare = EstimationResults(method="risk", params=pd.Series([1.0], index=["a"]))
    assert bare.summary().title == "risk"


def test_long_values_and_notes_wrap_within_100_columns():
    long_value = "a covariance estimated from " + "many words " * 20
    summary = Summary(
        title="T",
        info=(("nobs", "10"), ("cov_type", long_value), ("df_resid", "8")),
        tables={"coefficients": pd.DataFrame({"estimate": [1.0]}, index=["x" * 80])},
        notes=("a remark " * 40,),
    )
    text = summary.as_text()
    assert widest(text) <= 100
    # every word of the long value and the note is still there
    flat = " ".join(text.split())
    assert " ".join(long_value.split()) in flat
    assert ("a remark " * 40).strip() in flat
    assert "nobs:" in text and "df_resid:" in text


def test_wide_table_is_split_into_column_blocks():
    frame = pd.DataFrame(
        np.arange(30.0).reshape(1, 30) * 1e3, columns=[f"column_{i}" for i in range(30)]
    )
    text = Summary(title="wide", tables={"t": frame.set_axis(["row"])}).as_text()
    assert widest(text) <= 100
    assert all(f"column_{i}" in text for i in range(30))


def test_hundred_term_fit_prints_40_rows_and_points_to_tidy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 99))
    y = X @ rng.normal(size=99) + rng.normal(size=300)
    res = OLSFixture(y, X).fit()
    text = res.summary().as_text()
    assert widest(text) <= 100
    rows = [line for line in text.splitlines() if line.startswith(("Intercept", "x"))]
    assert len(rows) == 40
    assert "… 60 more rows; use tidy()" in text
    assert len(res.tidy()) == 100
    assert res.summary().title == "OLS: y ~ 99 regressors"
    axes = res.plot()
    assert len(axes) == 16 and "first 16 of 100 terms" in axes[0].figure.get_suptitle()
    html = res.summary().as_html()
    assert html.count("<tr>") == 1 + 40 + 1 + len(res.summary().info)


def test_many_levels_share_the_row_budget_and_levels_are_rounded():
    levels = [0.1 * 0.144 * (i + 1) for i in range(30)]
    terms = ["Intercept", "x"]
    params = pd.DataFrame(np.ones((2, 30)), index=terms, columns=levels)
    res = EstimationResults(method="multi", params=params)
    summary = res.summary()
    assert "coefficients (level = 0.0144)" in summary.tables
    assert not any("0.01439999" in name for name in summary.tables)
    text = summary.as_text()
    assert "… 20 more rows in 10 more tables; use tidy()" in text
    assert "level = 0.0144)" in text and widest(text) <= 100


# --- quantities without inference --------------------------------------------------------------


def no_inference(**fit_options):
    res = EstimationResults(
        method="Penalised fit", params=pd.Series([1.0, 2.0], index=["a", "b"]), nobs=10
    )
    if fit_options:
        object.__setattr__(res, "fit_options", fit_options)
    return res


def test_no_inference_shows_no_nan_columns_and_conf_int_says_how():
    res = no_inference()
    assert not res.has_inference
    assert list(res.tidy().columns) == ["term", "estimate"]
    assert list(res.summary().tables["coefficients"].columns) == ["estimate"]
    assert "no standard errors" in res.summary().notes[-1]
    assert res.glance()["cov_type"].iloc[0] == "none"
    with pytest.raises(ValueError, match="`conf_int` needs standard errors; this fit has none"):
        res.conf_int()
    with pytest.raises(ValueError, match=r"refit with `cov_type=` or `n_resamples=`"):
        no_inference(cov_type="none", n_resamples=None, tol=1e-6).conf_int()
    with pytest.raises(ValueError, match=r"refit with `n_resamples=`$"):
        no_inference(n_resamples=None).conf_int()
    # the coefficient plot and compare() show the estimates only
    axes = res.plot()
    assert len(axes) == 2 and "no standard errors" in axes[0].figure.get_suptitle()
    table = compare(res, show="conf_int").tables["estimates"]
    assert table.loc[("a", "conf_int"), "model 1"] == ""


# --- tests printed as R prints them ------------------------------------------------------------


def test_chi2_and_f_tests_print_no_direction_and_wald_reads_like_r(regression_frame):
    res = OLSFixture.from_formula("y ~ x + C(g)", regression_frame).fit(inference="normal")
    wald = res.wald_test("x = 0")
    text = repr(wald)
    assert "\tWald test\n" in text and "null hypothesis: x = 0" in text
    assert f"chi-squared = {wald.statistic:.4f}, df = 1, p-value < 0.0001" in text
    assert "alternative" not in text
    assert "alternative" not in wald.summary().as_text()
    f_test = OLSFixture.from_formula("y ~ x + C(g)", regression_frame).fit().wald_test("x = 0")
    assert "F = " in repr(f_test) and "num df = 1, denom df = 56" in repr(f_test)
    assert "alternative" not in repr(f_test)
    # a directional test keeps its alternative
    z = TestResult(method="z test", statistic=-2.0, pvalue=0.02, alternative="less")
    assert "alternative hypothesis: less" in repr(z)
    assert "z = -2.0000" in repr(
        TestResult(method="z", statistic=-2.0, pvalue=0.05, reference=stats.norm())
    )


# --- predictions, fitted values, df_model ------------------------------------------------------


class Logit(LogisticMLE):
    inverse_link = staticmethod(special.expit)


@pytest.fixture
def logit_data():
    rng = np.random.default_rng(4)
    x = pd.DataFrame(rng.normal(size=(300, 2)), columns=["a", "b"])
    eta = 0.3 + x.to_numpy() @ [1.0, -0.5]
    y = (rng.random(300) < special.expit(eta)).astype(float)
    return y, x


def test_predict_is_on_the_response_scale_like_statsmodels(logit_data):
    y, x = logit_data
    res = Logit(y, x).fit()
    ref = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
    new = pd.DataFrame({"a": [0.0, 1.0, -2.0], "b": [0.5, 0.0, 1.0]})
    new_exog = sm.add_constant(new, has_constant="add")
    np.testing.assert_allclose(res.predict(new), ref.predict(new_exog), rtol=1e-5)
    np.testing.assert_allclose(
        res.predict(new, which="linear"), ref.predict(new_exog, which="linear"), rtol=1e-5
    )
    assert res.predict(new).between(0, 1).all()
    np.testing.assert_allclose(res.fittedvalues, ref.predict(), rtol=1e-5)
    np.testing.assert_allclose(res.resid, y - ref.predict(), rtol=1e-4, atol=1e-7)
    # the inverse link travels with a stripped result
    np.testing.assert_allclose(res.strip().predict(new), res.predict(new), rtol=1e-12)
    with pytest.raises(ValueError, match="`which` must be one of 'mean', 'linear'"):
        res.predict(new, which="response")
    # an identity-link model predicts the same on both scales
    ols = OLSFixture(y, x).fit()
    np.testing.assert_allclose(ols.predict(new), ols.predict(new, which="linear"))


def test_df_model_counts_slopes_everywhere_as_statsmodels(logit_data, regression_frame):
    y, x = logit_data
    res = Logit(y, x).fit()
    ref = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
    assert res.df_model == ref.df_model == 2
    assert res.glance()["df_model"].iloc[0] == 2
    assert dict(res.summary().info)["df_model"] == "2"
    assert res.k_params == 3
    assert res.aic == pytest.approx(ref.aic, rel=1e-9)
    assert res.bic == pytest.approx(ref.bic, rel=1e-9)
    no_constant = OLSFixture(regression_frame["y"], regression_frame[["x"]], intercept=False)
    assert no_constant.fit().df_model == 1
    multi = EstimationResults(
        method="m",
        params=pd.DataFrame(np.ones((2, 3)), index=["Intercept", "x"], columns=[1, 2, 3]),
    )
    assert multi.k_params == 6 and multi.df_model == 3


def test_old_df_model_keyword_keeps_aic_and_warns():
    params = pd.Series([1.0, 2.0, 0.5], index=["Intercept", "x", "sigma"])
    with pytest.warns(FutureWarning, match="pass `k_params=` instead"):
        old = LikelihoodResults(method="m", params=params, llf=-10.0, nobs=20, df_model=3)
    new = LikelihoodResults(method="m", params=params, llf=-10.0, nobs=20, k_params=3)
    assert old.aic == new.aic == 26.0 and old.df_model == new.df_model == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LikelihoodResults(method="m", params=params, llf=-10.0, nobs=20, k_params=3, df_model=1)


# --- plots -------------------------------------------------------------------------------------


def test_help_of_plot_lists_each_class_kinds():
    from mlcore.pruning.results import PruningResult
    from mlcore.results import TrainingResult
    from statcore.ot.results import SinkhornResult
    from statcore.quantized.results import QuantizedNVMMResults

    for cls in (
        EstimationResults,
        TestResult,
        ResamplingResult,
        TrainingResult,
        PruningResult,
        SinkhornResult,
        QuantizedNVMMResults,
    ):
        doc = cls.plot.__doc__
        for kind, function in cls._plots.items():
            assert f"``{kind!r}``" in doc, (cls, kind)
            first = " ".join(function.__doc__.strip().split("\n\n")[0].split())
            assert first in " ".join(doc.split()), (cls, kind)
    assert "kind : {'density', 'coef', 'history'}" in QuantizedNVMMResults.plot.__doc__
    assert Results.plot.__doc__.startswith("Draw the result")


def test_coefficient_plot_puts_each_term_on_its_own_panel(regression_frame):
    res = OLSFixture.from_formula("y ~ x + C(g)", regression_frame).fit()
    axes = res.plot()
    assert len(axes) == len(res.params) and len(axes[0].figure.axes) == len(res.params)
    assert [ax.get_title() for ax in axes] == list(res.params.index)
    for ax, term in zip(axes, res.params.index, strict=True):
        assert ax.get_ylabel() == "estimate"
        low, high = ax.get_ylim()
        assert (
            low <= res.conf_int().loc[term, "lower"] and res.conf_int().loc[term, "upper"] <= high
        )
    assert axes[0].figure.get_suptitle() == "OLS: 95% intervals"
    # an Axes from subplots is split into the panels
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2)
    panels = plot_coefficients(res, ax=right, terms=["x", "Intercept"])
    assert [p.get_title() for p in panels] == ["x", "Intercept"]
    assert len(fig.axes) == 3 and left in fig.axes
    with pytest.raises(ValueError, match="`terms` must be among"):
        res.plot(terms=["nope"])


def test_multilevel_coefficient_panels_are_against_the_level():
    terms, levels = ["Intercept", "x"], [0.25, 0.75]
    params = pd.DataFrame([[1000.0, 2000.0], [0.5, 0.7]], index=terms, columns=levels)
    axes = EstimationResults(method="multi", params=params).plot()
    assert len(axes) == 2 and all(ax.get_xlabel() == "level" for ax in axes)
    np.testing.assert_allclose(axes[1].lines[0].get_ydata(), [0.5, 0.7])
    assert axes[1].get_ylim()[1] < 10  # the slope is not squashed by the intercept's scale


def test_plot_matrix_serves_transport_plans_and_pruning_scores():
    from mlcore.pruning.results import PruningResult
    from statcore.ot.results import SinkhornResult

    scores = np.arange(1.0, 7.0).reshape(2, 3)
    pruned = PruningResult(method="magnitude", mask=scores > 2, scores=scores)
    ax = pruned.plot()
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("column", "row")
    assert len(ax.figure.axes) == 2 and ax.figure.axes[1].get_ylabel().startswith("log10 score")
    image = ax.get_images()[0].get_array()
    assert np.ma.getmaskarray(image)[0, 0] and image[1, 2] == pytest.approx(np.log10(6.0))
    plan = np.full((2, 2), 0.25)
    ones = np.ones(2) / 2
    solved = SinkhornResult(
        method="Sinkhorn",
        plan=plan,
        transport_cost=0.0,
        objective=0.0,
        f=ones,
        g=ones,
        a=ones,
        b=ones,
        epsilon=0.1,
        marginal_error=0.0,
    )
    ax = solved.plot()
    assert ax.get_xlabel() == "target point j" and ax.figure.axes[1].get_ylabel() == "mass"
    np.testing.assert_array_equal(ax.get_images()[0].get_array(), plan)


def test_histogram_axes_are_labelled_and_legend_does_not_sit_on_the_bars():
    draws = pd.DataFrame({"m": np.random.default_rng(0).normal(size=200)})
    boot = ResamplingResult(method="b", estimate=pd.Series([0.0], index=["m"]), replicates=draws)
    ax = boot.plot()
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("value", "count")
    assert ax.get_legend()._loc in (0, "best")  # matplotlib's code for "best"


def test_label_axes_sets_only_what_is_given_and_places_the_legend():
    import matplotlib.pyplot as plt

    from statcore.results.plotting import label_axes

    fig, ax = plt.subplots()
    ax.plot([0, 1], label="line")
    ax.set_ylabel("kept")
    assert label_axes(ax, "x", title="t", legend="beside") is ax
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("x", "kept", "t")
    assert ax.get_legend() is not None
    with pytest.raises(ValueError, match="`legend` must be None, 'inside' or 'beside'"):
        label_axes(ax, legend="top")
    plt.close(fig)
