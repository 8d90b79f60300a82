"""Numba kernels of the quantized-NVMM E-step (private).

Everything works in log space so that cells far in the tails (probabilities below 1e-300) still
give finite moments. Inputs are float64 C-contiguous arrays and scalars; nothing here draws random
numbers. Each kernel has an independent numpy/scipy twin in ``tests/statcore/quantized``.

* :func:`log_ndtr` / :func:`log_ndtr_diff`: ``log Phi(x)`` and ``log(Phi(b) - Phi(a))``.
* :func:`ndtri`: the standard normal quantile (Acklam's rational approximation, one Halley step).
* :func:`scalar_estep`: conditional moments of (X, W) given a scalar cell, as a ratio of sums over
  quadrature nodes of W (one node ``w = 1`` for the Gaussian); :func:`scalar_estep_serial` is
  its one-thread twin for small problems.
* :func:`box_estep`: the same for d-dimensional boxes, with nested Gauss-Legendre quadrature on
  the quantile scale of the sequential (Cholesky) conditionals and a closed-form innermost layer.
* :func:`gaussian_cell_moments`: ``log P``, ``E[X]``, ``E[X^2]`` of Gaussian cells with one
  location each (the E-step of the structured fits, serial; see its note).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from statcore._numba import njit

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
SQRT2 = math.sqrt(2.0)


@njit
def log_ndtr(x):
    """``log Phi(x)``, accurate in both tails."""
    if x > 5.0:
        return math.log1p(-0.5 * math.erfc(x / SQRT2))
    if x > -30.0:
        return math.log(0.5 * math.erfc(-x / SQRT2))
    # asymptotic series of Mills' ratio; relative error below 2e-12 at x = -30
    x2 = 1.0 / (x * x)
    series = 1.0 - x2 + 3.0 * x2 * x2 - 15.0 * x2**3 + 105.0 * x2**4
    return -0.5 * x * x - LOG_SQRT_2PI - math.log(-x) + math.log(series)


@njit
def log_ndtr_diff(a, b):
    """``log(Phi(b) - Phi(a))`` for ``a <= b`` (either may be infinite), without cancellation."""
    if a >= b:
        return -np.inf
    if a > 0.0:  # both in the upper tail: mirror
        a, b = -b, -a
    if b <= 0.0:
        la = log_ndtr(a)
        lb = log_ndtr(b)
        return lb + math.log1p(-math.exp(la - lb))
    # a <= 0 < b
    pa = 0.5 * math.erfc(-a / SQRT2) if a > -np.inf else 0.0
    pb = 0.5 * math.erfc(b / SQRT2) if b < np.inf else 0.0
    return math.log1p(-(pa + pb))


@njit
def log_npdf(x):
    return -0.5 * x * x - LOG_SQRT_2PI


@njit
def tn_moments(a, b, logp):
    """First two moments of the standard normal truncated to ``[a, b]`` with ``log P = logp``."""
    ra = 0.0
    rb = 0.0
    ta = 0.0
    tb = 0.0
    if a > -np.inf:
        ra = math.exp(log_npdf(a) - logp)
        ta = a * ra
    if b < np.inf:
        rb = math.exp(log_npdf(b) - logp)
        tb = b * rb
    m1 = ra - rb
    m2 = 1.0 + ta - tb
    # a narrow cell far in a tail: fall back on the uniform approximation when rounding shows
    if m2 - m1 * m1 < 0.0 and a > -np.inf and b < np.inf:
        m1 = 0.5 * (a + b)
        m2 = m1 * m1 + (b - a) ** 2 / 12.0
    return m1, m2


@njit
def ndtri(p):
    """Standard normal quantile, Acklam's approximation refined by one Halley step."""
    if p <= 0.0:
        return -np.inf
    if p >= 1.0:
        return np.inf
    a1, a2, a3 = -3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02
    a4, a5, a6 = 1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00
    b1, b2, b3 = -5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02
    b4, b5 = 6.680131188771972e01, -1.328068155288572e01
    c1, c2, c3 = -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00
    c4, c5, c6 = -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00
    d1, d2, d3, d4 = (
        7.784695709041462e-03,
        3.224671290700398e-01,
        2.445134137142996e00,
        3.754408661907416e00,
    )
    plow = 0.02425
    if p < plow:
        q = math.sqrt(-2.0 * math.log(p))
        x = (((((c1 * q + c2) * q + c3) * q + c4) * q + c5) * q + c6) / (
            (((d1 * q + d2) * q + d3) * q + d4) * q + 1.0
        )
    elif p <= 1.0 - plow:
        q = p - 0.5
        r = q * q
        x = (
            (((((a1 * r + a2) * r + a3) * r + a4) * r + a5) * r + a6)
            * q
            / (((((b1 * r + b2) * r + b3) * r + b4) * r + b5) * r + 1.0)
        )
    else:
        q = math.sqrt(-2.0 * math.log1p(-p))
        x = -(((((c1 * q + c2) * q + c3) * q + c4) * q + c5) * q + c6) / (
            (((d1 * q + d2) * q + d3) * q + d4) * q + 1.0
        )
    # Halley refinement (in the tail the error term is computed from the nearer side)
    if x < 0.0:
        e = 0.5 * math.erfc(-x / SQRT2) - p
    else:
        e = -(0.5 * math.erfc(x / SQRT2) - (1.0 - p))
    u = e * math.sqrt(2.0 * math.pi) * math.exp(0.5 * x * x)
    return x - u / (1.0 + 0.5 * x * u)


