"""Numba kernels of quantile regression: Frisch-Newton interior point, conquer, sandwich Gram.

Every kernel takes float64 C-contiguous arrays and scalars, draws nothing at random, and has an
independent scipy/numpy twin in ``tests/statcore/quantreg/test_quantreg_kernels.py``.
"""

from __future__ import annotations

import math

import numpy as np

from statcore._numba import njit

#: Fraction of the distance to the boundary an interior-point step may travel (Koenker's 0.99995).
_STEP_FRACTION = 0.99995


#: Let LLVM reorder the sums of the row loops into SIMD lanes (no assumptions about NaN or
#: infinity): about twice as fast; the interior point's result is polished to an exact vertex.
_REASSOC = {"reassoc", "contract"}

#: Rows per block of :func:`weighted_gram` and :func:`leverage_band`: a block of 512 x p
#: doubles stays in cache while BLAS multiplies it.
_BLOCK = 512


@njit
def weighted_gram(X, weights):
    """``X' diag(weights) X`` (weights must be >= 0), accumulated over blocks of rows.

    Scaling one cache-resident block at a time and handing it to BLAS avoids the n x p
    temporary of ``(sqrt(w) X)' (sqrt(w) X)``; on 1e5 x 20 it is about 5 times faster.
    """
    n, p = X.shape
    gram = np.zeros((p, p))
    buf = np.empty((_BLOCK, p))
    for start in range(0, n, _BLOCK):
        m = min(_BLOCK, n - start)
        for i in range(m):
            root = np.sqrt(weights[start + i])
            for j in range(p):
                buf[i, j] = X[start + i, j] * root
        block = buf[:m]
        gram += block.T @ block
    return gram


@njit
def leverage_band(X, W):
    """Row norms ``||x_i' W||`` by blocks (``W`` p x p): with ``W = R^-1`` from a Cholesky
    factor ``R'R = X_s'X_s`` these are ``sqrt(x_i' (X_s'X_s)^-1 x_i)``, the scale of the
    prediction error of a subsample fit at ``x_i`` (Portnoy and Koenker 1997)."""
    n, p = X.shape
    out = np.empty(n)
    for start in range(0, n, _BLOCK):
        m = min(_BLOCK, n - start)
        block = np.ascontiguousarray(X[start : start + m]) @ W
        for i in range(m):
            acc = 0.0
            for j in range(p):
                acc += block[i, j] * block[i, j]
            out[start + i] = np.sqrt(acc)
    return out


@njit(fastmath=_REASSOC)
def _xt_dot(X, v):
    """``X' v`` by a row loop: memory-bound, so a threaded BLAS call gains nothing and, on a
    busy machine, loses to thread contention."""
    n, p = X.shape
    out = np.zeros(p)
    for i in range(n):
        vi = v[i]
        for j in range(p):
            out[j] += X[i, j] * vi
    return out


@njit(fastmath=_REASSOC)
def _x_dot(X, v):
    """``X v`` by a row loop (see :func:`_xt_dot`)."""
    n, p = X.shape
    out = np.empty(n)
    for i in range(n):
        acc = 0.0
        for j in range(p):
            acc += X[i, j] * v[j]
        out[i] = acc
    return out


@njit(fastmath=_REASSOC)
def _dot(a, b):
    """``a @ b`` by a loop: numba hands ``@`` to BLAS ``ddot``, whose threads, on long vectors
    of a busy machine, cost more than the product itself."""
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    return acc


@njit
def check_loss(resid, tau):
    """Sum of ``rho_tau(r) = r (tau - 1{r < 0})``."""
    total = 0.0
    for r in resid:
        total += r * (tau - 1.0) if r < 0.0 else r * tau
    return total


@njit
def _max_step(v, dv):
    """Largest ``alpha <= 1`` with ``v + alpha dv >= 0`` (``v > 0``)."""
    alpha = 1.0
    for i in range(v.shape[0]):
        if dv[i] < 0.0:
            ratio = -v[i] / dv[i]
            if ratio < alpha:
                alpha = ratio
    return alpha


@njit
def _newton_direction(X, chol, q, x, s, z, w, r_p, r_d, r_xz, r_sw):
    """Solve the reduced KKT system of the bounded LP for one right-hand side."""
    rho = r_d - r_xz / x + r_sw / s
    rhs = r_p + _xt_dot(X, q * rho)
    dlam = np.linalg.solve(chol.T, np.linalg.solve(chol, rhs))
    dx = q * (_x_dot(X, dlam) - rho)
    dz = (r_xz - z * dx) / x
    dw = (r_sw + w * dx) / s
    return dlam, dx, dz, dw


