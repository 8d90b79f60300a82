"""Shared geometry kernels of the clustering area: distances, kNN, assignment, MST, landmarks.

Written once for the clustering papers (hardness fingerprints, SC-FAGC, coresets) and the
selection and geometry areas that reuse them. Each public function here is a plain-Python
wrapper that checks nothing (callers validate through :mod:`statcore.validation`) and hands
float64 C-contiguous arrays to private numba kernels.

Distances between blocks of rows come from one matrix product per block,
``|x|^2 + |y|^2 - 2 x.y``, the way BLAS-backed libraries compute them: the product runs at
BLAS speed, and the rounding error of a squared distance is about 1e-16 times the squared norms,
so callers centre their points first (:func:`centred`). A point's distance to itself is set
to exactly 0. The kernels that must not hold an n x n array (Prim's tree, the landmarks, the
nearest-centre assignment) work from the coordinates directly instead, O(d) per pair.

Each block's product is small (256 x 256 x d), so BLAS gets one thread for it: its own threads
would only add start-up costs there, and on a busy machine they slowed the blocked kernels
tenfold and more. Blocks of query rows are independent, so the kNN search has a
``parallel=True`` variant over blocks; each row's result is computed in the same order in both
variants, so they agree exactly.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange
from threadpoolctl import threadpool_limits

from statcore._numba import njit

#: the distance codes of the blocked kernels
METRICS = {"sqeuclidean": 0, "euclidean": 1, "cosine": 2}
#: rows per block: a 256 x 256 float64 block is 512 KiB and stays in cache
BLOCK = 256


def centred(X: np.ndarray) -> np.ndarray:
    """``X`` minus its column means, float64 C-contiguous (a new array)."""
    X = np.asarray(X, dtype=np.float64)
    return np.ascontiguousarray(X - X.mean(axis=0))


def _metric_code(metric: str) -> int:
    try:
        return METRICS[metric]
    except KeyError:
        raise ValueError(f"metric must be one of {sorted(METRICS)}, got {metric!r}") from None


def _one_blas_thread():
    return threadpool_limits(limits=1, user_api="blas")


def _prepared(X: np.ndarray, code: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows (unit-normalised for the cosine distance) and their squared norms."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if code == 2:
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))
        X = X / np.where(norms > 0, norms, 1.0)[:, None]
    return X, np.einsum("ij,ij->i", X, X)


@njit(fastmath=True)
def _block(X, x_sq, i0, i1, Y, y_sq, j0, j1, code, same, out):
    """Distances between rows i0:i1 of X and j0:j1 of Y into ``out[:i1-i0, :j1-j0]``.

    One branch-free loop per metric, so that LLVM vectorises it (fastmath lets it vectorise the
    square root; every value here is finite); the exact zeros of a point against itself are
    written afterwards.
    """
    gram = np.dot(X[i0:i1], Y[j0:j1].T)
    rows, cols = i1 - i0, j1 - j0
    for a in range(rows):
        xa = x_sq[i0 + a]
        if code == 0:
            for b in range(cols):
                out[a, b] = max(xa + y_sq[j0 + b] - 2.0 * gram[a, b], 0.0)
        elif code == 1:
            for b in range(cols):
                out[a, b] = math.sqrt(max(xa + y_sq[j0 + b] - 2.0 * gram[a, b], 0.0))
        else:
            for b in range(cols):
                out[a, b] = 0.5 * max(xa + y_sq[j0 + b] - 2.0 * gram[a, b], 0.0)
    if same:
        for a in range(max(i0, j0), min(i1, j1)):
            out[a - i0, a - j0] = 0.0


@njit
def _pairwise(X, x_sq, Y, y_sq, code, same):
    n, m = X.shape[0], Y.shape[0]
    out = np.empty((n, m))
    buf = np.empty((BLOCK, BLOCK))
    for i0 in range(0, n, BLOCK):
        i1 = min(i0 + BLOCK, n)
        for j0 in range(0, m, BLOCK):
            j1 = min(j0 + BLOCK, m)
            _block(X, x_sq, i0, i1, Y, y_sq, j0, j1, code, same, buf)
            out[i0:i1, j0:j1] = buf[: i1 - i0, : j1 - j0]
    return out


def pairwise_distances(X, Y=None, metric: str = "sqeuclidean") -> np.ndarray:
    """Dense distances between the rows of ``X`` and of ``Y`` (``X`` itself by default).

    ``metric`` is ``"sqeuclidean"``, ``"euclidean"`` or ``"cosine"`` (1 - cosine similarity;
    a zero row counts as orthogonal to everything). With ``Y=None`` the diagonal is exactly 0.
    """
    code = _metric_code(metric)
    X, x_sq = _prepared(X, code)
    same = Y is None
    Y, y_sq = (X, x_sq) if same else _prepared(Y, code)
    with _one_blas_thread():
        return _pairwise(X, x_sq, Y, y_sq, code, same)


@njit
def _insert(dist_row, idx_row, k, value, j):
    """Insert (value, j) into the ascending top-k row that it beats, ties to the lower index."""
    pos = k - 1
    while pos > 0 and (
        dist_row[pos - 1] > value or (dist_row[pos - 1] == value and idx_row[pos - 1] > j)
    ):
        dist_row[pos] = dist_row[pos - 1]
        idx_row[pos] = idx_row[pos - 1]
        pos -= 1
    dist_row[pos] = value
    idx_row[pos] = j


@njit
def _knn_rows(X, x_sq, Y, y_sq, k, code, same, exclude_self, i0, i1, dist, idx, buf):
    m = Y.shape[0]
    dist[i0:i1] = np.inf
    idx[i0:i1] = m
    for j0 in range(0, m, BLOCK):
        j1 = min(j0 + BLOCK, m)
        _block(X, x_sq, i0, i1, Y, y_sq, j0, j1, code, same, buf)
        for a in range(i1 - i0):
            # one row view per row and block: the worst kept distance rejects most pairs at once
            dist_row = dist[i0 + a]
            idx_row = idx[i0 + a]
            worst = dist_row[k - 1]
            for b in range(j1 - j0):
                value = buf[a, b]
                if value > worst or (exclude_self and i0 + a == j0 + b):
                    continue
                if value == worst and j0 + b > idx_row[k - 1]:
                    continue
                _insert(dist_row, idx_row, k, value, j0 + b)
                worst = dist_row[k - 1]


@njit
def _knn(X, x_sq, Y, y_sq, k, code, same, exclude_self):
    n = X.shape[0]
    dist = np.empty((n, k))
    idx = np.empty((n, k), dtype=np.int64)
    buf = np.empty((BLOCK, BLOCK))
    for i0 in range(0, n, BLOCK):
        _knn_rows(
            X, x_sq, Y, y_sq, k, code, same, exclude_self, i0, min(i0 + BLOCK, n), dist, idx, buf
        )
    return dist, idx


@njit(parallel=True)
def _knn_parallel(X, x_sq, Y, y_sq, k, code, same, exclude_self):
    n = X.shape[0]
    dist = np.empty((n, k))
    idx = np.empty((n, k), dtype=np.int64)
    n_blocks = (n + BLOCK - 1) // BLOCK
    for block in prange(n_blocks):
        buf = np.empty((BLOCK, BLOCK))
        i0 = block * BLOCK
        _knn_rows(
            X, x_sq, Y, y_sq, k, code, same, exclude_self, i0, min(i0 + BLOCK, n), dist, idx, buf
        )
    return dist, idx


def knn(
    X,
    k: int,
    *,
    Y=None,
    metric: str = "euclidean",
    exclude_self: bool = True,
    parallel: bool = False,
):
    """Exact k nearest neighbours of the rows of ``X`` among the rows of ``Y`` (``X`` by default).

    Returns ``(dist, idx)``, both ``(n, k)``, ascending, ties broken towards the lower index.
    With ``Y=None`` and ``exclude_self`` a point is not its own neighbour. ``parallel=True``
    spreads blocks of rows over numba's threads and gives the same result.
    """
    code = _metric_code(metric)
    X, x_sq = _prepared(X, code)
    same = Y is None
    if same:
        Y, y_sq = X, x_sq
    else:
        Y, y_sq = _prepared(Y, code)
        exclude_self = False
    kernel = _knn_parallel if parallel else _knn
    with _one_blas_thread():
        return kernel(X, x_sq, Y, y_sq, int(k), code, same, bool(exclude_self))


@njit
def nearest_centre(X, i, C):
    """Row ``i``'s nearest centre and squared distance, ties to the lower centre."""
    d = X.shape[1]
    top = np.inf
    arg = 0
    for c in range(C.shape[0]):
        acc = 0.0
        for t in range(d):
            diff = X[i, t] - C[c, t]
            acc += diff * diff
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


@njit
def _farthest(X, n_landmarks, start):
    n, d = X.shape
    idx = np.empty(n_landmarks, dtype=np.int64)
    radii = np.empty(n_landmarks)
    nearest = np.full(n, np.inf)
    current = start
    radii[0] = np.inf
    for t in range(n_landmarks):
        idx[t] = current
        top = -1.0
        arg = 0
        for i in range(n):
            acc = 0.0
            for s in range(d):
                diff = X[i, s] - X[current, s]
                acc += diff * diff
            if acc < nearest[i]:
                nearest[i] = acc
            if nearest[i] > top:
                top = nearest[i]
                arg = i
        if t + 1 < n_landmarks:
            radii[t + 1] = math.sqrt(top)
        current = arg
    return idx, radii, math.sqrt(top)


def farthest_points(X, n_landmarks: int, *, start: int = 0):
    """Greedy permutation (farthest-point) landmarks.

    Returns ``(idx, radii, cover_radius)``: the landmark rows in the order picked, each one's
    distance to the earlier landmarks when it was picked (``inf`` for the first), and the
    largest distance of any point to its nearest landmark (ripser's ``r_cover``).
    """
    return _farthest(np.ascontiguousarray(X, dtype=np.float64), int(n_landmarks), int(start))


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