@njit
def _scalar_cell(lo, hi, loc, sigma, gamma, w, sw, logwt, lq, acc):
    """One cell of :func:`scalar_estep`: returns ``log P`` and fills ``acc`` with the moments."""
    nq = w.shape[0]
    top = -np.inf
    for q in range(nq):
        m = loc + w[q] * gamma
        s = sigma * sw[q]
        lq[q] = logwt[q] + log_ndtr_diff((lo - m) / s, (hi - m) / s)
        if lq[q] > top:
            top = lq[q]
    if top == -np.inf:
        for k in range(7):
            acc[k] = np.nan
        return -np.inf
    total = 0.0
    acc[:] = 0.0
    for q in range(nq):
        pq = math.exp(lq[q] - top)
        if pq == 0.0:
            continue
        m = loc + w[q] * gamma
        s = sigma * sw[q]
        m1, m2 = tn_moments((lo - m) / s, (hi - m) / s, lq[q] - logwt[q])
        ex = m + s * m1
        ex2 = m * m + 2.0 * m * s * m1 + s * s * m2
        total += pq
        acc[0] += pq / w[q]
        acc[1] += pq * w[q]
        acc[2] += pq * math.log(w[q])
        acc[3] += pq * ex
        acc[4] += pq * ex / w[q]
        acc[5] += pq * ex2 / w[q]
        acc[6] += pq * ex2
    for k in range(7):
        acc[k] /= total
    return top + math.log(total)


@njit(parallel=True)
def scalar_estep(lower, upper, loc, sigma, gamma, w, logwt):
    """Moments of (X, W) given cells ``[lower, upper)``, X | W=w ~ N(loc + w gamma, w sigma^2).

    ``w``, ``logwt``: quadrature nodes and log-weights of the mixing law (summing to 1 on the
    natural scale). Returns ``(logp, out)`` where ``logp[i]`` is the cell's log-probability and
    ``out[i]`` holds ``E[1/W], E[W], E[log W], E[X], E[X/W], E[X^2/W], E[X^2]`` given the cell.
    """
    n = lower.shape[0]
    logp = np.empty(n)
    out = np.zeros((n, 7))
    sw = np.sqrt(w)
    for i in prange(n):
        lq = np.empty(w.shape[0])
        logp[i] = _scalar_cell(lower[i], upper[i], loc[i], sigma, gamma, w, sw, logwt, lq, out[i])
    return logp, out


