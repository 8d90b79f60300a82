"""Numba kernels of the fair-range tree dynamic program (:mod:`statcore.cluster.fairrange`).

A table of a subtree is a 2-D array ``T[i, j]``: the least tree cost of the subtree when the
facilities it opens have the type-count vector number ``i`` and ``phi = lo + j`` units of
clients cross the subtree's top edge upwards (negative: clients come in from outside). Tables
of siblings combine by a min-plus convolution over both axes; count vectors add through the
precomputed ``add`` table (``-1``: the sum is not a valid vector).
"""

from __future__ import annotations

import numpy as np

from statcore._numba import njit


@njit
def merge_tables(A, lo_a, B, lo_b, lo_r, hi_r, add):
    """Min-plus convolution of two subtree tables; returns the table and, per entry, the
    winning entry of ``A`` packed as ``i_a * A.shape[1] + j_a`` (-1: unreachable)."""
    n_vec = A.shape[0]
    g_a, g_b = A.shape[1], B.shape[1]
    g_r = hi_r - lo_r + 1
    R = np.full((n_vec, g_r), np.inf)
    choice = np.full((n_vec, g_r), -1, dtype=np.int64)
    for ia in range(n_vec):
        for ja in range(g_a):
            va = A[ia, ja]
            if va == np.inf:
                continue
            phi_a = lo_a + ja
            for ib in range(n_vec):
                ir = add[ia, ib]
                if ir < 0:
                    continue
                for jb in range(g_b):
                    vb = B[ib, jb]
                    if vb == np.inf:
                        continue
                    jr = phi_a + lo_b + jb - lo_r
                    if jr < 0 or jr >= g_r:
                        continue
                    value = va + vb
                    if value < R[ir, jr]:
                        R[ir, jr] = value
                        choice[ir, jr] = ia * g_a + ja
    return R, choice


@njit
def add_facility(A, lo_a, unit_row, capacity, weight, lo_r, hi_r):
    """Merge a facility leaf (closed, or open with its type and serving 0..capacity units,
    each over an edge of length ``weight``) into table ``A``; ``unit_row[i]`` is the vector
    ``i`` plus one facility of that type.

    Returns the table and, per entry, the units the facility serves (-1: closed,
    -2: unreachable)."""
    n_vec, g_a = A.shape
    g_r = hi_r - lo_r + 1
    R = np.full((n_vec, g_r), np.inf)
    served = np.full((n_vec, g_r), -2, dtype=np.int64)
    for ia in range(n_vec):
        for ja in range(g_a):
            va = A[ia, ja]
            if va == np.inf:
                continue
            jr = lo_a + ja - lo_r
            if 0 <= jr < g_r and va < R[ia, jr]:
                R[ia, jr] = va
                served[ia, jr] = -1
            ir = unit_row[ia]
            if ir < 0:
                continue
            for s in range(capacity + 1):
                jr = lo_a + ja - s - lo_r
                if jr < 0:
                    break
                value = va + weight * s
                if jr < g_r and value < R[ir, jr]:
                    R[ir, jr] = value
                    served[ir, jr] = s
    return R, served


@njit
def add_edge_cost(T, lo, weight):
    """The table after its top edge: every unit crossing it costs ``weight``."""
    out = np.empty_like(T)
    for i in range(T.shape[0]):
        for j in range(T.shape[1]):
            out[i, j] = T[i, j] + weight * abs(lo + j)
    return out
