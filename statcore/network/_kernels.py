"""numba kernels of the latent space model: pair sums without an n x n matrix, edge sampling."""

import numpy as np
from numba import prange

from statcore._numba import njit


@njit(inline="always")
def _sigmoid_and_log1p_exp(x):
    # sigmoid(x) and log(1 + e^x) from one exp, without overflow: fitted logits beyond +-15
    # occur on real networks, and the exp is most of a likelihood pair's cost
    e = np.exp(-abs(x))
    if x >= 0:
        return 1.0 / (1.0 + e), x + np.log1p(e)
    return e / (1.0 + e), np.log1p(e)


@njit(inline="always")
def _sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + np.exp(-x))
    e = np.exp(x)
    return e / (1.0 + e)


@njit(inline="always")
def _logit(Z, alpha, rho, i, j):
    """Theta_ij = alpha_i + alpha_j + rho + z_i'z_j, summed in that order by every kernel."""
    theta = alpha[i] + alpha[j] + rho
    for k in range(Z.shape[1]):
        theta += Z[i, k] * Z[j, k]
    return theta


@njit(inline="always")
def _clear_row(i, grad_z, hess):
    for k in range(grad_z.shape[1]):
        grad_z[i, k] = 0.0
    for a in range(hess.shape[1]):
        for b in range(hess.shape[2]):
            hess[i, a, b] = 0.0


@njit(inline="always")
def _mirror_row(i, hess):
    # _add_pair fills row 0 and the lower triangle of the z block; the rest is their mirror
    for k in range(1, hess.shape[1]):
        hess[i, k, 0] = hess[i, 0, k]
        for m in range(1, k):
            hess[i, m, k] = hess[i, k, m]


@njit(inline="always")
def _add_pair(i, j, a, weight, Z, alpha, rho, grad_z, hess, totals):
    """Add one weighted pair (i, j) with A_ij = a to row i's sums; totals = (g_alpha, llf, info)."""
    theta = _logit(Z, alpha, rho, i, j)
    p, softplus = _sigmoid_and_log1p_exp(theta)
    resid = weight * (a - p)
    w = weight * p * (1.0 - p)
    totals[0] += resid
    totals[1] += weight * (a * theta - softplus)
    totals[2] += w
    hess[i, 0, 0] += w
    for k in range(Z.shape[1]):
        grad_z[i, k] += resid * Z[j, k]
        hess[i, 0, k + 1] += w * Z[j, k]
        for m in range(k + 1):
            hess[i, k + 1, m + 1] += w * Z[j, k] * Z[j, m]


@njit(parallel=True)
def pair_sums(Z, alpha, rho, indptr, indices, grad_z, grad_alpha, row_llf, row_info, hess):
    """One pass over all ordered pairs (i, j), i != j, of the logistic latent space model.

    Theta_ij = alpha_i + alpha_j + z_i'z_j + rho and R_ij = A_ij - sigmoid(Theta_ij). Fills, per
    row i: ``grad_z[i] = sum_j R_ij z_j``, ``grad_alpha[i] = sum_j R_ij``, ``row_llf[i] =
    sum_j [A_ij Theta_ij - log(1 + e^Theta_ij)]``, ``row_info[i] = sum_j P_ij (1 - P_ij)`` and
    ``hess[i] = sum_j P_ij (1 - P_ij) f_j f_j'`` with ``f_j = (1, z_j)``: minus the exact
    diagonal block of the Hessian in node i's parameters (alpha_i, z_i).
    The adjacency comes as CSR with sorted column indices. Each row is written by one thread
    only, so the parallel loop needs no atomics; memory is O(n r).
    """
    n = Z.shape[0]
    for i in prange(n):
        ptr = indptr[i]
        end = indptr[i + 1]
        totals = np.zeros(3)
        _clear_row(i, grad_z, hess)
        for j in range(n):
            if j == i:
                continue
            while ptr < end and indices[ptr] < j:
                ptr += 1
            a = 1.0 if (ptr < end and indices[ptr] == j) else 0.0
            _add_pair(i, j, a, 1.0, Z, alpha, rho, grad_z, hess, totals)
        _mirror_row(i, hess)
        grad_alpha[i] = totals[0]
        row_llf[i] = totals[1]
        row_info[i] = totals[2]