@njit
def scalar_estep_serial(lower, upper, loc, sigma, gamma, w, logwt):
    """:func:`scalar_estep` on one thread: a few unique cells take far less than waking (and,
    on a busy machine, waiting for) a thread pool every ECM iteration."""
    n = lower.shape[0]
    logp = np.empty(n)
    out = np.zeros((n, 7))
    sw = np.sqrt(w)
    lq = np.empty(w.shape[0])
    for i in range(n):
        logp[i] = _scalar_cell(lower[i], upper[i], loc[i], sigma, gamma, w, sw, logwt, lq, out[i])
    return logp, out


@njit
def _conditional_bounds(j, lo, hi, mean, chol, rs, z):
    """Standardised edges of coordinate ``j`` of a box given the earlier coordinates ``z[:j]``."""
    c = mean[j]
    for k in range(j):
        c += rs * chol[j, k] * z[k]
    s = rs * chol[j, j]
    return (lo[j] - c) / s, (hi[j] - c) / s


@njit
def _box_one(lo, hi, mean, chol, scale, gl_x, gl_w, ez, ezz):
    """Probability and raw moments of z for N(mean, scale * chol chol') on one box.

    Returns ``log P``; fills ``ez`` (d) and ``ezz`` (d, d) with ``E[z 1]/P`` and ``E[z z' 1]/P``
    where ``x = mean + sqrt(scale) chol z``.
    """
    d = lo.shape[0]
    nq = gl_x.shape[0]
    rs = math.sqrt(scale)
    n_outer = d - 1
    total_nodes = 1
    for _ in range(n_outer):
        total_nodes *= nq
    z = np.zeros(d)
    ez[:] = 0.0
    ezz[:, :] = 0.0
    total = 0.0
    for flat in range(total_nodes):
        idx = flat
        weight = 1.0
        ok = True
        for j in range(n_outer):
            q = idx % nq
            idx //= nq
            a, b = _conditional_bounds(j, lo, hi, mean, chol, rs, z)
            lp = log_ndtr_diff(a, b)
            if lp == -np.inf:
                ok = False
                break
            p = math.exp(lp)
            # position t in (0, 1) on the quantile scale; nodes cluster (cubically) towards an
            # infinite end, where the integrand has an algebraic endpoint singularity in t
            g = gl_x[q]
            jac = 1.0
            lo_inf = a == -np.inf
            hi_inf = b == np.inf
            if lo_inf and hi_inf:
                t = g * g * (3.0 - 2.0 * g)
                jac = 6.0 * g * (1.0 - g)
            elif lo_inf:
                t = g * g * g
                jac = 3.0 * g * g
            elif hi_inf:
                t = 1.0 - (1.0 - g) ** 3
                jac = 3.0 * (1.0 - g) ** 2
            else:
                t = g
            weight *= p * gl_w[q] * jac
            # node from the tail-safe side
            if a > 0.0:
                pa = 0.5 * math.erfc(b / SQRT2)
                z[j] = -ndtri(pa + p * (1.0 - t))
            else:
                pa = 0.5 * math.erfc(-a / SQRT2) if a > -np.inf else 0.0
                z[j] = ndtri(pa + p * t)
        if not ok or weight == 0.0:
            continue
        j = d - 1
        a, b = _conditional_bounds(j, lo, hi, mean, chol, rs, z)
        lp = log_ndtr_diff(a, b)
        if lp == -np.inf:
            continue
        m1, m2 = tn_moments(a, b, lp)
        wp = weight * math.exp(lp)
        total += wp
        for k in range(n_outer):
            ez[k] += wp * z[k]
            for m in range(k + 1):
                ezz[k, m] += wp * z[k] * z[m]
            ezz[j, k] += wp * z[k] * m1
        ez[j] += wp * m1
        ezz[j, j] += wp * m2
    if total <= 0.0:
        return -np.inf
    for k in range(d):
        ez[k] /= total
        for m in range(k + 1):
            ezz[k, m] /= total
            ezz[m, k] = ezz[k, m]
    return math.log(total)


