"""QuantReg's observation weights, Stata's kernel sparsity, ``anova``, prediction intervals and
R's bootstrap methods, against numbers computed by R quantreg and Stata.

The reference files lie in ``reference/`` with the scripts that made them: ``r_quantreg.txt``
and the ``boot_U_*.csv`` draws from ``make_r_reference.R`` (R quantreg 5.94, Debian's
``r-cran-quantreg``), ``stata_qreg_kernel.csv`` from ``make_stata_reference.py`` (Stata 12's
printed results, as statsmodels keeps them). Both sides read statcore's own data files.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import statcore as sc
from statcore.quantreg import FederatedQuantReg, QuantReg, anova
from statcore.quantreg import _bootstrap as boot
from statcore.quantreg import _inference as inf
from statcore.quantreg._solvers import solve

REFERENCE = Path(__file__).with_name("reference")


def _r_reference() -> dict:
    values = {}
    for line in (REFERENCE / "r_quantreg.txt").read_text().splitlines():
        key, *numbers = line.split()
        values[key] = np.array([float(v) for v in numbers])
    return values


R = _r_reference()
ENGEL = sc.datasets.load("engel")
GRUNFELD = sc.datasets.load("grunfeld")
STACK = sc.datasets.load("stackloss")
W_ENGEL = 0.5 + (np.arange(len(ENGEL)) % 4) / 2  # as make_r_reference.R
W_STACK = 1.0 + np.arange(len(STACK)) % 3
NEWDATA = pd.DataFrame({"income": [500.0, 1000.0, 2000.0]})
# The LP solutions are exact vertices (duality gap 1e-10); everything after them is the same
# closed-form arithmetic as R's, so agreement is at rounding level. 1e-7 leaves room for the
# different linear algebra (QR in R, inverses here) on Engel's badly scaled design.
RTOL = 1e-7


def _engel_weighted(q, **kwargs):
    return QuantReg.from_formula("foodexp ~ income", ENGEL, q=q, weights=W_ENGEL, **kwargs)


# --- weights ----------------------------------------------------------------------------------


@pytest.mark.parametrize("q", [0.25, 0.5, 0.75])
def test_weighted_coefficients_and_standard_errors_match_r(q):
    model = _engel_weighted(q)
    key = f"engel_w.{q:g}"
    np.testing.assert_allclose(model.fit(cov_type="iid").params, R[f"{key}.coef"], rtol=RTOL)
    for cov_type, r_name in [("iid", "iid"), ("nid", "nid"), ("kernel", "ker")]:
        np.testing.assert_allclose(
            model.fit(cov_type=cov_type).bse, R[f"{key}.{r_name}"], rtol=RTOL, err_msg=cov_type
        )


@pytest.mark.parametrize("q", [0.25, 0.5, 0.75])
def test_weighted_rank_inversion_intervals_match_r(q):
    res = _engel_weighted(q).fit(cov_type="rank")
    for alpha in (0.1, 0.05):
        ci = res.conf_int(alpha)
        key = f"engel_w.{q:g}.rank{alpha:g}"
        np.testing.assert_allclose(ci["lower"], R[f"{key}.lower"], rtol=RTOL)
        np.testing.assert_allclose(ci["upper"], R[f"{key}.upper"], rtol=RTOL)


def test_weighted_fit_with_three_slopes_matches_r():
    model = QuantReg.from_formula(
        "STACKLOSS ~ AIRFLOW + WATERTEMP + ACIDCONC", STACK, q=0.5, weights=W_STACK
    )
    np.testing.assert_allclose(model.fit(cov_type="iid").params, R["stack_w.0.5.coef"], rtol=RTOL)
    for cov_type, r_name in [("iid", "iid"), ("nid", "nid"), ("kernel", "ker")]:
        np.testing.assert_allclose(
            model.fit(cov_type=cov_type).bse, R[f"stack_w.0.5.{r_name}"], rtol=RTOL
        )


def test_integer_weights_are_replicated_rows_and_zero_weights_dropped_rows():
    # an independent reference: rho(w r) = w rho(r), so weight 2 is the row twice and weight 0
    # no row at all (coefficients; R's inference keeps zero-weight rows in n, as this does)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 2))
    y = X @ [1.0, -0.5] + rng.standard_t(3, 80)
    w = rng.integers(0, 3, 80).astype(float)
    weighted = QuantReg(y, X, q=0.3, weights=w).fit(cov_type="iid")
    rows = np.repeat(np.arange(80), w.astype(int))
    replicated = QuantReg(y[rows], X[rows], q=0.3).fit(cov_type="iid")
    np.testing.assert_allclose(weighted.params, replicated.params, rtol=1e-8, atol=1e-10)
    assert weighted.nobs == 80 and weighted.df_resid == 77
    assert np.isclose(weighted.objective, replicated.objective, rtol=1e-10)


@pytest.mark.parametrize("cov_type", ["iid", "nid", "kernel", "rank"])
def test_scaling_every_weight_changes_no_estimate_or_interval(cov_type):
    base = _engel_weighted(0.5).fit(cov_type=cov_type)
    scaled = QuantReg.from_formula("foodexp ~ income", ENGEL, q=0.5, weights=7 * W_ENGEL).fit(
        cov_type=cov_type
    )
    np.testing.assert_allclose(scaled.params, base.params, rtol=1e-9)
    np.testing.assert_allclose(scaled.conf_int(), base.conf_int(), rtol=1e-7)


def test_weights_by_column_name_series_and_missing_rows():
    data = ENGEL.assign(w=W_ENGEL)
    by_name = QuantReg.from_formula("foodexp ~ income", data, q=0.5, weights="w").fit(
        cov_type="nid"
    )
    np.testing.assert_allclose(by_name.bse, R["engel_w.0.5.nid"], rtol=RTOL)
    shuffled = pd.Series(W_ENGEL, index=data.index).sample(frac=1.0, random_state=0)
    by_label = QuantReg.from_formula("foodexp ~ income", data, q=0.5, weights=shuffled).fit(
        cov_type="nid"
    )
    np.testing.assert_allclose(by_label.bse, by_name.bse, rtol=1e-12)
    holed = data.copy()
    holed.loc[3, "income"] = np.nan
    dropped = QuantReg.from_formula(
        "foodexp ~ income", holed, q=0.5, weights=W_ENGEL, missing="drop"
    ).fit(cov_type="iid")
    keep = np.arange(len(data)) != 3
    direct = QuantReg(
        data.foodexp[keep].to_numpy(), data.income[keep].to_numpy(), q=0.5, weights=W_ENGEL[keep]
    ).fit(cov_type="iid")
    np.testing.assert_allclose(dropped.params.to_numpy(), direct.params.to_numpy(), rtol=1e-10)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (-W_ENGEL, "must be non-negative"),
        (np.zeros(len(ENGEL)), "all zero"),
        (np.where(np.arange(len(ENGEL)) == 0, 1.0, 0.0), "positive weight"),
        (W_ENGEL[:-1], "one weight per row of the data"),
        (np.where(np.arange(len(ENGEL)) == 5, np.nan, W_ENGEL), "NaN"),
        (np.where(np.arange(len(ENGEL)) == 5, np.inf, W_ENGEL), "infinite"),
        (W_ENGEL + 1j, "complex"),
        ("nosuchcolumn", "no such column"),
        (pd.Series(W_ENGEL[:10]), "lacks"),
    ],
)
def test_bad_weights_are_refused_naming_the_argument(weights, message):
    with pytest.raises((ValueError, TypeError), match=message) as info:
        QuantReg.from_formula("foodexp ~ income", ENGEL, q=0.5, weights=weights)
    assert "`weights`" in str(info.value)


def test_weights_passed_in_are_not_modified():
    w = W_ENGEL.copy()
    QuantReg.from_formula("foodexp ~ income", ENGEL, q=0.5, weights=w).fit(cov_type="nid")
    np.testing.assert_array_equal(w, W_ENGEL)


def test_weighted_nid_intervals_cover_at_their_level():
    # heteroscedastic errors, weights 1 / scale: 400 replications of n = 200; the binomial sd of
    # the coverage is 1.1 points, so [0.92, 0.98] is about +-2.7 sd around 0.95
    rng = np.random.default_rng(11)
    covered = 0
    reps = 400
    for _ in range(reps):
        x = rng.uniform(0, 2, 200)
        scale = 0.5 + x
        y = 1.0 + 2.0 * x + scale * rng.standard_normal(200)
        res = QuantReg(y, x, q=0.5, weights=1 / scale).fit(cov_type="nid")
        lower, upper = res.conf_int().iloc[1]
        covered += lower <= 2.0 <= upper
    assert 0.92 <= covered / reps <= 0.98


# --- Stata's kernel sparsity ----------------------------------------------------------------------


STATA = pd.read_csv(REFERENCE / "stata_qreg_kernel.csv")


@pytest.mark.parametrize(
    "row", STATA.to_dict("records"), ids=lambda r: f"{r['kernel']}-{r['bandwidth']}"
)
def test_kernel_sparsity_reproduces_stata(row):
    res = QuantReg(ENGEL.foodexp, ENGEL.income, q=row["q"]).fit(
        cov_type="iid", sparsity="kernel", kernel=row["kernel"], bandwidth=row["bandwidth"]
    )
    # Stata prints 6-7 significant digits: rounding alone is up to 5e-6 relative
    np.testing.assert_allclose(res.params, [row["b_cons"], row["b_income"]], rtol=5e-6)
    np.testing.assert_allclose(res.bse, [row["se_cons"], row["se_income"]], rtol=5e-6)
    # e(sparsity) and e(bwidth) are stored at full precision; the bandwidth is a formula of n
    # and q alone, the sparsity a sum over Stata's own residuals, which differ from ours by
    # up to 1e-7 relative (its LP solution, its storage), so 1e-6
    h = inf.bandwidth(row["q"], len(ENGEL), row["bandwidth"])
    assert h == pytest.approx(row["bwidth"], rel=1e-12)
    resid = ENGEL.foodexp.to_numpy() - res.fittedvalues.to_numpy()
    sparsity = inf.kernel_sparsity(resid, row["q"], h, row["kernel"])
    assert sparsity == pytest.approx(row["sparsity"], rel=1e-6)


def test_every_stata_kernel_integrates_to_one():
    # trapezoids of width 1e-5 over [-8, 8]: the rule's error (h^2 times the kernels' bounded
    # curvature, or h at the jumps of rectangle and cosine) and the Gaussian's tails beyond 8
    # are all far below 1e-6
    grid = np.linspace(-8, 8, 1_600_001)
    for name, kernel in inf.STATA_KERNELS.items():
        assert np.trapezoid(kernel(grid), grid) == pytest.approx(1.0, abs=1e-6), name


def test_default_iid_stays_rs_and_unknown_kernel_is_refused():
    model = QuantReg.from_formula("foodexp ~ income", ENGEL, q=0.5)
    r_iid = (13.2390797180804, 0.0119193295292952)  # R's summary.rq(se="iid")
    np.testing.assert_allclose(model.fit(cov_type="iid").bse, r_iid, rtol=RTOL)
    with pytest.raises(ValueError, match="`kernel`"):
        model.fit(cov_type="iid", sparsity="kernel", kernel="uniform")
    with pytest.raises(ValueError, match="`sparsity`"):
        model.fit(cov_type="iid", sparsity="fitted")


def test_options_the_covariance_does_not_use_are_refused_and_dropped_on_refits():
    model = QuantReg.from_formula("foodexp ~ income", ENGEL, q=[0.25, 0.75])
    with pytest.raises(ValueError, match="`sparsity` applies to cov_type='iid' only"):
        model.fit(cov_type="nid", sparsity="kernel")
    with pytest.raises(ValueError, match="`kernel` applies to sparsity='kernel' only"):
        model.fit(cov_type="iid", kernel="gaussian")
    with pytest.raises(ValueError, match="`bootstrap_method` applies to cov_type='bootstrap'"):
        model.fit(cov_type="nid", bootstrap_method="wild")
    stata = model.fit(cov_type="iid", sparsity="kernel", kernel="gaussian")
    # anova and prediction intervals of a rank fit refit with "nid": the iid-only options go
    nid = model.fit(cov_type="nid")
    assert anova(stata, cov_type="nid").statistic == pytest.approx(anova(nid).statistic)
    rank = QuantReg.from_formula("foodexp ~ income", ENGEL, q=0.5).fit(cov_type="rank")
    np.testing.assert_allclose(
        rank.predict(NEWDATA, interval="confidence").to_numpy(),
        _r_predict("predict.engel.nid"),
        rtol=RTOL,
    )


# --- bootstrap methods --------------------------------------------------------------------------


X_ENGEL = np.column_stack([np.ones(len(ENGEL)), ENGEL.income.to_numpy()])
Y_ENGEL = ENGEL.foodexp.to_numpy()


def _exact(X, y, tau):
    return solve(np.ascontiguousarray(X), np.ascontiguousarray(y), tau, "fn", 1e-12, 100).beta


def test_bootstrap_replicates_from_rs_own_draws_match_r():
    # boot.rq(U=) makes R's xy, wxy and pwy replicates deterministic; the same draws here give
    # the same LP problems, so the replicates agree to the solvers' precision
    U = {
        m: pd.read_csv(REFERENCE / f"boot_U_{m}.csv").to_numpy(dtype=float)
        for m in ("xy", "wxy", "pwy")
    }
    expected = {m: R[f"boot_fixed.{m}"].reshape(3, 2) for m in ("xy", "wxy", "pwy")}
    for r in range(3):
        rows = U["xy"][:, r].astype(int) - 1
        np.testing.assert_allclose(
            _exact(X_ENGEL[rows], Y_ENGEL[rows], 0.5), expected["xy"][r], rtol=1e-7
        )
        w = U["wxy"][:, r]
        np.testing.assert_allclose(
            _exact(X_ENGEL * w[:, None], Y_ENGEL * w, 0.5), expected["wxy"][r], rtol=1e-7
        )
        Xa, ya = boot._pwy_problem(X_ENGEL, Y_ENGEL, 0.5, U["pwy"][:, r])
        np.testing.assert_allclose(_exact(Xa, ya, 0.5), expected["pwy"][r], rtol=1e-7)


@pytest.mark.parametrize("method", boot.METHODS)
def test_bootstrap_standard_errors_agree_with_r_by_monte_carlo(method):
    # 2,000 replicates here, 4,000 in R: the standard error of a bootstrap SE is about
    # SE / sqrt(2 B), 1.6 % and 1.1 %, so two independent estimates differ by ~2 % (sd);
    # mcmb is a Markov chain, whose autocorrelation widens that. 10 % is 4-5 sd.
    res = QuantReg.from_formula("foodexp ~ income", ENGEL, q=0.5).fit(
        cov_type="bootstrap", bootstrap_method=method, n_resamples=2000, random_state=5
    )
    np.testing.assert_allclose(res.bse, R[f"boot_se.{method}"], rtol=0.10)
    assert res.fit_options["bootstrap_method"] == method
    assert method in res.cov_type


def test_weighted_pairs_bootstrap_agrees_with_r():
    res = _engel_weighted(0.5).fit(cov_type="bootstrap", n_resamples=2000, random_state=6)
    np.testing.assert_allclose(res.bse, R["boot_se_w.xy"], rtol=0.10)


def test_wild_bootstrap_pieces_match_r():
    resid = Y_ENGEL - X_ENGEL @ _exact(X_ENGEL, Y_ENGEL, 0.5)
    # akj is a deterministic port (R's single-precision constants included)
    assert boot.akj_density(resid, 0.0) == pytest.approx(R["akj.engel_resid"][0], rel=1e-10)
    np.testing.assert_allclose(boot.leverage(X_ENGEL)[:5], R["hat.engel"], rtol=1e-10)


def test_akj_density_is_a_density():
    # each point's kernel is normalised in its own local bandwidth, so the estimate integrates
    # to 1 (a wrong local-bandwidth factor would not); 0.01 covers the trapezoid rule on a grid
    # of width 0.01 and the mass beyond +-6. Its value is checked against R's above.
    draws = np.random.default_rng(2).standard_normal(400)
    grid = np.linspace(-6, 6, 1201)
    values = [boot.akj_density(draws, z) for z in grid]
    assert np.trapezoid(values, grid) == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize("method", ["xy", "pwy", "wxy", "wild"])
def test_bootstrap_methods_are_reproducible_and_cover_all_levels(method):
    model = QuantReg.from_formula("foodexp ~ income", ENGEL, q=[0.25, 0.75])
    fits = [
        model.fit(cov_type="bootstrap", bootstrap_method=method, n_resamples=50, random_state=3)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(fits[0].vcov, fits[1].vcov)
    V = fits[0].vcov.to_numpy()
    assert np.all(np.isfinite(V)) and V.shape == (4, 4)
    # the shared draws make the two levels' income slopes positively correlated
    assert V[1, 3] > 0


def test_mcmb_refuses_several_levels():
    with pytest.raises(ValueError, match="one Markov chain per level"):
        QuantReg.from_formula("foodexp ~ income", ENGEL, q=[0.25, 0.75]).fit(
            cov_type="bootstrap", bootstrap_method="mcmb"
        )


# --- anova ------------------------------------------------------------------------------------


def _check_table(test, expected):
    """R's (ndf, ddf, Tn, pvalue): R computes 1 - pf(Tn), which carries rounding of ~1e-16
    in absolute terms (a relative error of 1e-4 on a p-value of 1e-12), scipy's sf does not."""
    np.testing.assert_allclose([test.df[0], test.df[1], test.statistic], expected[:3], rtol=RTOL)
    assert test.pvalue == pytest.approx(expected[3], rel=RTOL, abs=1e-15)


