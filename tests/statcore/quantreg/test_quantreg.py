"""QuantReg against R quantreg's published Engel output, HiGHS, statsmodels and simulation."""

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import statcore as sc
from statcore.exceptions import ConvergenceWarning
from statcore.quantreg import QuantReg, QuantRegResults, _solvers
from statcore.quantreg._inference import bandwidth, iid_sparsity
from statcore.quantreg.model import PFN_MIN_ROWS, resolve_method

# R quantreg, rq(foodexp ~ income, tau, data = engel): coefficients as printed (5 decimals),
# so agreement is to half a unit of the last printed digit.
R_ENGEL = {
    0.05: (124.88004, 0.34336),
    0.25: (95.48354, 0.47410),
    0.5: (81.48225, 0.56018),
    0.75: (62.39659, 0.64401),
    0.95: (64.10396, 0.70907),
}
# summary.rq's numbers for every se= option: test_quantreg_r_summary.py


def _median(X, y):
    return _solvers.solve(X, y, 0.5, "fn", 1e-10, 100).beta


@pytest.fixture(scope="module")
def engel():
    return sc.datasets.load("engel")


def test_engel_coefficients_match_r_at_five_levels(engel):
    res = QuantReg.from_formula("foodexp ~ income", engel, q=list(R_ENGEL)).fit()
    for tau, expected in R_ENGEL.items():
        np.testing.assert_allclose(res.params[tau], expected, rtol=0, atol=5e-6)
    assert res.unique.all()


@pytest.mark.parametrize("method", ["fn", "highs"])
def test_engel_objective_equals_highs(engel, method):
    model = QuantReg.from_formula("foodexp ~ income", engel, q=[0.25, 0.5, 0.9])
    ours = model.fit(method=method)
    ref = model.fit(method="highs")
    np.testing.assert_allclose(ours.objective, ref.objective, rtol=1e-9)


def test_fn_reaches_highs_optimum_on_random_designs(rng):
    for n, p in ((200, 3), (800, 8)):
        X = rng.normal(size=(n, p))
        y = X @ np.ones(p) + rng.exponential(size=n) * (1 + np.abs(X[:, 0]))
        model = QuantReg(y, X, q=[0.1, 0.5, 0.8])
        ours, ref = model.fit(method="fn"), model.fit(method="highs")
        # the check loss at the LP optimum, computed from both solutions
        np.testing.assert_allclose(ours.objective, ref.objective, rtol=1e-9)


def test_engel_iid_covariance_is_the_sparsity_formula(engel):
    res = QuantReg.from_formula("foodexp ~ income", engel).fit(cov_type="iid")
    # our iid covariance is exactly tau(1-tau) s^2 (X'X)^-1 with R's sparsity estimate
    X = np.column_stack([np.ones(len(engel)), engel["income"]])
    y = engel["foodexp"].to_numpy()
    resid = y - X @ res.params.to_numpy()
    s = iid_sparsity(resid, 0.5, 2, "hall-sheather", _median)
    np.testing.assert_allclose(
        res.vcov.to_numpy(), 0.25 * s**2 * np.linalg.inv(X.T @ X), rtol=1e-12
    )
    # and that sparsity is the slope through the residual quantiles next to zero: at the
    # median of a density near 0.0093 (a Siddiqui quotient over the same ranks agrees to 25%)
    kept = np.sort(resid[np.abs(resid) > 1e-8])
    h = bandwidth(0.5, len(y))
    siddiqui = (np.quantile(kept, 0.5 + h) - np.quantile(kept, 0.5 - h)) / (2 * h)
    assert s == pytest.approx(siddiqui, rel=0.25)