@njit(parallel=True)
def box_estep(lower, upper, mean, chol, w, logwt, gl_x, gl_w):
    """Moments of (X, W) given boxes, for X | W=w ~ N(mean, w chol chol') (no skew).

    Returns ``logp`` (n,), ``scal`` (n, 3) = ``E[1/W], E[log W], 1`` given the box, ``ex_w``
    (n, d) = ``E[X/W]``, ``exx_w`` (n, d, d) = ``E[X X'/W]`` and ``ex`` (n, d) = ``E[X]``.
    """
    n, d = lower.shape
    nq = w.shape[0]
    logp = np.empty(n)
    scal = np.zeros((n, 3))
    ex_w = np.zeros((n, d))
    exx_w = np.zeros((n, d, d))
    ex = np.zeros((n, d))
    for i in prange(n):
        lq = np.empty(nq)
        ezs = np.zeros((nq, d))
        ezzs = np.zeros((nq, d, d))
        ez = np.zeros(d)
        ezz = np.zeros((d, d))
        top = -np.inf
        for q in range(nq):
            lp = _box_one(lower[i], upper[i], mean, chol, w[q], gl_x, gl_w, ez, ezz)
            lq[q] = logwt[q] + lp
            ezs[q] = ez
            ezzs[q] = ezz
            if lq[q] > top:
                top = lq[q]
        if top == -np.inf:
            logp[i] = -np.inf
            continue
        total = 0.0
        for q in range(nq):
            pq = math.exp(lq[q] - top)
            if pq == 0.0:
                continue
            total += pq
            rs = math.sqrt(w[q])
            # x = mean + rs L z
            lz = chol @ ezs[q]
            exq = mean + rs * lz
            lzzl = chol @ ezzs[q] @ chol.T
            scal[i, 0] += pq / w[q]
            scal[i, 1] += pq * math.log(w[q])
            for a in range(d):
                ex[i, a] += pq * exq[a]
                ex_w[i, a] += pq * exq[a] / w[q]
                for b in range(d):
                    exx = (
                        mean[a] * mean[b]
                        + rs * (mean[a] * lz[b] + lz[a] * mean[b])
                        + w[q] * lzzl[a, b]
                    )
                    exx_w[i, a, b] += pq * exx / w[q]
        logp[i] = top + math.log(total)
        scal[i, 0] /= total
        scal[i, 1] /= total
        scal[i, 2] = 1.0
        for a in range(d):
            ex[i, a] /= total
            ex_w[i, a] /= total
            for b in range(d):
                exx_w[i, a, b] /= total
    return logp, scal, ex_w, exx_w, ex


@njit
def gaussian_cell_moments(lower, upper, loc, sigma):
    """``log P``, ``E[X]`` and ``E[X^2]`` of N(loc_i, sigma^2) given cells ``[lower, upper)``.

    Serial on purpose: the structured fits (matrix completion, compressed sensing) call it
    between BLAS-heavy steps (SVDs, matrix products), and an OpenMP pool left spinning after a
    parallel kernel starves the BLAS threads (measured: a 100 x 80 SVD 8x slower).
    """
    n = lower.shape[0]
    logp = np.empty(n)
    ex = np.empty(n)
    ex2 = np.empty(n)
    for i in range(n):
        m = loc[i]
        a = (lower[i] - m) / sigma
        b = (upper[i] - m) / sigma
        lp = log_ndtr_diff(a, b)
        logp[i] = lp
        if lp == -np.inf:
            ex[i] = np.nan
            ex2[i] = np.nan
            continue
        m1, m2 = tn_moments(a, b, lp)
        ex[i] = m + sigma * m1
        ex2[i] = m * m + 2.0 * m * sigma * m1 + sigma * sigma * m2
    return logp, ex, ex2
