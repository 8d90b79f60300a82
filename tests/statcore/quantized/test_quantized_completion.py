"""QuantizedMatrixCompletion: recovery, monotone ECM, the fine-cell limit, bad input."""

import warnings

import numpy as np
import pandas as pd
import pytest

from statcore.exceptions import ConvergenceWarning
from statcore.quantized import (
    IdentifiabilityWarning,
    QuantizedMatrixCompletion,
    QuantizedMatrixCompletionResults,
    Quantizer,
    structured,
)


def _design(seed, n1=100, n2=80, rank=2, sigma=0.5, missing=0.3, nu=None):
    rng = np.random.default_rng(seed)
    M = 1.2 * rng.standard_normal((n1, rank)) @ rng.standard_normal((rank, n2)) / np.sqrt(rank)
    eps = rng.standard_normal((n1, n2)) if nu is None else rng.standard_t(nu, (n1, n2))
    mask = rng.random((n1, n2)) > missing
    return M, M + sigma * eps, mask


def _codes(q, X, mask):
    codes = q.quantize(X.ravel()).reshape(X.shape).astype(float)
    codes[~mask] = np.nan
    return codes


def _hard_impute(Z, mask, rank, tol=1e-11, maxiter=5000):
    """Plain hard-impute (Mazumder et al. 2010): impute the current fit, project to rank r."""
    Y = np.where(mask, Z, Z[mask].mean())
    for _ in range(maxiter):
        U, s, Vt = np.linalg.svd(Y, full_matrices=False)
        M = (U[:, :rank] * s[:rank]) @ Vt[:rank]
        Y_new = np.where(mask, Z, M)
        if np.max(np.abs(Y_new - Y)) < tol:
            break
        Y = Y_new
    return M


def _rel(A, B):
    return np.linalg.norm(A - B) / np.linalg.norm(B)


@pytest.fixture(scope="module")
def gaussian_fit():
    M, X, mask = _design(0)
    q = Quantizer.uniform(0.5, 3)
    codes = _codes(q, X, mask)
    return M, X, mask, q, codes, QuantizedMatrixCompletion(codes, q, 2).fit()


def test_ecm_removes_quantization_bias(gaussian_fit):
    # 3 bits of width 0.5 span +-2 while the entries have sd ~1.3: a quarter of the cells
    # saturate, and midpoint imputation clips them. Measured (seeds 0, 1, 2): ECM 0.151, 0.186,
    # 0.145; hard-impute of the midpoints 0.371, 0.359, 0.337; hard-impute of the unquantized
    # data (the floor) 0.110, 0.126, 0.102. 0.25 separates the two with room either side.
    M, X, mask, q, codes, res = gaussian_fit
    mids = np.zeros(M.shape)
    mids[mask] = q.midpoints(codes[mask].astype(int))
    naive = _rel(_hard_impute(mids, mask, 2), M)
    assert naive > 0.25
    assert _rel(res.M, M) < 0.25
    assert _rel(res.M, M) < 0.5 * naive
    # sigma 0.488 measured; the raw-data residual scale is 0.5 up to O(1/sqrt(5600))
    assert abs(res.sigma - 0.5) < 0.05
    assert np.linalg.matrix_rank(res.M) == 2


def test_history_is_monotone_and_converged(gaussian_fit):
    *_, res = gaussian_fit
    assert res.converged and res.n_iter < 1000
    # exact GEM steps: any decrease is rounding in a sum of 5600 log-probabilities
    assert np.diff(res.history).min() >= -1e-9 * abs(res.llf)
    assert res.history[-1] == pytest.approx(res.llf, rel=1e-12)
    assert res.llf == pytest.approx(res.model.loglike(res.M, res.sigma), rel=1e-10), (
        "llf must be the exact cell log-likelihood at the estimate"
    )


def test_fine_cells_match_hard_impute_on_raw_data():
    # Delta -> 0: with 14-bit cells of width 1e-3 the E-step means differ from the raw
    # entries by at most 5e-4, so both fixed points (same start) agree to O(Delta)
    # relative to ||M|| ~ 65 (7.3e-5 measured; sigma agrees to 5e-6).
    M, X, mask = _design(3, n1=60, n2=50)
    q = Quantizer.uniform(1e-3, 14)
    res = QuantizedMatrixCompletion(_codes(q, X, mask), q, 2).fit()
    ref = _hard_impute(X, mask, 2)
    assert _rel(res.M, ref) < 1e-3
    resid = (X - ref)[mask]
    assert res.sigma == pytest.approx(np.sqrt(np.mean(resid**2)), rel=1e-3)