@njit(parallel=True)
def mean_probability(Z, alpha, rho):
    """Mean of P_ij over the pairs i < j (the fitted density)."""
    n = Z.shape[0]
    rows = np.zeros(n)
    for i in prange(n):
        acc = 0.0
        for j in range(i + 1, n):
            acc += _sigmoid(_logit(Z, alpha, rho, i, j))
        rows[i] = acc
    return rows.sum() / (n * (n - 1) / 2.0)


@njit
def probabilities_of_pairs(Z, alpha, rho, rows, cols):
    """P_ij for given index pairs."""
    out = np.empty(rows.shape[0])
    for t in range(rows.shape[0]):
        out[t] = _sigmoid(_logit(Z, alpha, rho, rows[t], cols[t]))
    return out


@njit
def sample_dense_rows(Z, alpha, rho, first_row, uniforms, out_rows, out_cols):
    """Bernoulli draws for the pairs (i, j), i < j, of rows first_row, first_row + 1, ...

    ``uniforms`` holds one draw per pair, row by row; returns the number of edges written.
    """
    n = Z.shape[0]
    count = 0
    t = 0
    i = first_row
    while t < uniforms.shape[0]:
        for j in range(i + 1, n):
            if uniforms[t] < _sigmoid(_logit(Z, alpha, rho, i, j)):
                out_rows[count] = i
                out_cols[count] = j
                count += 1
            t += 1
        i += 1
    return count


@njit
def sample_envelope(Z, alpha, rho, order, weights, uniforms, out_rows, out_cols):
    """Exact O(n + proposals) sampling by thinning a rank-one (Chung-Lu) envelope.

    sigma(theta) <= e^theta and z_i'z_j <= (|z_i|^2 + |z_j|^2) / 2 give
    P_ij <= q_ij = min(1, w_i w_j) with w_i = exp(alpha_i + rho / 2 + |z_i|^2 / 2). Candidate
    pairs of the independent-edge model q are drawn with Miller-Hagberg geometric skipping over
    nodes sorted by decreasing weight (``order``, ``weights`` sorted alike), then each is kept
    with probability P_ij / q_ij.

    Returns (number of edges, uniforms used); the number used is -1 when ``uniforms`` or the
    output buffers ran out, and the caller retries with larger ones.
    """
    n = Z.shape[0]
    used = 0
    count = 0
    n_uniform = uniforms.shape[0]
    capacity = out_rows.shape[0]
    for u in range(n - 1):
        v = u + 1
        wu = weights[u]
        q = min(1.0, wu * weights[v])
        while v < n and q > 0.0:
            if q < 1.0:
                if used >= n_uniform:
                    return count, -1
                # geometric skip: pairs (u, v), (u, v+1), ... each at least as likely as later
                # 1 - u lies in (0, 1]; the skip is capped at n before the int conversion
                skip = np.floor(np.log(1.0 - uniforms[used]) / np.log1p(-q))
                used += 1
                v += int(min(skip, float(n)))
            if v >= n:
                break
            q_v = min(1.0, wu * weights[v])
            if used >= n_uniform:
                return count, -1
            if uniforms[used] < q_v / q:
                used += 1
                i, j = order[u], order[v]
                if used >= n_uniform:
                    return count, -1
                if uniforms[used] * q_v < _sigmoid(_logit(Z, alpha, rho, i, j)):
                    if count >= capacity:
                        return count, -1
                    out_rows[count] = min(i, j)
                    out_cols[count] = max(i, j)
                    count += 1
                used += 1
            else:
                used += 1
            q = q_v
            v += 1
    return count, used


@njit(parallel=True)
def sampled_pair_sums(
    Z,
    alpha,
    rho,
    indptr,
    indices,
    cand_ptr,
    cand_idx,
    in_ptr,
    in_idx,
    weights,
    grad_z,
    grad_alpha,
    row_llf,
    row_info,
    hess,
):
    """The sums of ``pair_sums`` for the case-control log-likelihood of a non-edge sample.

    Node i drew the non-neighbours ``cand_idx[cand_ptr[i]:cand_ptr[i + 1]]`` uniformly with
    replacement; a drawn pair (i, j) carries weight ``weights[i] / 2`` = (non-neighbours of
    i) / (2 x draws) and enters the sums of both endpoints (``in_idx[in_ptr[j]:in_ptr[j + 1]]``
    lists the nodes that drew j). The objective ``sum_edges l_ij + sum_i sum_(j drawn by i)
    weights[i] / 2 l_ij`` is then an unbiased estimate of the full log-likelihood, and the row
    sums here are its exact gradient and diagonal Hessian blocks, so a line search on it is
    consistent. Work O((edges + draws) r) per call.
    """
    n = Z.shape[0]
    for i in prange(n):
        totals = np.zeros(3)
        _clear_row(i, grad_z, hess)
        for t in range(indptr[i], indptr[i + 1]):
            _add_pair(i, indices[t], 1.0, 1.0, Z, alpha, rho, grad_z, hess, totals)
        half = 0.5 * weights[i]
        for t in range(cand_ptr[i], cand_ptr[i + 1]):
            _add_pair(i, cand_idx[t], 0.0, half, Z, alpha, rho, grad_z, hess, totals)
        for t in range(in_ptr[i], in_ptr[i + 1]):
            j = in_idx[t]
            _add_pair(i, j, 0.0, 0.5 * weights[j], Z, alpha, rho, grad_z, hess, totals)
        _mirror_row(i, hess)
        grad_alpha[i] = totals[0]
        row_llf[i] = totals[1]
        row_info[i] = totals[2]


