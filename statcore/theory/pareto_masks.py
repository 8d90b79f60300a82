"""Pareto frontier and covers of benchmark-risk vectors.

Weak monotonicity (Yang, Di Gennaro, So and Wegel 2026): if a model's risk is no larger than
another's on every benchmark, its risk on the new (target) task is no larger either. Then the
target's best model lies on the Pareto frontier ``P`` of the benchmark-risk vectors, and a learner
with ``n`` target samples can restrict itself to ``P`` (or to a cover of ``P``) and pay
``log |P|`` instead of ``log |F|``.

- :func:`pareto_frontier`: the non-dominated models (a pivot prefilter, then a sort and a sweep
  for two or three benchmarks, a sort-filter skyline otherwise), with an ``eps``-dominance
  variant.
- :func:`pareto_cover`: a greedy farthest-point cover of the frontier in the sup-norm.

The learners that use them are in :mod:`statcore.theory.frontier_selector`, the simulation
design in :mod:`statcore.theory.frontier_design`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from statcore.theory import _frontier_kernels as _K
from statcore.validation import as_float_array, check_scalar, describe

REFERENCE = (
    "Yang, F., Di Gennaro, F., So, G. and Wegel, T. (2026). Hedging on the frontier: learning "
    "new tasks with few samples. arXiv:2605.30997 (ICML 2026)."
)


# --------------------------------------------------------------------------------------------
# input checks


def _labels_of(value) -> pd.Index | None:
    return value.index if isinstance(value, pd.DataFrame | pd.Series) else None


def _check_risks(benchmark_risks, *, name: str) -> tuple[np.ndarray, pd.Index | None]:
    """Risks as a float (M, K) copy, plus the model labels of a DataFrame (unique)."""
    labels = _labels_of(benchmark_risks)
    if labels is not None and not labels.is_unique:
        dup = labels[labels.duplicated()].tolist()[:3]
        raise ValueError(f"`{name}` has duplicate model labels in its index: {dup}")
    R = as_float_array(benchmark_risks, name=name, ndim=(1, 2), min_rows=1)
    if R.ndim == 1:
        R = R[:, None]
    if R.shape[1] == 0:
        raise ValueError(f"`{name}` has no benchmark columns")
    if (R < 0).any():
        where = tuple(np.argwhere(R < 0)[0].tolist())
        raise ValueError(
            f"`{name}` must hold non-negative risks; found {int((R < 0).sum())} negative "
            f"value(s) (first {R[where]:g} at index {where}); shift or transform losses that "
            "can be negative (dominance is unchanged by increasing transforms)"
        )
    return R, labels


def _check_eps(eps, n_benchmarks: int) -> np.ndarray:
    values = as_float_array(eps, name="eps", ndim=(0, 1))
    values = np.broadcast_to(values, (n_benchmarks,)) if values.ndim == 0 else values
    if values.shape != (n_benchmarks,):
        raise ValueError(
            f"`eps` must be a scalar or hold one slack per benchmark ({n_benchmarks}); "
            f"got shape {values.shape}"
        )
    if (values < 0).any():
        raise ValueError(f"`eps` must be non-negative; got {values.tolist()}")
    return np.ascontiguousarray(values, dtype=np.float64)


def _align(frame_or_array, models: pd.Index, *, name: str, axis: int) -> np.ndarray:
    """Reorder a DataFrame's model axis (index for ``axis=0``, columns for 1) to ``models``;
    refuse labels that do not match. Arrays must already have ``len(models)`` along ``axis``."""
    if isinstance(frame_or_array, pd.DataFrame):
        labels = frame_or_array.index if axis == 0 else frame_or_array.columns
        if not labels.is_unique:
            raise ValueError(f"`{name}` has duplicate model labels")
        missing = models.difference(labels, sort=False)
        extra = labels.difference(models, sort=False)
        if len(missing) or len(extra):
            raise ValueError(
                f"`{name}` and `models` list different models: missing from `{name}` "
                f"{missing.tolist()[:5]}, not in `models` {extra.tolist()[:5]}"
            )
        return frame_or_array.reindex(models, axis=axis)
    size = np.shape(frame_or_array)[axis] if np.ndim(frame_or_array) > axis else None
    if size != len(models):
        where = "rows" if axis == 0 else "columns"
        raise ValueError(
            f"`{name}` must have one {where[:-1]} per model ({len(models)} {where}); got "
            f"{describe(frame_or_array)}"
        )
    return frame_or_array


# --------------------------------------------------------------------------------------------
# frontier and cover


# pivots per filtering round, and the shrink factor a round must reach for another to follow:
# sixteen low-sum rows already remove most of a cloud that does not trade off, and a round
# costs one pass over the survivors
_N_PIVOTS = 16
_SHRINK = 0.5


def _lex_order(columns: list[np.ndarray]) -> np.ndarray:
    """The order that sorts rows lexicographically by ``columns`` (first column first).

    One quicksort of the first column when it has no ties (continuous risks): numpy's
    ``lexsort`` is a stable merge sort per key, ten times slower.
    """
    order = np.argsort(columns[0])
    first = columns[0][order]
    if len(columns) > 1 and (first[1:] == first[:-1]).any():
        order = np.lexsort(columns[::-1])
    return order


def _frontier_mask(R: np.ndarray, eps: np.ndarray) -> np.ndarray:
    rows = _K.pivot_filter(R, eps, _N_PIVOTS, _SHRINK)
    S = R[rows]
    K = S.shape[1]
    if K == 2 and not eps.any():
        keep = _K.skyline_2d(S[:, 0].copy(), S[:, 1].copy(), _lex_order([S[:, 0], S[:, 1]]))
    elif K == 3 and not eps.any():
        rank2, n_ranks = _K.dense_ranks(S[:, 1].copy(), np.argsort(S[:, 1]))
        keep = _K.skyline_3d(S, _lex_order([S[:, k] for k in range(3)]), rank2, n_ranks)
    else:
        keep = _K.skyline_sorted(S, _lex_order([S.sum(axis=1), *S.T]), eps)
    mask = np.zeros(len(R), dtype=bool)
    mask[rows[keep]] = True
    return mask


def _brute_force_mask(R: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """The O(M^2 K) definition, blocked: the reference the skylines are tested against."""
    M = len(R)
    keep = np.ones(M, dtype=bool)
    for start in range(0, M, 256):
        block = R[start : start + 256]
        below = np.all(R[:, None, :] <= block[None, :, :] - eps, axis=2)
        differ = np.any(R[:, None, :] != block[None, :, :], axis=2)
        keep[start : start + 256] = ~np.any(below & differ, axis=0)
    return keep


def pareto_frontier(benchmark_risks, eps=0.0):
    """The models no other model dominates on the benchmarks (the Pareto frontier ``P``).

    Model ``g`` eps-dominates ``f`` when ``R_k(g) <= R_k(f) - eps_k`` on every benchmark ``k``
    and their risk vectors differ; with ``eps = 0`` this is Pareto dominance, and models with
    equal risk vectors stay (or leave) together. A larger ``eps`` keeps more models: only
    models beaten by a margin on every benchmark are dropped, which is the safe pruning under
    monotonicity with slack.

    Parameters
    ----------
    benchmark_risks : array_like of shape (M, K) or DataFrame
        Risk of each model (rows; the DataFrame's index names them) on each benchmark
        (columns); lower is better, non-negative, finite. Nothing is modified.
    eps : float or array_like of shape (K,)
        Dominance margin, per benchmark or shared (non-negative).

    Returns
    -------
    ndarray of bool of shape (M,), or Series of bool indexed by the models
        ``True`` for frontier models; ``benchmark_risks[mask]`` is the frontier.

    Notes
    -----
    With ``eps = 0`` the frontier is unchanged by any strictly increasing transform of each
    benchmark's risks (only their order enters); with ``eps > 0`` the margin is in the units
    of the risks. First a linear-time prefilter drops the rows that a few low-sum pivot rows
    dominate (on risks that do not trade off, most of them). Then, with ``eps = 0``, two
    benchmarks take one lexicographic sort and a sweep, three a sort and a sweep over a Fenwick
    tree of the smallest third risk by rank of the second (Kung, Luccio and Preparata 1975),
    both O(M log M). Otherwise a sort-filter skyline: rows sorted by their sum (a dominating
    row comes first) are compared only with the frontier found so far,
    ``O(M log M + M |P| K)``.

    Fidelity: the frontier is the paper's; the eps-dominance variant is our reading of its
    approximate monotonicity (only the abstract was available).

    References
    ----------
    Yang, Di Gennaro, So and Wegel (2026), arXiv:2605.30997. Chomicki, Godfrey, Gryz and Liang
    (2003). Skyline with presorting. *ICDE*. Kung, Luccio and Preparata (1975). On finding the
    maxima of a set of vectors. *J. ACM* 22, 469-476.

    Examples
    --------
    >>> pareto_frontier([[0.1, 0.9], [0.5, 0.5], [0.6, 0.6], [0.9, 0.1]]).tolist()
    [True, True, False, True]
    """
    R, labels = _check_risks(benchmark_risks, name="benchmark_risks")
    mask = _frontier_mask(R, _check_eps(eps, R.shape[1]))
    return mask if labels is None else pd.Series(mask, index=labels, name="on_frontier")


def _cover_path(R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Farthest-point (Gonzalez) order of the rows in the sup-norm and, for each prefix of
    ``k`` centres, its covering radius: the cover of radius ``r`` is the shortest prefix whose
    radius is at most ``r``. The first centre is the lexicographically smallest row."""
    M = len(R)
    order = np.empty(M, dtype=np.int64)
    radii = np.empty(M)
    first = int(np.lexsort(R.T[::-1])[0])
    order[0] = first
    dist = np.max(np.abs(R - R[first]), axis=1)
    for k in range(1, M + 1):
        radii[k - 1] = dist.max()
        if k == M:
            break
        nxt = int(np.argmax(dist))
        order[k] = nxt
        dist = np.minimum(dist, np.max(np.abs(R - R[nxt]), axis=1))
    return order, radii


def pareto_cover(frontier, r):
    """Representatives of the frontier such that every frontier model is within ``r`` of one
    (sup-norm over benchmarks); their number is the Pareto covering number ``N(P, r)``.

    Parameters
    ----------
    frontier : array_like of shape (m, K) or DataFrame
        Benchmark risks of the frontier models (``benchmark_risks[pareto_frontier(...)]``).
    r : float
        Radius (non-negative, in the units of the risks).

    Returns
    -------
    ndarray of int, or Index
        Positions of the representatives in ``frontier`` (the model labels for a DataFrame),
        in the order the greedy traversal picked them.

    Notes
    -----
    Farthest-point traversal (Gonzalez 1985): start from the lexicographically smallest risk
    vector and add the model farthest from the chosen ones until all lie within ``r``. The
    chosen models are more than ``r`` apart, so their number is at most the ``r``-packing
    number of ``P``, hence at most the covering number at radius ``r / 2``: the greedy count is
    within that factor of the smallest cover. The covers are nested in ``r``.

    Fidelity: reconstruction. The paper's Pareto covering number adapts to the frontier's
    geometry (only the abstract was available); the sup-norm cover of the frontier's risk
    vectors is our stand-in (a model within ``r`` of a representative on every benchmark is,
    under a monotonicity modulus ``omega``, within ``omega(r)`` of it on the target). A
    one-sided cover (every frontier model dominated up to ``r`` by a representative) is a
    natural alternative the paper may use instead; the two-sided one implies it.

    References
    ----------
    Yang, Di Gennaro, So and Wegel (2026), arXiv:2605.30997. Gonzalez, T. (1985). Clustering to
    minimize the maximum intercluster distance. *Theor. Comput. Sci.* 38, 293-306.
    """
    R, labels = _check_risks(frontier, name="frontier")
    r = check_scalar(r, name="r", low=0.0)
    order, radii = _cover_path(R)
    k = int(np.argmax(radii <= r)) + 1
    chosen = order[:k]
    return chosen if labels is None else labels[chosen]


__all__ = ["REFERENCE", "pareto_cover", "pareto_frontier"]
