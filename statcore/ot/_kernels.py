"""Numba kernels of the log-domain Sinkhorn solver: soft-min reductions and plan statistics.

Every kernel takes float64 C-contiguous arrays. The point kernels recompute the ground cost of a
pair from the coordinates each time it is needed, so no n x m array is ever stored. The soft-min
reductions, the hot loop, also come in a ``parallel=True`` variant that spreads rows over
threads; each row's reduction runs in a fixed order inside one thread, so the results do not
depend on the number of threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from statcore._numba import njit

#: ground costs computed inside the kernels; the code is the kernels' ``code`` argument
METRIC_CODES = {"euclidean": 0, "sqeuclidean": 1, "cityblock": 2, "chebyshev": 3, "hamming": 4}


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
def _softmin_points_row(x, i, y, h, eps, code):
    # two passes over a row buffer, the maximum and then the sum, keep the exp loop tight
    m = y.shape[0]
    values = np.empty(m)
    top = -np.inf
    for j in range(m):
        value = (h[j] - pair_cost(x, i, y, j, code)) / eps
        values[j] = value
        if value > top:
            top = value
    return _finish_row(values, top, eps)


@njit
def _softmin_dense_row(cost, i, h, eps):
    m = cost.shape[1]
    values = np.empty(m)
    top = -np.inf
    for j in range(m):
        value = (h[j] - cost[i, j]) / eps
        values[j] = value
        if value > top:
            top = value
    return _finish_row(values, top, eps)


@njit
def _finish_row(values, top, eps):
    """``-eps (top + log sum exp(values - top))``; a row without any weight is +inf."""
    if top == -np.inf:
        return np.inf
    total = 0.0
    for j in range(values.shape[0]):
        total += math.exp(values[j] - top)
    return -eps * (top + math.log(total))


@njit
def softmin_points(x, y, h, eps, code, out):
    """``out_i = -eps log sum_j exp((h_j - c(x_i, y_j)) / eps)``, costs made on the fly.

    ``h_j = g_j + eps log b_j`` carries the weights; a zero weight (``h_j = -inf``) drops a
    point.
    """
    for i in range(x.shape[0]):
        out[i] = _softmin_points_row(x, i, y, h, eps, code)


@njit(parallel=True)
def softmin_points_parallel(x, y, h, eps, code, out):
    """:func:`softmin_points` with the rows spread over threads."""
    for i in prange(x.shape[0]):
        out[i] = _softmin_points_row(x, i, y, h, eps, code)


@njit
def softmin_dense(cost, h, eps, out):
    """``out_i = -eps log sum_j exp((h_j - cost_ij) / eps)`` on a stored cost matrix."""
    for i in range(cost.shape[0]):
        out[i] = _softmin_dense_row(cost, i, h, eps)


@njit(parallel=True)
def softmin_dense_parallel(cost, h, eps, out):
    """:func:`softmin_dense` with the rows spread over threads."""
    for i in prange(cost.shape[0]):
        out[i] = _softmin_dense_row(cost, i, h, eps)


@njit
def plan_rows_dense(cost, aux, use_aux, fa, gb, eps, mass, weighted_cost, weighted_aux):
    """Per-row sums of the plan ``P_ij = exp((fa_i + gb_j - cost_ij) / eps)``.

    Writes the row masses ``sum_j P_ij``, ``sum_j P_ij cost_ij`` and, when ``use_aux``,
    ``sum_j P_ij aux_ij`` (a second cost on the same pairs, e.g. label distances).
    """
    n, m = cost.shape
    for i in range(n):
        row_mass = 0.0
        row_cost = 0.0
        row_aux = 0.0
        for j in range(m):
            p = math.exp((fa[i] + gb[j] - cost[i, j]) / eps)
            row_mass += p
            row_cost += p * cost[i, j]
            if use_aux:
                row_aux += p * aux[i, j]
        mass[i] = row_mass
        weighted_cost[i] = row_cost
        weighted_aux[i] = row_aux


@njit
def col_mass_dense(cost, fa, gb, eps, out):
    """Column masses ``sum_i P_ij`` of the plan on a block of rows (added into ``out``)."""
    n, m = cost.shape
    for j in range(m):
        acc = 0.0
        for i in range(n):
            acc += math.exp((fa[i] + gb[j] - cost[i, j]) / eps)
        out[j] += acc