def test_bandwidth_rules_match_their_formulas():
    tau, n = 0.3, 500
    x0, f0 = stats.norm.ppf(tau), stats.norm.pdf(stats.norm.ppf(tau))
    hs = (
        n ** (-1 / 3)
        * stats.norm.ppf(0.975) ** (2 / 3)
        * (1.5 * f0**2 / (2 * x0**2 + 1)) ** (1 / 3)
    )
    bof = n ** (-0.2) * (4.5 * f0**4 / (2 * x0**2 + 1) ** 2) ** 0.2
    assert bandwidth(tau, n, "hall-sheather") == pytest.approx(hs, rel=1e-14)
    assert bandwidth(tau, n, "bofinger") == pytest.approx(bof, rel=1e-14)
    # shrunk (halved) until tau +- h stays inside (0, 1)
    h = bandwidth(0.01, 30)
    assert 0 < 0.01 - h and h > 0


def test_engel_kernel_standard_errors_near_a_large_bootstrap(engel):
    model = QuantReg.from_formula("foodexp ~ income", engel)
    boot = model.fit(cov_type="bootstrap", n_resamples=800, random_state=3)
    kernel = model.fit(cov_type="kernel")
    # both estimate the same sandwich variance; at n = 235 the bandwidth choice of the kernel
    # estimate and the bootstrap's Monte Carlo error (2.5% at B = 800) leave ~12% apart
    np.testing.assert_allclose(kernel.bse.to_numpy(), boot.bse.to_numpy(), rtol=0.15)
    again = model.fit(cov_type="bootstrap", n_resamples=800, random_state=3)
    np.testing.assert_array_equal(boot.bse.to_numpy(), again.bse.to_numpy())
    assert boot.inference == "bootstrap" and boot.resampling.n_resamples == 800


def test_statsmodels_anchor(engel, rng):
    res = QuantReg.from_formula("foodexp ~ income", engel, q=0.3).fit()
    with warnings.catch_warnings():
        # statsmodels' IRLS reports a "convergence cycle" at this tight p_tol: its own warning
        warnings.simplefilter("ignore", sm.tools.sm_exceptions.ConvergenceWarning)
        ref = sm.QuantReg(engel["foodexp"], sm.add_constant(engel["income"])).fit(
            q=0.3, p_tol=1e-10, max_iter=5000
        )
    # statsmodels' IRLS stops near the optimum: parameters agree to its p_tol scale, and its
    # check loss is never below the exact minimum
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-5)
    resid = engel["foodexp"] - ref.fittedvalues
    assert res.objective <= np.sum(resid * (0.3 - (resid < 0))) + 1e-9


def test_multilevel_joint_covariance_and_cross_level_wald(engel):
    levels = [0.25, 0.5, 0.75]
    res = QuantReg.from_formula("foodexp ~ income", engel, q=levels).fit(cov_type="iid")
    assert isinstance(res, QuantRegResults) and res.is_multilevel
    assert list(res.params.columns) == levels
    assert list(res.vcov.index) == [(lv, t) for lv in levels for t in ("Intercept", "income")]
    X = np.column_stack([np.ones(len(engel)), engel["income"]])
    y = engel["foodexp"].to_numpy()
    s = {}
    for tau in levels:
        resid = y - X @ res.params[tau].to_numpy()
        s[tau] = iid_sparsity(resid, tau, 2, "hall-sheather", _median)
    xtx_inv = np.linalg.inv(X.T @ X)
    for a in levels:
        for b in levels:
            block = res.vcov.loc[(a,), (b,)]
            expected = (min(a, b) - a * b) * s[a] * s[b] * xtx_inv
            np.testing.assert_allclose(block.to_numpy(), expected, rtol=1e-12)
    test = res.wald_test("`income[0.25]` = `income[0.75]`")
    d = res.params.loc["income", 0.25] - res.params.loc["income", 0.75]
    var = (
        res.vcov.loc[(0.25, "income"), (0.25, "income")]
        + res.vcov.loc[(0.75, "income"), (0.75, "income")]
        - 2 * res.vcov.loc[(0.25, "income"), (0.75, "income")]
    )
    assert test.statistic == pytest.approx(d**2 / var, rel=1e-10)
    # Engel's slope rises with the quantile (heteroscedasticity): the test rejects
    assert test.pvalue < 1e-6
    tidy = res.tidy()
    assert list(tidy.columns[:3]) == ["term", "level", "estimate"] and len(tidy) == 6