def test_anova_of_equal_slopes_across_levels_matches_r():
    # R's anova.rq uses se = "nid"; a default fit on 235 rows has rank intervals only, so
    # anova computes the nid covariance, as R does
    fits = QuantReg.from_formula("foodexp ~ income", ENGEL, q=[0.25, 0.5, 0.75]).fit()
    _check_table(anova(fits), R["anova.engel.joint"])
    each = anova(fits, joint=False)
    np.testing.assert_allclose(each.to_numpy().ravel(), R["anova.engel.each"], rtol=1e-6)
    grunfeld = QuantReg.from_formula("invest ~ value + capital", GRUNFELD, q=[0.25, 0.5, 0.75]).fit(
        cov_type="nid"
    )
    _check_table(anova(grunfeld), R["anova.grunfeld.joint"])
    each = anova(grunfeld, joint=False)
    # p-values 1e-6 and 2e-3: R's 1 - pf rounding is below 1e-10 relative there
    np.testing.assert_allclose(each.to_numpy().T.ravel(), R["anova.grunfeld.each"], rtol=1e-6)
    assert list(each.index) == ["value", "capital"]


def test_anova_of_two_single_level_fits_and_of_nested_models_matches_r():
    low = QuantReg.from_formula("invest ~ value + capital", GRUNFELD, q=0.25).fit()
    high = QuantReg.from_formula("invest ~ value + capital", GRUNFELD, q=0.75).fit()
    _check_table(anova(low, high), R["anova.grunfeld.two"])
    full = QuantReg.from_formula("invest ~ value + capital", GRUNFELD, q=0.5).fit()
    reduced = QuantReg.from_formula("invest ~ value", GRUNFELD, q=0.5).fit()
    nested = anova(reduced, full)
    _check_table(nested, R["anova.grunfeld.nested"])
    assert "capital" in nested.null_hypothesis


