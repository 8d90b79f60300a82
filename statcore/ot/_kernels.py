"""Numba kernels of the log-domain Sinkhorn solver: soft-min reductions and plan statistics.

Every kernel takes float64 C-contiguous arrays. The point kernels recompute the costs of a row
of pairs from the coordinates each time they are needed, into a row buffer of length m, so no
n x m array is ever stored. A row is worked in a few flat loops over that buffer (costs, the
soft-min arguments, their maximum, their exponentials, the sum), each simple enough for LLVM to
compile to SIMD instructions: the second point set comes transposed (``yt``, shape (d, m)) so
that the cost loop runs along contiguous memory, and the exponential is a polynomial written
in plain arithmetic (:func:`_exp_shifted`, accurate to about one ulp) instead of a libm call,
which cannot be vectorised.

The soft-min reductions and the plan statistics also come in a ``parallel=True`` variant that
spreads blocks of rows over threads. A row's reduction runs in the same fixed order in either
variant, and the per-block partial sums of the plan statistics are added in block order, so the
results do not depend on the number of threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from statcore._numba import njit

#: ground costs computed inside the kernels; the code is the kernels' ``code`` argument
METRIC_CODES = {"euclidean": 0, "sqeuclidean": 1, "cityblock": 2, "chebyshev": 3, "hamming": 4}
#: rows one thread works through at a time in the parallel kernels
ROW_BLOCK = 16

_LOG2E = 1.4426950408889634
# ln 2 split as in fdlibm: the high part has trailing zero bits, so k * _LN2_HI is exact
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
#: exponents below this count as exp(.) = 0: e^-700 is 1e-304, under any sum's rounding
_LOW = -700.0
# 1/k! for k = 13, ..., 2: the Taylor polynomial of exp on |r| <= ln(2)/2 to below 1e-17
_C13, _C12, _C11, _C10 = 1 / 6227020800, 1 / 479001600, 1 / 39916800, 1 / 3628800
_C9, _C8, _C7, _C6, _C5 = 1 / 362880, 1 / 40320, 1 / 5040, 1 / 720, 1 / 120
_C4, _C3, _C2 = 1 / 24, 1 / 6, 0.5


@njit
def pair_cost(x, i, y, j, code):
    """Cost between row ``i`` of ``x`` and row ``j`` of ``y`` for the metric ``code``."""
    d = x.shape[1]
    acc = 0.0
    if code == 0 or code == 1:
        for k in range(d):
            diff = x[i, k] - y[j, k]
            acc += diff * diff
        return math.sqrt(acc) if code == 0 else acc
    if code == 2:
        for k in range(d):
            acc += abs(x[i, k] - y[j, k])
        return acc
    if code == 3:
        for k in range(d):
            diff = abs(x[i, k] - y[j, k])
            if diff > acc:
                acc = diff
        return acc
    for k in range(d):
        if x[i, k] != y[j, k]:
            acc += 1.0
    return acc / d


@njit
def pairwise_points(x, y, code):
    """The dense cost matrix ``C[i, j] = c(x_i, y_j)``."""
    n, m = x.shape[0], y.shape[0]
    out = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            out[i, j] = pair_cost(x, i, y, j, code)
    return out


@njit
def _row_costs(x, i, yt, code, buf):
    """``buf_j = c(x_i, y_j)`` for all j, with ``yt`` the (d, m) transpose of ``y``.

    Sums run over the coordinates in order, as in :func:`pair_cost`, so both give the same bits.
    """
    d, m = yt.shape
    for j in range(m):
        buf[j] = 0.0
    if code <= 1:
        for k in range(d):
            xi = x[i, k]
            for j in range(m):
                diff = xi - yt[k, j]
                buf[j] += diff * diff
        if code == 0:
            for j in range(m):
                buf[j] = math.sqrt(buf[j])
    elif code == 2:
        for k in range(d):
            xi = x[i, k]
            for j in range(m):
                buf[j] += abs(xi - yt[k, j])
    elif code == 3:
        for k in range(d):
            xi = x[i, k]
            for j in range(m):
                buf[j] = max(buf[j], abs(xi - yt[k, j]))
    else:
        for k in range(d):
            xi = x[i, k]
            for j in range(m):
                buf[j] += 1.0 if xi != yt[k, j] else 0.0
        for j in range(m):
            buf[j] /= d


@njit(inline="always")
def _reduced(value, top):
    """``(k, r)`` with ``max(value - top, _LOW) = k ln 2 + r``, ``|r| <= ln(2)/2`` (Cody-Waite)."""
    t = max(value - top, _LOW)
    k = math.floor(t * _LOG2E + 0.5)
    return k, (t - k * _LN2_HI) - k * _LN2_LO


@njit(inline="always")
def _taylor_low(p, r):
    """Horner steps of the Taylor polynomial of ``e^r`` below ``r^7``, given the part above."""
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + 1.0
    return p * r + 1.0


@njit(inline="always")
def _scale_by_powers(values, top, out, powers):
    """Multiply ``out_j`` by ``2^k_j`` through its exponent bits (``powers_j = k_j << 52``) and
    zero the entries below ``top + _LOW``."""
    bits = out.view(np.int64)
    for j in range(values.shape[0]):
        bits[j] += powers[j]
    for j in range(values.shape[0]):
        if values[j] - top <= _LOW:
            out[j] = 0.0


@njit
def _exp_shifted(values, top, out, powers):
    """``out_j = exp(values_j - top)`` for ``values_j <= top`` (0 below ``top + _LOW``).

    Cody-Waite reduction ``t = k ln 2 + r`` and a degree-13 Taylor polynomial for ``e^r``; the
    factor ``2^k`` is added to the exponent bits through an integer view of ``out``
    (``powers`` is an int64 scratch row). Max relative error about 2e-16.
    """
    for j in range(values.shape[0]):
        k, r = _reduced(values[j], top)
        p = _C13 * r + _C12
        p = p * r + _C11
        p = p * r + _C10
        p = p * r + _C9
        p = p * r + _C8
        out[j] = _taylor_low(p * r + _C7, r)
        powers[j] = np.int64(k) << 52
    _scale_by_powers(values, top, out, powers)


@njit
def _exp_shifted_coarse(values, top, out, powers):
    """:func:`_exp_shifted` with a degree-7 polynomial: relative error below 1e-8, under the
    rounding of a float32 kernel (6e-8), at about half the arithmetic."""
    for j in range(values.shape[0]):
        k, r = _reduced(values[j], top)
        out[j] = _taylor_low(_C7, r)
        powers[j] = np.int64(k) << 52
    _scale_by_powers(values, top, out, powers)


@njit
def _max(v):
    # four running maxima break the dependency chain; the maximum does not depend on order
    m = v.shape[0]
    t0 = t1 = t2 = t3 = -np.inf
    j = 0
    while j + 4 <= m:
        t0 = max(t0, v[j])
        t1 = max(t1, v[j + 1])
        t2 = max(t2, v[j + 2])
        t3 = max(t3, v[j + 3])
        j += 4
    while j < m:
        t0 = max(t0, v[j])
        j += 1
    return max(max(t0, t1), max(t2, t3))


@njit
def _sum(v):
    # eight partial sums in a fixed pattern: fast without reassociating fast-math, and the same
    # bits every time
    m = v.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    j = 0
    while j + 8 <= m:
        s0 += v[j]
        s1 += v[j + 1]
        s2 += v[j + 2]
        s3 += v[j + 3]
        s4 += v[j + 4]
        s5 += v[j + 5]
        s6 += v[j + 6]
        s7 += v[j + 7]
        j += 8
    tail = 0.0
    while j < m:
        tail += v[j]
        j += 1
    return (((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))) + tail


@njit
def _softmin_buffer(buf, h, eps, weights, powers):
    """``-eps log sum_j exp((h_j - buf_j) / eps)`` for a row of costs in ``buf`` (overwritten);
    a row without any weight is +inf."""
    inv_eps = 1.0 / eps
    for j in range(buf.shape[0]):
        buf[j] = (h[j] - buf[j]) * inv_eps
    top = _max(buf)
    if top == -np.inf:
        return np.inf
    _exp_shifted(buf, top, weights, powers)
    return -eps * (top + math.log(_sum(weights)))


@njit
def _softmin_points_rows(x, yt, h, eps, code, out, start, stop):
    m = yt.shape[1]
    buf, weights, powers = np.empty(m), np.empty(m), np.empty(m, np.int64)
    for i in range(start, stop):
        _row_costs(x, i, yt, code, buf)
        out[i] = _softmin_buffer(buf, h, eps, weights, powers)


@njit
def softmin_points(x, yt, h, eps, code, out):
    """``out_i = -eps log sum_j exp((h_j - c(x_i, y_j)) / eps)``, costs made on the fly.

    ``yt`` is the (d, m) transpose of the second point set. ``h_j = g_j + eps log b_j`` carries
    the weights; a zero weight (``h_j = -inf``) drops a point.
    """
    _softmin_points_rows(x, yt, h, eps, code, out, 0, x.shape[0])


@njit(parallel=True)
def softmin_points_parallel(x, yt, h, eps, code, out):
    """:func:`softmin_points` with blocks of rows spread over threads (same bits)."""
    n = x.shape[0]
    for block in prange((n + ROW_BLOCK - 1) // ROW_BLOCK):
        start = block * ROW_BLOCK
        _softmin_points_rows(x, yt, h, eps, code, out, start, min(n, start + ROW_BLOCK))


@njit
def _softmin_dense_rows(cost, h, eps, out, start, stop):
    m = cost.shape[1]
    buf, weights, powers = np.empty(m), np.empty(m), np.empty(m, np.int64)
    for i in range(start, stop):
        buf[:] = cost[i]
        out[i] = _softmin_buffer(buf, h, eps, weights, powers)


@njit
def softmin_dense(cost, h, eps, out):
    """``out_i = -eps log sum_j exp((h_j - cost_ij) / eps)`` on a stored cost matrix."""
    _softmin_dense_rows(cost, h, eps, out, 0, cost.shape[0])


@njit(parallel=True)
def softmin_dense_parallel(cost, h, eps, out):
    """:func:`softmin_dense` with blocks of rows spread over threads (same bits)."""
    n = cost.shape[0]
    for block in prange((n + ROW_BLOCK - 1) // ROW_BLOCK):
        start = block * ROW_BLOCK
        _softmin_dense_rows(cost, h, eps, out, start, min(n, start + ROW_BLOCK))


@njit
def _plan_row(buf, aux, use_aux, fa_i, gb, eps, values, weights, powers, cols, plan_row, want_plan):
    """Sums over one row of the plan ``P_ij = exp((fa_i + gb_j - C_ij) / eps)``, ``C_i. = buf``.

    Returns ``(sum_j P_ij, sum_j P_ij C_ij, sum_j P_ij aux_ij)``, adds ``P_i.`` into ``cols``
    and, with ``want_plan``, writes it to ``plan_row``; ``values``, ``weights`` and ``powers``
    are scratch rows.
    """
    m = buf.shape[0]
    inv_eps = 1.0 / eps
    for j in range(m):
        values[j] = (fa_i + gb[j] - buf[j]) * inv_eps
    top = _max(values)
    if top == -np.inf:
        if want_plan:
            plan_row[:] = 0.0
        return 0.0, 0.0, 0.0
    _exp_shifted(values, top, weights, powers)
    scale = math.exp(top)
    for j in range(m):
        weights[j] *= scale
        cols[j] += weights[j]
    if want_plan:
        plan_row[:] = weights
    mass = _sum(weights)
    for j in range(m):
        values[j] = weights[j] * buf[j]
    cost = _sum(values)
    extra = 0.0
    if use_aux:
        for j in range(m):
            values[j] = weights[j] * aux[j]
        extra = _sum(values)
    return mass, cost, extra


@njit
def _plan_points_rows(
    x, yt, code, ax, ayt, acode, use_aux, fa, gb, eps, out, cols, plan, want_plan, start, stop
):
    m = yt.shape[1]
    buf, aux, values, weights = np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    powers = np.empty(m, np.int64)
    empty = np.empty(0)
    for i in range(start, stop):
        _row_costs(x, i, yt, code, buf)
        if use_aux:
            _row_costs(ax, i, ayt, acode, aux)
        row = plan[i - start] if want_plan else empty
        out[i, 0], out[i, 1], out[i, 2] = _plan_row(
            buf, aux, use_aux, fa[i], gb, eps, values, weights, powers, cols, row, want_plan
        )


@njit(parallel=True)
def plan_points(x, yt, code, ax, ayt, acode, use_aux, fa, gb, eps, out, cols, plan, want_plan):
    """Row sums of the plan of point costs, and optionally the plan, without storing costs.

    ``out[i] = (sum_j P_ij, sum_j P_ij c_ij, sum_j P_ij a_ij)`` with ``a_ij`` a second point
    cost (rows of ``ax`` against the columns of ``ayt``, metric ``acode``) used when
    ``use_aux``; ``cols`` (shape (n_blocks, m)) receives the column masses of each of
    ``n_blocks`` blocks of rows, to be added in block order by the caller; ``plan`` (n x m, or
    unused when not ``want_plan``) receives the plan. The blocks are spread over threads.
    """
    n = x.shape[0]
    n_blocks = cols.shape[0]
    size = (n + n_blocks - 1) // n_blocks
    for block in prange(n_blocks):
        start, stop = min(n, block * size), min(n, (block + 1) * size)
        rows = plan[start:stop] if want_plan else plan[:0]
        _plan_points_rows(
            x,
            yt,
            code,
            ax,
            ayt,
            acode,
            use_aux,
            fa,
            gb,
            eps,
            out,
            cols[block],
            rows,
            want_plan,
            start,
            stop,
        )


@njit
def plan_dense(cost, aux, use_aux, fa, gb, eps, out, cols):
    """:func:`plan_points` on a stored block of costs (and of ``aux`` when ``use_aux``);
    ``cols`` (shape (m,)) accumulates the column masses."""
    n, m = cost.shape
    buf, values, weights = np.empty(m), np.empty(m), np.empty(m)
    powers = np.empty(m, np.int64)
    empty = np.empty(0)
    for i in range(n):
        buf[:] = cost[i]
        aux_row = aux[i] if use_aux else empty
        out[i, 0], out[i, 1], out[i, 2] = _plan_row(
            buf, aux_row, use_aux, fa[i], gb, eps, values, weights, powers, cols, empty, False
        )


@njit
def _kernel_rows(cost, h, eps, kernel, out, start, stop, coarse):
    m = cost.shape[1]
    buf, weights, powers = np.empty(m), np.empty(m), np.empty(m, np.int64)
    inv_eps = 1.0 / eps
    for i in range(start, stop):
        for j in range(m):
            buf[j] = (h[j] - cost[i, j]) * inv_eps
        top = _max(buf)
        if top == -np.inf:
            out[i] = np.inf
            kernel[i, :] = 0.0
            continue
        if coarse:
            _exp_shifted_coarse(buf, top, weights, powers)
        else:
            _exp_shifted(buf, top, weights, powers)
        total = _sum(weights)
        out[i] = -eps * (top + math.log(total))
        inv = 1.0 / total
        for j in range(m):
            kernel[i, j] = weights[j] * inv
    return out


@njit
def stabilised_kernel_serial(cost, h, eps, kernel, out, coarse):
    """:func:`stabilised_kernel` on one thread (the same bits), for small problems."""
    _kernel_rows(cost, h, eps, kernel, out, 0, cost.shape[0], coarse)


@njit(parallel=True)
def stabilised_kernel(cost, h, eps, kernel, out, coarse):
    """``out_i = -eps log sum_j exp((h_j - C_ij) / eps)`` and the kernel referenced to it,
    ``kernel_ij = exp((out_i + h_j - C_ij) / eps)`` (each row sums to 1; float32 or float64).

    ``coarse``: exponentials to 1e-8 (:func:`_exp_shifted_coarse`), for a float32 kernel,
    whose own rounding is larger; ``out`` then carries a relative error of about 1e-8 too."""
    n = cost.shape[0]
    for block in prange((n + ROW_BLOCK - 1) // ROW_BLOCK):
        start = block * ROW_BLOCK
        _kernel_rows(cost, h, eps, kernel, out, start, min(n, start + ROW_BLOCK), coarse)


@njit(fastmath=True)
def _product_rows(kernel, scale, out, start, stop):
    m = kernel.shape[1]
    for i in range(start, stop):
        acc = 0.0
        for j in range(m):
            acc += np.float64(kernel[i, j]) * np.float64(scale[j])
        out[i] = acc


@njit
def kernel_product_serial(kernel, scale, out):
    """:func:`kernel_product` on one thread (the same bits), for small problems."""
    _product_rows(kernel, scale, out, 0, kernel.shape[0])


@njit(parallel=True)
def kernel_product(kernel, scale, out):
    """``out = kernel @ scale`` summed in float64 (the kernel may be float32), rows spread over
    threads; each row's sum runs in one fixed order, whatever the number of threads.

    ``fastmath`` lets LLVM vectorise the sum (it reassociates it at compile time only)."""
    n = kernel.shape[0]
    for block in prange((n + ROW_BLOCK - 1) // ROW_BLOCK):
        start = block * ROW_BLOCK
        _product_rows(kernel, scale, out, start, min(n, start + ROW_BLOCK))


@njit(parallel=True)
def gradient_factor(x, y, gx, gy, fa, gb, eps, code, out):
    """Directional derivatives of the loss along the transport directions, pair by pair.

    With ``u_ij = (x_i - y_j) / |x_i - y_j|`` and ``dir_ij = max(|gx_i . u_ij|, |gy_j . u_ij|)``
    (a side without gradients passes zeros), ``out[i] = (max_j dir_ij, sum_j P_ij dir_ij^2,
    sum_j P_ij)`` for the plan ``P_ij = exp((fa_i + gb_j - C_ij) / eps)`` of the cost ``code``
    (0: Euclidean, 1: squared Euclidean). Coincident points have no direction and are skipped.
    """
    n, m, d = x.shape[0], y.shape[0], x.shape[1]
    for i in prange(n):
        top, second, mass = 0.0, 0.0, 0.0
        for j in range(m):
            dist2 = 0.0
            for k in range(d):
                diff = x[i, k] - y[j, k]
                dist2 += diff * diff
            dist = math.sqrt(dist2)
            cost = dist if code == 0 else dist2
            weight = math.exp((fa[i] + gb[j] - cost) / eps)
            mass += weight
            if dist == 0.0:
                continue
            dot_x, dot_y = 0.0, 0.0
            for k in range(d):
                diff = x[i, k] - y[j, k]
                dot_x += gx[i, k] * diff
                dot_y += gy[j, k] * diff
            value = max(abs(dot_x), abs(dot_y)) / dist
            top = max(top, value)
            second += weight * value * value
        out[i, 0], out[i, 1], out[i, 2] = top, second, mass


#: columns one thread accumulates at a time in :func:`kernel_product_t`
COL_BLOCK = 256


@njit(fastmath=True)
def _product_cols(kernel, scale, out, start, stop):
    width = stop - start
    acc = np.zeros(width)
    for i in range(kernel.shape[0]):
        s = np.float64(scale[i])
        # a zero-based slice of the row: LLVM vectorises this loop, not the offset one (2x)
        row = kernel[i, start:stop]
        for j in range(width):
            acc[j] += np.float64(row[j]) * s
    out[start:stop] = acc


@njit
def kernel_product_t_serial(kernel, scale, out):
    """:func:`kernel_product_t` on one thread (the same bits: each column is summed over the
    rows in the same order), for small problems."""
    m = kernel.shape[1]
    for block in range((m + COL_BLOCK - 1) // COL_BLOCK):
        start = block * COL_BLOCK
        _product_cols(kernel, scale, out, start, min(m, start + COL_BLOCK))


@njit(parallel=True)
def kernel_product_t(kernel, scale, out):
    """``out = kernel.T @ scale`` without a transposed copy: blocks of columns spread over
    threads, each summed over the rows in order (the same bits for any number of threads)."""
    m = kernel.shape[1]
    for block in prange((m + COL_BLOCK - 1) // COL_BLOCK):
        start = block * COL_BLOCK
        _product_cols(kernel, scale, out, start, min(m, start + COL_BLOCK))


@njit(parallel=True)
def pairwise_points_parallel(x, yt, code):
    """:func:`pairwise_points` from the (d, m) transpose ``yt`` of ``y``, the rows spread over
    threads (same bits: :func:`_row_costs` sums the coordinates in the same order, along
    contiguous, vectorised loops)."""
    n, m = x.shape[0], yt.shape[1]
    out = np.empty((n, m))
    for i in prange(n):
        _row_costs(x, i, yt, code, out[i])
    return out


@njit(inline="always")
def _log_sum_exp(potential, costs, inv_eps):
    """``log sum_k exp((potential_k - costs_k) / eps)``, shifted by its largest term."""
    top = -np.inf
    for k in range(costs.shape[0]):
        top = max(top, (potential[k] - costs[k]) * inv_eps)
    total = 0.0
    for k in range(costs.shape[0]):
        total += math.exp((potential[k] - costs[k]) * inv_eps - top)
    return top + math.log(total)


@njit
def _box_row_potentials(cost, g, eps_log_a, eps, out):
    """``out_i = eps log a_i - eps log sum_j exp((g_j - C_ij) / eps)``: the exact row update
    of the box problem (rows of the plan then sum to ``a``)."""
    inv_eps = 1.0 / eps
    for i in range(cost.shape[0]):
        out[i] = eps_log_a[i] - eps * _log_sum_exp(g, cost[i], inv_eps)


@njit
def _box_col_potentials(cost_t, f, log_lower, log_upper, eps, g):
    """The exact maximisation of the dual in each column potential, the clipped scaling
    ``g_j = min(max(0, eps (log l_j - r_j)), eps (log u_j - r_j))`` with
    ``r_j = log sum_i exp((f_i - C_ij) / eps)`` (``cost_t`` is the (m, n) transpose)."""
    inv_eps = 1.0 / eps
    for j in range(cost_t.shape[0]):
        r = _log_sum_exp(f, cost_t[j], inv_eps)
        g[j] = min(max(0.0, eps * (log_lower[j] - r)), eps * (log_upper[j] - r))


@njit
def box_sinkhorn(cost, cost_t, a, log_a, log_lower, log_upper, eps, f, g, maxiter, tol):
    """Dual block ascent of entropic transport with box column marginals, in the log domain.

    Solves ``min <C, P> + eps sum P (log P - 1)`` over ``P >= 0`` with ``P 1 = a`` and
    ``l <= P^T 1 <= u`` (``log_lower`` may hold -inf, ``log_upper`` +inf). ``f`` (n) and ``g``
    (m) hold the starting potentials and receive the solution; the plan is
    ``exp((f_i + g_j - C_ij) / eps)``, whose columns lie in the box exactly (``g`` is the last
    block updated) and whose rows are ``a_i exp((f_i - f'_i) / eps)`` with ``f'`` the next row
    update. Returns ``(n_iter, L1 row error)``; stops once the error is at most ``tol``.
    """
    n = cost.shape[0]
    eps_log_a = eps * log_a
    f_next = np.empty(n)
    _box_row_potentials(cost, g, eps_log_a, eps, f)
    n_iter = 0
    while True:
        _box_col_potentials(cost_t, f, log_lower, log_upper, eps, g)
        _box_row_potentials(cost, g, eps_log_a, eps, f_next)
        n_iter += 1
        error = 0.0
        for i in range(n):
            error += a[i] * abs(math.expm1((f[i] - f_next[i]) / eps))
        # leaving before f moves keeps the columns of (f, g) exactly in the box
        if error <= tol or n_iter >= maxiter:
            return n_iter, error
        f[:] = f_next


@njit
def _box_reduced(cost, a, g, eps, lower, upper, p, colsum):
    """The dual of the box problem with the row potentials eliminated, at ``g``:
    ``-eps sum_i a_i log sum_j exp((g_j - C_ij) / eps) + sum_j h_j(g_j)`` with ``h_j(x) = x l_j``
    for ``x >= 0`` and ``x u_j`` below (constants dropped). Fills ``p`` with the rows' softmax
    (the plan divided by ``a_i``, rows exact) and ``colsum`` with the plan's columns."""
    n, m = cost.shape
    inv_eps = 1.0 / eps
    value = 0.0
    colsum[:] = 0.0
    for i in range(n):
        top = -np.inf
        for j in range(m):
            p[i, j] = (g[j] - cost[i, j]) * inv_eps
            top = max(top, p[i, j])
        total = 0.0
        for j in range(m):
            p[i, j] = math.exp(p[i, j] - top)
            total += p[i, j]
        for j in range(m):
            p[i, j] /= total
            colsum[j] += a[i] * p[i, j]
        value -= eps * a[i] * (top + math.log(total))
    for j in range(m):
        if g[j] > 0.0:
            value += g[j] * lower[j]
        elif g[j] < 0.0:
            value += g[j] * upper[j]
    return value


@njit
def _box_residual(g, colsum, lower, upper, out):
    """The dual's (sub)gradient in ``g`` closest to 0: the bound a column is held to minus its
    mass; 0 for a free column (``g_j = 0``) whose mass lies in the box. Returns its L1 norm."""
    total = 0.0
    for j in range(g.shape[0]):
        if g[j] > 0.0:
            target = lower[j]
        elif g[j] < 0.0:
            target = upper[j]
        else:
            target = min(max(colsum[j], lower[j]), upper[j])
        out[j] = target - colsum[j]
        total += abs(out[j])
    return total


#: L1 residual below which box_newton takes full steps (no line search)
_NEWTON_LOCAL = 1e-6


@njit
def _box_search(cost, a, lower, upper, eps, g, direction, residual, value, scratch):
    """Backtracking (Armijo) along ``direction`` from ``g``, stopping at the first kink
    (a ``g_j`` with ``l_j < u_j`` changing sign) it would cross. Returns the accepted value,
    or NaN when none of 40 halvings ascends; ``scratch = (trial, trial_p, cols)`` receives
    the accepted point's potentials, softmax rows and columns."""
    trial, trial_p, cols = scratch
    m = g.shape[0]
    length, kink = 1.0, -1
    for j in range(m):
        if lower[j] < upper[j] and g[j] != 0.0 and g[j] * (g[j] + direction[j]) < 0.0:
            reach = -g[j] / direction[j]
            if reach < length:
                length, kink = reach, j
    slope = 0.0
    for j in range(m):
        slope += residual[j] * direction[j]
    if not slope > 0.0:
        return np.nan
    at_kink = kink >= 0
    for _ in range(40):
        for j in range(m):
            trial[j] = g[j] + length * direction[j]
        if at_kink:
            trial[kink] = 0.0
        new_value = _box_reduced(cost, a, trial, eps, lower, upper, trial_p, cols)
        if new_value >= value + 1e-4 * length * slope:
            return new_value
        length *= 0.5
        at_kink = False
    return np.nan


@njit
def _box_direction(hess, residual, work, direction):
    """``direction`` solving the damped Newton system on the working columns, 0 elsewhere."""
    index = np.flatnonzero(work)
    size = index.shape[0]
    sub, rhs = np.empty((size, size)), np.empty(size)
    for s in range(size):
        rhs[s] = residual[index[s]]
        for t in range(size):
            sub[s, t] = hess[index[s], index[t]]
    direction[:] = 0.0
    if size == 0:
        return
    step = np.linalg.solve(sub, rhs)
    for s in range(size):
        direction[index[s]] = step[s]


@njit
def box_newton(cost, a, lower, upper, eps, g, maxiter, tol):
    """Damped Newton ascent on the box problem's dual in the column potentials ``g`` alone
    (the row potentials eliminated exactly), for few columns: an m x m solve per step.

    The dual is concave, smooth except where a ``g_j`` with ``l_j < u_j`` changes sign, and
    flat along ``g + t 1`` between such kinks. Each step solves ``(H + mu I) d = r`` for the
    residual ``r`` (the subgradient nearest 0) with the Levenberg-Marquardt damping
    ``mu = |r|_1 / eps`` (steps of at most about ``eps`` far from the solution, Newton's
    quadratic convergence near it), keeps a column at its kink (``g_j = 0``) from moving
    against its residual, stops at the first kink the step would cross and backtracks; when
    that fails, a diagonally scaled gradient step (always an ascent direction) is tried.
    ``g`` (the start) receives the result. Returns ``(n_iter, L1 residual)``, the residual
    being the columns' distance from their bounds plus the complementary slackness
    violation; stops once it is at most ``tol``.
    """
    n, m = cost.shape
    p, trial_p = np.empty((n, m)), np.empty((n, m))
    colsum, trial_cols, residual = np.empty(m), np.empty(m), np.empty(m)
    trial, direction = np.empty(m), np.empty(m)
    scratch = (trial, trial_p, trial_cols)
    value = _box_reduced(cost, a, g, eps, lower, upper, p, colsum)
    error = _box_residual(g, colsum, lower, upper, residual)
    n_iter = 0
    while error > tol and n_iter < maxiter:
        n_iter += 1
        # the dual's Hessian is -(diag(colsum) - P^T diag(1/a) P) / eps
        hess = np.zeros((m, m))
        for i in range(n):
            for s in range(m):
                ps = a[i] * p[i, s]
                for t in range(m):
                    hess[s, t] -= ps * p[i, t]
        for s in range(m):
            hess[s, s] += colsum[s]
            for t in range(m):
                hess[s, t] /= eps
            hess[s, s] += error
        work = np.empty(m, dtype=np.bool_)
        for j in range(m):
            work[j] = g[j] != 0.0 or residual[j] != 0.0
        _box_direction(hess, residual, work, direction)
        # a column at its kink that the step would move against its residual stays there
        changed = True
        while changed:
            changed = False
            for j in range(m):
                if work[j] and g[j] == 0.0 and direction[j] * residual[j] <= 0.0:
                    work[j] = False
                    changed = True
            if changed:
                _box_direction(hess, residual, work, direction)
        if error < _NEWTON_LOCAL:
            # near the solution the dual's gains fall under its rounding, so a line search
            # would stall: the full step is taken and kept while the residual shrinks
            for j in range(m):
                trial[j] = g[j] + direction[j]
                if g[j] != 0.0 and lower[j] < upper[j] and g[j] * trial[j] < 0.0:
                    trial[j] = 0.0
            new_value = _box_reduced(cost, a, trial, eps, lower, upper, trial_p, trial_cols)
            new_error = _box_residual(trial, trial_cols, lower, upper, direction)
            if not new_error < error:
                break
        else:
            new_value = _box_search(
                cost, a, lower, upper, eps, g, direction, residual, value, scratch
            )
        if np.isnan(new_value):
            for j in range(m):
                direction[j] = residual[j] / hess[j, j]
            new_value = _box_search(
                cost, a, lower, upper, eps, g, direction, residual, value, scratch
            )
            if np.isnan(new_value):
                break
        g[:] = trial
        value = new_value
        p[:, :] = trial_p
        colsum[:] = trial_cols
        error = _box_residual(g, colsum, lower, upper, residual)
    return n_iter, error