def test_kernel_cross_level_blocks_use_both_levels_breads(engel):
    res = QuantReg.from_formula("foodexp ~ income", engel, q=[0.25, 0.75]).fit(cov_type="kernel")
    single = {
        tau: QuantReg.from_formula("foodexp ~ income", engel, q=tau).fit(cov_type="kernel")
        for tau in (0.25, 0.75)
    }
    for tau in (0.25, 0.75):
        np.testing.assert_allclose(
            res.vcov.loc[(tau,), (tau,)].to_numpy(), single[tau].vcov.to_numpy(), rtol=1e-12
        )
    cross = res.vcov.loc[(0.25,), (0.75,)].to_numpy()
    # Cov = (min - tt') H_a^-1 J H_b^-1 / n, and each H^-1 J H^-1 / n is (1/(t(1-t))) V_t:
    # the cross block's diagonal is bounded by Cauchy-Schwarz and positive here
    v25, v75 = np.diag(single[0.25].vcov), np.diag(single[0.75].vcov)
    assert np.all(np.abs(np.diag(cross)) <= np.sqrt(v25 * v75))
    assert np.all(np.diag(cross) > 0)
    assert np.linalg.eigvalsh(res.vcov.to_numpy()).min() > 0


def _large_design(rng, n, p):
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1))])
    noise = rng.standard_t(3, size=n) * (1 + 0.5 * np.abs(X[:, 1]))
    return X, X @ np.linspace(0.5, 1.5, p) + noise


@pytest.mark.parametrize("tau", [0.1, 0.5, 0.9])
def test_preprocessing_reaches_the_frisch_newton_optimum(rng, tau):
    X, y = _large_design(rng, 30_000, 6)
    plain = _solvers.solve(X, y, tau, "fn", 1e-10, 100)
    pre = _solvers.solve(X, y, tau, "pfn", 1e-10, 100)
    info = pre.preprocessing
    # the reduced problem is a small share of the rows: the point of preprocessing
    assert info.subsample >= _solvers.pfn_subsample_size(30_000, 6) and info.reduced < 8_000
    # exact: the same LP minimum (1e-9 relative is far below any solver difference but above
    # the rounding of two sums of 30,000 check losses), here even the same vertex
    loss = lambda b: np.sum((y - X @ b) * (tau - (y - X @ b < 0)))  # noqa: E731
    assert loss(pre.beta) == pytest.approx(loss(plain.beta), rel=1e-9)
    np.testing.assert_allclose(pre.beta, plain.beta, rtol=1e-9, atol=1e-12)
    assert pre.converged and pre.unique


def test_preprocessing_repairs_wrong_globs_and_stays_exact(rng, monkeypatch):
    # keep only a thin band between the globs: many observations are globbed on the wrong
    # side, so the fix-up rounds and the doubling of the subsample both run
    monkeypatch.setattr(_solvers, "_KEEP_FACTOR", 0.02)
    X, y = _large_design(rng, 20_000, 4)
    pre = _solvers.solve(X, y, 0.3, "pfn", 1e-10, 100)
    plain = _solvers.solve(X, y, 0.3, "fn", 1e-10, 100)
    assert pre.preprocessing.fixups > 1 and pre.preprocessing.resamples >= 1
    np.testing.assert_allclose(pre.beta, plain.beta, rtol=1e-9, atol=1e-12)