def test_weighted_anova_matches_r():
    fits = _engel_weighted([0.25, 0.75]).fit(cov_type="nid")
    _check_table(anova(fits), R["anova.engel_w.joint"])


def test_anova_refuses_what_it_cannot_test():
    one = QuantReg.from_formula("foodexp ~ income", ENGEL, q=0.5).fit()
    with pytest.raises(ValueError, match="several levels"):
        anova(one)
    other = QuantReg.from_formula("foodexp ~ income", ENGEL.iloc[:200], q=0.75).fit()
    with pytest.raises(ValueError, match="same model on the same data"):
        anova(one, other)
    no_intercept = QuantReg.from_formula("foodexp ~ income - 1", ENGEL, q=[0.25, 0.75]).fit()
    with pytest.raises(ValueError, match="intercept"):
        anova(no_intercept)
    with pytest.raises(TypeError, match="QuantRegResults"):
        anova(one, "fit")


def test_anova_size_under_equal_slopes():
    # a location-shift model has equal slopes at every level: the joint test's rejection rate
    # at 5 % over 300 data sets must be near 5 % (binomial sd 1.3 points)
    rng = np.random.default_rng(8)
    rejections = 0
    for _ in range(300):
        x = rng.uniform(0, 1, 300)
        y = x + rng.standard_normal(300)
        fits = QuantReg(y, x, q=[0.25, 0.5, 0.75]).fit(cov_type="nid")
        rejections += anova(fits).pvalue < 0.05
    assert 0.015 <= rejections / 300 <= 0.095