def test_t_errors_beat_gaussian_errors_under_heavy_tails():
    # t2 noise: the Gaussian fit chases the outliers. Measured (seeds 5-8): t 0.273, 0.214,
    # 0.264, 0.203 against Gaussian 0.306, 0.286, 0.307, 0.275 (ratios 0.74-0.89), nu_hat
    # 1.61-1.92 (true 2), log-likelihood gain 146-188. The nu bounds allow for 3-bit cells that
    # saturate at +-2, where the tails are seen only as counts.
    M, X, mask = _design(5, n1=60, n2=50, sigma=0.4, nu=2.0)
    q = Quantizer.uniform(0.5, 3)
    codes = _codes(q, X, mask)
    rt = QuantizedMatrixCompletion(codes, q, 2, family="t").fit(tol=1e-7)
    rg = QuantizedMatrixCompletion(codes, q, 2).fit(tol=1e-7)
    assert rt.converged and np.diff(rt.history).min() >= -1e-9 * abs(rt.llf)
    assert _rel(rt.M, M) < 0.92 * _rel(rg.M, M)
    assert 1.2 < rt.nu < 3.5
    assert rt.llf > rg.llf


def test_svds_path_matches_full_svd(monkeypatch):
    # the ARPACK projection (big matrices) is exact to rounding: same fit as the dense SVD
    M, X, mask = _design(2, n1=40, n2=30)
    q = Quantizer.uniform(0.5, 3)
    model = QuantizedMatrixCompletion(_codes(q, X, mask), q, 2)
    dense = model.fit(tol=1e-9)
    monkeypatch.setattr(structured, "SVDS_MIN_DIM", 10)
    sparse1 = model.fit(tol=1e-9, random_state=1)
    sparse2 = model.fit(tol=1e-9, random_state=np.random.default_rng(1))
    np.testing.assert_allclose(sparse1.M, dense.M, atol=1e-6)
    np.testing.assert_array_equal(sparse1.M, sparse2.M)


def test_results_api(gaussian_fit):
    M, X, mask, q, codes, res = gaussian_fit
    assert isinstance(res, QuantizedMatrixCompletionResults)
    assert list(res.params.index) == ["sigma"]
    tidy = res.tidy()
    assert list(tidy["term"]) == ["sigma"] and "p_value" not in tidy
    text = res.summary().as_text()
    assert "Rank-2 fit of a 100 x 80 matrix" in text and "sigma" in text
    assert res.glance()["df_model"].iloc[0] == 2 * (100 + 80 - 2) + 1
    assert res.completed.shape == (100, 80)
    rows, cols = np.array([0, 5]), np.array([3, 7])
    np.testing.assert_array_equal(res.predict((rows, cols)), res.M[rows, cols])
    np.testing.assert_allclose((res.U * res.s) @ res.Vt, res.M, atol=1e-10)
    with pytest.raises(ValueError, match="newdata"):
        res.predict(np.zeros(3))
    assert res.plot("history") is not None and res.plot("singular_values") is not None
    # the user's codes are not modified, and a mask argument gives the same fit
    assert np.isnan(codes[~mask]).all()
    filled = np.where(mask, codes, 0.0)
    again = QuantizedMatrixCompletion(filled, q, 2, mask=mask).fit()
    np.testing.assert_allclose(again.M, res.M, atol=1e-12)


def test_nonconvergence_warns_and_is_recorded():
    M, X, mask = _design(1, n1=30, n2=20)
    q = Quantizer.uniform(0.5, 3)
    with pytest.warns(ConvergenceWarning):
        res = QuantizedMatrixCompletion(_codes(q, X, mask), q, 2).fit(maxiter=2)
    assert res.converged is False and res.n_iter == 2
    assert "reached maxiter=2" in res.summary().as_text()