def test_preprocessing_falls_back_when_the_subsample_is_the_data(engel):
    model = QuantReg.from_formula("foodexp ~ income", engel, q=[0.25, 0.5])
    # at n = 235 the pilot would hold all rows: plain Frisch-Newton, the same solution
    pre, plain = model.fit(method="pfn"), model.fit(method="fn")
    # the same Frisch-Newton iterations on the same rows; only the summation order of the BLAS
    # products may differ (seen: 6e-16 relative), while another vertex would differ at 1e-3
    np.testing.assert_allclose(pre.params.to_numpy(), plain.params.to_numpy(), rtol=1e-12, atol=0)
    assert pre.fit_method == "pfn" and "Portnoy-Koenker" in pre.method


def test_auto_method_preprocesses_large_problems_only(rng):
    assert resolve_method("auto", PFN_MIN_ROWS - 1, 5) == "fn"
    assert resolve_method("auto", PFN_MIN_ROWS, 5) == "pfn"
    # many columns: a pilot of sqrt(p) n^(2/3) rows would be most of the data
    assert resolve_method("auto", PFN_MIN_ROWS, 400) == "fn"
    assert resolve_method("fn", 10**7, 5) == "fn"
    X, y = _large_design(rng, PFN_MIN_ROWS, 3)
    res = QuantReg(y, X[:, 1:], q=0.5).fit(cov_type="iid")
    assert res.fit_method == "pfn" and res.fit_options["method"] == "auto"
    ref = QuantReg(y, X[:, 1:], q=0.5).fit(method="fn", cov_type="iid")
    assert res.objective == pytest.approx(ref.objective, rel=1e-9)


def test_conquer_within_its_smoothing_bias(rng):
    n = 20_000
    X = rng.normal(size=(n, 3))
    y = 1 + X @ np.array([1.0, -0.5, 2.0]) + rng.standard_normal(n)
    model = QuantReg(y, X, q=0.7)
    exact = model.fit(method="fn")
    smooth = model.fit(method="conquer")
    # both estimate the same coefficients; conquer adds an O(h^2) bias (h ~ 0.07 here, so
    # ~0.003, a third of a standard error) and its own sampling noise relative to the exact fit
    gap = np.abs(smooth.params - exact.params) / exact.bse
    assert gap.max() < 1.0
    assert smooth.smoothing > 0 and smooth.converged
    # with a much smaller bandwidth the smoothed estimate moves towards the exact one
    tight = model.fit(method="conquer", smoothing=0.01)
    assert np.abs(tight.params - exact.params).max() < np.abs(smooth.params - exact.params).max()
    # and the objective of the exact fit is the smaller one
    assert exact.objective <= smooth.objective


def _coverage_replicate(rng, cov_type, tau, n):
    x = rng.uniform(0, 2, n)
    # iid errors for the iid covariance and for the rank test's iid q_n (R's default)
    hetero = cov_type not in ("iid", "rank")
    y = 1 + 2 * x + (1 + hetero * x) * rng.standard_normal(n)
    z = stats.norm.ppf(tau)
    truth = np.array([1 + z, 2 + z * hetero])
    ci = QuantReg(y, x, q=tau).fit(cov_type=cov_type).conf_int()
    return (ci["lower"].to_numpy() <= truth) & (truth <= ci["upper"].to_numpy())


@pytest.mark.slow
@pytest.mark.parametrize(
    "cov_type,tau,n",
    [("iid", 0.5, 400), ("iid", 0.25, 400), ("nid", 0.75, 1000), ("rank", 0.3, 200)],
)
def test_95_percent_intervals_cover_in_simulation(cov_type, tau, n):
    rng = np.random.default_rng(11)
    hits = np.array([_coverage_replicate(rng, cov_type, tau, n) for _ in range(400)])
    # 400 replicates: Monte Carlo sd of a 95% rate is 0.011; accept +- 3 sd
    for rate in hits.mean(axis=0):
        assert 0.95 - 0.033 <= rate <= 0.95 + 0.033, (cov_type, tau, hits.mean(axis=0))