# --- prediction intervals ------------------------------------------------------------------------


def _r_predict(key):
    return R[key].reshape(3, 3).T  # R's columns fit, lower, higher


def test_confidence_intervals_of_predictions_match_r():
    model = QuantReg.from_formula("foodexp ~ income", ENGEL, q=0.5)
    default = model.fit().predict(NEWDATA, interval="confidence")  # rank fit: nid, as R
    assert list(default.columns) == ["fit", "lower", "upper"]
    np.testing.assert_allclose(default.to_numpy(), _r_predict("predict.engel.nid"), rtol=RTOL)
    iid = model.fit(cov_type="iid").predict(NEWDATA, interval="confidence", alpha=0.1)
    np.testing.assert_allclose(iid.to_numpy(), _r_predict("predict.engel.iid90"), rtol=RTOL)
    weighted = _engel_weighted(0.25).fit(cov_type="kernel").predict(NEWDATA, interval="confidence")
    np.testing.assert_allclose(weighted.to_numpy(), _r_predict("predict.engel_w.ker"), rtol=RTOL)


def test_multilevel_prediction_intervals_are_each_levels_own():
    fits = QuantReg.from_formula("foodexp ~ income", ENGEL, q=[0.25, 0.75]).fit(cov_type="nid")
    both = fits.predict(NEWDATA, interval="confidence")
    single = QuantReg.from_formula("foodexp ~ income", ENGEL, q=0.75).fit(cov_type="nid")
    np.testing.assert_allclose(
        both[0.75].to_numpy(), single.predict(NEWDATA, interval="confidence").to_numpy(), rtol=1e-9
    )
    with pytest.raises(ValueError, match="`interval`"):
        fits.predict(NEWDATA, interval="prediction")


