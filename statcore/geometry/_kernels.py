"""Numba kernels of the geometry area: per-point estimates from kNN distances and the
permutation loops of the alignment tests.

The kNN search itself is the shared one (:func:`statcore.neighbours.knn`); these
kernels only read its ``(dist, idx)`` arrays. Every loop here is O(n k) or O(n^2) per call.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from statcore._numba import njit


@njit(parallel=True)
def levina_bickel(dist, k):
    """Levina-Bickel MLE per row from its ``k`` ascending neighbour distances.

    ``m(x) = [(k - 1)^-1 sum_{j<k} log(T_k / T_j)]^-1``. Zero distances (copies that escaped the
    de-duplication through rounding) are skipped with the count reduced; a row with no usable
    pair gives NaN.
    """
    n = dist.shape[0]
    out = np.empty(n)
    for i in prange(n):
        tk = dist[i, k - 1]
        total = 0.0
        used = 0
        for j in range(k - 1):
            if dist[i, j] > 0.0:
                total += math.log(tk / dist[i, j])
                used += 1
        out[i] = used / total if used > 0 and total > 0.0 else np.nan
    return out


@njit(parallel=True)
def neighbourhood_ratio_mle(log_mu, idx, k, n1, n2, lo, hi):
    """GRIDE maximum-likelihood dimension of each point's neighbourhood.

    ``log_mu[j] = log(r_{j,n2} / r_{j,n1})`` for every point; point ``i`` pools itself and its
    ``k`` nearest neighbours ``idx[i, :k]``. The score of the GRIDE likelihood (Denti et al.
    2022, eq. 4),

        g(d) = m / d + (n2 - n1 - 1) sum log(mu) / (1 - mu^-d) - (n2 - 1) sum log(mu),

    decreases in ``d``, so its root is found by bisection on ``[lo, hi]``. With ``n1 = 1,
    n2 = 2`` the root is TwoNN's closed form ``m / sum log(mu)``. Non-finite ratios are skipped.
    """
    n = idx.shape[0]
    out = np.empty(n)
    shape = n2 - n1 - 1
    for i in prange(n):
        logs = np.empty(k + 1)
        m = 0
        for t in range(k + 1):
            value = log_mu[i] if t == 0 else log_mu[idx[i, t - 1]]
            if np.isfinite(value) and value > 0.0:
                logs[m] = value
                m += 1
        if m == 0:
            out[i] = np.nan
            continue
        total = 0.0
        for t in range(m):
            total += logs[t]
        if shape == 0:
            out[i] = m / total
            continue
        a, b = lo, hi
        for _ in range(100):
            d = 0.5 * (a + b)
            g = m / d - (n2 - 1) * total
            for t in range(m):
                g += shape * logs[t] / (-math.expm1(-d * logs[t]))
            if g > 0.0:
                a = d
            else:
                b = d
        out[i] = 0.5 * (a + b)
    return out


@njit
def mutual_knn_counts(idx_a, idx_b, perms):
    """Shared neighbours summed over rows, for the identity and each permutation of B's rows.

    Row ``i`` of the permuted B is B's row ``p[i]``; its neighbours are ``p^-1(N_B(p[i]))``.
    Returns integer totals (one per permutation, the identity first when ``perms`` starts
    with it), so observed and permuted statistics compare exactly.
    """
    n, k = idx_a.shape
    n_perm = perms.shape[0]
    out = np.zeros(n_perm, dtype=np.int64)
    stamp = np.full(n, -1, dtype=np.int64)
    inverse = np.empty(n, dtype=np.int64)
    for r in range(n_perm):
        p = perms[r]
        for i in range(n):
            inverse[p[i]] = i
        total = 0
        for i in range(n):
            tag = r * n + i
            for t in range(k):
                stamp[idx_a[i, t]] = tag
            row = idx_b[p[i]]
            for t in range(k):
                if stamp[inverse[row[t]]] == tag:
                    total += 1
        out[r] = total
    return out


@njit(parallel=True)
def permuted_frobenius(K, L, perms):
    """``sum_ij K[i, j] L[p[i], p[j]]`` for each permutation ``p`` (rows of ``perms``)."""
    n = K.shape[0]
    n_perm = perms.shape[0]
    out = np.empty(n_perm)
    for r in prange(n_perm):
        p = perms[r]
        total = 0.0
        for i in range(n):
            Li = L[p[i]]
            Ki = K[i]
            for j in range(n):
                total += Ki[j] * Li[p[j]]
        out[r] = total
    return out


@njit
def _masked_hsic(A, B, pa, pb, idx_a, idx_b, inverse_b):
    """Unbiased HSIC (Song et al. 2012, eq. 5) of ``M * K`` and ``M * L`` in O(n k^2 + n k p).

    ``K = A A^T`` over rows ``pa``, ``L = B B^T`` over rows ``pb``; ``M[i, j] = 1`` when ``j`` is
    among the ``k`` nearest neighbours of ``i`` in both (diagonal excluded): the CKNNA mask of
    Huh et al. (2024). The masked matrices are sparse, so the three terms are summed over the
    mask's entries only.
    """
    n, k = idx_a.shape
    members = np.full((n, k), -1, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    stamp = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        for t in range(k):
            stamp[idx_a[i, t]] = i
        row = idx_b[pb[i]]
        for t in range(k):
            j = inverse_b[row[t]]
            if stamp[j] == i:
                members[i, count[i]] = j
                count[i] += 1
    col_k = np.zeros(n)
    row_l = np.zeros(n)
    sum_k = 0.0
    sum_l = 0.0
    trace = 0.0
    for i in range(n):
        for t in range(count[i]):
            j = members[i, t]
            kij = np.dot(A[pa[i]], A[pa[j]])
            lij = np.dot(B[pb[i]], B[pb[j]])
            sum_k += kij
            sum_l += lij
            col_k[j] += kij
            row_l[i] += lij
            for s in range(count[j]):
                if members[j, s] == i:
                    trace += kij * lij
                    break
    cross = 0.0
    for j in range(n):
        cross += col_k[j] * row_l[j]
    return (trace + sum_k * sum_l / ((n - 1) * (n - 2)) - 2.0 * cross / (n - 2)) / (n * (n - 3))


@njit(parallel=True)
def cknna_hsic(A, B, idx_a, idx_b, perms):
    """The CKNNA cross term ``HSIC_u(M * K, M * L)`` for each permutation of B's rows."""
    n = A.shape[0]
    n_perm = perms.shape[0]
    out = np.empty(n_perm)
    identity = np.arange(n)
    for r in prange(n_perm):
        p = perms[r]
        inverse = np.empty(n, dtype=np.int64)
        for i in range(n):
            inverse[p[i]] = i
        out[r] = _masked_hsic(A, B, identity, p, idx_a, idx_b, inverse)
    return out
