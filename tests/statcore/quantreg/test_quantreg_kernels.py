"""Each quantile-regression kernel against an independent numpy/scipy twin."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize, stats

import statcore as sc
from statcore.quantreg._kernels import (
    check_loss,
    conquer,
    frisch_newton,
    leverage_band,
    smoothed_gradient,
    smoothed_loss,
    weighted_gram,
)
from statcore.quantreg._solvers import optimal_vertex


def highs_qr(X, y, tau):
    """The primal LP ``min tau 1'u + (1 - tau) 1'v, X b + u - v = y`` by scipy's HiGHS."""
    n, p = X.shape
    eye = sp.identity(n, format="csr")
    res = optimize.linprog(
        np.r_[np.zeros(p), np.full(n, tau), np.full(n, 1 - tau)],
        A_eq=sp.hstack([sp.csr_matrix(X), eye, -eye], format="csr"),
        b_eq=y,
        bounds=[(None, None)] * p + [(0, None)] * (2 * n),
        method="highs",
    )
    assert res.status == 0
    return res.x[:p], res.fun


def numpy_check_loss(r, tau):
    return float(np.sum(r * (tau - (r < 0))))


def random_design(rng, n, p, hetero=False):
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1))])
    noise = rng.standard_t(3, size=n) * (1 + hetero * np.abs(X[:, 1]))
    return X, X @ np.linspace(1, 2, p) + noise


def test_weighted_gram_and_check_loss_match_numpy(rng):
    # 1300 rows: two full blocks of 512 and a partial one
    X = rng.normal(size=(1300, 6))
    w = rng.random(1300)
    # the same products summed in another order: rounding only
    np.testing.assert_allclose(weighted_gram(X, w), (X * w[:, None]).T @ X, rtol=1e-12)
    r = rng.normal(size=300)
    for tau in (0.1, 0.5, 0.9):
        assert check_loss(r, tau) == pytest.approx(numpy_check_loss(r, tau), rel=1e-13)


def test_leverage_band_is_the_prediction_standard_error(rng):
    X = rng.normal(size=(1100, 4))
    sub = X[rng.choice(1100, 200, replace=False)]
    R = np.linalg.cholesky(sub.T @ sub).T
    band = leverage_band(X, np.linalg.inv(R))
    # sqrt(x' (X_s'X_s)^-1 x) from the explicit inverse: rounding only
    twin = np.sqrt(np.einsum("ij,jk,ik->i", X, np.linalg.inv(sub.T @ sub), X))
    np.testing.assert_allclose(band, twin, rtol=1e-10)


@pytest.mark.parametrize("tau", [0.1, 0.25, 0.5, 0.75, 0.95])
def test_frisch_newton_reaches_the_highs_optimum(rng, tau):
    X, y = random_design(rng, 400, 5, hetero=True)
    beta_ref, loss_ref = highs_qr(X, y, tau)
    beta, _, n_iter, gap = frisch_newton(X, y, tau, 1e-12, 100)
    # the interior point alone gets to a relative duality gap of 1e-12 in a few dozen steps;
    # its check loss is then within that gap of the LP minimum
    assert gap <= 1e-12 and n_iter < 60
    assert check_loss(y - X @ beta, tau) == pytest.approx(loss_ref, rel=1e-9)
    np.testing.assert_allclose(beta, beta_ref, atol=1e-6 * np.abs(beta_ref).max())


def test_frisch_newton_on_engel_reaches_the_highs_optimum():
    engel = sc.datasets.load("engel")
    X = np.column_stack([np.ones(len(engel)), engel["income"]])
    y = engel["foodexp"].to_numpy()
    scale = np.abs(X).max(axis=0)
    for tau in (0.05, 0.5, 0.95):
        _, loss_ref = highs_qr(X, y, tau)
        beta, *_ = frisch_newton(np.ascontiguousarray(X / scale), y, tau, 1e-12, 100)
        assert check_loss(y - X @ (beta / scale), tau) == pytest.approx(loss_ref, rel=1e-9)


def test_optimal_vertex_certifies_uniqueness_and_detects_a_solution_face(rng):
    X, y = random_design(rng, 300, 3)
    beta, _, _, _ = frisch_newton(X, y, 0.5, 1e-10, 100)
    beta_v, unique, extra = optimal_vertex(X, y, 0.5, beta)
    beta_ref, loss_ref = highs_qr(X, y, 0.5)
    assert unique is True and extra == 0
    # a vertex solves p equations exactly: equal to HiGHS's vertex to rounding
    np.testing.assert_allclose(beta_v, beta_ref, rtol=1e-9, atol=1e-9)
    # the median of an even sample is any point between the middle order statistics
    X1 = np.ones((40, 1))
    y1 = rng.normal(size=40)
    b1, *_ = frisch_newton(X1, y1, 0.5, 1e-10, 100)
    _, unique1, _ = optimal_vertex(X1, y1, 0.5, b1)
    assert unique1 is False


def test_smoothed_gradient_is_the_derivative_of_the_smoothed_loss(rng):
    X, y = random_design(rng, 300, 4)
    beta = rng.normal(size=4)
    tau, h = 0.3, 0.4
    # independent twin of the closed form: scipy's normal cdf/pdf
    r = y - X @ beta
    twin_loss = np.mean(r * (tau - stats.norm.cdf(-r / h)) + h * stats.norm.pdf(r / h))
    assert smoothed_loss(r, tau, h) == pytest.approx(twin_loss, rel=1e-12)
    twin_grad = -X.T @ (tau - stats.norm.cdf(-r / h)) / len(y)
    np.testing.assert_allclose(smoothed_gradient(X, y, beta, tau, h), twin_grad, rtol=1e-10)
    # and it is the derivative: central differences agree to O(step^2)
    step = 1e-5
    fd = [
        (
            smoothed_loss(y - X @ (beta + step * e), tau, h)
            - smoothed_loss(y - X @ (beta - step * e), tau, h)
        )
        / (2 * step)
        for e in np.eye(4)
    ]
    np.testing.assert_allclose(twin_grad, fd, rtol=1e-6, atol=1e-9)


def test_conquer_minimises_the_smoothed_loss_like_scipy(rng):
    X, y = random_design(rng, 2000, 4)
    tau, h = 0.7, 0.3
    start = np.linalg.lstsq(X, y, rcond=None)[0]
    beta, n_iter, g = conquer(X, y, tau, h, start, 1e-10, 1000)
    ref = optimize.minimize(
        lambda b: smoothed_loss(y - X @ b, tau, h),
        start,
        jac=lambda b: smoothed_gradient(X, y, b, tau, h),
        method="BFGS",
        options={"gtol": 1e-12},
    )
    assert g <= 1e-10 and n_iter < 200
    # a strictly convex smooth objective: both find its unique minimiser; BFGS stops at 1e-8
    np.testing.assert_allclose(beta, ref.x, atol=1e-6)
