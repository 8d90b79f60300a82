"""EstimationResults / LikelihoodResults on models whose answers are known in closed form."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from _models import OLSFixture
from scipy import stats

from statcore.results import EstimationResults, ResamplingResult, TestResult, compare

# Closed-form quantities computed two ways (our fixture, numpy/statsmodels) agree to rounding:
# 1e-10 relative leaves room for different BLAS summation orders, nothing more.
RTOL = 1e-10


@pytest.fixture
def ols(regression_frame):
    return OLSFixture.from_formula("y ~ x + C(g)", regression_frame)


@pytest.fixture
def sm_ols(regression_frame):
    return smf.ols("y ~ x + C(g)", regression_frame).fit()


def hand_ols(frame):
    X = np.column_stack(
        [np.ones(len(frame)), frame["x"], frame["g"] == "b", frame["g"] == "c"]
    ).astype(float)
    y = frame["y"].to_numpy()
    beta = np.linalg.solve(X.T @ X, X.T @ y)
    resid = y - X @ beta
    df = len(y) - X.shape[1]
    cov = resid @ resid / df * np.linalg.inv(X.T @ X)
    return beta, np.sqrt(np.diag(cov)), df


def test_params_bse_pvalues_conf_int_match_hand_computation(ols, regression_frame):
    res = ols.fit()
    beta, se, df = hand_ols(regression_frame)
    np.testing.assert_allclose(res.params.to_numpy(), beta, rtol=RTOL)
    np.testing.assert_allclose(res.bse.to_numpy(), se, rtol=RTOL)
    t = beta / se
    np.testing.assert_allclose(res.tvalues.to_numpy(), t, rtol=RTOL)
    np.testing.assert_allclose(res.pvalues.to_numpy(), 2 * stats.t.sf(np.abs(t), df), rtol=1e-8)
    for alpha in (0.05, 0.1):
        crit = stats.t.ppf(1 - alpha / 2, df)
        ci = res.conf_int(alpha)
        assert list(ci.columns) == ["lower", "upper"]
        assert list(ci.index) == ["Intercept", "x", "C(g)[T.b]", "C(g)[T.c]"]
        np.testing.assert_allclose(ci["lower"], beta - crit * se, rtol=RTOL)
        np.testing.assert_allclose(ci["upper"], beta + crit * se, rtol=RTOL)


def test_agrees_with_statsmodels(ols, sm_ols):
    res = ols.fit()
    order = sm_ols.params.index  # statsmodels puts categorical terms first
    np.testing.assert_allclose(res.params[order], sm_ols.params, rtol=RTOL)
    np.testing.assert_allclose(res.bse[order], sm_ols.bse, rtol=1e-9)
    np.testing.assert_allclose(res.pvalues[order], sm_ols.pvalues, rtol=1e-7)
    np.testing.assert_allclose(res.conf_int().loc[order], sm_ols.conf_int(), rtol=1e-9)
    assert res.llf == pytest.approx(sm_ols.llf, rel=RTOL)
    # statsmodels counts the intercept in k for aic/bic: k = df_model + 1 = our df_model.
    assert res.aic == pytest.approx(sm_ols.aic, rel=RTOL)
    assert res.bic == pytest.approx(sm_ols.bic, rel=RTOL)


def test_normal_reference(ols):
    res = ols.fit(inference="normal")
    z = res.params / res.bse
    np.testing.assert_allclose(res.pvalues, 2 * stats.norm.sf(np.abs(z)), rtol=1e-12)
    ci = res.conf_int(0.1)
    np.testing.assert_allclose(ci["upper"], res.params + stats.norm.ppf(0.95) * res.bse)


def test_wald_test_f_and_chi2_match_statsmodels(ols, sm_ols):
    res = ols.fit()
    spec = "`C(g)[T.b]` = 0, `C(g)[T.c]` = 0"
    wt = res.wald_test(spec)
    ref = sm_ols.f_test("C(g)[T.b] = 0, C(g)[T.c] = 0")
    assert isinstance(wt, TestResult)
    assert wt.statistic == pytest.approx(float(ref.fvalue), rel=1e-9)
    assert wt.pvalue == pytest.approx(float(ref.pvalue), rel=1e-8)
    assert wt.df == (2, 56) and wt.distribution == "F(2, 56)" and wt.method == "Wald test"
    chi = ols.fit(inference="normal").wald_test("x = 2, `C(g)[T.b]` = `C(g)[T.c]`")
    ref_chi = sm_ols.wald_test("x = 2, C(g)[T.b] = C(g)[T.c]", use_f=False, scalar=True)
    assert chi.statistic == pytest.approx(float(ref_chi.statistic), rel=1e-9)
    assert chi.pvalue == pytest.approx(float(ref_chi.pvalue), rel=1e-8)
    assert chi.distribution == "chi2(2)"


def test_wald_test_matrix_form_equals_string_form(ols):
    res = ols.fit()
    R = np.array([[0, 1.0, 0, 0]])
    by_matrix = res.wald_test((R, [2.0]))
    by_string = res.wald_test("x = 2")
    assert by_matrix.statistic == pytest.approx(by_string.statistic, rel=1e-12)
    # one restriction: F equals the squared t statistic of (beta_x - 2) / se
    t = (res.params["x"] - 2) / res.bse["x"]
    assert by_string.statistic == pytest.approx(t**2, rel=1e-10)


def test_wald_test_bad_constraints(ols):
    res = ols.fit()
    with pytest.raises(ValueError, match="`constraints` 'nonsense = 1' could not be parsed"):
        res.wald_test("nonsense = 1")
    with pytest.raises(ValueError, match="`R` must have 4 columns"):
        res.wald_test(([1.0, 0.0], [0.0]))


def test_lr_test_matches_statsmodels(regression_frame):
    full = OLSFixture.from_formula("y ~ x + C(g)", regression_frame).fit()
    small = OLSFixture.from_formula("y ~ x", regression_frame).fit()
    lr = full.lr_test(small)
    sm_full = smf.ols("y ~ x + C(g)", regression_frame).fit()
    sm_small = smf.ols("y ~ x", regression_frame).fit()
    stat, p, df = sm_full.compare_lr_test(sm_small)
    assert lr.statistic == pytest.approx(stat, rel=1e-10)
    assert lr.pvalue == pytest.approx(p, rel=1e-8)
    assert lr.df == df == 2
    with pytest.raises(ValueError, match="fewer parameters"):
        small.lr_test(full)


def test_tidy_and_glance_columns(ols):
    res = ols.fit()
    tidy = res.tidy()
    assert list(tidy.columns) == [
        "term",
        "estimate",
        "std_error",
        "statistic",
        "p_value",
        "conf_low",
        "conf_high",
    ]
    assert list(tidy["term"]) == ["Intercept", "x", "C(g)[T.b]", "C(g)[T.c]"]
    glance = res.glance()
    assert len(glance) == 1
    assert list(glance.columns) == [
        "method",
        "nobs",
        "df_model",
        "df_resid",
        "loglik",
        "aic",
        "bic",
        "converged",
        "n_iter",
        "cov_type",
    ]
    # statsmodels' df_model: the slopes, not the intercept (aic / bic still count k = 4)
    assert glance["nobs"].iloc[0] == 60 and glance["df_model"].iloc[0] == 3 == res.df_model
    assert res.k_params == 4


def test_summary_text_snapshot(ols):
    """The whole text summary, frozen in a golden file (no timestamps, so it is reproducible)."""
    golden = Path(__file__).parent / "golden" / "ols_summary.txt"
    assert ols.fit().summary().as_text() == golden.read_text().rstrip("\n")


def test_summary_tables_stay_numeric_and_render_html_latex(ols):
    summary = ols.fit().summary(alpha=0.1)
    table = summary.tables["coefficients"]
    assert table["estimate"].dtype == float
    assert "90% intervals" in summary.notes[-1]
    html = summary.as_html()
    assert html.count("<table") == 2 and "C(g)[T.b]" in html
    latex = summary.as_latex()
    assert "\\begin{tabular}" in latex and "p\\_value" in latex and "90\\%" in latex


def test_repr_is_compact_and_html_is_the_summary(ols):
    res = ols.fit()
    text = repr(res)
    assert text.startswith("<LikelihoodResults: OLS, nobs=60>")
    assert "vcov" not in text and len(text.splitlines()) < 10
    assert res._repr_html_() == res.summary().as_html()


def test_null_value_none_drops_statistic_and_pvalues():
    res = EstimationResults(
        method="risk",
        params=pd.Series([1.0, 2.0], index=["teacher", "student"]),
        vcov=pd.DataFrame(
            np.diag([0.04, 0.09]), index=["teacher", "student"], columns=["teacher", "student"]
        ),
        null_value=None,
    )
    assert res.pvalues is None and res.tvalues is None
    assert list(res.tidy().columns) == ["term", "estimate", "std_error", "conf_low", "conf_high"]
    np.testing.assert_allclose(res.bse, [0.2, 0.3])


def test_bootstrap_reference_uses_replicates():
    rng = np.random.default_rng(3)
    reps = pd.DataFrame(rng.normal([1.0, 0.1], [0.5, 0.2], size=(400, 2)), columns=["a", "b"])
    estimate = pd.Series([1.0, 0.1], index=["a", "b"])
    boot = ResamplingResult(method="pairs bootstrap", estimate=estimate, replicates=reps)
    res = EstimationResults(
        method="m", params=estimate, inference="bootstrap", resampling=boot, cov_type="bootstrap"
    )
    np.testing.assert_allclose(res.bse, reps.std(ddof=1))
    centred = np.abs(reps.to_numpy() - estimate.to_numpy())
    expected = (1 + (centred >= np.abs(estimate.to_numpy())).sum(axis=0)) / 401
    np.testing.assert_allclose(res.pvalues, expected)
    np.testing.assert_allclose(
        res.conf_int().to_numpy(), np.quantile(reps, [0.025, 0.975], axis=0).T
    )
    assert "bootstrap reference (400 replicates" in res.summary().notes[-1]


def multilevel_results():
    terms, levels = ["Intercept", "x"], [0.25, 0.75]
    params = pd.DataFrame([[1.0, 2.0], [0.5, 0.7]], index=terms, columns=levels)
    flat_index = pd.MultiIndex.from_product([levels, terms], names=["level", "term"])
    cov = np.diag([0.01, 0.04, 0.02, 0.09])
    cov[1, 3] = cov[3, 1] = 0.03
    vcov = pd.DataFrame(cov, index=flat_index, columns=flat_index)
    return EstimationResults(method="multi", params=params, vcov=vcov, nobs=100)


def test_multilevel_params_bse_tidy_and_summary():
    res = multilevel_results()
    assert res.is_multilevel
    assert res.bse.shape == (2, 2)
    np.testing.assert_allclose(res.bse.loc["x"].to_numpy(), [0.2, 0.3])
    tidy = res.tidy()
    assert list(tidy.columns[:3]) == ["term", "level", "estimate"]
    assert list(zip(tidy["term"], tidy["level"], strict=True)) == [
        ("Intercept", 0.25),
        ("x", 0.25),
        ("Intercept", 0.75),
        ("x", 0.75),
    ]
    np.testing.assert_allclose(tidy["estimate"], [1.0, 0.5, 2.0, 0.7])
    ci = res.conf_int()
    assert ci.index.names == ["level", "term"]
    assert ci.loc[(0.75, "x"), "upper"] == pytest.approx(0.7 + stats.norm.ppf(0.975) * 0.3)
    summary = res.summary()
    assert list(summary.tables) == ["coefficients (level = 0.25)", "coefficients (level = 0.75)"]


def test_multilevel_wald_test_across_levels():
    res = multilevel_results()
    wt = res.wald_test("`x[0.25]` = `x[0.75]`")
    var = 0.04 + 0.09 - 2 * 0.03
    assert wt.statistic == pytest.approx((0.5 - 0.7) ** 2 / var, rel=1e-12)
    assert wt.df == 1


def test_formula_name_flow_and_categorical_predict(ols, regression_frame, sm_ols):
    res = ols.fit()
    new = pd.DataFrame({"x": [0.0, 1.5, -1.0], "g": ["c", "a", "b"]}, index=["p", "q", "r"])
    pred = res.predict(new)
    assert list(pred.index) == ["p", "q", "r"]
    np.testing.assert_allclose(pred, sm_ols.predict(new), rtol=RTOL)
    np.testing.assert_allclose(res.predict(), sm_ols.fittedvalues, rtol=RTOL)
    with pytest.raises(ValueError, match="`newdata` does not match the fitted design"):
        res.predict(pd.DataFrame({"x": [0.0], "g": ["zzz"]}))
    with pytest.raises(ValueError, match="`newdata` lacks"):
        res.predict(pd.DataFrame({"g": ["a"]}))


def test_stateful_transform_reapplied_on_new_data(regression_frame):
    res = OLSFixture.from_formula("y ~ center(x)", regression_frame).fit()
    mean = regression_frame["x"].mean()
    pred = res.predict(pd.DataFrame({"x": [mean, mean + 1]}))
    assert pred.iloc[0] == pytest.approx(res.params["Intercept"], rel=1e-12)
    assert pred.iloc[1] - pred.iloc[0] == pytest.approx(res.params["center(x)"], rel=1e-10)


def test_augment_and_strip(ols, regression_frame, sm_ols):
    res = ols.fit()
    aug = res.augment()
    assert list(aug.columns) == ["y", "x", "g", ".fitted", ".resid", ".std_resid"]
    np.testing.assert_allclose(aug[".resid"], sm_ols.resid, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(aug[".std_resid"], sm_ols.resid / np.sqrt(sm_ols.scale), rtol=1e-9)
    stripped = res.strip()
    assert stripped.model is None and res.model is ols
    assert stripped.summary().as_text() == res.summary().as_text()
    np.testing.assert_allclose(stripped.predict(regression_frame), res.predict(), rtol=RTOL)
    with pytest.raises(ValueError, match="stripped"):
        stripped.predict()


def test_fit_returns_new_object_and_leaves_model_alone(ols):
    X_before = ols.exog.copy()
    first, second = ols.fit(), ols.fit(inference="normal")
    assert first is not second and first.model is ols and second.model is ols
    np.testing.assert_array_equal(ols.exog, X_before)
    with pytest.raises(ValueError, match="read-only"):
        first.model.design.X[0, 0] = 99.0


def test_to_dict_is_json_safe(ols):
    payload = ols.fit().to_dict()
    text = json.dumps(payload)
    assert '"term": "C(g)[T.b]"' in text and payload["nobs"] == 60


def test_plot_returns_axes(ols):
    import matplotlib

    matplotlib.use("Agg")
    axes = ols.fit().plot()
    assert axes[0].figure.get_suptitle().startswith("OLS")
    axes2 = multilevel_results().plot()
    assert len(axes2) == 2 and all(len(ax.get_lines()) == 1 for ax in axes2)
    with pytest.raises(ValueError, match="`kind` must be one of 'coef'"):
        ols.fit().plot(kind="nope")


def test_compare_lines_models_up(regression_frame):
    full = OLSFixture.from_formula("y ~ x + C(g)", regression_frame).fit()
    small = OLSFixture.from_formula("y ~ x", regression_frame).fit()
    out = compare(full, small, names=["full", "small"], stars=True)
    est = out.tables["estimates"]
    assert list(est.columns) == ["full", "small"]
    assert est.loc[("x", "estimate"), "small"].startswith(f"{small.params['x']:.4f}")
    assert est.loc[("x", "estimate"), "full"].endswith("***")
    assert est.loc[("C(g)[T.b]", "estimate"), "small"] == ""
    assert est.loc[("x", "std_error"), "full"] == f"({full.bse['x']:.4f})"
    assert out.tables["fit"].loc["small", "nobs"] == 60
    assert "Model comparison" in out.as_text()
    with pytest.raises(ValueError, match="`names` must have 2 entries"):
        compare(full, small, names=["a"])
    with pytest.raises(TypeError, match=r"`results\[1\]` must be an EstimationResults"):
        compare(full, "small")


def test_construction_errors():
    params = pd.Series([1.0], index=["a"])
    with pytest.raises(ValueError, match="`inference` must be one of"):
        EstimationResults(method="m", params=params, inference="exact")
    with pytest.raises(ValueError, match="needs `df_resid`"):
        EstimationResults(method="m", params=params, inference="t")
    with pytest.raises(ValueError, match="needs `resampling`"):
        EstimationResults(method="m", params=params, inference="bootstrap")
    with pytest.raises(ValueError, match="`vcov` must be indexed"):
        EstimationResults(method="m", params=params, vcov=pd.DataFrame([[1.0]]))