@pytest.mark.slow
def test_kernel_intervals_are_conservative_under_heteroscedasticity():
    # Powell's sandwich smooths the residual density with one global bandwidth (R's "ker"
    # rule: scale min(sd, IQR/1.34) of all residuals); under heteroscedastic errors that
    # flattens the density and inflates the standard errors, so coverage sits above 95%
    # (0.98-0.99 here; the same at n = 1500). Never below nominal minus Monte Carlo error.
    rng = np.random.default_rng(11)
    hits = np.array([_coverage_replicate(rng, "kernel", 0.5, 400) for _ in range(400)])
    for rate in hits.mean(axis=0):
        assert 0.95 - 0.033 <= rate <= 0.995, hits.mean(axis=0)


def test_predict_newdata_and_augment(engel):
    res = QuantReg.from_formula("foodexp ~ income", engel, q=[0.1, 0.9]).fit()
    new = pd.DataFrame({"income": [500.0, 1000.0]})
    pred = res.predict(new)
    expected = np.column_stack([np.ones(2), new["income"]]) @ res.params.to_numpy()
    np.testing.assert_allclose(pred.to_numpy(), expected, rtol=1e-12)
    # the 0.9 line lies above the 0.1 line over the data
    fitted = res.predict()
    assert (fitted[0.9] > fitted[0.1]).all()


def test_array_input_names_and_glance(rng):
    X = pd.DataFrame(rng.normal(size=(100, 2)), columns=["a", "b"])
    y = X["a"] + rng.normal(size=100)
    res = QuantReg(y, X, q=0.4).fit()
    assert list(res.params.index) == ["Intercept", "a", "b"]
    g = res.glance()
    assert g["q"].iloc[0] == 0.4 and g["objective"].iloc[0] == pytest.approx(res.objective)
    assert "q = 0.4" in repr(res)


def test_plot_process_and_coef(engel):
    import matplotlib

    matplotlib.use("Agg")
    res = QuantReg.from_formula("foodexp ~ income", engel, q=[0.1, 0.5, 0.9]).fit()
    axes = res.plot()
    assert len(axes) == 2 and axes[1].get_title() == "income"
    res.plot(kind="coef")
    single = QuantReg.from_formula("foodexp ~ income", engel).fit()
    single.plot()


def test_nonunique_solution_is_reported_in_notes(rng):
    d = np.repeat([0.0, 1.0], 20)
    y = rng.normal(size=40) + d
    res = QuantReg(y, d, q=0.5).fit()
    assert res.unique[0.5] is False
    assert any("not unique" in note for note in res.notes)
    assert res.objective == pytest.approx(
        QuantReg(y, d, q=0.5).fit(method="highs").objective, rel=1e-9
    )


def test_nonconvergence_warns_and_records(engel):
    model = QuantReg.from_formula("foodexp ~ income", engel)
    with pytest.warns(ConvergenceWarning, match="QuantReg.fit reached maxiter=2") as caught:
        res = model.fit(method="conquer", maxiter=2)
    assert len(caught) == 1
    assert res.converged is False and res.iterations.status == "maxiter"
    assert "reached maxiter=2" in res.summary().as_text()


def test_iteration_record_has_one_row_per_level(engel):
    model = QuantReg.from_formula("foodexp ~ income", engel, q=[0.25, 0.75])
    assert repr(model) == "QuantReg(formula='foodexp ~ income', q=(0.25, 0.75), nobs=235)"
    res = model.fit(method="conquer")
    record = res.iterations
    assert record.converged and record.function == "QuantReg.fit"
    history = record.history
    assert list(history["level"]) == [0.25, 0.75] and (history["status"] == "converged").all()
    assert res.n_iter == record.n_iter == history["n_iter"].sum()
    assert record.last_value == history["last_value"].max() <= 1e-8
    assert res.fit_options["method"] == "conquer" and res.fit_options["maxiter"] is None


