"""numba kernels of the MMDD and geodesic dCov statistics (O(n) memory, or O(n x block)).

Notation: ``a_kl = |X_k - X_l|``, ``b_kl = -<V_k, V_l>``; a centred entry is
``c(a)_kl = a_kl - c1 (a_k. + a_.l) + c2 a_..`` with ``c1 = 1/(n-2), c2 = 1/((n-1)(n-2))`` and
the diagonal left out (U-centring) or ``c1 = 1/n, c2 = 1/n^2`` with the diagonal kept (double
centring). Row sums come in precomputed (those of ``b`` are closed form), so each entry is formed
on the fly and no n x n matrix is ever held.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from statcore._numba import njit


@njit(parallel=True, nogil=True)
def dist_row_sums(X):
    """``a_k. = sum_l |X_k - X_l|`` for every row of ``X`` (n, p)."""
    n, p = X.shape
    out = np.zeros(n)
    for k in prange(n):
        acc = 0.0
        for l in range(n):
            d = 0.0
            for j in range(p):
                t = X[k, j] - X[l, j]
                d += t * t
            acc += np.sqrt(d)
        out[k] = acc
    return out


@njit(parallel=True, nogil=True)
def centred_product_rows(X, V, a_row, a_tot, b_row, b_tot, c1, c2, keep_diag):
    """Row ``k`` of ``sum_l c(a)_kl c(b)_kl`` (the caller sums the rows in a fixed order)."""
    n, p = X.shape
    m = V.shape[1]
    out = np.zeros(n)
    for k in prange(n):
        acc = 0.0
        for l in range(n):
            if l == k and not keep_diag:
                continue
            d = 0.0
            for j in range(p):
                t = X[k, j] - X[l, j]
                d += t * t
            g = 0.0
            for j in range(m):
                g += V[k, j] * V[l, j]
            ca = np.sqrt(d) - c1 * (a_row[k] + a_row[l]) + c2 * a_tot
            cb = -g - c1 * (b_row[k] + b_row[l]) + c2 * b_tot
            acc += ca * cb
        out[k] = acc
    return out


@njit(parallel=True, nogil=True)
def centred_product_block(X, V, a_row, a_tot, b_row, b_tot, c1, c2, keep_diag, r0, out):
    """Rows ``r0 .. r0 + len(out)`` of the matrix ``K_kl = c(a)_kl c(b)_kl``, into ``out``."""
    n, p = X.shape
    m = V.shape[1]
    for i in prange(out.shape[0]):
        k = r0 + i
        for l in range(n):
            if l == k and not keep_diag:
                out[i, l] = 0.0
                continue
            d = 0.0
            for j in range(p):
                t = X[k, j] - X[l, j]
                d += t * t
            g = 0.0
            for j in range(m):
                g += V[k, j] * V[l, j]
            ca = np.sqrt(d) - c1 * (a_row[k] + a_row[l]) + c2 * a_tot
            cb = -g - c1 * (b_row[k] + b_row[l]) + c2 * b_tot
            out[i, l] = ca * cb
    return out


@njit(parallel=True, nogil=True)
def permuted_product_sums(A, B, perms):
    """``sum_kl A[pi(k), pi(l)] B[k, l]`` for each permutation ``pi`` (a row of ``perms``)."""
    n_perm, n = perms.shape
    out = np.zeros(n_perm)
    for r in prange(n_perm):
        acc = 0.0
        for k in range(n):
            pk = perms[r, k]
            for l in range(n):
                acc += A[pk, perms[r, l]] * B[k, l]
        out[r] = acc
    return out


@njit(parallel=True, nogil=True)
def abs_dist_matvec(x_sorted, order, Zt):
    """``A z`` for every row ``z`` of ``Zt`` (q, n), ``A_kl = |x_k - x_l|`` for scalar ``x``.

    O(n) per vector after sorting: with ``x`` sorted, ``(A z)_k = x_k Z_lo - XZ_lo + XZ_hi -
    x_k Z_hi`` from running sums of ``z`` and ``x z`` below and above ``x_k`` (ties add 0).
    ``x_sorted = x[order]``; centre ``x`` first, so the differences do not cancel.
    """
    q, n = Zt.shape
    out = np.empty((q, n))
    for j in prange(q):
        tot_z = 0.0
        tot_xz = 0.0
        for i in range(n):
            z = Zt[j, order[i]]
            tot_z += z
            tot_xz += x_sorted[i] * z
        lo_z = 0.0
        lo_xz = 0.0
        i = 0
        while i < n:
            xk = x_sorted[i]
            stop = i
            g_z = 0.0
            g_xz = 0.0
            while stop < n and x_sorted[stop] == xk:
                z = Zt[j, order[stop]]
                g_z += z
                g_xz += x_sorted[stop] * z
                stop += 1
            hi_z = tot_z - lo_z - g_z
            hi_xz = tot_xz - lo_xz - g_xz
            value = xk * (lo_z - hi_z) - lo_xz + hi_xz
            for t in range(i, stop):
                out[j, order[t]] = value
            lo_z += g_z
            lo_xz += g_xz
            i = stop
    return out
