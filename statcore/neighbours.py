"""Neighbour search and distances shared by the method areas: exact kNN, pairwise distances,
farthest-point landmarks and centring.

Clustering (:mod:`statcore.cluster`), coreset selection (:mod:`statcore.select`) and intrinsic
dimension and alignment (:mod:`statcore.geometry`) all search neighbours; the search is written
once here, outside any one area, and each area imports it from this module. Every function
takes float arrays and checks nothing: callers validate their inputs first (through
:mod:`statcore.validation`).

Distances between blocks of rows come from one matrix product per block,
``|x|^2 + |y|^2 - 2 x.y``, the way BLAS-backed libraries compute them: the product runs at
BLAS speed, and the rounding error of a squared distance is about 1e-16 times the squared norms,
so callers centre their points first (:func:`centred`). A point's distance to itself is set
to exactly 0. The landmarks work from the coordinates directly instead, O(d) per pair.

Each block's product is small (256 x 256 x d), so BLAS gets one thread for it: its own threads
would only add start-up costs there, and on a busy machine they slowed the blocked kernels
tenfold and more. Blocks of query rows are independent, so the kNN search has a
``parallel=True`` variant over blocks; each row's result is computed in the same order in both
variants, so they agree exactly.

Which search runs is chosen by one rule (:func:`search_algorithm`), scikit-learn's: a KD-tree
(scipy's ``cKDTree``) for the Euclidean and max-norm metrics in at most 15 dimensions, the
blocked products above otherwise, and also for small problems (fewer than 2^20 pairs), where
building a tree costs more than it saves. Both are exact; the tree computes each distance from
the coordinates (no cancellation), so its distances can differ from the blocked ones in the last
bits, and among points tied at the k-th distance it may keep other indices than the blocked
search's lowest ones.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange
from scipy.spatial import cKDTree
from threadpoolctl import threadpool_limits

from statcore._numba import njit

__all__ = [
    "ALGORITHMS",
    "METRICS",
    "centred",
    "count_within",
    "farthest_points",
    "knn",
    "pairwise_distances",
    "search_algorithm",
]

#: the distance codes of the blocked kernels
METRICS = {"sqeuclidean": 0, "euclidean": 1, "cosine": 2, "chebyshev": 3}
#: rows per block: a 256 x 256 float64 block is 512 KiB and stays in cache
BLOCK = 256
ALGORITHMS = ("auto", "kd_tree", "brute")
#: the Minkowski order of each metric the tree serves (the squared distance is squared after)
_TREE_P = {"sqeuclidean": 2.0, "euclidean": 2.0, "chebyshev": np.inf}
#: scikit-learn's rule: trees lose to brute force above 15 dimensions
TREE_MAX_DIM = 15
#: below this many pairs the blocked search is done before a tree is built
TREE_MIN_PAIRS = 1 << 20


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
    rows, cols = i1 - i0, j1 - j0
    if code == 3:
        # the max-norm has no inner-product form: it is taken from the coordinates, exactly
        for a in range(rows):
            for b in range(cols):
                top = 0.0
                for c in range(X.shape[1]):
                    top = max(top, abs(X[i0 + a, c] - Y[j0 + b, c]))
                out[a, b] = top
        return
    gram = np.dot(X[i0:i1], Y[j0:j1].T)
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

    ``metric`` is ``"sqeuclidean"``, ``"euclidean"``, ``"chebyshev"`` (the max-norm) or
    ``"cosine"`` (1 - cosine similarity; a zero row counts as orthogonal to everything). With
    ``Y=None`` the diagonal is exactly 0.
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


def search_algorithm(n_queries: int, n_points: int, dim: int, metric: str) -> str:
    """The search :func:`knn` and :func:`count_within` run for ``algorithm="auto"``.

    ``"kd_tree"`` for the Euclidean, squared Euclidean and max-norm metrics in at most
    ``TREE_MAX_DIM`` (15) dimensions on at least ``TREE_MIN_PAIRS`` (2^20) query-point pairs;
    ``"brute"`` (the blocked products) otherwise.
    """
    if metric in _TREE_P and dim <= TREE_MAX_DIM and n_queries * n_points >= TREE_MIN_PAIRS:
        return "kd_tree"
    return "brute"


def _resolve(algorithm: str, n_queries: int, n_points: int, dim: int, metric: str) -> str:
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {list(ALGORITHMS)}, got {algorithm!r}")
    if algorithm == "auto":
        return search_algorithm(n_queries, n_points, dim, metric)
    if algorithm == "kd_tree" and metric not in _TREE_P:
        raise ValueError(f"the KD-tree serves the metrics {sorted(_TREE_P)}, not {metric!r}")
    return algorithm


@njit
def _drop_self(dist, idx, k):
    """Rows of a (k + 1)-search of a set against itself without the query point.

    Where the point is missing from its own row (more than k exact copies of it), the last
    column goes instead: every kept distance is then 0, as it should be.
    """
    n = dist.shape[0]
    out_dist = np.empty((n, k))
    out_idx = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        skip = k
        for c in range(k + 1):
            if idx[i, c] == i:
                skip = c
                break
        pos = 0
        for c in range(k + 1):
            if c != skip:
                out_dist[i, pos] = dist[i, c]
                out_idx[i, pos] = idx[i, c]
                pos += 1
    return out_dist, out_idx


@njit
def _sort_ties_low(dist, idx):
    """Within each row, equal distances in ascending index order (the tree's order is its own)."""
    n, k = dist.shape
    for i in range(n):
        for a in range(1, k):
            d, j = dist[i, a], idx[i, a]
            pos = a
            while pos > 0 and dist[i, pos - 1] == d and idx[i, pos - 1] > j:
                idx[i, pos] = idx[i, pos - 1]
                pos -= 1
            idx[i, pos] = j


def _tree_knn(X, Y, k, metric, same, exclude_self, workers):
    tree = cKDTree(Y, leafsize=16, balanced_tree=False, compact_nodes=False)
    extra = 1 if same and exclude_self else 0
    dist, idx = tree.query(X, k=k + extra, p=_TREE_P[metric], workers=workers)
    dist = np.asarray(dist, dtype=np.float64).reshape(len(X), k + extra)
    idx = np.asarray(idx, dtype=np.int64).reshape(len(X), k + extra)
    if extra:
        dist, idx = _drop_self(dist, idx, k)
    _sort_ties_low(dist, idx)
    if metric == "sqeuclidean":
        dist = dist * dist
    return dist, idx


def knn(
    X,
    k: int,
    *,
    Y=None,
    metric: str = "euclidean",
    exclude_self: bool = True,
    parallel: bool = False,
    algorithm: str = "auto",
):
    """Exact k nearest neighbours of the rows of ``X`` among the rows of ``Y`` (``X`` by default).

    Returns ``(dist, idx)``, both ``(n, k)``, ascending, ties broken towards the lower index
    (on the tree, among the neighbours it keeps). With ``Y=None`` and ``exclude_self`` a point
    is not its own neighbour. ``parallel=True`` spreads the queries over threads (numba's for
    the blocked search, scipy's workers for the tree) and gives the same result.
    ``algorithm`` is ``"auto"`` (:func:`search_algorithm`), ``"kd_tree"`` or ``"brute"``.
    """
    code = _metric_code(metric)
    same = Y is None
    n_points = len(X) if same else len(Y)
    chosen = _resolve(algorithm, len(X), n_points, np.shape(X)[1], metric)
    if chosen == "kd_tree":
        X = np.ascontiguousarray(X, dtype=np.float64)
        Y = X if same else np.ascontiguousarray(Y, dtype=np.float64)
        return _tree_knn(X, Y, int(k), metric, same, bool(exclude_self), -1 if parallel else 1)
    X, x_sq = _prepared(X, code)
    if same:
        Y, y_sq = X, x_sq
    else:
        Y, y_sq = _prepared(Y, code)
        exclude_self = False
    kernel = _knn_parallel if parallel else _knn
    with _one_blas_thread():
        return kernel(X, x_sq, Y, y_sq, int(k), code, same, bool(exclude_self))


@njit
def _count_rows(X, x_sq, Y, y_sq, radius, code, strict, i0, i1, counts, buf):
    m = Y.shape[0]
    counts[i0:i1] = 0
    for j0 in range(0, m, BLOCK):
        j1 = min(j0 + BLOCK, m)
        _block(X, x_sq, i0, i1, Y, y_sq, j0, j1, code, False, buf)
        for a in range(i1 - i0):
            r = radius[i0 + a]
            c = 0
            for b in range(j1 - j0):
                if buf[a, b] < r or (not strict and buf[a, b] == r):
                    c += 1
            counts[i0 + a] += c


@njit
def _count(X, x_sq, Y, y_sq, radius, code, strict):
    n = X.shape[0]
    counts = np.empty(n, dtype=np.int64)
    buf = np.empty((BLOCK, BLOCK))
    for i0 in range(0, n, BLOCK):
        _count_rows(X, x_sq, Y, y_sq, radius, code, strict, i0, min(i0 + BLOCK, n), counts, buf)
    return counts


@njit(parallel=True)
def _count_parallel(X, x_sq, Y, y_sq, radius, code, strict):
    n = X.shape[0]
    counts = np.empty(n, dtype=np.int64)
    for block in prange((n + BLOCK - 1) // BLOCK):
        buf = np.empty((BLOCK, BLOCK))
        i0 = block * BLOCK
        _count_rows(X, x_sq, Y, y_sq, radius, code, strict, i0, min(i0 + BLOCK, n), counts, buf)
    return counts


@njit
def _inside(value, r, strict):
    return value < r or (not strict and value == r)


@njit(parallel=True)
def _count_sorted(xq, ys, radius, strict):
    """Counts on a line: ``fl(|y - x|)`` grows monotonically on either side of ``x``, so the
    points inside form one run of the sorted values; binary search finds it near its ends and
    the exact comparison settles the last steps."""
    n, m = xq.shape[0], ys.shape[0]
    counts = np.empty(n, dtype=np.int64)
    for i in prange(n):
        x, r = xq[i], radius[i]
        lo = np.searchsorted(ys, x - r)
        while lo > 0 and _inside(abs(ys[lo - 1] - x), r, strict):
            lo -= 1
        while lo < m and ys[lo] < x and not _inside(abs(ys[lo] - x), r, strict):
            lo += 1
        hi = np.searchsorted(ys, x + r, side="right")
        while hi < m and _inside(abs(ys[hi] - x), r, strict):
            hi += 1
        while hi > lo and ys[hi - 1] > x and not _inside(abs(ys[hi - 1] - x), r, strict):
            hi -= 1
        # with nothing at distance 0 inside (a strict radius 0), nothing is
        counts[i] = max(hi - lo, 0) if _inside(0.0, r, strict) else 0
    return counts


def count_within(
    X,
    radius,
    *,
    Y=None,
    metric: str = "chebyshev",
    strict: bool = True,
    exclude_self: bool = True,
    parallel: bool = False,
    algorithm: str = "auto",
) -> np.ndarray:
    """How many rows of ``Y`` (``X`` by default) lie within ``radius[i]`` of row ``i`` of ``X``.

    ``strict=True`` counts distances ``< radius``, ``False`` counts ``<= radius``; with
    ``Y=None`` and ``exclude_self`` the point itself is not counted. ``metric`` is
    ``"chebyshev"`` or ``"euclidean"``; the max-norm counts are exact on either search (the tree
    compares the max-norm itself), the Euclidean ones up to the rounding of the boundary. In
    one dimension the tree's place is taken by binary search in the sorted values (exact).
    """
    if metric not in ("chebyshev", "euclidean"):
        raise ValueError(f"metric must be 'chebyshev' or 'euclidean', got {metric!r}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    same = Y is None
    Y = X if same else np.ascontiguousarray(Y, dtype=np.float64)
    # a copy: a caller's radius array would reach the kernels read-only through broadcast_to's
    # view, and numba compiles a second kernel for a read-only argument
    radius = np.array(np.broadcast_to(radius, (len(X),)), dtype=np.float64)
    chosen = _resolve(algorithm, len(X), len(Y), X.shape[1], metric)
    if chosen == "kd_tree" and X.shape[1] == 1:
        # on a line the tree is a sorted array
        counts = _count_sorted(X[:, 0], np.sort(Y[:, 0]), radius, bool(strict))
    elif chosen == "kd_tree":
        # the tree counts distances <= r: one step below the radius makes the count strict
        r = np.nextafter(radius, -np.inf) if strict else radius
        counts = np.zeros(len(X), dtype=np.int64)
        ok = r >= 0
        if ok.any():
            tree = cKDTree(Y, leafsize=16, balanced_tree=False, compact_nodes=False)
            counts[ok] = tree.query_ball_point(
                X[ok], r[ok], p=_TREE_P[metric], return_length=True, workers=-1 if parallel else 1
            )
    else:
        code = METRICS[metric]
        X, x_sq = _prepared(X, code)
        Y, y_sq = (X, x_sq) if same else _prepared(Y, code)
        kernel = _count_parallel if parallel else _count
        with _one_blas_thread():
            counts = kernel(X, x_sq, Y, y_sq, radius, code, bool(strict))
    if same and exclude_self:
        # the point is at distance 0 from itself: inside unless the count is strict at radius 0
        counts = counts - ((radius > 0) | (not strict))
    return counts


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