def test_bootstrap_progress_bar_does_not_change_the_replicates(engel, capsys):
    model = QuantReg.from_formula("foodexp ~ income", engel)
    quiet = model.fit(cov_type="bootstrap", n_resamples=20, random_state=1)
    shown = model.fit(cov_type="bootstrap", n_resamples=20, random_state=1, progress=True)
    assert "QuantReg bootstrap" in capsys.readouterr().err
    np.testing.assert_array_equal(
        quiet.resampling.replicates.to_numpy(), shown.resampling.replicates.to_numpy()
    )


def test_fit_does_not_change_the_model_or_input(rng):
    X = rng.normal(size=(60, 2))
    y = X[:, 0] + rng.normal(size=60)
    X0, y0 = X.copy(), y.copy()
    model = QuantReg(y, X, q=[0.3, 0.6])
    a = model.fit()
    b = model.fit(cov_type="iid")
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"q": 0.0}, ValueError, r"`q` must lie in \(0, 1\); got 0.0"),
        ({"q": 1.5}, ValueError, r"`q` must lie in \(0, 1\)"),
        ({"q": [0.2, 1.0]}, ValueError, r"`q\[1\]` must lie in \(0, 1\)"),
        ({"q": [0.2, 0.2]}, ValueError, "must not repeat"),
        ({"q": "median"}, TypeError, "`q` must be a number"),
    ],
)
def test_bad_levels(rng, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        QuantReg(rng.normal(size=20), rng.normal(size=20), **kwargs)


def test_bad_data_and_options(rng):
    x = rng.normal(size=20)
    y = rng.normal(size=20)
    with pytest.raises(ValueError, match="`endog` has missing values"):
        QuantReg(np.r_[np.nan, y[1:]], x)
    with pytest.raises(ValueError, match="singular"):
        QuantReg(y, np.column_stack([x, 2 * x]))
    with pytest.raises(ValueError, match="more rows than columns"):
        QuantReg(y[:2], x[:2])
    model = QuantReg(y, x)
    with pytest.raises(ValueError, match="`method` must be one of"):
        model.fit(method="br")
    with pytest.raises(ValueError, match="`cov_type` must be one of"):
        model.fit(cov_type="sandwich")
    with pytest.raises(ValueError, match="`bandwidth` must be one of"):
        model.fit(bandwidth="silverman")
    with pytest.raises(ValueError, match="`tol` must lie in"):
        model.fit(tol=-1.0)


def test_warnings_are_not_emitted_on_a_clean_fit(engel):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        QuantReg.from_formula("foodexp ~ income", engel, q=[0.1, 0.9]).fit(cov_type="nid")


def test_statsmodels_habits_add_constant_and_fit_q(engel):
    X = sm.add_constant(engel[["income"]])
    ours = QuantReg(engel["foodexp"], X, q=0.25).fit(cov_type="iid")
    theirs = sm.QuantReg(engel["foodexp"], X).fit(q=0.25)
    # the user's `const` is the intercept: statsmodels' names, the same LP optimum (both solve
    # it to ~1e-6 relative), and df_model counts the slope only, as statsmodels does
    assert list(ours.params.index) == ["const", "income"]
    np.testing.assert_allclose(ours.params, theirs.params, rtol=1e-5)
    assert ours.df_model == theirs.df_model == 1
    same = QuantReg(engel["foodexp"], engel[["income"]], q=0.25).fit(cov_type="iid")
    np.testing.assert_allclose(ours.params.to_numpy(), same.params.to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.bse.to_numpy(), same.bse.to_numpy(), rtol=1e-12)
    with pytest.raises(
        TypeError, match=r"`q` is not an option of QuantReg.fit\(\).*QuantReg\(\.\.\., q=\.\.\.\)"
    ):
        QuantReg(engel["foodexp"], X).fit(q=0.25)
    with pytest.raises(
        TypeError, match=r"unexpected option\(s\) \['cov'\]; its options are \['method'"
    ):
        QuantReg(engel["foodexp"], X).fit(cov="iid")
