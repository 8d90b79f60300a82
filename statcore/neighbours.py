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
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange
from threadpoolctl import threadpool_limits

from statcore._numba import njit

__all__ = ["METRICS", "centred", "farthest_points", "knn", "pairwise_distances"]

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