def test_bad_input():
    q = Quantizer.uniform(0.5, 3)
    codes = np.ones((6, 5))
    mask = np.ones((6, 5), dtype=bool)
    with pytest.raises(ValueError, match="`rank` must be below min"):
        QuantizedMatrixCompletion(codes, q, 5)
    with pytest.raises(ValueError, match="`rank`"):
        QuantizedMatrixCompletion(codes, q, 0)
    with pytest.raises(TypeError, match="`rank`"):
        QuantizedMatrixCompletion(codes, q, 1.5)
    with pytest.raises(ValueError, match="`mask` must have the shape"):
        QuantizedMatrixCompletion(codes, q, 1, mask=mask[:5])
    with pytest.raises(TypeError, match="`mask` must be a boolean"):
        QuantizedMatrixCompletion(codes, q, 1, mask=mask.astype(int))
    nan_codes = codes.copy()
    nan_codes[2, 3] = np.nan
    with pytest.raises(ValueError, match=r"NaN at 1 entries that `mask` marks observed.*\(2, 3\)"):
        QuantizedMatrixCompletion(nan_codes, q, 1, mask=mask)
    with pytest.raises(ValueError, match="`codes` must be 2-D"):
        QuantizedMatrixCompletion(np.ones(5), q, 1)
    with pytest.raises(ValueError, match="no observed entry"):
        QuantizedMatrixCompletion(np.full((4, 4), np.nan), q, 1)
    with pytest.raises(ValueError, match="coordinate 0 must lie in 0..7"):
        QuantizedMatrixCompletion(codes * 9, q, 1)
    with pytest.raises(ValueError, match="whole numbers"):
        QuantizedMatrixCompletion(codes + 0.5, q, 1)
    with pytest.raises(ValueError, match="`family`"):
        QuantizedMatrixCompletion(codes, q, 1, family="skew_t")
    with pytest.raises(TypeError, match="`quantizer`"):
        QuantizedMatrixCompletion(codes, "q", 1)
    with pytest.raises(ValueError, match="scalar quantizer"):
        QuantizedMatrixCompletion(codes, Quantizer.uniform(0.5, 3, n_dims=2), 1)
    with pytest.raises(ValueError, match="`dither` must have the shape"):
        QuantizedMatrixCompletion(codes, q, 1, dither=np.zeros((3, 3)))
    sparse = codes.copy()
    sparse[0, 1:] = np.nan
    with pytest.warns(IdentifiabilityWarning, match="fewer than rank = 2"):
        QuantizedMatrixCompletion(sparse, q, 2)
    model = QuantizedMatrixCompletion(codes, q, 1)
    with pytest.raises(ValueError, match="`tol`"):
        model.fit(tol=-1.0)
    with pytest.raises(ValueError, match=r"`start\['M'\]` must have shape"):
        model.fit(start={"M": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="unknown"):
        model.fit(start={"mu": 1.0})


def test_dither_shifts_cells():
    # a known dither u shifts every cell by -u. 2-bit cells of width 1: measured error 0.241
    # with the dither against 0.264 without (seed 4); 0.3 bounds both. (On a 40 x 30 matrix the
    # undithered 2-bit fit drifts, as probit fits do under separation: rows whose entries all
    # saturate carry no information on how far out they lie. See the class notes.)
    M, X, mask = _design(4)
    q = Quantizer.uniform(1.0, 2)
    u = np.random.default_rng(9).uniform(-0.5, 0.5, X.shape)
    codes = q.quantize((X + u).ravel()).reshape(X.shape).astype(float)
    codes[~mask] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = QuantizedMatrixCompletion(codes, q, 2, dither=u).fit()
    lower, upper = q.cells(codes[mask].astype(int), u[mask])
    np.testing.assert_array_equal(res.model.lower, lower)
    np.testing.assert_array_equal(res.model.upper, upper)
    assert _rel(res.M, M) < 0.3
    assert isinstance(res.tidy(), pd.DataFrame)


def test_gaussian_cell_moments_kernel_matches_scipy():
    # twin of the serial kernel: scipy's truncated normal, cells with infinite edges included
    from scipy import stats

    from statcore.quantized import _kernels

    rng = np.random.default_rng(11)
    lo = rng.normal(size=200)
    hi = lo + rng.exponential(0.7, 200)
    lo[:20], hi[20:40] = -np.inf, np.inf
    loc, sigma = rng.normal(size=200), 0.8
    logp, ex, ex2 = _kernels.gaussian_cell_moments(lo, hi, loc, sigma)
    a, b = (lo - loc) / sigma, (hi - loc) / sigma
    ref = stats.truncnorm(a, b, loc=loc, scale=sigma)
    # atol: where P(cell) ~ 1 the reference's cdf difference loses ~1e-16 absolutely
    np.testing.assert_allclose(
        logp, np.log(stats.norm.cdf(b) - stats.norm.cdf(a)), rtol=1e-10, atol=1e-14
    )
    np.testing.assert_allclose(ex, ref.mean(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ex2, ref.var() + ref.mean() ** 2, rtol=1e-9, atol=1e-12)