@njit
def frisch_newton(X, y, tau, tol, maxiter):
    """Quantile regression by Mehrotra's predictor-corrector on the dual LP (Frisch-Newton).

    The dual of ``min sum rho_tau(y - X b)`` is ``max y'a`` subject to ``X'a = (1 - tau) X'1``
    and ``0 <= a <= 1``; ``a = 1 - tau`` is feasible, the least-squares fit starts the dual
    side, and each iteration solves the normal equations ``X' D X`` by Cholesky (the O(n p^2)
    step, a BLAS product).

    Returns
    -------
    beta : ndarray (p,)
        The multipliers of the equality constraints, i.e. the regression coefficients.
    a : ndarray (n,)
        The dual solution (``a_i`` near 1 above the fit, near 0 below).
    n_iter : int
    rel_gap : float
        Duality gap over ``1 + |objective|`` at exit; converged when ``rel_gap <= tol``.
    """
    n, p = X.shape
    x = np.full(n, 1.0 - tau)
    s = 1.0 - x
    b = _xt_dot(X, x)
    c = -y
    # the blocked Gram: numba's own X.T @ X is ~20 times slower here
    lam = np.linalg.solve(weighted_gram(X, np.ones(n)), _xt_dot(X, c))
    r = c - _x_dot(X, lam)
    # shifting z and w by the same amount keeps z - w = r (dual feasibility) strictly inside
    shift = 1e-3 * np.mean(np.abs(r)) + 1e-12
    z = np.maximum(r, 0.0) + shift
    w = np.maximum(-r, 0.0) + shift
    rel_gap = np.inf
    n_iter = 0
    for it in range(maxiter + 1):
        gap = _dot(x, z) + _dot(s, w)
        primal = _dot(c, x)
        rel_gap = gap / (1.0 + abs(primal))
        if rel_gap <= tol or it == maxiter:
            n_iter = it
            break
        q = 1.0 / (z / x + w / s)
        chol = np.linalg.cholesky(weighted_gram(X, q))
        r_p = b - _xt_dot(X, x)
        r_d = c - _x_dot(X, lam) - z + w
        # predictor (affine-scaling) step
        dlam, dx, dz, dw = _newton_direction(X, chol, q, x, s, z, w, r_p, r_d, -x * z, -s * w)
        ds = -dx
        alpha_p = min(_max_step(x, dx), _max_step(s, ds))
        alpha_d = min(_max_step(z, dz), _max_step(w, dw))
        mu_aff = _dot(x + alpha_p * dx, z + alpha_d * dz) + _dot(s + alpha_p * ds, w + alpha_d * dw)
        sigma = (mu_aff / gap) ** 3
        mu = sigma * gap / (2.0 * n)
        # corrector: centring plus the second-order term of the complementarity products
        r_xz = mu - x * z - dx * dz
        r_sw = mu - s * w - ds * dw
        dlam, dx, dz, dw = _newton_direction(X, chol, q, x, s, z, w, r_p, r_d, r_xz, r_sw)
        ds = -dx
        alpha_p = min(1.0, _STEP_FRACTION * min(_max_step(x, dx), _max_step(s, ds)))
        alpha_d = min(1.0, _STEP_FRACTION * min(_max_step(z, dz), _max_step(w, dw)))
        x = x + alpha_p * dx
        s = s + alpha_p * ds
        lam = lam + alpha_d * dlam
        z = z + alpha_d * dz
        w = w + alpha_d * dw
    return -lam, x, n_iter, rel_gap


@njit
def _normal_cdf_neg(u):
    """``Phi(-u)``."""
    return 0.5 * math.erfc(u / math.sqrt(2.0))


@njit
def smoothed_gradient(X, y, beta, tau, h):
    """Gradient of the Gaussian-smoothed check loss ``(1/n) sum l_h(y - X beta)``.

    ``l_h = rho_tau * K_h`` has derivative ``tau - Phi(-u / h)``.
    """
    n = X.shape[0]
    resid = y - _x_dot(X, beta)
    score = np.empty(n)
    for i in range(n):
        score[i] = tau - _normal_cdf_neg(resid[i] / h)
    return -_xt_dot(X, score) / n


@njit
def smoothed_loss(resid, tau, h):
    """``(1/n) sum l_h(r)`` with ``l_h(u) = u (tau - Phi(-u/h)) + h phi(u/h)``."""
    total = 0.0
    for r in resid:
        t = r / h
        total += r * (tau - _normal_cdf_neg(t)) + h * math.exp(-0.5 * t * t) / math.sqrt(
            2.0 * math.pi
        )
    return total / resid.shape[0]


@njit
def conquer(X, y, tau, h, beta0, tol, maxiter):
    """Convolution-smoothed quantile regression by gradient descent with Barzilai-Borwein steps.

    Returns ``beta, n_iter, max |gradient|``; converged when the last is ``<= tol``.
    """
    beta = beta0.copy()
    grad = smoothed_gradient(X, y, beta, tau, h)
    # the smoothed loss has curvature at most phi(0)/h times the largest eigenvalue of X'X/n
    n, p = X.shape
    step = h / (0.3989422804014327 * max(1e-300, np.sum(X * X) / n))
    n_iter = 0
    g_norm = np.max(np.abs(grad))
    while g_norm > tol and n_iter < maxiter:
        new_beta = beta - step * grad
        new_grad = smoothed_gradient(X, y, new_beta, tau, h)
        d_beta = new_beta - beta
        d_grad = new_grad - grad
        curvature = d_beta @ d_grad
        if curvature > 0.0:
            # the smaller of the two Barzilai-Borwein step sizes, as conquer does
            step = min(d_beta @ d_beta / curvature, curvature / (d_grad @ d_grad))
        beta, grad = new_beta, new_grad
        g_norm = np.max(np.abs(grad))
        n_iter += 1
    return beta, n_iter, g_norm
