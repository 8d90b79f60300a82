"""numba kernels of the MMDD and geodesic dCov statistics (O(n) memory, or O(n x block)).

Notation: ``a_kl = |X_k - X_l|``, ``b_kl = -<V_k, V_l>``; a centred entry is
``c(a)_kl = a_kl - c1 (a_k. + a_.l) + c2 a_..`` with ``c1 = 1/(n-2), c2 = 1/((n-1)(n-2))`` and
the diagonal left out (U-centring) or ``c1 = 1/n, c2 = 1/n^2`` with the diagonal kept (double
centring). Row sums come in precomputed (those of ``b`` are closed form), so each entry is formed
on the fly and no n x n matrix is ever held. The general kernels take ``X`` and ``V``
transposed, ``XT`` (p, n) and ``VT`` (m, n), so that their inner loops run over contiguous
memory and vectorise.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from statcore._numba import njit

#: Longest stretch of one row the general kernels form at a time (their scratch arrays).
_CHUNK = 1024

#: Fixed number of partial results of the triangle sums (enough to keep 16 threads busy).
_SUM_CHUNKS = 16


@njit(nogil=True)
def _coordinate_row(AT, k, c0, cols, squared):
    """``|A_k - A_l|^2`` (``squared``) or ``<A_k, A_l>`` at ``l = c0 .. c0 + cols - 1``, from
    ``AT`` (d, n), a new array (which, with the 1-d slices, lets the loops vectorise; the
    branch is the same for every coordinate, so it stays outside them)."""
    out = np.zeros(cols)
    for j in range(AT.shape[0]):
        akj = AT[j, k]
        row = AT[j, c0 : c0 + cols]
        if squared:
            for l in range(cols):
                t = row[l] - akj
                out[l] += t * t
        else:
            for l in range(cols):
                out[l] += row[l] * akj
    return out


@njit(nogil=True)
def _product_row(XT, VT, a_row, a_tot, b_row, b_tot, c1, c2, keep_diag, k, c0, out):
    """``out[l] = c(a)_kl c(b)_kl`` at ``l = c0 .. c0 + len(out) - 1``."""
    cols = out.shape[0]
    sq = _coordinate_row(XT, k, c0, cols, True)
    inner = _coordinate_row(VT, k, c0, cols, False)
    ca_k = c2 * a_tot - c1 * a_row[k]
    cb_k = c2 * b_tot - c1 * b_row[k]
    ar = a_row[c0 : c0 + cols]
    br = b_row[c0 : c0 + cols]
    for l in range(cols):
        out[l] = (np.sqrt(sq[l]) - c1 * ar[l] + ca_k) * (cb_k - inner[l] - c1 * br[l])
    if not keep_diag and c0 <= k < c0 + cols:
        out[k - c0] = 0.0


@njit(parallel=True, nogil=True)
def dist_matmul(XT, ZT):
    """``A Z`` with ``A_kl = |X_k - X_l|``, from ``XT`` (p, n) and ``ZT = Z'`` (r, n): one pass
    over the upper triangle of the distances for all ``r`` columns (a column of ones gives the
    row sums).

    Each distance ``a_kl``, ``l > k``, adds ``a_kl z_l`` to row ``k`` and ``a_kl z_k`` to row
    ``l``; the rows are dealt round-robin to a fixed number of chunks, each with its own partial
    result, added in chunk order: balanced work, and sums that do not depend on the number of
    threads.
    """
    n = XT.shape[1]
    r = ZT.shape[0]
    chunks = min(n, _SUM_CHUNKS)
    partial = np.zeros((chunks, r, n))
    for ch in prange(chunks):
        # elementwise accumulation vectorises; one reduction per row and column at the end
        acc = np.zeros((r, _CHUNK))
        part = partial[ch]
        for k in range(ch, n - 1, chunks):
            width = min(_CHUNK, n - k - 1)
            for j in range(r):
                acc[j, :width] = 0.0
            for c0 in range(k + 1, n, _CHUNK):
                cols = min(_CHUNK, n - c0)
                d = _coordinate_row(XT, k, c0, cols, True)
                for l in range(cols):
                    d[l] = np.sqrt(d[l])
                for j in range(r):
                    z = ZT[j, c0 : c0 + cols]
                    a = acc[j]
                    back = part[j, c0 : c0 + cols]
                    zk = ZT[j, k]
                    for l in range(cols):
                        a[l] += d[l] * z[l]
                        back[l] += d[l] * zk
            for j in range(r):
                part[j, k] += acc[j, :width].sum()
    out = np.zeros((n, r))
    for ch in range(chunks):
        out += partial[ch].T
    return out


@njit(parallel=True, nogil=True)
def centred_product_block(XT, VT, a_row, a_tot, b_row, b_tot, c1, c2, keep_diag, r0, c0, out):
    """The tile ``K[r0 : r0 + rows, c0 : c0 + cols]`` of ``K_kl = c(a)_kl c(b)_kl``, into
    ``out`` (rows, cols)."""
    rows, cols = out.shape
    for i in prange(rows):
        for s0 in range(0, cols, _CHUNK):
            _product_row(
                XT,
                VT,
                a_row,
                a_tot,
                b_row,
                b_tot,
                c1,
                c2,
                keep_diag,
                r0 + i,
                c0 + s0,
                out[i, s0 : min(cols, s0 + _CHUNK)],
            )
    return out


@njit(parallel=True, nogil=True)
def centred_product_panel(XT, VT, a_row, a_tot, b_row, b_tot, c1, c2, keep_diag, r0, out):
    """The rows ``r0 .. r0 + rows - 1`` of the upper triangle of ``K_kl = c(a)_kl c(b)_kl``,
    columns ``r0 .. n - 1``, into ``out`` (rows, n - r0; float32): zero left of the
    diagonal, half the diagonal on it, so ``e' K e = 2 sum_panels e_rows' (out e_cols)``.
    Entries are formed in double precision and rounded once."""
    rows = out.shape[0]
    n = XT.shape[1]
    for i in prange(rows):
        k = r0 + i
        row = np.empty(_CHUNK)
        for j in range(i):
            out[i, j] = 0.0
        for s0 in range(k, n, _CHUNK):
            cols = min(_CHUNK, n - s0)
            _product_row(XT, VT, a_row, a_tot, b_row, b_tot, c1, c2, keep_diag, k, s0, row[:cols])
            if s0 == k:
                row[0] *= 0.5
            for l in range(cols):
                out[i, s0 - r0 + l] = row[l]
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


@njit(nogil=True)
def _sorted_block(x, order, V, r, s, d, c1, c2, a_tot, b_tot, E, b0, w, out):
    """Columns ``b0 .. b0 + w - 1`` of :func:`sorted_quadratic_forms`, into ``out``."""
    m = V.shape[1]
    # rows 0 .. m: z = e, e o v_1, ..., e o v_m; row m + 1: z = e o s
    lo = np.zeros((m + 2, w))
    lo_x = np.zeros((m + 2, w))
    lo_r = np.zeros((m + 2, w))
    form = np.zeros((m + 2, w))
    diag = np.zeros(w)
    for k in range(x.shape[0]):
        ek = E[order[k], b0 : b0 + w]
        xk = x[k]
        rk = r[k]
        sk = s[k]
        dk = d[k]
        for c in range(w):
            e = ek[c]
            ws = e * sk
            below_e = xk * lo[0, c] - lo_x[0, c]
            form[0, c] += e * below_e
            form[m + 1, c] += ws * below_e + e * (xk * lo[m + 1, c] - lo_x[m + 1, c])
            diag[c] += dk * e * e
            lo[0, c] += e
            lo_x[0, c] += xk * e
            lo_r[0, c] += rk * e
            lo[m + 1, c] += ws
            lo_x[m + 1, c] += xk * ws
            lo_r[m + 1, c] += rk * ws
        for j in range(m):
            vkj = V[k, j]
            for c in range(w):
                y = ek[c] * vkj
                form[j + 1, c] += y * (xk * lo[j + 1, c] - lo_x[j + 1, c])
                lo[j + 1, c] += y
                lo_x[j + 1, c] += xk * y
                lo_r[j + 1, c] += rk * y
    for c in range(w):
        e_sum = lo[0, c]
        e_r = lo_r[0, c]
        # A^ forms: z' A z is twice its one-sided pass
        e_e = 2.0 * form[0, c] - 2.0 * c1 * e_r * e_sum + c2 * a_tot * e_sum * e_sum
        w_e = (
            form[m + 1, c]
            - c1 * (lo_r[m + 1, c] * e_sum + lo[m + 1, c] * e_r)
            + c2 * a_tot * lo[m + 1, c] * e_sum
        )
        total = c2 * b_tot * e_e - 2.0 * c1 * w_e - diag[c]
        for j in range(1, m + 1):
            total -= (
                2.0 * form[j, c]
                - 2.0 * c1 * lo_r[j, c] * lo[j, c]
                + c2 * a_tot * lo[j, c] * lo[j, c]
            )
        out[b0 + c] = total


@njit(parallel=True, nogil=True)
def sorted_quadratic_forms(x, order, V, r, s, d, c1, c2, a_tot, b_tot, E, width):
    """``e' (c(a) o c(b)) e`` for every column ``e`` of ``E`` (n, q), scalar ``x``: O(n m) each.

    The points come sorted by ``x``: ``x``, ``V`` (n, m), the row sums ``r = a_k.`` and
    ``s = b_k.`` and the diagonal ``d_k = c(a)_kk c(b)_kk`` (of the centring formula before the
    diagonal is zeroed; pass zeros to keep it) are in sorted order, ``order`` maps sorted
    positions to rows of ``E``. With ``A^ z = A z - c1 (r 1'z + 1 r'z) + c2 a_.. 1 1'z`` and
    ``c(b) = -V V' - c1 (s 1' + 1 s') + c2 b_.. 1 1'`` off the diagonal,
    ``e' K e = -sum_j y_j' A^ y_j - 2 c1 w' A^ e + c2 b_.. e' A^ e - sum_k d_k e_k^2`` with
    ``y_j = e o v_j`` and ``w = e o s``; every ``z' A z`` is one forward pass of running sums,
    ``sum_{l<k} (z_k w_l + w_k z_l)(x_k - x_l)`` (ties add 0). Columns go in blocks of
    ``width`` (one thread each), the inner loops running over a block's columns.
    """
    q = E.shape[1]
    out = np.empty(q)
    for blk in prange((q + width - 1) // width):
        b0 = blk * width
        _sorted_block(x, order, V, r, s, d, c1, c2, a_tot, b_tot, E, b0, min(width, q - b0), out)
    return out


@njit(nogil=True)
def signs_from_bits(raw, out):
    """``+-1`` from bit 31, then bit 63, of each word of ``raw`` (uint64), into the flat
    ``out`` (float64 or float32; memory-bound: one thread does it)."""
    size = out.shape[0]
    for i in range(raw.shape[0]):
        word = raw[i]
        out[2 * i] = 2.0 * ((word >> 31) & 1) - 1.0
        if 2 * i + 1 < size:
            out[2 * i + 1] = 2.0 * (word >> 63) - 1.0
    return out
