"""Ground costs seen by the Sinkhorn solver: a stored matrix, points with a built-in metric, or
points with a user's metric evaluated block by block.

Each provider answers the two soft-min reductions of a Sinkhorn iteration (over the columns for
every row, and over the rows for every column) and dense row blocks of the cost, which the plan
statistics and the optional plan are built from. Only :class:`DenseCost` stores n x m numbers.
"""

from __future__ import annotations

import numpy as np

from statcore.ot import _kernels
from statcore.validation import as_float_array, check_callable, check_option

#: largest number of cost entries a block of rows may hold (8 MiB of float64)
BLOCK_ENTRIES = 1 << 20
METRICS = tuple(_kernels.METRIC_CODES)
#: pairs from which a soft-min pass or kernel product is spread over threads: below, thread
#: start-up dominates, and a solver's thousands of small parallel calls stall whenever the
#: other cores are busy (a Sinkhorn fit of 110 x 110 points took 100 s beside another process
#: instead of 3 s)
PARALLEL_PAIRS = 1 << 16
#: blocks of rows of the matrix-free plan statistics, fixed so that their column sums, added
#: block by block, do not depend on the number of threads
PLAN_BLOCKS = 16


def rows_per_block(m: int) -> int:
    return max(1, BLOCK_ENTRIES // max(m, 1))


def _softmin_dense(cost, h, eps, out):
    big = cost.size >= PARALLEL_PAIRS
    (_kernels.softmin_dense_parallel if big else _kernels.softmin_dense)(cost, h, eps, out)


def _softmin_points(x, yt, h, eps, code, out):
    big = len(x) * yt.shape[1] >= PARALLEL_PAIRS
    kernel = _kernels.softmin_points_parallel if big else _kernels.softmin_points
    kernel(x, yt, h, eps, code, out)


def blocked_plan_sums(provider, fa, gb, eps, aux=None, want_plan=False):
    """Plan sums from dense row blocks of the costs (about 2^20 entries at a time).

    Returns ``(sums, cols, plan)``: ``sums[i] = (sum_j P_ij, sum_j P_ij C_ij, sum_j P_ij
    aux_ij)``, the column masses, and the plan (None unless ``want_plan``) of
    ``P_ij = exp((fa_i + gb_j - C_ij) / eps)``.
    """
    n, m = provider.n, provider.m
    sums, cols = np.zeros((n, 3)), np.zeros(m)
    plan = np.empty((n, m)) if want_plan else None
    step = rows_per_block(m)
    empty = np.empty((0, 0))
    for start in range(0, n, step):
        part = slice(start, min(start + step, n))
        block = np.ascontiguousarray(provider.block(part.start, part.stop))
        aux_block = empty if aux is None else np.ascontiguousarray(aux.block(part.start, part.stop))
        _kernels.plan_dense(block, aux_block, aux is not None, fa[part], gb, eps, sums[part], cols)
        if want_plan:
            plan[part] = np.exp((fa[part, None] + gb[None, :] - block) / eps)
    return sums, cols, plan


class DenseCost:
    """A stored cost matrix (and its transpose, for contiguous column reductions)."""

    def __init__(self, cost: np.ndarray):
        self.cost = cost
        self.cost_t = np.ascontiguousarray(cost.T)
        self.n, self.m = cost.shape

    def softmin_rows(self, h, eps):
        out = np.empty(self.n)
        _softmin_dense(self.cost, h, eps, out)
        return out

    def softmin_cols(self, h, eps):
        out = np.empty(self.m)
        _softmin_dense(self.cost_t, h, eps, out)
        return out

    def block(self, start, stop):
        return self.cost[start:stop]

    def plan_sums(self, fa, gb, eps, aux=None, want_plan=False):
        return blocked_plan_sums(self, fa, gb, eps, aux, want_plan)

    def max_cost(self) -> float:
        return float(self.cost.max())


class KernelCost(DenseCost):
    """A stored cost matrix whose soft-min reductions are products with a stored, rescaled
    kernel: Schmitzer's absorption-stabilised scaling, at the speed of a matrix-vector product.

    The kernel ``K_ij = exp((r_i + c_j - C_ij) / eps)`` is built around reference potentials
    ``r`` (rows) and ``c`` (columns), so that

        -eps log sum_j exp((h_j - C_ij) / eps) = r_i - eps log sum_j K_ij exp((h_j - c_j) / eps)

    and the mirror identity for the columns. It is rebuilt (one pass of exponentials, in the
    log domain) when ``eps`` changes or when a potential has drifted more than ``DRIFT`` times
    ``eps`` from its reference, so the scalings ``exp((h - c)/eps)`` stay within ``e^DRIFT`` of
    1 and neither overflow nor lose the kernel's small entries. ``dtype=np.float32`` halves the
    memory traffic of the products; its rounding (about 1e-7 relative on each sum) bounds the
    marginal error it can certify near 1e-6, so it suits tolerances of 1e-4 and above.
    """

    #: largest drift of a potential from the kernel's reference, in units of eps
    DRIFT = 30.0

    def __init__(self, cost: np.ndarray, dtype=np.float64):
        # no transposed copies: the column products read the row-major kernel in place
        self.cost = cost
        self.n, self.m = cost.shape
        self.dtype = dtype
        self.eps = None
        self.kernel = self.rows = self.cols = None

    def _rebuild(self, h, eps, axis):
        """Exact soft-min of ``h`` along ``axis`` (1: over the columns, for each row), and the
        kernel referenced to it and to ``h``."""
        cost = self.cost if axis == 1 else np.ascontiguousarray(self.cost.T)
        kernel = np.empty(cost.shape, dtype=self.dtype)
        out = np.empty(cost.shape[0])
        threaded = cost.size >= PARALLEL_PAIRS
        (_kernels.stabilised_kernel if threaded else _kernels.stabilised_kernel_serial)(
            cost,
            np.ascontiguousarray(h, dtype=np.float64),
            eps,
            kernel,
            out,
            self.dtype == np.float32,
        )
        ref = np.where(np.isfinite(h), h, 0.0)
        self.kernel = kernel if axis == 1 else np.ascontiguousarray(kernel.T)
        self.eps = eps
        self.rows, self.cols = (out, ref) if axis == 1 else (ref, out)
        return out

    def _reduce(self, h, eps, axis):
        own, other = (self.rows, self.cols) if axis == 1 else (self.cols, self.rows)
        if self.kernel is None or eps != self.eps:
            return self._rebuild(h, eps, axis)
        finite = np.isfinite(h)
        shift = np.where(finite, h - other, -np.inf)
        if np.max(np.abs(shift[finite]), initial=0.0) > self.DRIFT * eps:
            return self._rebuild(h, eps, axis)
        scale = np.exp(shift / eps).astype(self.dtype)
        sums = np.empty(len(own))
        threaded = self.kernel.size >= PARALLEL_PAIRS
        products = {
            (1, True): _kernels.kernel_product,
            (1, False): _kernels.kernel_product_serial,
            (0, True): _kernels.kernel_product_t,
            (0, False): _kernels.kernel_product_t_serial,
        }
        products[(axis, threaded)](self.kernel, scale, sums)
        if not np.all(sums > 0.0):
            # a row whose kernel entries underflowed where its mass has moved: exact pass
            return self._rebuild(h, eps, axis)
        return own - eps * np.log(sums)

    def softmin_rows(self, h, eps):
        return self._reduce(h, eps, 1)

    def softmin_cols(self, h, eps):
        return self._reduce(h, eps, 0)


class PointCost:
    """Costs between the rows of ``x`` and ``y`` under a built-in metric, made on the fly.

    Holds the (d, n) and (d, m) transposes as well, for the kernels' contiguous cost loops:
    O((n + m) d) memory.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, metric: str):
        self.x, self.y = np.ascontiguousarray(x), np.ascontiguousarray(y)
        self.xt, self.yt = np.ascontiguousarray(x.T), np.ascontiguousarray(y.T)
        self.code = _kernels.METRIC_CODES[metric]
        self.metric = metric
        self.n, self.m = len(x), len(y)

    def softmin_rows(self, h, eps):
        out = np.empty(self.n)
        _softmin_points(self.x, self.yt, h, eps, self.code, out)
        return out

    def softmin_cols(self, h, eps):
        out = np.empty(self.m)
        _softmin_points(self.y, self.xt, h, eps, self.code, out)
        return out

    def block(self, start, stop):
        if (stop - start) * self.m >= PARALLEL_PAIRS:
            return _kernels.pairwise_points_parallel(self.x[start:stop], self.yt, self.code)
        return _kernels.pairwise_points(self.x[start:stop], self.y, self.code)

    def plan_sums(self, fa, gb, eps, aux=None, want_plan=False):
        """As ``blocked_plan_sums``, in one matrix-free pass when ``aux`` is a
        :class:`PointCost` on the same pairs (or None)."""
        if aux is not None and not (
            isinstance(aux, PointCost) and aux.n == self.n and aux.m == self.m
        ):
            return blocked_plan_sums(self, fa, gb, eps, aux, want_plan)
        blocks = min(PLAN_BLOCKS, self.n)
        sums, cols = np.empty((self.n, 3)), np.zeros((blocks, self.m))
        plan = np.empty((self.n, self.m)) if want_plan else np.empty((0, self.m))
        ax, ayt, acode = (self.x, self.yt, 0) if aux is None else (aux.x, aux.yt, aux.code)
        _kernels.plan_points(
            self.x,
            self.yt,
            self.code,
            ax,
            ayt,
            acode,
            aux is not None,
            fa,
            gb,
            eps,
            sums,
            cols,
            plan,
            want_plan,
        )
        return sums, cols.sum(axis=0), plan if want_plan else None

    def max_cost(self) -> float:
        # the cost between opposite corners of the common bounding box bounds every pair's cost
        both = np.concatenate([self.x, self.y])
        corners = np.stack([both.min(axis=0), both.max(axis=0)])
        return float(_kernels.pairwise_points(corners[:1], corners[1:], self.code)[0, 0])


class CallableCost:
    """Costs from a user's ``metric(A, B) -> (len(A), len(B)) array``, evaluated in row blocks."""

    def __init__(self, x: np.ndarray, y: np.ndarray, metric):
        self.x, self.y = x, y
        self.metric = metric
        self.n, self.m = len(x), len(y)

    def _call(self, a, b):
        out = np.asarray(self.metric(a, b), dtype=np.float64)
        if out.shape != (len(a), len(b)):
            raise ValueError(
                f"`metric` must return an array of shape (len(A), len(B)) = {(len(a), len(b))}; "
                f"got shape {out.shape}"
            )
        if not np.all(np.isfinite(out)):
            raise ValueError("`metric` returned non-finite costs")
        return np.ascontiguousarray(out)

    def softmin_rows(self, h, eps):
        out = np.empty(self.n)
        step = rows_per_block(self.m)
        for start in range(0, self.n, step):
            block = self._call(self.x[start : start + step], self.y)
            _softmin_dense(block, h, eps, out[start : start + step])
        return out

    def softmin_cols(self, h, eps):
        out = np.empty(self.m)
        step = rows_per_block(self.n)
        for start in range(0, self.m, step):
            block = np.ascontiguousarray(self._call(self.x, self.y[start : start + step]).T)
            _softmin_dense(block, h, eps, out[start : start + step])
        return out

    def block(self, start, stop):
        return self._call(self.x[start:stop], self.y)

    def plan_sums(self, fa, gb, eps, aux=None, want_plan=False):
        return blocked_plan_sums(self, fa, gb, eps, aux, want_plan)

    def max_cost(self) -> float:
        k = min(256, self.n, self.m)
        return float(self._call(self.x[:k], self.y[:k]).max())


def as_points(x, *, name: str) -> np.ndarray:
    """Points as a float64 (n, d) array; a 1-D array is n points on the line."""
    arr = as_float_array(x, name=name, ndim=(1, 2), min_rows=1)
    return arr[:, None] if arr.ndim == 1 else arr


def point_cost(x: np.ndarray, y: np.ndarray, metric, *, x_name="x", y_name="y"):
    """The provider for points ``x``, ``y`` and a metric name or callable."""
    if callable(metric) and not isinstance(metric, str):
        return CallableCost(x, y, check_callable(metric, name="metric"))
    check_option(metric, name="metric", options=METRICS)
    if x.shape[1] != y.shape[1]:
        raise ValueError(
            f"`{x_name}` and `{y_name}` must have the same number of columns; got {x.shape[1]} "
            f"and {y.shape[1]}"
        )
    return PointCost(x, y, metric)


def cost_matrix(x, y, metric="euclidean") -> np.ndarray:
    """The dense cost matrix ``C[i, j] = metric(x_i, y_j)``.

    Parameters
    ----------
    x, y : array_like, shape (n, d) and (m, d)
        Points (1-D input: points on the line).
    metric : {"euclidean", "sqeuclidean", "cityblock", "chebyshev", "hamming"} or callable
        A built-in metric (``"hamming"``: the share of coordinates that differ, as in
        :func:`scipy.spatial.distance.cdist`), or ``metric(A, B)`` returning the
        ``(len(A), len(B))`` cost array.

    Returns
    -------
    ndarray, shape (n, m)
    """
    provider = point_cost(as_points(x, name="x"), as_points(y, name="y"), metric)
    return provider.block(0, provider.n)
