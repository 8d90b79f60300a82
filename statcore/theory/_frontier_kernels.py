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
def _dominated_by_any(R, candidates, n_candidates, i, eps):
    """Whether a row among ``candidates[:n_candidates]`` eps-dominates row ``i``."""
    for s in range(n_candidates):
        if _dominates(R, candidates[s], i, eps):
            return True
    return False


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
        if not _dominated_by_any(R, window, size, i, eps):
            keep[i] = True
            window[size] = i
            size += 1
    return keep


@njit
def pivot_filter(R, eps, n_pivots, shrink):
    """Rows of ``R`` that survive rounds of pivot filtering, a linear-time prefilter.

    Each round takes the ``n_pivots`` surviving rows of smallest sum as pivots and drops every
    surviving row one of them eps-dominates; rounds go on while one shrinks the survivors to at
    most ``shrink`` times their number. Only dominated rows go, and eps-dominance is transitive,
    so a survivor that some dropped row dominates is dominated by that row's pivot too and goes
    as well: the frontier of the survivors is the frontier of ``R``. Low-sum rows dominate much
    of a cloud that does not trade off (a cube: a few survivors in a thousand remain), which is
    where a sort of every row would cost more than the frontier itself.

    Returns
    -------
    ndarray of int64
        Positions of the surviving rows, ascending.
    """
    M, K = R.shape
    rows = np.arange(M)
    n = M
    pivots = np.empty(n_pivots, dtype=np.int64)
    pivot_sums = np.empty(n_pivots)
    while n > 2 * n_pivots:
        # the n_pivots smallest sums, kept sorted by insertion: most rows fail the first test
        filled = 0
        for t in range(n):
            i = rows[t]
            s = 0.0
            for k in range(K):
                s += R[i, k]
            if filled == n_pivots and s >= pivot_sums[filled - 1]:
                continue
            pos = filled if filled < n_pivots else n_pivots - 1
            while pos > 0 and pivot_sums[pos - 1] > s:
                pivot_sums[pos] = pivot_sums[pos - 1]
                pivots[pos] = pivots[pos - 1]
                pos -= 1
            pivot_sums[pos] = s
            pivots[pos] = i
            if filled < n_pivots:
                filled += 1
        kept = 0
        for t in range(n):
            i = rows[t]
            if not _dominated_by_any(R, pivots, filled, i, eps):
                rows[kept] = i
                kept += 1
        done = kept > shrink * n
        n = kept
        if done:
            break
    return rows[:n].copy()


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
def dense_ranks(values, order):
    """Rank of each value among the distinct values (0 for the smallest), given the order that
    sorts them; and the number of distinct values."""
    ranks = np.empty(values.shape[0], dtype=np.int64)
    rank = -1
    for t in range(order.shape[0]):
        i = order[t]
        if t == 0 or values[i] != values[order[t - 1]]:
            rank += 1
        ranks[i] = rank
    return ranks, rank + 1


@njit
def skyline_3d(R, order, rank2, n_ranks):
    """Three benchmarks, ``eps = 0``: one sweep in lexicographic order, O(M log M).

    Every row that dominates another comes before it in lexicographic order, and exact copies
    are adjacent. A Fenwick tree over the ranks of the second benchmark holds the smallest third
    risk of the frontier rows swept so far, so a run of copies is dominated exactly when some
    earlier frontier row has a second risk and a third risk no larger (its first is no larger
    by the order, and it is no copy). Dominated rows need not enter the tree: their dominators
    are frontier rows, earlier, that dominate whatever they dominate.
    """
    M = order.shape[0]
    keep = np.zeros(R.shape[0], dtype=np.bool_)
    tree = np.full(n_ranks + 1, np.inf)
    t = 0
    while t < M:
        i = order[t]
        end = t + 1
        while end < M:
            j = order[end]
            if R[j, 0] != R[i, 0] or R[j, 1] != R[i, 1] or R[j, 2] != R[i, 2]:
                break
            end += 1
        z = R[i, 2]
        best = np.inf
        r = rank2[i] + 1
        while r > 0:
            best = min(best, tree[r])
            r -= r & -r
        if best > z:
            for s in range(t, end):
                keep[order[s]] = True
            r = rank2[i] + 1
            while r <= n_ranks:
                if z < tree[r]:
                    tree[r] = z
                r += r & -r
        t = end
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
