"""Model / LikelihoodModel: the generic maximum-likelihood path against closed forms."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from _models import GaussianRegressionMLE, LogisticMLE, OLSFixture

from statcore.exceptions import ConvergenceWarning


def test_gaussian_mle_matches_closed_form(regression_frame):
    res = GaussianRegressionMLE.from_formula("y ~ x", regression_frame).fit()
    X = np.column_stack([np.ones(60), regression_frame["x"]])
    y = regression_frame["y"].to_numpy()
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    sigma2 = np.mean((y - X @ beta) ** 2)
    # BFGS stops at gradient norm 1e-6; with curvature n / sigma^2 ~ 100 the estimates are
    # within ~1e-8 of the optimum, well inside 1e-6 relative
    np.testing.assert_allclose(res.params[["Intercept", "x"]], beta, rtol=1e-6)
    assert np.exp(res.params["log_sigma"]) ** 2 == pytest.approx(sigma2, rel=1e-6)
    # observed information at the MLE: Var(beta) = sigma2 (X'X)^-1, Var(log sigma) = 1/(2n);
    # the finite-difference Hessian (step eps^(1/4)) is accurate to about 1e-6 relative
    np.testing.assert_allclose(
        res.bse[["Intercept", "x"]], np.sqrt(np.diag(sigma2 * np.linalg.inv(X.T @ X))), rtol=1e-5
    )
    assert res.bse["log_sigma"] == pytest.approx(np.sqrt(1 / 120), rel=1e-5)
    assert res.converged and res.n_iter > 0
    assert res.llf == pytest.approx(-30 * (np.log(2 * np.pi * sigma2) + 1), rel=1e-10)


def test_logistic_mle_matches_statsmodels():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(300, 2))
    y = (rng.random(300) < 1 / (1 + np.exp(-(0.3 + x @ [1.0, -0.5])))).astype(float)
    res = LogisticMLE(y, pd.DataFrame(x, columns=["a", "b"])).fit()
    ref = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-6)
    np.testing.assert_allclose(res.bse, ref.bse, rtol=1e-5)
    assert res.llf == pytest.approx(ref.llf, rel=1e-10)


def test_non_convergence_warns_and_is_recorded(regression_frame):
    model = GaussianRegressionMLE.from_formula("y ~ x", regression_frame)
    with pytest.warns(ConvergenceWarning, match=r"GaussianRegressionMLE.fit reached maxiter=1"):
        res = model.fit(maxiter=1)
    assert res.converged is False and res.n_iter == 1
    assert res.iterations.status == "maxiter" and res.fit_options["maxiter"] == 1
    assert any("reached maxiter=1" in note for note in res.summary().notes)
    assert any("not positive definite" in note for note in res.notes)


def test_fit_option_errors(regression_frame):
    model = GaussianRegressionMLE.from_formula("y ~ x", regression_frame)
    with pytest.raises(ValueError, match="`start_params` must have 3 entries; got 2"):
        model.fit(start_params=[0.0, 0.0])
    with pytest.raises(ValueError, match=r"`maxiter` must lie in \[1, inf\]"):
        model.fit(maxiter=0)


def test_model_repr_and_properties(regression_frame):
    model = OLSFixture.from_formula("y ~ x", regression_frame)
    assert repr(model) == "OLSFixture(formula='y ~ x', nobs=60)"
    assert model.exog_names == ["Intercept", "x"] and model.endog_name == "y"
    with pytest.raises(ValueError, match="`exog` must be None when `endog` is a prepared Design"):
        OLSFixture(model.design, np.zeros(3))
