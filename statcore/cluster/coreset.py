"""Coresets for k-means and k-median: sensitivity, uniform, lightweight and resilient sampling,
weighted solvers, the approximation check and merge-and-reduce (the resilience harness is
:mod:`statcore.cluster.resilience`).

A coreset of a weighted point set P is a small weighted sample Omega whose cost
``cost_Omega(S) = sum_q w_q d(q, S)^z`` estimates ``cost_P(S)`` for centre sets S (z = 2 for
k-means, 1 for k-median), so that a clusterer run on Omega finds a good solution for P.
:class:`Coreset` holds the data and ``fit()`` draws one; the result solves on it, measures
costs and distortions on the full data, checks the approximation ratio by Monte Carlo, and
:meth:`Coreset.from_chunks` builds one from data that arrive in pieces (a stream, a dask array).

References
----------
Prabhu, M., Schwiegelshohn, C. and Shyam, S. (2026). Approximation preserving coresets.
ICML 2026; arXiv:2606.17316.

Norouzi-Fard, A., Lattanzi, S., Bateni, M. and Monemizadeh, M. (2026). Resilient coresets and
consistent clustering. ICML 2026, poster 65810 (https://icml.cc/virtual/2026/poster/65810).

Bansal, N., Cohen-Addad, V., Prabhu, M., Saulpic, D. and Schwiegelshohn, C. (2024). Sensitivity
sampling for k-means: worst case and stability optimal coreset bounds. arXiv:2405.01339.

Bachem, O., Lucic, M. and Krause, A. (2018). Scalable k-means clustering via lightweight
coresets. KDD 2018.

Draganov, A., Saulpic, D. and Schwiegelshohn, C. (2024). Settling time vs. accuracy tradeoffs
for clustering big data. arXiv:2404.01936.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from statcore.base import Estimator
from statcore.cluster import _coreset_kernels as CK
from statcore.cluster import _kernels as K
from statcore.cluster.coreset_solvers import ApproximationCheck, CoresetSolution, _costs, _solve
from statcore.cluster.metrics import disagreement
from statcore.compat import import_optional, renamed_attribute, renamed_keywords
from statcore.distributed import borrowed_backend
from statcore.results import Results
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive_int,
    check_random_state,
    check_scalar,
)

OBJECTIVES = ("kmeans", "kmedian")
METHODS = ("sensitivity", "uniform", "lightweight", "resilient")
ALGORITHMS = ("lloyd", "kmedian", "kmedoids", "sklearn", "consistent")
TRANSFORMS = ("linear", "noise", "quantise")

_POWER = {"kmeans": 2, "kmedian": 1}
#: rows of the uniform subsample the constant-factor solution is seeded on (non-resilient laws)
SEED_SAMPLE = 10_000
#: the hashed-key stream of the inclusion keys (seeding uses 64 t + j, assignment 2**40)
_INCLUSION_STREAM = (1 << 40) + 1


def _as_points(X, name: str = "X") -> np.ndarray:
    """``X`` as a read-only float64 C-contiguous 2-D array with finite entries.

    A float64 C-contiguous array is viewed, not copied (a coreset is meant for data that barely
    fit in memory); the view is read-only, and the caller's array keeps its own flags.
    """
    if isinstance(X, np.ndarray) and X.dtype == np.float64 and X.flags.c_contiguous:
        if X.ndim != 2:
            raise ValueError(f"`{name}` must be 2-D; got a {X.ndim}-D array of shape {X.shape}")
        # the sum is finite when every entry is (or, rarely, overflows: then look closer)
        if not math.isfinite(float(X.sum())) and not np.isfinite(X).all():
            as_float_array(X, name=name, ndim=2)  # raises, naming the first bad entry
        out = X.view()
    else:
        out = as_float_array(X, name=name, ndim=2)
    if out.shape[0] < 1 or out.shape[1] < 1:
        raise ValueError(f"`{name}` needs at least one row and one column; got shape {out.shape}")
    out.setflags(write=False)
    return out


def _as_weights(weights, n: int, name: str = "weights") -> np.ndarray | None:
    """Non-negative observation weights (not normalised: they are multiplicities)."""
    if weights is None:
        return None
    w = as_float_array(weights, name=name, ndim=1)
    if len(w) != n:
        raise ValueError(f"`{name}` must have one weight per row of `X` ({n}); got {len(w)}")
    if (w < 0).any():
        raise ValueError(
            f"`{name}` must be non-negative; got {int((w < 0).sum())} negative "
            f"(smallest {w.min():g})"
        )
    if w.sum() <= 0:
        raise ValueError(f"`{name}` must have a positive sum; got {w.sum():g}")
    w.setflags(write=False)
    return w


def _as_row_ids(row_ids, n: int) -> np.ndarray:
    ids = np.asarray(row_ids)
    if ids.shape != (n,) or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"`row_ids` must be {n} integer ids, one per row of `X`; got {ids.shape}")
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    ids.setflags(write=False)
    return ids


def _key_seed(random_state) -> tuple[int, np.random.Generator]:
    """An integer seed for hashed keys, and the Generator for everything else.

    An int seed is used as it is, so that two fits with the same ``random_state`` share their
    keys; any other ``random_state`` draws the seed from its stream.
    """
    rng = check_random_state(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state), rng
    return int(rng.integers(2**62)), rng


def _check_centres(S, d: int, name: str = "S") -> np.ndarray:
    S = as_float_array(S, name=name, ndim=(1, 2))
    if S.ndim == 1:
        S = S[None, :]
    if S.shape[1] != d:
        raise ValueError(f"`{name}` must have {d} columns like the data; got shape {S.shape}")
    if len(S) < 1:
        raise ValueError(f"`{name}` needs at least one centre; got none")
    return S


class Coreset(Estimator):
    """Weighted points whose clustering cost is to be summarised by a coreset.

    Parameters
    ----------
    X : array_like of shape (n, d)
        The points. A float64 C-contiguous array is used in place (read-only view), not copied.
    n_clusters : int
        The number of clusters (centres) k of the clustering the coreset is for
        (``1 <= n_clusters <= n``). ``k=`` is its old spelling (warns ``FutureWarning``).
    objective : {"kmeans", "kmedian"}
        The cost ``sum_p w_p d(p, S)^z``: squared (k-means) or plain (k-median) Euclidean
        distances to the nearest centre.
    weights : array_like of shape (n,), optional
        Non-negative multiplicities of the points (not normalised); 1 each by default.
    row_ids : array_like of int, shape (n,), optional
        The rows' ids, which the hashed keys of the resilient construction read (and
        ``indices`` of the results report): rows with equal ids in two data sets get equal
        keys. Default ``0..n-1``; :meth:`from_chunks` passes the rows' ids in the stream.

    Notes
    -----
    ``fit(size=m, method=...)`` draws the coreset:

    - ``"sensitivity"``: a constant-factor solution A (D^z seeding: k-means++ / k-median++, on
      a subsample of ``max(m, 10 000)`` rows drawn without replacement proportionally to the
      weights when the data are larger: one O(nkd) assignment pass then remains) with
      clusters C_a; each point's sensitivity bound ``s(p) = w_p (cost(p, A) / cost(C_a, A) +
      1 / w(C_a))``; m i.i.d. draws with probabilities ``q = s / sum(s)``, each of weight
      ``w_p / (m q_p)``. For every fixed S, ``cost_Omega(S)`` is unbiased for ``cost_P(S)`` and
      ``E[sum w] = sum_p w_p``; repeated draws of one point are merged, weights added.
    - ``"uniform"``: the same with ``q`` proportional to ``w``.
    - ``"lightweight"`` (Bachem et al., 2018): ``q = w/2W + w d(p, mu)^z / 2 sum w d^z`` with
      mu the weighted mean.
    - ``"resilient"``: consistent (hashed, seeded) sampling. The solution A comes from the
      consistent D^z seeding (an exponential race on hashed keys of the point ids), and point p
      is kept, with weight ``w_p / min(1, m q_p)``, iff its hashed key ``u_p < m q_p``
      (Poisson sampling: the expected size is at most m). Two fits with the same integer
      ``random_state`` on data whose rows correspond draw the same keys, so an eps-close copy
      of the data keeps nearly the same points, and eps = 0 gives the identical coreset. Its
      solutions assign points by the randomised-threshold rule (``slack``) and may use
      ``ceil((1 + bicriteria) k)`` centres.

    Fidelity: reconstruction. Neither paper's construction was read (the store holds their
    abstracts and first pages; searched again for arXiv 2606.17316 and ICML poster 65810).
    Reconstructed: sensitivity sampling with the bound above as the approximation-preserving
    construction (the abstract's sizes match it; Bansal et al., 2024, same group, analyse it);
    the check of the guarantee as cost_P(S_Omega) / best cost_P; the resilient coreset's
    consistent keys, consistent seeding, Poisson inclusion, the randomised-threshold
    assignment and the bi-criteria count; the eps-close harness of :func:`resilience`.

    References
    ----------
    Prabhu, M., Schwiegelshohn, C. and Shyam, S. (2026). Approximation preserving coresets.
    arXiv:2606.17316.

    Norouzi-Fard, A., Lattanzi, S., Bateni, M. and Monemizadeh, M. (2026). Resilient coresets
    and consistent clustering. ICML 2026 (poster 65810).

    Bansal, N., Cohen-Addad, V., Prabhu, M., Saulpic, D. and Schwiegelshohn, C. (2024).
    Sensitivity sampling for k-means: worst case and stability optimal coreset bounds.
    arXiv:2405.01339.

    Bachem, O., Lucic, M. and Krause, A. (2018). Scalable k-means clustering via lightweight
    coresets. KDD 2018.
    """

    method_name = "Coreset"

    k = renamed_attribute("k", "n_clusters")

    @renamed_keywords(k="n_clusters")
    def __init__(self, X, n_clusters, *, objective: str = "kmeans", weights=None, row_ids=None):
        self.X = _as_points(X)
        n = self.X.shape[0]
        self.n_clusters = check_positive_int(n_clusters, name="n_clusters")
        if self.n_clusters > n:
            raise ValueError(
                f"`n_clusters` must be at most the number of rows of `X` ({n}); got {n_clusters}"
            )
        self.objective = check_option(objective, name="objective", options=OBJECTIVES)
        self.weights = _as_weights(weights, n)
        self._ids = None if row_ids is None else _as_row_ids(row_ids, n)

    @property
    def row_ids(self) -> np.ndarray:
        """The rows' ids (``0..n-1`` unless given): the hashed keys' input, and ``indices``."""
        return self._row_ids()

    @property
    def nobs(self) -> int:
        return self.X.shape[0]

    @property
    def power(self) -> int:
        return _POWER[self.objective]

    def _repr_spec(self) -> str:
        return f"n_clusters={self.n_clusters}, objective={self.objective!r}, d={self.X.shape[1]}"

    def _w(self) -> np.ndarray:
        return np.ones(self.nobs) if self.weights is None else self.weights

    def _row_ids(self) -> np.ndarray:
        return np.arange(self.nobs, dtype=np.int64) if self._ids is None else self._ids

    def fit(
        self,
        *,
        size: int,
        method: str = "sensitivity",
        random_state=None,
        bicriteria: float = 0.0,
        slack: float = 0.0,
    ) -> CoresetResults:
        """Draw a coreset of (at most) ``size`` points.

        Parameters
        ----------
        size : int
            The number of draws m (``size >= n_clusters``). The coreset holds at most m
            distinct points (repeated draws merge). With ``size >= n`` the data themselves
            come back.
        method : {"sensitivity", "uniform", "lightweight", "resilient"}
            The sampling law (see the class Notes).
        random_state : None, int, SeedSequence or Generator
            For ``"resilient"``, an int is the seed of the hashed keys: equal seeds on
            row-aligned data give consistent coresets.
        bicriteria : float
            delta >= 0: solutions of this coreset use ``ceil((1 + delta) n_clusters)`` centres by
            default (the bi-criteria solutions of the resilient coreset).
        slack : float
            The randomised-threshold assignment of ``"resilient"``: a point goes to the
            lowest-numbered centre within a factor ``1 + slack * u`` of its nearest distance,
            ``u`` its hashed key (0, the default, gives nearest-centre assignment: on the
            uniform cube a positive slack did not lower the measured disagreement).

        Returns
        -------
        CoresetResults
        """
        size = check_positive_int(size, name="size")
        if size < self.n_clusters:
            raise ValueError(
                f"`size` must be at least `n_clusters` ({self.n_clusters}); got {size}"
            )
        method = check_option(method, name="method", options=METHODS)
        delta = check_scalar(bicriteria, name="bicriteria", low=0.0)
        slack = check_scalar(slack, name="slack", low=0.0)
        n_centres = math.ceil((1.0 + delta) * self.n_clusters - 1e-9)
        seed, rng = _key_seed(random_state)
        X, w, ids, power = self.X, self._w(), self._row_ids(), self.power
        if method == "resilient":
            centres = X[CK.seed_race(X, w, ids, seed, self.n_clusters, 1, power)]
        elif self.nobs > max(size, SEED_SAMPLE):
            # numpy draws without replacement in O(size) without `p`, in O(n size) with it
            p = None if self.weights is None else w / w.sum()
            rows = rng.choice(self.nobs, size=max(size, SEED_SAMPLE), replace=False, p=p)
            sample = np.ascontiguousarray(X[np.sort(rows)])
            centres = sample[
                CK.seed_dz(sample, np.ones(len(sample)), rng.random((self.n_clusters, 1)), power)
            ]
        else:
            centres = X[CK.seed_dz(X, w, rng.random((self.n_clusters, 1)), power)]
        centres = np.ascontiguousarray(centres)
        labels, sq = CK.nearest(X, centres)
        dist = sq if power == 2 else np.sqrt(sq)
        solution_cost = float(w @ dist)
        if size >= self.nobs:
            keep, point_weights = np.arange(self.nobs), w.copy()
        elif method == "resilient":
            q = CK.sensitivity(w, dist, labels, self.n_clusters)
            threshold = np.minimum(1.0, size * q)
            keys = CK.hashed_uniforms(seed, _INCLUSION_STREAM, ids)
            keep = np.flatnonzero(keys < threshold)
            point_weights = w[keep] / threshold[keep]
        else:
            if method == "sensitivity":
                q = CK.sensitivity(w, dist, labels, self.n_clusters)
            elif method == "uniform":
                q = w / w.sum()
            else:
                q = _lightweight(X, w, power)
            # rng.choice(n, size, p=q) draws exactly these, after an O(n) check of q
            cdf = np.cumsum(q)
            draws = np.minimum(
                cdf.searchsorted(rng.random(size) * cdf[-1], side="right"), self.nobs - 1
            )
            keep, counts = np.unique(draws, return_counts=True)
            point_weights = counts * w[keep] / (size * q[keep])
        points = X[keep].copy()
        for array in (points, point_weights, centres):
            array.setflags(write=False)
        return CoresetResults(
            method=f"{method.capitalize()} coreset ({self.objective})",
            nobs=self.nobs,
            model=self,
            random_state_used=seed,
            points=points,
            weights=point_weights,
            indices=ids[keep],
            size=size,
            construction=method,
            objective=self.objective,
            n_clusters=self.n_clusters,
            n_centres=n_centres,
            slack=slack if method == "resilient" else 0.0,
            data_weight=float(w.sum()),
            centres=centres,
            solution_cost=solution_cost,
            cluster_weight=np.bincount(labels, weights=w, minlength=self.n_clusters),
            cluster_counts=np.bincount(labels[keep], minlength=self.n_clusters),
        )

    @classmethod
    @renamed_keywords(k="n_clusters")
    def from_chunks(
        cls,
        chunks,
        n_clusters: int,
        *,
        size: int,
        objective: str = "kmeans",
        method: str = "sensitivity",
        random_state=None,
        backend=None,
    ) -> CoresetResults:
        """Merge-and-reduce: a coreset of data that arrive in pieces.

        Each chunk gets its own coreset of ``size`` draws; coresets of equal level are merged
        (their union, weights kept) and reduced (a coreset of the union) as in a binary counter,
        so that at most ``log2(#chunks)`` coresets are held at once; the survivors are merged
        and reduced once more at the end.

        Parameters
        ----------
        chunks : iterable of arrays (or ``(X, weights)`` pairs), or a dask array
            The data, one piece at a time; rows are numbered through the stream (the
            result's ``indices``). A dask array's row blocks are its chunks.
        n_clusters, size, objective, method, random_state
            As in :class:`Coreset` and :meth:`fit` (``method`` is used at every level);
            ``k=`` is the old spelling of ``n_clusters`` (warns ``FutureWarning``).
        backend : None, str, Backend or dask Client
            None: the chunks are read and reduced one at a time (constant memory). Otherwise the
            chunk coresets are built in parallel on the backend
            (:func:`statcore.distributed.borrowed_backend`); with ``"dask"`` (or a Client) and a
            dask array, each block's coreset is built on the worker that holds the block. The
            merge tree and every random stream are the same either way, so all paths give the
            identical coreset for the same ``random_state``.

        Returns
        -------
        CoresetResults
            ``model`` is a :class:`Coreset` of the final merged points (the full data are not
            held): :meth:`CoresetResults.cost` needs the data passed as ``X``.
        """
        k = check_positive_int(n_clusters, name="n_clusters")
        size = check_positive_int(size, name="size")
        if size < k:
            raise ValueError(f"`size` must be at least `n_clusters` ({k}); got {size}")
        objective = check_option(objective, name="objective", options=OBJECTIVES)
        method = check_option(method, name="method", options=METHODS)
        root = _root_sequence(random_state)
        spec = _ReduceSpec(n_clusters=k, size=size, objective=objective, method=method)
        leaf_seeds = _SeedStream(root.spawn(1)[0])
        merge_seeds = _SeedStream(root.spawn(1)[0])
        leaves = _leaf_coresets(chunks, spec, leaf_seeds, backend)
        stack: list[tuple[int, _Weighted]] = []
        total_weight, n_total = 0.0, 0
        for leaf, (n_rows, weight) in leaves:
            n_total += n_rows
            total_weight += weight
            level, part = 0, leaf
            while stack and stack[-1][0] == level:
                _, other = stack.pop()
                part = _reduce(_Weighted.union(other, part), spec, merge_seeds.next())
                level += 1
            stack.append((level, part))
        if not stack:
            raise ValueError("`chunks` held no data")
        merged = stack[0][1]
        for _, part in stack[1:]:
            merged = _Weighted.union(merged, part)
        if len(stack) > 1:
            merged = _reduce(merged, spec, merge_seeds.next())
        model = cls(
            merged.X,
            min(k, len(merged.X)),
            objective=objective,
            weights=merged.w,
            row_ids=merged.ids,
        )
        final = model.fit(size=len(merged.X), method="uniform", random_state=merge_seeds.next())
        return final._as_streamed(n_total, total_weight, method, size)


@dataclass(frozen=True)
class _ReduceSpec:
    n_clusters: int
    size: int
    objective: str
    method: str


@dataclass(frozen=True)
class _Weighted:
    """A weighted point set with the stream ids of its rows."""

    X: np.ndarray
    w: np.ndarray
    ids: np.ndarray

    @staticmethod
    def union(a: _Weighted, b: _Weighted) -> _Weighted:
        return _Weighted(
            np.concatenate([a.X, b.X]), np.concatenate([a.w, b.w]), np.concatenate([a.ids, b.ids])
        )


class _SeedStream:
    """Child seeds handed out in order, the same whichever backend builds the coresets."""

    def __init__(self, sequence: np.random.SeedSequence):
        self._sequence = sequence

    def next(self) -> int:
        return int(self._sequence.spawn(1)[0].generate_state(1, np.uint64)[0] >> np.uint64(2))


def _root_sequence(random_state) -> np.random.SeedSequence:
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    rng = check_random_state(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.SeedSequence(int(random_state))
    return np.random.SeedSequence(int(rng.integers(2**62)))


def _reduce(part: _Weighted, spec: _ReduceSpec, seed: int) -> _Weighted:
    """A coreset of a weighted point set, ids carried through."""
    if len(part.X) <= spec.size:
        return part
    model = Coreset(
        part.X,
        min(spec.n_clusters, len(part.X)),
        objective=spec.objective,
        weights=part.w,
        row_ids=part.ids,
    )
    res = model.fit(size=spec.size, method=spec.method, random_state=seed)
    return _Weighted(np.asarray(res.points), np.asarray(res.weights), np.asarray(res.indices))


@dataclass(frozen=True)
class _LeafTask:
    """One chunk's coreset (a picklable callable, for process and dask workers)."""

    spec: _ReduceSpec

    def __call__(self, item):
        block, offset, seed = item
        if isinstance(block, tuple):
            X, w = block
        else:
            X, w = block, None
        X = _as_points(np.asarray(X, dtype=np.float64), name="chunks")
        w = np.ones(len(X)) if w is None else _as_weights(w, len(X), name="chunks weights")
        ids = np.arange(offset, offset + len(X), dtype=np.int64)
        leaf = _reduce(_Weighted(np.array(X), np.array(w), ids), self.spec, seed)
        return leaf, (len(X), float(w.sum()))


def _leaf_coresets(chunks, spec: _ReduceSpec, seeds: _SeedStream, backend):
    """``(leaf coreset, (rows, weight))`` per chunk, in order."""
    task = _LeafTask(spec)
    dask_array = _dask_array(chunks)
    if dask_array is not None:
        if dask_array.ndim != 2:
            raise ValueError(f"`chunks` must be a 2-D dask array; got {dask_array.ndim}-D")
        dask_array = dask_array.rechunk({1: -1})
        sizes = dask_array.chunks[0]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
        blocks = dask_array.to_delayed().ravel()
        if backend is None:
            return (
                task((block.compute(), int(off), seeds.next()))
                for block, off in zip(blocks, offsets, strict=True)
            )
        if backend == "dask" or _is_dask_client(backend):
            dask = import_optional("dask", "dist")
            with borrowed_backend(backend) as pool:
                jobs = [
                    dask.delayed(task)((block, int(off), seeds.next()))
                    for block, off in zip(blocks, offsets, strict=True)
                ]
                return pool.client.gather(pool.client.compute(jobs))
        chunks = (block.compute() for block in blocks)
    if backend is None:
        return (task(item) for item in _numbered(chunks, seeds))
    items = list(_numbered(chunks, seeds))
    with borrowed_backend(backend) as pool:
        return pool.map(task, items)


def _numbered(chunks, seeds: _SeedStream):
    if isinstance(chunks, np.ndarray):
        raise TypeError(
            "`chunks` must be an iterable of arrays (or (X, weights) pairs) or a dask array; "
            "got one ndarray: use Coreset(X, k).fit() for data in memory"
        )
    offset = 0
    for chunk in chunks:
        rows = len(chunk[0]) if isinstance(chunk, tuple) else len(chunk)
        yield chunk, offset, seeds.next()
        offset += rows


def _dask_array(obj):
    import sys

    if "dask.array" not in sys.modules:
        return None
    da = sys.modules["dask.array"]
    return obj if isinstance(obj, da.Array) else None


def _is_dask_client(obj) -> bool:
    import sys

    distributed = sys.modules.get("distributed")
    return distributed is not None and isinstance(obj, distributed.Client)


def _lightweight(X, w, power) -> np.ndarray:
    mean = (w @ X) / w.sum()
    dist = _costs(X, mean[None, :], power)
    spread = w @ dist
    q = 0.5 * w / w.sum()
    if spread > 0:
        q = q + 0.5 * w * dist / spread
    return q / q.sum()


def _coreset_plot(res, ax=None, **kwargs):
    """The first two coordinates of the data (grey) and the coreset (area ~ weight)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    model = res.model
    if model is not None and res.data_available:
        X = model.X
        shown = X[:: max(1, len(X) // 5000)]
        ax.scatter(shown[:, 0], shown[:, -1], s=2, c="0.8", label="data")
    sizes = 200 * res.weights / res.weights.max()
    ax.scatter(res.points[:, 0], res.points[:, -1], s=sizes, alpha=0.6, label="coreset", **kwargs)
    ax.scatter(res.centres[:, 0], res.centres[:, -1], marker="x", c="k", label="solution A")
    ax.legend(loc="best")
    ax.set_title(res.method)
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class CoresetResults(Results):
    """A weighted coreset, its construction's solution, and what can be measured with it.

    Attributes
    ----------
    points : ndarray of shape (m', d)
        The distinct sampled points (m' <= size).
    weights : ndarray of shape (m',)
        Their weights; ``total_weight = weights.sum()`` estimates ``data_weight`` (n for
        unit-weight data) without bias.
    indices : ndarray of shape (m',)
        Their rows in the data (in the stream, for :meth:`Coreset.from_chunks`).
    size : int
        The number of draws asked for.
    construction : str
        The sampling law (``method`` of :meth:`Coreset.fit`).
    objective : str
    n_clusters, n_centres : int
        The clustering's number of clusters k (``k`` is its old name, warns
        ``FutureWarning``), and the centres solutions use by default (``n_clusters``, or the
        bi-criteria count ``ceil((1 + delta) n_clusters)``).
    slack : float
        The randomised-threshold assignment's slack (0: nearest centre).
    data_weight : float
        ``sum_p w_p`` over the data.
    centres : ndarray of shape (k, d)
        The construction's constant-factor solution A (D^z seeding).
    solution_cost : float
        ``cost_P(A)``.
    cluster_weight, cluster_counts : ndarray of shape (k,)
        Per cluster of A: its weight in the data and its number of coreset points.

    Notes
    -----
    Vocabulary: ``n_clusters`` counts clusters (centres of the clustering), ``n_centres``
    the centres solutions use (more with bi-criteria); see :mod:`statcore.cluster`.
    """

    points: np.ndarray
    weights: np.ndarray
    indices: np.ndarray
    size: int
    construction: str
    objective: str
    n_clusters: int
    n_centres: int
    slack: float
    data_weight: float
    centres: np.ndarray
    solution_cost: float
    cluster_weight: np.ndarray
    cluster_counts: np.ndarray
    data_available: bool = True

    _plots: ClassVar[dict] = {"points": _coreset_plot}

    k = renamed_attribute("k", "n_clusters")

    @property
    def power(self) -> int:
        return _POWER[self.objective]

    @property
    def total_weight(self) -> float:
        """``sum w`` of the coreset: an unbiased estimate of ``data_weight``."""
        return float(self.weights.sum())

    @property
    def n_points(self) -> int:
        """Distinct points in the coreset."""
        return len(self.points)

    def _as_streamed(self, n_total, total_weight, method, size) -> CoresetResults:
        import dataclasses

        return dataclasses.replace(
            self,
            method=f"{method.capitalize()} coreset ({self.objective}), merge-and-reduce",
            nobs=n_total,
            data_weight=total_weight,
            construction=method,
            size=size,
            data_available=False,
            slack=self.slack,
        )

    # ---- costs -------------------------------------------------------------------------------

    def _data(self, X, weights):
        if X is None:
            if not self.data_available or self.model is None:
                raise ValueError(
                    "this coreset was built by merge-and-reduce and does not hold the data; "
                    "pass them as `X` (and `weights`)"
                )
            return self.model.X, self.model._w()
        X = _as_points(X)
        w = _as_weights(weights, len(X))
        return X, (np.ones(len(X)) if w is None else w)

    def cost(self, S, X=None, weights=None) -> float:
        """``cost_P(S) = sum_p w_p d(p, S)^z`` on the data (or on ``X`` with ``weights``)."""
        X, w = self._data(X, weights)
        return float(w @ _costs(X, _check_centres(S, X.shape[1]), self.power))

    def coreset_cost(self, S) -> float:
        """``cost_Omega(S) = sum_q w_q d(q, S)^z`` on the coreset."""
        S = _check_centres(S, self.points.shape[1])
        return float(self.weights @ _costs(self.points, S, self.power))

    def distortion(self, S, X=None, weights=None) -> float:
        """``max(cost_Omega(S) / cost_P(S), cost_P(S) / cost_Omega(S))`` (1 is exact)."""
        full, core = self.cost(S, X, weights), self.coreset_cost(S)
        if full == 0.0 and core == 0.0:
            return 1.0
        if full == 0.0 or core == 0.0:
            return math.inf
        return max(core / full, full / core)

    def evaluate(self, S_grid, X=None, weights=None) -> pd.DataFrame:
        """Costs of many solutions at once: one row per centre set of ``S_grid``.

        ``S_grid`` is a sequence of (k_i, d) arrays or one (g, k, d) array. Columns:
        ``solution, n_centres, cost_data, cost_coreset, ratio`` (coreset / data) and
        ``distortion``.
        """
        if isinstance(S_grid, np.ndarray) and S_grid.ndim == 2:
            raise ValueError(
                "`S_grid` must be a sequence of centre sets or a 3-D array; got one 2-D "
                "array (use cost() for a single solution)"
            )
        rows = []
        for i, S in enumerate(S_grid):
            full = self.cost(S, X, weights)
            core = self.coreset_cost(S)
            rows.append(
                {
                    "solution": i,
                    "n_centres": len(np.atleast_2d(S)),
                    "cost_data": full,
                    "cost_coreset": core,
                    "ratio": core / full if full > 0 else math.nan,
                    "distortion": self.distortion(S, X, weights),
                }
            )
        if not rows:
            raise ValueError("`S_grid` holds no solution")
        return pd.DataFrame(rows)

    def predict(self, S, X=None) -> np.ndarray:
        """Labels of the data (or of ``X``) under ``S``: the nearest centre, or for a resilient
        coreset the randomised-threshold rule (row ids: the data's, or ``X``'s own rows)."""
        if X is None:
            X, _ = self._data(None, None)
            ids = self.model._row_ids()
        else:
            X = _as_points(X)
            ids = np.arange(len(X), dtype=np.int64)
        S = _check_centres(S, X.shape[1])
        if self.slack > 0:
            return CK.threshold_assign(X, S, self.random_state_used, ids, self.slack, self.power)[0]
        return K.assign_nearest(X, S)[0]

    # ---- solving -----------------------------------------------------------------------------

    def solve(
        self,
        algorithm: str | None = None,
        *,
        n_centres: int | None = None,
        n_init: int = 3,
        maxiter: int = 300,
        tol: float = 1e-6,
        refine: int | None = None,
        random_state=None,
    ) -> CoresetSolution:
        """Cluster the weighted coreset, then (k-means) polish the solution on the data.

        Parameters
        ----------
        algorithm : {"lloyd", "kmedian", "kmedoids", "sklearn", "consistent"}, optional
            ``"lloyd"``: D^z seeding + weighted Lloyd (ours); ``"kmedian"``: D^1 seeding +
            weighted Lloyd with Weiszfeld steps (continuous k-median); ``"kmedoids"``: weighted
            alternating k-medoids (centres are coreset points); ``"sklearn"``: scikit-learn's
            ``KMeans`` with ``sample_weight`` (the ``cluster`` extra); ``"consistent"``: the
            consistent seeding on the rows' hashed keys + Lloyd / Weiszfeld (the resilient
            pipeline: equal seeds give equal starts on eps-close data). Default: consistent
            for resilient coresets, else lloyd (k-means) or kmedian (k-median).
        n_centres : int, optional
            Centres to place; default ``n_centres`` of the fit (k, or the bi-criteria count).
        n_init : int
            Greedy D^z seeding starts (k-means++ with ``2 + log k`` local trials, as
            scikit-learn), each followed by weighted Lloyd and single swaps (the cheapest centre
            moved onto the costliest point while that lowers the cost); ``"lloyd"`` and
            ``"kmedian"`` also start from the construction's solution A when it has
            ``n_centres`` centres. The lowest coreset cost wins (``"consistent"`` runs once). On
            the imbalanced blobs of the tests (cluster sizes 1 to 6,000) Lloyd alone left a
            far cluster of one point uncovered (cost 1.11x to 1.32x) in 9 of 12 fits with 1
            start and 1 in 12 with 10; with the swaps, 3 starts left none.
        maxiter, tol : int, float
            Iteration limit and relative cost decrease that stops the iterations.
        refine : int, optional
            Weighted Lloyd steps on the full data after the coreset solve (k-means only:
            ``"lloyd"``, ``"sklearn"``), each one O(n k d) pass like the construction's. The
            coreset's sampling error sets the centres off by about 1/m' of their clusters'
            spread (a 1,000-point coreset of 20 clusters: about 2% above the optimum); one step
            on the data removes nearly all of it (0.1%). Default 1 for the k-means algorithms
            when the coreset holds its data, else 0 (merge-and-reduce coresets, k-median,
            k-medoids, and the consistent pipeline, whose starts must stay consistent).
        random_state : None, int, SeedSequence or Generator

        Returns
        -------
        CoresetSolution
            ``iterations`` is the chosen start's record (warns if it did not converge);
            ``coreset_cost_value`` is the coreset cost of the returned (refined) centres.
        """
        if algorithm is None:
            if self.construction == "resilient":
                algorithm = "consistent"
            else:
                algorithm = "lloyd" if self.objective == "kmeans" else "kmedian"
        algorithm = check_option(algorithm, name="algorithm", options=ALGORITHMS)
        n_centres = (
            self.n_centres if n_centres is None else check_positive_int(n_centres, name="n_centres")
        )
        if n_centres > self.n_points:
            raise ValueError(
                f"`n_centres` must be at most the coreset's {self.n_points} points; got {n_centres}"
            )
        n_init = check_positive_int(n_init, name="n_init")
        maxiter = check_positive_int(maxiter, name="maxiter")
        tol = check_scalar(tol, name="tol", low=0.0)
        kmeans = algorithm in ("lloyd", "sklearn")
        if refine is None:
            refine = int(kmeans and self.data_available and self.model is not None)
        else:
            refine = check_positive_int(refine, name="refine", minimum=0)
            if refine and not kmeans:
                raise ValueError(
                    f"`refine` steps are k-means Lloyd steps; algorithm {algorithm!r} takes "
                    f"refine=0, got {refine}"
                )
            if refine:
                self._data(None, None)  # raises when the coreset does not hold the data
        starts = ()
        if algorithm in ("lloyd", "kmedian") and len(self.centres) == n_centres:
            starts = (self.centres,)
        centres, cost, record = _solve(
            self.points,
            self.weights,
            self.indices,
            self.random_state_used,
            self.power,
            algorithm,
            n_centres,
            n_init,
            maxiter,
            tol,
            check_random_state(random_state),
            starts,
        )
        if refine:
            X, w = self._data(None, None)
            for _ in range(refine):
                centres = CK.lloyd_step(X, w, centres)
            cost = self.coreset_cost(centres)
        record.warn("raise maxiter or loosen tol")
        centres.setflags(write=False)
        return CoresetSolution(
            method=f"{algorithm} on a {self.construction} coreset",
            nobs=self.n_points,
            iterations=record,
            centres=centres,
            coreset_cost_value=cost,
            algorithm=algorithm,
            coreset=self,
        )

    def check_approximation(
        self,
        algorithm: str | None = None,
        *,
        n_repeats: int = 10,
        alpha: float = 0.05,
        n_reference: int = 3,
        n_init: int = 3,
        reference_cost: float | None = None,
        random_state=None,
    ) -> ApproximationCheck:
        """Monte Carlo check of approximation preservation of this coreset:
        ``cost_P(S_Omega) / best cost_P``.

        Solves this coreset ``n_repeats`` times with independent starts of ``algorithm`` (as
        :meth:`solve`; nothing is redrawn or refitted) and divides each solution's cost on the
        data by the best cost found: ``n_reference`` runs of the same algorithm on the full
        data (or ``reference_cost``, a known good cost, when given), or any coreset solution if
        better (the exact optimum is unknown, so this reference is itself an upper bound and
        the ratios are >= 1 by construction). ``n_init`` is the starts of each coreset solve. A
        deterministic solver (``"consistent"``) gives equal ratios and a zero-width interval.
        To study a construction rather than one coreset, call this on several fits.

        Returns
        -------
        ApproximationCheck
            The ratios, their mean and a t-interval at level ``1 - alpha``.
        """
        if not self.data_available or self.model is None:
            raise ValueError("check_approximation needs the data; this coreset does not hold them")
        n_repeats = check_positive_int(n_repeats, name="n_repeats", minimum=2)
        n_reference = check_positive_int(n_reference, name="n_reference")
        alpha = check_scalar(
            alpha, name="alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
        )
        rng = check_random_state(random_state)
        model = self.model
        costs = [
            self.cost(self.solve(algorithm, n_init=n_init, random_state=rng).centres)
            for _ in range(n_repeats)
        ]
        if reference_cost is None:
            reference_cost = self._reference_cost(algorithm, n_reference, rng)
        else:
            reference_cost = check_scalar(reference_cost, name="reference_cost", low=0.0)
        reference = reference_cost
        costs = np.asarray(costs)
        best = min(reference, costs.min())
        ratios = costs / best
        sd = ratios.std(ddof=1)
        half = stats.t.ppf(1 - alpha / 2, n_repeats - 1) * sd / math.sqrt(n_repeats)
        return ApproximationCheck(
            method="Approximation check (Monte Carlo)",
            nobs=model.nobs,
            ratios=ratios,
            costs=costs,
            best_cost=best,
            reference_cost=reference,
            estimate=float(ratios.mean()),
            conf_low=float(ratios.mean() - half),
            conf_high=float(ratios.mean() + half),
            alpha=alpha,
            algorithm=algorithm or "default",
            size=self.size,
            construction=self.construction,
        )

    def _reference_cost(self, algorithm, n_reference, rng) -> float:
        """The best data cost of ``n_reference`` full-data runs of ``algorithm``."""
        if algorithm in (None, "consistent"):
            algorithm = "lloyd" if self.objective == "kmeans" else "kmedian"
        model = self.model
        X, w, ids, k = model.X, model._w(), model._row_ids(), self.n_clusters
        return min(
            self.cost(_solve(X, w, ids, 0, self.power, algorithm, k, 1, 300, 1e-6, rng)[0])
            for _ in range(n_reference)
        )

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["construction"] = self.construction
        row["objective"] = self.objective
        row["n_clusters"] = self.n_clusters
        row["size"] = self.size
        row["n_points"] = self.n_points
        row["total_weight"] = self.total_weight
        row["data_weight"] = self.data_weight
        row["weight_ratio"] = self.total_weight / self.data_weight
        row["solution_cost"] = self.solution_cost
        return row

    def tidy(self) -> pd.DataFrame:
        """One row per cluster of the construction's solution A."""
        return pd.DataFrame(
            {
                "cluster": np.arange(len(self.centres)),
                "data_weight": self.cluster_weight,
                "coreset_points": self.cluster_counts,
            }
        )

    def _repr_lines(self):
        return [
            f"  {self.n_points} points from {self.size} draws; sum(w) = {self.total_weight:.6g} "
            f"vs data weight {self.data_weight:.6g} "
            f"(ratio {self.total_weight / self.data_weight:.4f})"
        ]


__all__ = [
    "ApproximationCheck",
    "Coreset",
    "CoresetResults",
    "CoresetSolution",
    "disagreement",
]
