"""Geometry kernels of the clustering area: assignment, MST, class distance sums, silhouettes.

Written for the clustering papers (hardness fingerprints, SC-FAGC, coresets); the kNN search,
the pairwise distances and the landmarks, which other areas share, are in
:mod:`statcore.neighbours` (imported back here). Each public function here is a plain-Python
wrapper that checks nothing (callers validate through :mod:`statcore.validation`) and hands
float64 C-contiguous arrays to private numba kernels.

Distances between blocks of rows come from one matrix product per block,
``|x|^2 + |y|^2 - 2 x.y``, the way BLAS-backed libraries compute them: the product runs at
BLAS speed, and the rounding error of a squared distance is about 1e-16 times the squared norms,
so callers centre their points first (:func:`centred`). The kernels that must not hold an
n x n array (Prim's tree, the nearest-centre assignment) work from the coordinates directly
instead, O(d) per pair. Each block's product gets one BLAS thread (see
:mod:`statcore.neighbours`).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from statcore._numba import njit

# the neighbour search, distances and landmarks live in the shared module (re-exported here
# for the cluster area's ``K.`` calls); the blocked kernels below reuse its block product
from statcore.neighbours import (  # noqa: F401
    BLOCK,
    METRICS,
    _block,
    _one_blas_thread,
    _prepared,
    centred,
    farthest_points,
    knn,
    pairwise_distances,
)


@njit
def squared_distance(A, i, B, j):
    """``|A[i] - B[j]|^2``, the one inner loop every assignment kernel shares."""
    acc = 0.0
    for t in range(A.shape[1]):
        diff = A[i, t] - B[j, t]
        acc += diff * diff
    return acc


@njit
def nearest_centre(X, i, C):
    """Row ``i``'s nearest centre and squared distance, ties to the lower centre."""
    top = np.inf
    arg = 0
    for c in range(C.shape[0]):
        acc = squared_distance(X, i, C, c)
        if acc < top:
            top = acc
            arg = c
    return arg, top


@njit
def _assign(X, C):
    n = X.shape[0]
    labels = np.empty(n, dtype=np.int64)
    best = np.empty(n)
    for i in range(n):
        labels[i], best[i] = nearest_centre(X, i, C)
    return labels, best


@njit(parallel=True)
def _assign_parallel(X, C):
    n = X.shape[0]
    labels = np.empty(n, dtype=np.int64)
    best = np.empty(n)
    for i in prange(n):
        labels[i], best[i] = nearest_centre(X, i, C)
    return labels, best


def assign_nearest(X, centres, *, parallel: bool = False):
    """Each row's nearest centre: ``(labels, squared distances)``, ties to the lower centre.

    ``parallel=True`` splits the rows over numba's threads, with the same result.
    """
    kernel = _assign_parallel if parallel else _assign
    return kernel(
        np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(centres, dtype=np.float64)
    )


@njit
def _prim(X):
    """Prim's algorithm on the complete graph of squared distances, O(n^2 d) time, O(n + nd) memory.

    The points not yet in the tree are kept packed at the front of a working copy (swap
    removal), so each step's update runs over contiguous rows.
    """
    n, d = X.shape
    work = X.copy()
    label = np.arange(n)
    best = np.full(n, np.inf)
    parent = np.zeros(n, dtype=np.int64)
    edges = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    weights = np.empty(max(n - 1, 0))
    last = n - 1
    # the tree starts at point 0: move it to the end, outside the packed front
    work[0], work[last] = work[last].copy(), work[0].copy()
    label[0], label[last] = label[last], label[0]
    newest = work[last].copy()
    newest_label = label[last]
    for step in range(n - 1):
        remaining = last
        arg = 0
        top = np.inf
        for r in range(remaining):
            acc = 0.0
            for t in range(d):
                diff = work[r, t] - newest[t]
                acc += diff * diff
            if acc < best[r]:
                best[r] = acc
                parent[r] = newest_label
            if best[r] < top or (best[r] == top and label[r] < label[arg]):
                top = best[r]
                arg = r
        edges[step, 0] = parent[arg]
        edges[step, 1] = label[arg]
        weights[step] = top
        newest[:] = work[arg]
        newest_label = label[arg]
        last = remaining - 1
        work[arg] = work[last]
        label[arg] = label[last]
        best[arg] = best[last]
        parent[arg] = parent[last]
    return edges, weights


def minimum_spanning_tree(X, metric: str = "euclidean"):
    """Euclidean minimum spanning tree of the rows by dense Prim, O(n^2 d) time, O(n) memory.

    Returns ``(edges, weights)``: the ``n - 1`` edges (parent, child) in the order Prim adds
    them from point 0, and their lengths. Sorted, the lengths are the finite death times of the
    0-dimensional persistence of the Rips filtration (all births 0).
    """
    if metric not in ("euclidean", "sqeuclidean"):
        raise ValueError(f"metric must be 'euclidean' or 'sqeuclidean', got {metric!r}")
    edges, weights = _prim(np.ascontiguousarray(X, dtype=np.float64))
    return edges, (np.sqrt(weights) if metric == "euclidean" else weights)


#: stands for "no such pair yet" in the class kernels, which assume finite values (fastmath)
_FAR = 1e300