# --- federated weights --------------------------------------------------------------------------


def test_federated_agents_take_their_own_weights():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 2)), columns=["a", "b"])
    y = X.a + 2 * X.b + rng.standard_t(3, 300)
    w = rng.uniform(0.2, 2, 300)
    one_agent = FederatedQuantReg([(y, X)], q=0.5, weights=[w]).fit(cov_type="kernel")
    local = QuantReg(y, X, q=0.5, weights=w).fit(cov_type="kernel")
    np.testing.assert_allclose(one_agent.params, local.params.iloc[1:], rtol=1e-10)
    np.testing.assert_allclose(np.sqrt(np.diag(one_agent.vcov)), local.bse.iloc[1:], rtol=1e-10)
    frames = [X.iloc[:150].assign(y=y[:150], w=w[:150]), X.iloc[150:].assign(y=y[150:], w=1.0)]
    by_column = FederatedQuantReg(frames, q=0.5, response="y", weights="w").fit()
    by_mapping = FederatedQuantReg(
        [(y[:150], X.iloc[:150]), (y[150:], X.iloc[150:])],
        q=0.5,
        weights={"agent0": w[:150]},
    ).fit()
    np.testing.assert_allclose(by_column.params, by_mapping.params, rtol=1e-10)
    by_formula = FederatedQuantReg.from_formula("y ~ a + b", frames, q=0.5, weights="w").fit()
    np.testing.assert_allclose(by_formula.params, by_mapping.params, rtol=1e-10)
    with pytest.raises(ValueError, match="agent 'agent0'.*non-negative"):
        FederatedQuantReg([(y, X)], q=0.5, weights=[-w])
    with pytest.raises(ValueError, match="not among"):
        FederatedQuantReg([(y, X)], q=0.5, weights={"nobody": w})
