"""Numba kernels of SC-FAGC (size-constrained anchor graph clustering).

The anchor graph is kept sparse as two (n, s) arrays, the indices of each point's s nearest
anchors and their weights, so that nothing of size n x m is ever formed: its Gram matrix
``Z^T Z`` and the label transmission ``argmax_k (Z G)_ik`` are single passes over the rows.
"""

from __future__ import annotations

import numpy as np

from statcore._numba import njit


@njit
def anchor_weights(sqdist):
    """Parameter-free anchor weights from the squared distances to the s + 1 nearest anchors.

    ``z_ij = (d_{i,s+1} - d_ij) / (s d_{i,s+1} - sum_{h <= s} d_ih)`` for the s nearest (the
    closed-form solution of the simplex-constrained, adaptively regularised neighbour problem):
    non-negative, summing to 1, largest for the nearest anchor. A row whose s + 1 distances
    tie has no such scale and gets equal weights ``1 / s``.
    """
    n, s1 = sqdist.shape
    s = s1 - 1
    z = np.empty((n, s))
    for i in range(n):
        far = sqdist[i, s]
        total = 0.0
        for h in range(s):
            total += sqdist[i, h]
        denom = s * far - total
        if denom > 0.0:
            for h in range(s):
                z[i, h] = (far - sqdist[i, h]) / denom
        else:
            for h in range(s):
                z[i, h] = 1.0 / s
    return z


@njit
def anchor_gram(idx, z, m):
    """``Z^T Z`` (m x m) and the anchor degrees ``Z^T 1`` of the sparse anchor graph."""
    n, s = idx.shape
    gram = np.zeros((m, m))
    degree = np.zeros(m)
    for i in range(n):
        for p in range(s):
            a, w = idx[i, p], z[i, p]
            degree[a] += w
            for q in range(s):
                gram[a, idx[i, q]] += w * z[i, q]
    return gram, degree


@njit
def transmit(idx, z, assignment):
    """Labels ``argmax_k (Z G)_ik`` (ties to the lower cluster) and the scores ``Z G`` of the
    points, for the anchors' cluster distributions ``G`` (m x c)."""
    n, s = idx.shape
    c = assignment.shape[1]
    scores = np.zeros((n, c))
    labels = np.empty(n, dtype=np.int64)
    for i in range(n):
        for p in range(s):
            a, w = idx[i, p], z[i, p]
            for k in range(c):
                scores[i, k] += w * assignment[a, k]
        best = 0
        for k in range(1, c):
            if scores[i, k] > scores[i, best]:
                best = k
        labels[i] = best
    return labels, scores
