"""Numba kernels of the KSG mutual-information estimator: the per-point terms from max-norm
neighbour counts.

The search is brute force, O(n^2 (d_x + d_y)) per call with O(k) memory per point: at the sample
sizes KSG is used at (n up to a few 10^4) this beats building trees, and it keeps ties exact,
which the discrete-data rule below needs.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from statcore._numba import njit


@njit
def _digamma(x):
    """psi(x) for x >= 1 (recurrence up to 6, then the asymptotic series)."""
    x = float(x)
    result = 0.0
    while x < 6.0:
        result -= 1.0 / x
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    return (
        result
        + math.log(x)
        - 0.5 * inv
        - inv2 * (1.0 / 12.0 - inv2 * (1.0 / 120.0 - inv2 * (1.0 / 252.0 - inv2 / 240.0)))
    )


@njit
def _max_abs_diff(a, i, j):
    out = 0.0
    for c in range(a.shape[1]):
        v = abs(a[i, c] - a[j, c])
        if v > out:
            out = v
    return out


@njit(parallel=True)
def ksg_terms(x, y, k):
    """Per-point KSG (algorithm 1) terms ``psi(k_i) - psi(n_x,i + 1) - psi(n_y,i + 1)``.

    ``eps_i`` is the max-norm distance from point ``i`` to its ``k``-th nearest neighbour in the
    joint space; ``n_x,i`` (``n_y,i``) counts the other points strictly closer than ``eps_i`` in
    the ``x`` (``y``) space, and ``k_i = k``. Where ``eps_i = 0`` (at least ``k`` exact copies of
    point ``i``: discrete data) the strict counts are empty and the rule of Gao, Kannan, Oh and
    Viswanath (2017) applies instead: ``k_i`` is the number of copies and ``n_x,i`` (``n_y,i``)
    the number of points equal to ``x_i`` (``y_i``).
    """
    n = x.shape[0]
    out = np.empty(n)
    for i in prange(n):
        best = np.full(k, np.inf)  # ascending k smallest joint distances
        for j in range(n):
            if j == i:
                continue
            dj = max(_max_abs_diff(x, i, j), _max_abs_diff(y, i, j))
            if dj < best[k - 1]:
                pos = k - 1
                while pos > 0 and best[pos - 1] > dj:
                    best[pos] = best[pos - 1]
                    pos -= 1
                best[pos] = dj
        eps = best[k - 1]
        nx = 0
        ny = 0
        ki = k
        if eps > 0.0:
            for j in range(n):
                if j != i:
                    if _max_abs_diff(x, i, j) < eps:
                        nx += 1
                    if _max_abs_diff(y, i, j) < eps:
                        ny += 1
        else:
            ki = 0
            for j in range(n):
                if j != i:
                    ex = _max_abs_diff(x, i, j) == 0.0
                    ey = _max_abs_diff(y, i, j) == 0.0
                    if ex:
                        nx += 1
                    if ey:
                        ny += 1
                    if ex and ey:
                        ki += 1
        out[i] = _digamma(ki) - _digamma(nx + 1.0) - _digamma(ny + 1.0)
    return out