@njit(parallel=True)
def draw_nonneighbours(indptr, indices, k, uniforms, out):
    """``k`` uniform draws with replacement from each node's non-neighbours, without rejection.

    Row i's draw m in [0, N_i), N_i = n - 1 - degree, is mapped to the m-th node that is
    neither i nor a neighbour: with the sorted neighbours re-indexed to skip i, the number t of
    excluded nodes below the answer is the first t with ``neighbour_t - t > m`` (a binary
    search), and the answer is m + t. Work O(n k log degree).
    """
    n = indptr.shape[0] - 1
    for i in prange(n):
        start = indptr[i]
        degree = indptr[i + 1] - start
        free = n - 1 - degree
        if free == 0:
            # a node adjacent to all others has no non-edges; the caller gives it weight 0
            for s in range(k):
                out[i * k + s] = (i + 1) % n
            continue
        for s in range(k):
            m = int(uniforms[i * k + s] * free)
            if m >= free:
                m = free - 1
            low, high = 0, degree
            while low < high:
                mid = (low + high) // 2
                j = indices[start + mid]
                shifted = j - 1 if j > i else j
                if shifted - mid > m:
                    high = mid
                else:
                    low = mid + 1
            x = m + low
            out[i * k + s] = x + 1 if x >= i else x
    return out


@njit
def incoming(cand_idx, k, n):
    """CSR of who drew whom: ``in_idx[in_ptr[j]:in_ptr[j + 1]]`` are the rows that drew j."""
    in_ptr = np.zeros(n + 1, dtype=np.int64)
    for t in range(cand_idx.shape[0]):
        in_ptr[cand_idx[t] + 1] += 1
    for j in range(n):
        in_ptr[j + 1] += in_ptr[j]
    fill = in_ptr[:-1].copy()
    in_idx = np.empty(cand_idx.shape[0], dtype=cand_idx.dtype)
    for t in range(cand_idx.shape[0]):
        j = cand_idx[t]
        in_idx[fill[j]] = t // k
        fill[j] += 1
    return in_ptr, in_idx


@njit(inline="always")
def _add_moments(first, second, i, p, weight):
    first[i] += weight * p
    second[i] += weight * p * (1.0 - p)


@njit(parallel=True)
def pair_moments(Z, alpha, rho):
    """``(sum P_ij, sum P_ij (1 - P_ij))`` over the pairs i < j, in one pass."""
    n = Z.shape[0]
    first = np.zeros(n)
    second = np.zeros(n)
    for i in prange(n):
        for j in range(i + 1, n):
            _add_moments(first, second, i, _sigmoid(_logit(Z, alpha, rho, i, j)), 1.0)
    return first.sum(), second.sum()


@njit(parallel=True)
def sampled_moments(Z, alpha, rho, indptr, indices, cand_ptr, cand_idx, weights):
    """The case-control estimates of ``pair_moments``: edges once each, draws weighted."""
    n = Z.shape[0]
    first = np.zeros(n)
    second = np.zeros(n)
    for i in prange(n):
        for t in range(indptr[i], indptr[i + 1]):
            j = indices[t]
            if j > i:
                _add_moments(first, second, i, _sigmoid(_logit(Z, alpha, rho, i, j)), 1.0)
        half = 0.5 * weights[i]
        for t in range(cand_ptr[i], cand_ptr[i + 1]):
            p = _sigmoid(_logit(Z, alpha, rho, i, cand_idx[t]))
            _add_moments(first, second, i, p, half)
    return first.sum(), second.sum()
