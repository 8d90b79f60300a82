"""Numba kernels of the frontier tools: skylines and the dominance pairs.

``j`` eps-dominates ``i`` when ``R[j, k] <= R[i, k] - eps[k]`` on every benchmark ``k`` and the two
rows differ (with ``eps = 0`` this is Pareto dominance; equal rows never dominate each other).
"""

from __future__ import annotations

import numpy as np

from statcore._numba import njit


@njit
def _dominates(R, j, i, eps):
    differ = False
    for k in range(R.shape[1]):
        if R[j, k] > R[i, k] - eps[k]:
            return False
        if R[j, k] != R[i, k]:
            differ = True
    return differ


@njit
def skyline_sorted(R, order, eps):
    """Sort-filter skyline: flags of the non-dominated rows of ``R``.

    ``order`` sorts the rows by their sum, ties broken lexicographically, so a dominating row
    always comes before the rows it dominates (its sum is not larger, and on equal sums it is
    lexicographically smaller). Each row is then compared with the frontier found so far only:
    eps-dominance is transitive, so a row dominated by a dominated row is dominated by a
    frontier row. ``O(M |P| K)`` after the sort.
    """
    M = R.shape[0]
    keep = np.zeros(M, dtype=np.bool_)
    window = np.empty(M, dtype=np.int64)
    size = 0
    for t in range(M):
        i = order[t]
        dominated = False
        for s in range(size):
            if _dominates(R, window[s], i, eps):
                dominated = True
                break
        if not dominated:
            keep[i] = True
            window[size] = i
            size += 1
    return keep


@njit
def skyline_2d(r1, r2, order):
    """Two benchmarks, ``eps = 0``: one sweep in lexicographic (r1, r2) order, O(M).

    A row survives when its r2 is below every earlier r2, or equals the smallest one and the
    row that first reached it has the same r1 (an exact copy of a frontier row).
    """
    M = r1.shape[0]
    keep = np.zeros(M, dtype=np.bool_)
    best2 = np.inf
    best1 = np.inf
    for t in range(M):
        i = order[t]
        if r2[i] < best2:
            keep[i] = True
            best2 = r2[i]
            best1 = r1[i]
        elif r2[i] == best2 and r1[i] == best1:
            keep[i] = True
    return keep


@njit
def count_dominance_pairs(R, eps):
    """Number of ordered pairs ``(j, i)`` with ``j`` eps-dominating ``i``."""
    M = R.shape[0]
    count = 0
    for j in range(M):
        for i in range(M):
            if i != j and _dominates(R, j, i, eps):
                count += 1
    return count


@njit
def dominance_pairs(R, eps, ranks):
    """The ``(dominating, dominated)`` pairs whose ranks in row order are in ``ranks`` (sorted
    ascending), so that the caller draws a uniform sample of pairs with its own Generator."""
    M = R.shape[0]
    out = np.empty((ranks.shape[0], 2), dtype=np.int64)
    count = 0
    t = 0
    for j in range(M):
        for i in range(M):
            if t < ranks.shape[0] and i != j and _dominates(R, j, i, eps):
                if count == ranks[t]:
                    out[t, 0] = j
                    out[t, 1] = i
                    t += 1
                count += 1
    return out