@njit(fastmath=True)
def _row_side(buf, labels, starts, i0, i1, j0, j1, diagonal, sums, near_same, near_other):
    """Rows i0:i1 against the class runs of the (label-sorted) columns j0:j1."""
    first = labels[j0]
    last = labels[j1 - 1]
    for a in range(i1 - i0):
        i = i0 + a
        own = labels[i]
        for c in range(first, last + 1):
            lo = max(starts[c], j0) - j0
            hi = min(starts[c + 1], j1) - j0
            total = 0.0
            low = _FAR
            for b in range(lo, hi):
                value = buf[a, b]
                total += value
                low = min(low, value)
            sums[i, c] += total
            if c != own:
                near_other[i] = min(near_other[i], low)
                continue
            if diagonal:
                # a point is not its own nearest neighbour: skip the zero at b = a
                low = _FAR
                for b in range(lo, hi):
                    if b != a:
                        low = min(low, buf[a, b])
            near_same[i] = min(near_same[i], low)


@njit
def _column_side(buf, labels, starts, i0, i1, j0, j1, sums, near_same, near_other, total, low):
    """Columns j0:j1 against the class runs of the (label-sorted) rows i0:i1, lane-wise."""
    cols = j1 - j0
    for c in range(labels[i0], labels[i1 - 1] + 1):
        lo = max(starts[c], i0) - i0
        hi = min(starts[c + 1], i1) - i0
        total[:cols] = 0.0
        low[:cols] = _FAR
        for a in range(lo, hi):
            for b in range(cols):
                value = buf[a, b]
                total[b] += value
                low[b] = min(low[b], value)
        for b in range(cols):
            j = j0 + b
            sums[j, c] += total[b]
            if labels[j] == c:
                near_same[j] = min(near_same[j], low[b])
            else:
                near_other[j] = min(near_other[j], low[b])


@njit
def _class_sums(X, x_sq, labels, starts):
    """Each pair of blocks once; the labels are sorted, so each block row holds a few class runs."""
    n = X.shape[0]
    sums = np.zeros((n, starts.size - 1))
    near_same = np.full(n, _FAR)
    near_other = np.full(n, _FAR)
    buf = np.empty((BLOCK, BLOCK))
    total = np.empty(BLOCK)
    low = np.empty(BLOCK)
    for i0 in range(0, n, BLOCK):
        i1 = min(i0 + BLOCK, n)
        for j0 in range(i0, n, BLOCK):
            j1 = min(j0 + BLOCK, n)
            _block(X, x_sq, i0, i1, X, x_sq, j0, j1, 1, True, buf)
            _row_side(buf, labels, starts, i0, i1, j0, j1, i0 == j0, sums, near_same, near_other)
            if i0 != j0:
                _column_side(
                    buf, labels, starts, i0, i1, j0, j1, sums, near_same, near_other, total, low
                )
    return sums, near_same, near_other


def class_distance_sums(X, labels, n_classes: int):
    """Per point, the sum of Euclidean distances to each class and the nearest same/other class.

    Returns ``(sums, nearest_same, nearest_other)``: ``sums[i, c]`` adds ``d(i, j)`` over the
    points ``j`` of class ``c`` (a point adds 0 to its own class), ``nearest_same[i]`` is the
    distance to the nearest other point of its class (``inf`` alone in its class) and
    ``nearest_other[i]`` the distance to the nearest point of another class. One pass over the
    pairs in blocks, O(n^2 d) time and O(nK) memory.
    """
    labels = np.asarray(labels, dtype=np.int64)
    order = np.argsort(labels, kind="stable")
    sorted_labels = np.ascontiguousarray(labels[order])
    starts = np.searchsorted(sorted_labels, np.arange(int(n_classes) + 1)).astype(np.int64)
    X, x_sq = _prepared(np.asarray(X, dtype=np.float64)[order], 1)
    with _one_blas_thread():
        sums, near_same, near_other = _class_sums(X, x_sq, sorted_labels, starts)
    out = np.empty_like(sums), np.empty(len(order)), np.empty(len(order))
    out[0][order], out[1][order], out[2][order] = sums, near_same, near_other
    out[1][out[1] >= _FAR], out[2][out[2] >= _FAR] = np.inf, np.inf
    return out


def silhouette_from_sums(sums, labels) -> np.ndarray:
    """Silhouettes from :func:`class_distance_sums`' per-class sums, as scikit-learn defines them.

    ``a_i`` is the mean distance to the rest of its class, ``b_i`` the smallest mean distance to
    another class, ``s_i = (b_i - a_i) / max(a_i, b_i)``; a point alone in its class gets 0.
    """
    labels = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(labels, minlength=sums.shape[1])
    n = labels.size
    own = counts[labels]
    a = sums[np.arange(n), labels] / np.maximum(own - 1, 1)
    means = sums / np.where(counts > 0, counts, 1)
    means[np.arange(n), labels] = np.inf
    means[:, counts == 0] = np.inf
    b = means.min(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = (b - a) / np.maximum(a, b)
    return np.where(own > 1, np.nan_to_num(s), 0.0)


def silhouette_samples(X, labels) -> np.ndarray:
    """Silhouette of each point under ``labels`` (integers 0..K-1): :func:`silhouette_from_sums`."""
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    sums, _, _ = class_distance_sums(X, labels, int(labels.max()) + 1)
    return silhouette_from_sums(sums, labels)
