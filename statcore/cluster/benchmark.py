"""CHB's compute-aware clustering benchmark: :class:`ClusteringBenchmark` runs clusterers over
datasets, representations, tracks and seeds; its results rank the methods, bin the datasets by
their hardness fingerprints to expose ranking reversals (:meth:`BenchmarkResults.regimes`) and
attribute a representation's gain to fingerprint shifts (:meth:`BenchmarkResults.audit`).

The external metrics (:func:`external_scores`: ARI, AMI, NMI, Hungarian-matched accuracy) are
computed here from the contingency table, so that labels from any clusterer can be scored.
"""

from __future__ import annotations

import copy
import itertools
import numbers
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from statcore.base import Estimator
from statcore.cluster import _kernels as K
from statcore.cluster.simulate import BENCHMARK_DATASETS, ClusteringDataset, load_benchmark_datasets
from statcore.compat import import_optional
from statcore.distributed import borrowed_backend
from statcore.results import EstimationResults, Results, Summary
from statcore.results.plotting import get_ax, plot_coefficients
from statcore.validation import (
    as_float_array,
    check_alpha,
    check_design,
    check_option,
    check_positive_int,
    check_random_state,
    describe,
)

#: Clusterers the benchmark knows by name: scikit-learn's (through the ``cluster`` extra) and
#: statcore's size-constrained anchor graph clustering.
METHODS = ("kmeans", "agglomerative", "spectral", "gmm", "dbscan", "hdbscan", "sc_fagc")
TRACKS = ("default", "tuned")
REPRESENTATIONS = ("raw", "standardized", "pca")
METRICS = ("ari", "ami", "nmi", "acc")
CRITERIA = ("silhouette", "calinski_harabasz", "davies_bouldin")
#: The key columns of :meth:`BenchmarkResults.tidy`, one row per combination.
GRID = ("dataset", "representation", "method", "track", "seed")

#: Share of the variance the ``"pca"`` representation keeps (of the standardised data).
PCA_VARIANCE = 0.9
#: The silhouette criterion is computed on at most this many points (a seeded subsample): it
#: costs O(n^2 d) per trial.
_CRITERION_MAX_POINTS = 5000


# --- external metrics ----------------------------------------------------------------------------


def _encode(labels, *, name: str) -> np.ndarray:
    raw = np.asarray(labels)
    if raw.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D; got {describe(labels)}")
    return np.unique(raw, return_inverse=True)[1].astype(np.int64)


def _contingency(labels_true, labels_pred) -> np.ndarray:
    t = _encode(labels_true, name="labels_true")
    p = _encode(labels_pred, name="labels_pred")
    if len(t) != len(p):
        raise ValueError(
            f"`labels_true` and `labels_pred` must have the same length; got {len(t)} and {len(p)}"
        )
    if len(t) == 0:
        raise ValueError("`labels_true` must hold at least one label; got none")
    table = np.zeros((t.max() + 1, p.max() + 1), dtype=np.int64)
    np.add.at(table, (t, p), 1)
    return table


def clustering_accuracy(labels_true, labels_pred) -> float:
    """Share of points whose cluster is matched to their class by the best one-to-one matching.

    The matching maximises the agreement in the contingency table (Hungarian algorithm,
    ``scipy.optimize.linear_sum_assignment``); with more clusters than classes the unmatched
    clusters count as errors.

    Parameters
    ----------
    labels_true, labels_pred : array_like of shape (n,)
        Any hashable labels.

    Returns
    -------
    float

    References
    ----------
    Kuhn, H. W. (1955). The Hungarian method for the assignment problem. *Naval Research
    Logistics Quarterly* 2, 83-97; the ACC of CHB (ICML 2026, poster 65800).
    """
    table = _contingency(labels_true, labels_pred)
    rows, cols = optimize.linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / table.sum())


def _comb2(x):
    return x * (x - 1) // 2


def _adjusted_rand(table: np.ndarray) -> float:
    # Python ints: the pair counts of n = 10^5 points overflow nothing
    total = _comb2(int(table.sum()))
    both = sum(_comb2(int(v)) for v in table.ravel())
    rows = sum(_comb2(int(v)) for v in table.sum(axis=1))
    cols = sum(_comb2(int(v)) for v in table.sum(axis=0))
    expected = rows * cols / total if total else 0.0
    maximum = (rows + cols) / 2
    if maximum == expected:  # both partitions trivial and equal
        return 1.0
    return float((both - expected) / (maximum - expected))


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def _mutual_information(table: np.ndarray) -> float:
    n = table.sum()
    i, j = np.nonzero(table)
    nij = table[i, j].astype(float)
    a = table.sum(axis=1)[i].astype(float)
    b = table.sum(axis=0)[j].astype(float)
    return float(max((nij / n * (np.log(nij) + np.log(n) - np.log(a) - np.log(b))).sum(), 0.0))


def _expected_mutual_information(table: np.ndarray) -> float:
    """E[MI] under the permutation (hypergeometric) model with the table's margins fixed."""
    n = int(table.sum())
    a = table.sum(axis=1)
    b = table.sum(axis=0)
    top = int(max(a.max(), b.max()))
    nij = np.arange(top + 1, dtype=float)
    nij[0] = 1.0  # never used: the sums start at 1
    log_nij = np.log(nij)
    gln_nij = special.gammaln(nij + 1)
    base = special.gammaln(n + 1)
    emi = 0.0
    for ai in a:
        for bj in b:
            v = np.arange(max(1, ai + bj - n), min(ai, bj) + 1)
            if v.size == 0:
                continue
            log_p = (
                special.gammaln(ai + 1)
                + special.gammaln(bj + 1)
                + special.gammaln(n - ai + 1)
                + special.gammaln(n - bj + 1)
                - base
                - gln_nij[v]
                - special.gammaln(ai - v + 1)
                - special.gammaln(bj - v + 1)
                - special.gammaln(n - ai - bj + v + 1)
            )
            term = v / n * (np.log(n) + log_nij[v] - np.log(ai) - np.log(bj))
            emi += float((term * np.exp(log_p)).sum())
    return emi


def _away_from_zero(x: float) -> float:
    eps = np.finfo(np.float64).eps
    return min(x, -eps) if x < 0 else max(x, eps)


def external_scores(labels_true, labels_pred) -> dict[str, float]:
    """ARI, AMI, NMI and Hungarian accuracy of a clustering against the true classes.

    Parameters
    ----------
    labels_true, labels_pred : array_like of shape (n,)
        Any hashable labels; a noise label (DBSCAN's -1) is one cluster like any other.

    Returns
    -------
    dict
        ``ari`` (adjusted Rand index), ``ami`` (adjusted mutual information), ``nmi``
        (normalised mutual information), ``acc`` (:func:`clustering_accuracy`). AMI and NMI
        normalise by the arithmetic mean of the two entropies; the conventions for trivial
        partitions (one cluster) are scikit-learn's, and the values equal its
        ``adjusted_rand_score``, ``adjusted_mutual_info_score`` and
        ``normalized_mutual_info_score``.

    References
    ----------
    Hubert, L. and Arabie, P. (1985). Comparing partitions. *Journal of Classification* 2,
    193-218. Vinh, N. X., Epps, J. and Bailey, J. (2010). Information theoretic measures for
    clusterings comparison. *JMLR* 11, 2837-2854. CHB (ICML 2026, poster 65800) for their use.
    """
    table = _contingency(labels_true, labels_pred)
    rows, cols = optimize.linear_sum_assignment(table, maximize=True)
    acc = float(table[rows, cols].sum() / table.sum())
    ari = _adjusted_rand(table)
    n_classes, n_clusters = table.shape
    if n_classes == n_clusters == 1:
        return {"ari": ari, "ami": 1.0, "nmi": 1.0, "acc": acc}
    mi = _mutual_information(table)
    h_true, h_pred = _entropy(table.sum(axis=1)), _entropy(table.sum(axis=0))
    mean_h = (h_true + h_pred) / 2
    nmi = 0.0 if mi == 0 else float(mi / max(mean_h, np.finfo(np.float64).eps))
    if n_classes == 1 or n_clusters == 1:
        ami = 0.0
    elif n_classes == n_clusters == np.count_nonzero(table):
        # the same partition: MI, E[MI] and the mean entropy can all be equal (all singletons),
        # and 0 / 0 in rounding would decide what is 1 by definition
        ami = 1.0
    else:
        emi = _expected_mutual_information(table)
        ami = float(_away_from_zero(mi - emi) / _away_from_zero(mean_h - emi))
    return {"ari": ari, "ami": ami, "nmi": nmi, "acc": acc}


# --- internal criteria ---------------------------------------------------------------------------


def _internal_score(X: np.ndarray, labels: np.ndarray, criterion: str, rng) -> float:
    """The label-free selection criterion, larger is better; NaN for one cluster or all
    singletons (the criteria are undefined there)."""
    labels = np.unique(labels, return_inverse=True)[1].astype(np.int64)
    n, k = len(labels), int(labels.max()) + 1
    if k < 2 or k >= n:
        return float("nan")
    if criterion == "silhouette":
        if n > _CRITERION_MAX_POINTS:
            keep = np.sort(rng.choice(n, _CRITERION_MAX_POINTS, replace=False))
            X, labels = X[keep], np.unique(labels[keep], return_inverse=True)[1]
            if labels.max() < 1:
                return float("nan")
        return float(K.silhouette_samples(X, labels).mean())
    counts = np.bincount(labels).astype(float)
    centres = np.zeros((k, X.shape[1]))
    np.add.at(centres, labels, X)
    centres /= counts[:, None]
    deviation = X - centres[labels]
    if criterion == "calinski_harabasz":
        within = float((deviation**2).sum())
        between = float((counts * ((centres - X.mean(axis=0)) ** 2).sum(axis=1)).sum())
        return 1.0 if within == 0 else between * (n - k) / (within * (k - 1))
    spread = np.bincount(labels, weights=np.sqrt((deviation**2).sum(axis=1))) / counts
    gaps = np.sqrt(K.pairwise_distances(centres))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (spread[:, None] + spread[None, :]) / gaps
    np.fill_diagonal(ratio, -np.inf)
    return -float(np.nan_to_num(ratio, nan=0.0, posinf=np.inf).max(axis=1).mean())


# --- representations -----------------------------------------------------------------------------


def _standardized(X: np.ndarray) -> np.ndarray:
    scale = X.std(axis=0)
    # a constant feature carries nothing; dividing by 1 keeps it constant instead of NaN
    return (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)


def _pca(X: np.ndarray) -> np.ndarray:
    Z = _standardized(X)
    _, s, vt = np.linalg.svd(Z, full_matrices=False)
    share = np.cumsum(s**2) / max((s**2).sum(), np.finfo(float).tiny)
    m = max(int(np.searchsorted(share, PCA_VARIANCE - 1e-12)) + 1, min(2, Z.shape[1]))
    return np.ascontiguousarray(Z @ vt[:m].T)


_BUILTIN_REPRESENTATIONS = {"raw": np.array, "standardized": _standardized, "pca": _pca}


# --- methods -------------------------------------------------------------------------------------

#: name -> (scikit-learn module, class, the number-of-clusters parameter, takes random_state,
#: options that replace the library's defaults)
_SKLEARN = {
    "kmeans": ("sklearn.cluster", "KMeans", "n_clusters", True, {}),
    "agglomerative": ("sklearn.cluster", "AgglomerativeClustering", "n_clusters", False, {}),
    # the library's RBF affinity with gamma=1 is not scale-free: on unscaled data (raw digits)
    # the affinity is almost the identity and the eigensolver runs for minutes
    "spectral": (
        "sklearn.cluster",
        "SpectralClustering",
        "n_clusters",
        True,
        {"affinity": "nearest_neighbors"},
    ),
    "gmm": ("sklearn.mixture", "GaussianMixture", "n_components", True, {}),
    "dbscan": ("sklearn.cluster", "DBSCAN", None, False, {}),
    "hdbscan": ("sklearn.cluster", "HDBSCAN", None, False, {}),
    "sc_fagc": ("statcore.cluster.benchmark", "_SizeConstrainedAdapter", "n_clusters", True, {}),
}


class _SizeConstrainedAdapter:
    """The ``fit_predict`` face of :class:`statcore.cluster.anchor.SizeConstrainedAnchorClustering`
    (library defaults otherwise)."""

    def __init__(self, n_clusters=2, n_neighbors=5, size_bounds=(0.5, 1.5), random_state=None):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.size_bounds = size_bounds
        self.random_state = random_state

    def set_params(self, **params):
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def fit_predict(self, X):
        from statcore.cluster.anchor import SizeConstrainedAnchorClustering

        model = SizeConstrainedAnchorClustering(
            X, self.n_clusters, n_neighbors=self.n_neighbors, size_bounds=self.size_bounds
        )
        return model.fit(random_state=self.random_state).labels


def _product(grid: Mapping[str, Sequence]) -> list[dict]:
    return [dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())]


def _median_sq_distance(X: np.ndarray) -> float:
    rows = X[np.linspace(0, len(X) - 1, min(len(X), 500)).astype(int)]
    d = K.pairwise_distances(rows)
    positive = d[np.triu_indices(len(rows), 1)]
    positive = positive[positive > 0]
    return float(np.median(positive)) if positive.size else 1.0


def _builtin_grid(name: str, X: np.ndarray, ks: list[int]) -> list[dict]:
    """The tuning grid of a named method; data-dependent values (DBSCAN's radius, the RBF
    bandwidth) come from distances only, never from labels."""
    if name == "kmeans":
        return _product({"n_clusters": ks, "init": ["k-means++", "random"]})
    if name == "agglomerative":
        return _product({"n_clusters": ks, "linkage": ["ward", "complete", "average", "single"]})
    if name == "gmm":
        return _product(
            {"n_components": ks, "covariance_type": ["full", "tied", "diag", "spherical"]}
        )
    if name == "spectral":
        scale = _median_sq_distance(X)
        graphs = [{"affinity": "nearest_neighbors", "n_neighbors": m} for m in (5, 10, 20)]
        graphs += [{"affinity": "rbf", "gamma": f / scale} for f in (0.1, 1.0, 10.0)]
        return [
            {"n_clusters": k, **g} for k in ks for g in graphs if g.get("n_neighbors", 0) < len(X)
        ]
    if name == "dbscan":
        depth = min(10, len(X) - 1)
        dist, _ = K.knn(X, depth)
        grid = []
        for m in (3, 5, 10):
            if m > depth:
                continue
            for q in (0.25, 0.5, 0.75, 0.9, 0.95):
                eps = float(np.quantile(dist[:, m - 1], q))
                grid.append({"eps": eps if eps > 0 else 1e-12, "min_samples": m})
        return grid
    if name == "hdbscan":
        return _product({"min_cluster_size": [5, 10, 20, 40], "min_samples": [None, 1, 5, 10]})
    return _product(
        {"n_clusters": ks, "n_neighbors": [3, 5, 10], "size_bounds": [(0.5, 1.5), (0.1, 5.0)]}
    )


@dataclass(frozen=True)
class _Method:
    """How to run one method: a named scikit-learn clusterer, an estimator or a function."""

    name: str
    builtin: str | None = None
    template: Any = None
    grid: tuple[dict, ...] | None = None

    @property
    def k_param(self) -> str | None:
        if self.builtin is not None:
            return _SKLEARN[self.builtin][2]
        if hasattr(self.template, "get_params"):
            params = self.template.get_params()
            return next((p for p in ("n_clusters", "n_components") if p in params), None)
        if _is_estimator(self.template):
            return None  # an estimator without get_params is run as it is
        return "n_clusters"  # a function is called with n_clusters=

    def default_params(self, k: int) -> dict:
        return {} if self.k_param is None else {self.k_param: k}

    def tuning_grid(self, X: np.ndarray, ks: list[int]) -> list[dict]:
        if self.grid is not None:
            return list(self.grid)
        if self.builtin is not None:
            return _builtin_grid(self.builtin, X, ks)
        return [{self.k_param: k} for k in ks]

    def run(self, X: np.ndarray, params: dict, seed: int) -> np.ndarray:
        if self.builtin is not None:
            module, cls, _, seeded, defaults = _SKLEARN[self.builtin]
            estimator = getattr(import_optional(module, "cluster"), cls)(**{**defaults, **params})
            if seeded:
                estimator.set_params(random_state=seed)
        elif _is_estimator(self.template):
            estimator = copy.deepcopy(self.template)
            if hasattr(estimator, "set_params"):
                estimator.set_params(**params)
                if "random_state" in estimator.get_params():
                    estimator.set_params(random_state=seed)
            elif params:
                raise TypeError(f"method {self.name!r} has no set_params to take {params}")
        else:
            labels = self.template(X, random_state=seed, **params)
            return _check_labels(labels, len(X), self.name)
        if hasattr(estimator, "fit_predict"):
            return _check_labels(estimator.fit_predict(X), len(X), self.name)
        fitted = estimator.fit(X)
        labels = getattr(fitted, "labels_", None)
        if labels is None:
            labels = getattr(fitted, "labels", None)
        if labels is None:
            labels = estimator.predict(X)
        return _check_labels(labels, len(X), self.name)


def _is_estimator(obj) -> bool:
    return hasattr(obj, "fit_predict") or hasattr(obj, "fit")


def _check_labels(labels, n: int, name: str) -> np.ndarray:
    labels = np.asarray(labels).ravel()
    if labels.shape != (n,):
        raise ValueError(f"method {name!r} returned {labels.size} labels for {n} points")
    return labels


def _resolve_methods(methods) -> tuple[_Method, ...]:
    if methods is None:
        return tuple(_Method(name, builtin=name) for name in METHODS)
    if isinstance(methods, str):
        methods = [methods]
    if isinstance(methods, Mapping):
        items = list(methods.items())
    elif isinstance(methods, Sequence):
        items = [(m, m) if isinstance(m, str) else (_object_name(m), m) for m in methods]
    else:
        raise TypeError(
            "`methods` must be a sequence of method names or estimators, or a dict of name to "
            f"method; got {describe(methods)}"
        )
    if not items:
        raise ValueError("`methods` must name at least one method; got none")
    out = []
    for name, spec in items:
        where = f"methods[{name!r}]"
        if not isinstance(name, str):
            raise TypeError(f"`methods` keys must be str; got {name!r}")
        grid = None
        if isinstance(spec, tuple):
            if len(spec) != 2 or not isinstance(spec[1], Mapping):
                raise TypeError(
                    f"`{where}` must be a method or a pair (method, parameter grid dict); got "
                    f"{describe(spec)}"
                )
            spec, raw_grid = spec
            grid = tuple(_product({k: list(v) for k, v in raw_grid.items()}))
            if not grid:
                raise ValueError(f"`{where}` has an empty parameter grid")
        if isinstance(spec, str):
            builtin = check_option(spec, name=where if spec != name else "methods", options=METHODS)
            out.append(_Method(name, builtin=builtin, grid=grid))
        elif _is_estimator(spec) or callable(spec):
            out.append(_Method(name, template=spec, grid=grid))
        else:
            raise TypeError(
                f"`{where}` must be a method name, an estimator with fit_predict (or fit) or a "
                f"function (X, *, n_clusters, random_state) -> labels; got {describe(spec)}"
            )
    names = [m.name for m in out]
    if len(set(names)) != len(names):
        raise ValueError(f"`methods` must not repeat a name; got {names}")
    return tuple(out)


def _object_name(obj) -> str:
    return getattr(obj, "__name__", type(obj).__name__)


# --- datasets ------------------------------------------------------------------------------------


def _resolve_datasets(datasets) -> tuple[ClusteringDataset, ...]:
    if isinstance(datasets, ClusteringDataset):
        datasets = [datasets]
    if isinstance(datasets, str) or (
        isinstance(datasets, Sequence) and datasets and all(isinstance(d, str) for d in datasets)
    ):
        for name in [datasets] if isinstance(datasets, str) else datasets:
            check_option(name, name="datasets", options=BENCHMARK_DATASETS)
        return tuple(load_benchmark_datasets(datasets, random_state=0).values())
    if isinstance(datasets, Mapping):
        items = list(datasets.items())
    elif isinstance(datasets, Sequence):
        items = [(getattr(d, "name", None), d) for d in datasets]
    else:
        raise TypeError(
            "`datasets` must be dataset names, ClusteringDatasets, or a dict of name to "
            f"(X, labels); got {describe(datasets)}"
        )
    if not items:
        raise ValueError("`datasets` must hold at least one dataset; got none")
    out = []
    for i, (name, data) in enumerate(items):
        where = f"datasets[{name!r}]" if name is not None else f"datasets[{i}]"
        if isinstance(data, ClusteringDataset):
            out.append(data if name is None or name == data.name else _renamed(data, name))
            continue
        if name is None:
            raise TypeError(
                f"`{where}` must be a ClusteringDataset; pass a dict name -> (X, labels) for "
                f"plain arrays; got {describe(data)}"
            )
        if not (isinstance(data, tuple | list) and len(data) == 2):
            raise TypeError(
                f"`{where}` must carry true labels: a pair (X, labels) or a ClusteringDataset; "
                f"got {describe(data)}"
            )
        X = as_float_array(data[0], name=f"{where}[0]", ndim=2, min_rows=3)
        labels = np.asarray(data[1])
        if labels.ndim != 1 or len(labels) != len(X):
            raise ValueError(
                f"`{where}[1]` (labels) must be 1-D with one label per row of X ({len(X)}); got "
                f"{describe(data[1])}"
            )
        out.append(ClusteringDataset(str(name), X, labels))
    for data in out:
        if data.n_clusters < 2:
            raise ValueError(
                f"`datasets[{data.name!r}]` has a single class: external metrics need at least 2"
            )
    names = [d.name for d in out]
    if len(set(names)) != len(names):
        raise ValueError(f"`datasets` must not repeat a name; got {names}")
    return tuple(out)


def _renamed(data: ClusteringDataset, name: str) -> ClusteringDataset:
    return ClusteringDataset(str(name), data.X, data.labels, description=data.description)


def _resolve_representations(representations) -> tuple[tuple[str, Callable], ...]:
    if isinstance(representations, str):
        representations = [representations]
    if isinstance(representations, Mapping):
        items = list(representations.items())
    elif isinstance(representations, Sequence):
        items = [(r, r) for r in representations]
    else:
        raise TypeError(
            "`representations` must be names among "
            f"{', '.join(map(repr, REPRESENTATIONS))} or a dict of name to a function X -> "
            f"features; got {describe(representations)}"
        )
    if not items:
        raise ValueError("`representations` must hold at least one representation; got none")
    out = []
    for name, spec in items:
        if isinstance(spec, str):
            spec = _BUILTIN_REPRESENTATIONS[
                check_option(spec, name="representations", options=REPRESENTATIONS)
            ]
        elif not callable(spec):
            raise TypeError(
                f"`representations[{name!r}]` must be a built-in name or a function X -> "
                f"features; got {describe(spec)}"
            )
        out.append((str(name), spec))
    if len({n for n, _ in out}) != len(out):
        raise ValueError(f"`representations` must not repeat a name; got {[n for n, _ in out]}")
    return tuple(out)


def _resolve_tracks(tracks) -> tuple[str, ...]:
    if isinstance(tracks, str):
        tracks = [tracks]
    if not isinstance(tracks, Sequence) or not tracks:
        raise ValueError(
            f"`tracks` must be one or more of {', '.join(map(repr, TRACKS))}; "
            f"got {describe(tracks)}"
        )
    for track in tracks:
        if track == "representation":
            raise ValueError(
                "`tracks`: the representation swap is the `representations=` argument (every "
                "track runs on every representation); pass tracks among 'default', 'tuned'"
            )
        check_option(track, name="tracks", options=TRACKS)
    if len(set(tracks)) != len(tracks):
        raise ValueError(f"`tracks` must not repeat a track; got {list(tracks)}")
    return tuple(tracks)


def _resolve_seeds(seeds, random_state) -> tuple[int, ...]:
    if isinstance(seeds, numbers.Integral) and not isinstance(seeds, bool):
        n = check_positive_int(seeds, name="seeds")
        entropy = int.from_bytes(check_random_state(random_state).bytes(16), "little")
        state = np.random.SeedSequence(entropy).generate_state(n, np.uint32)
        return tuple(int(s) for s in state)
    if isinstance(seeds, str) or not isinstance(seeds, Sequence | np.ndarray) or not len(seeds):
        raise TypeError(
            "`seeds` must be a number of seeds or a non-empty sequence of non-negative ints; "
            f"got {describe(seeds)}"
        )
    out = []
    for i, seed in enumerate(seeds):
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"`seeds[{i}]` must be a non-negative int; got {seed!r}")
        out.append(int(seed))
    if len(set(out)) != len(out):
        raise ValueError(f"`seeds` must not repeat a seed; got {out}")
    return tuple(out)


# --- the runs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Unit:
    dataset: str
    representation: str
    X: np.ndarray
    labels: np.ndarray


def _run_once(method: _Method, X, params, seed):
    start = time.perf_counter()
    try:
        labels = method.run(X, params, seed)
    except Exception as exc:  # a failing configuration is an outcome the table records
        return None, time.perf_counter() - start, f"{type(exc).__name__}: {exc}"
    return labels, time.perf_counter() - start, ""


@dataclass(frozen=True)
class _Runner:
    """One benchmark cell: a method on a (dataset, representation) under a track and a seed."""

    units: tuple[_Unit, ...]
    methods: tuple[_Method, ...]
    criterion: str
    budget: int
    max_clusters: int

    def __call__(self, task: tuple[int, int, str, int]) -> dict:
        unit_index, method_index, track, seed = task
        unit, method = self.units[unit_index], self.methods[method_index]
        X = unit.X
        k_true = int(unit.labels.max()) + 1
        rng = np.random.default_rng(seed)
        with _silenced():
            if track == "default":
                params = method.default_params(k_true)
                labels, seconds, error = _run_once(method, X, params, seed)
                score = (
                    np.nan if labels is None else _internal_score(X, labels, self.criterion, rng)
                )
                n_trials = 1
            else:
                labels, params, score, seconds, error, n_trials = self._tune(method, X, seed, rng)
        row = {"n_clusters_true": k_true}
        if labels is None:
            row.update({m: np.nan for m in METRICS}, n_clusters_found=0, n_noise=0)
        else:
            row.update(external_scores(unit.labels, labels))
            row["n_clusters_found"] = int(np.unique(labels[labels >= 0]).size)
            row["n_noise"] = int((labels < 0).sum())
        row.update(
            criterion=score,
            params=_format_params(params),
            n_trials=n_trials,
            fit_time_s=seconds,
            error=error,
        )
        return row

    def _tune(self, method: _Method, X, seed: int, rng):
        """Budgeted random search; the criterion alone (no labels) picks the configuration."""
        kmax = max(2, min(self.max_clusters, len(X) - 1))
        grid = method.tuning_grid(X, list(range(2, kmax + 1)))
        picks = rng.choice(len(grid), size=min(self.budget, len(grid)), replace=False)
        best_labels, best_params, best_score, best_key = None, grid[picks[0]], np.nan, -np.inf
        seconds, first_error = 0.0, ""
        for pick in picks:
            labels, spent, error = _run_once(method, X, grid[pick], seed)
            seconds += spent
            if labels is None:
                first_error = first_error or error
                continue
            score = _internal_score(X, labels, self.criterion, rng)
            key = -np.inf if np.isnan(score) else score
            if best_labels is None or key > best_key:
                best_labels, best_params, best_score, best_key = labels, grid[pick], score, key
        error = "" if best_labels is not None else first_error
        return best_labels, best_params, best_score, seconds, error, len(picks)


class _silenced(warnings.catch_warnings):
    """Silence the clusterers' warnings (non-convergence, disconnected graphs): the table records
    their outcome. Only in a process's main thread: ``catch_warnings`` swaps global state, which
    threads would interleave; under the thread backend :meth:`ClusteringBenchmark.fit` silences
    them around the whole run instead."""

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            super().__enter__()
            warnings.simplefilter("ignore")
        return self

    def __exit__(self, *exc_info):
        if threading.current_thread() is threading.main_thread():
            super().__exit__(*exc_info)


def _format_params(params: dict) -> str:
    parts = []
    for key, value in params.items():
        shown = f"{value:.4g}" if isinstance(value, float) else repr(value)
        parts.append(f"{key}={shown}")
    return ", ".join(parts)


@dataclass(frozen=True)
class _Fingerprinter:
    units: tuple[_Unit, ...]
    options: Mapping[str, Any]

    def __call__(self, unit_index: int) -> pd.Series:
        from statcore.cluster.hardness import HardnessFingerprint

        unit = self.units[unit_index]
        with _silenced():
            res = HardnessFingerprint(unit.X, unit.labels, representation=unit.representation).fit(
                **self.options
            )
        return pd.Series(res.coordinates, dtype=float)


class ClusteringBenchmark(Estimator):
    """Clusterers run over datasets x representations x tracks x seeds, scored against the
    true labels (CHB's compute-aware tracks).

    Parameters
    ----------
    datasets : names, ClusteringDatasets or dict
        Labelled data: names from :data:`statcore.cluster.simulate.BENCHMARK_DATASETS` (generated
        ones seeded with 0), :class:`~statcore.cluster.simulate.ClusteringDataset` objects, or a
        dict mapping a name to a pair ``(X, labels)`` or a ClusteringDataset. Labels are required
        (they are what the external metrics compare to and what the ``"default"`` track's oracle
        ``k`` counts).
    methods : sequence or dict, optional
        Names among :data:`METHODS` (``"kmeans"``, ``"agglomerative"`` (Ward), ``"spectral"``
        (on a 10-nearest-neighbour graph rather than scikit-learn's RBF affinity with
        ``gamma=1``, which is not scale-free and stalls the eigensolver on unscaled data),
        ``"gmm"``, ``"dbscan"``, ``"hdbscan"``: scikit-learn's; ``"sc_fagc"``:
        :class:`~statcore.cluster.anchor.SizeConstrainedAnchorClustering` with its defaults;
        default all), or a dict mapping a
        name to a method: a name, an estimator with ``fit_predict`` (or ``fit`` then
        ``labels_``), or a function ``f(X, *, n_clusters, random_state, **params) -> labels``;
        a pair ``(method, {"param": [values], ...})`` gives the ``"tuned"`` track its grid
        (default for estimators and functions: ``n_clusters`` or ``n_components`` over
        ``2..max_clusters``). Estimators are deep-copied for each run; ``n_clusters`` /
        ``n_components`` and ``random_state`` are set when they have them.
    tracks : str or sequence of str
        ``"default"``: library defaults with the oracle number of clusters (the number of true
        classes; DBSCAN and HDBSCAN take none); ``"tuned"``: a budget of ``budget`` configurations
        drawn at random from the method's grid (``n_clusters`` over ``2..max_clusters`` and the
        method's main hyper-parameters), the one with the best internal ``criterion`` kept; the
        true labels are never read, not even their number.
    representations : sequence of str or dict
        ``"raw"``, ``"standardized"`` (z-scores; constant features left at 0), ``"pca"`` (the
        standardised data's principal components keeping 90 % of the variance, at least 2), or a
        dict of name to a built-in name or a function ``X -> features`` (an external
        embedding). Every track runs on every representation: this is the representation-swap
        track, and :meth:`BenchmarkResults.audit` compares two of them.

    Notes
    -----
    Each cell (dataset, representation, method, track, seed) is one task on the backend. Seed
    ``s`` is the methods' ``random_state`` and seeds the draw of the tuned track's
    configurations, so every backend gives the same table. Noise points (label -1 of DBSCAN and
    HDBSCAN) count as one cluster in the metrics and the criteria; ``n_noise`` reports them. A
    configuration that raises is recorded (``error``, NaN metrics) rather than stopping the
    run; the clusterers' warnings are silenced during the runs.

    **Fidelity: reconstruction.** The paper's abstract names compute-aware tracks, fingerprint-
    conditioned regimes, ranking reversals and representation auditing; its track budgets,
    search spaces, selection criterion, binning and attribution rule are not public. Here: the
    tuning budget counts configurations (not CPU seconds), selection is by silhouette (or
    Calinski-Harabasz / Davies-Bouldin), regimes are quantile bins of one fingerprint coordinate
    with Kendall tau between the bins' method rankings and a seed bootstrap, and the audit is a
    least-squares regression of per-dataset gains on coordinate shifts (see
    :meth:`BenchmarkResults.audit`). The datasets are scikit-learn's and its generators'.

    References
    ----------
    CHB: Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster 65800
    (https://icml.cc/virtual/2026/poster/65800).

    Examples
    --------
    >>> bench = ClusteringBenchmark(["iris", "moons"], ["kmeans", "agglomerative"])
    >>> res = bench.fit(seeds=3, random_state=0)  # doctest: +SKIP
    >>> res.summary()  # doctest: +SKIP
    """

    method_name = "Clustering benchmark (CHB tracks)"

    def __init__(
        self,
        datasets,
        methods=None,
        *,
        tracks=("default",),
        representations=("raw",),
    ):
        self.datasets = _resolve_datasets(datasets)
        self.methods = _resolve_methods(methods)
        self.tracks = _resolve_tracks(tracks)
        self.representations = _resolve_representations(representations)

    @property
    def nobs(self) -> int:
        """Points over all datasets."""
        return sum(d.nobs for d in self.datasets)

    def _repr_spec(self) -> str:
        return (
            f"{len(self.datasets)} datasets, methods={[m.name for m in self.methods]}, "
            f"tracks={list(self.tracks)}, representations={[n for n, _ in self.representations]}"
        )

    def _units(self) -> tuple[_Unit, ...]:
        units = []
        for data in self.datasets:
            for name, transform in self.representations:
                X = as_float_array(
                    transform(data.X.copy()),
                    name=f"representations[{name!r}] of {data.name!r}",
                    ndim=2,
                )
                if len(X) != data.nobs:
                    raise ValueError(
                        f"`representations[{name!r}]` returned {len(X)} rows for the "
                        f"{data.nobs} points of {data.name!r}"
                    )
                X.setflags(write=False)
                units.append(_Unit(data.name, name, X, data.labels))
        return tuple(units)

    def fit(
        self,
        *,
        seeds=3,
        budget: int = 10,
        max_clusters: int = 10,
        criterion: str = "silhouette",
        fingerprint: bool = False,
        fingerprint_options: Mapping[str, Any] | None = None,
        backend=None,
        progress: bool = False,
        random_state=None,
    ) -> BenchmarkResults:
        """Run every cell of the grid.

        Parameters
        ----------
        seeds : int or sequence of int
            A number of seeds (drawn from ``random_state``) or the seeds themselves.
        budget : int
            Configurations tried per cell on the ``"tuned"`` track.
        max_clusters : int
            Largest number of clusters the ``"tuned"`` track tries.
        criterion : {"silhouette", "calinski_harabasz", "davies_bouldin"}
            The internal (label-free) criterion of the ``"tuned"`` track; it is reported for
            every cell (Davies-Bouldin negated, so larger is better everywhere).
        fingerprint : bool
            Also compute each (dataset, representation)'s
            :class:`~statcore.cluster.hardness.HardnessFingerprint` (needed by
            :meth:`BenchmarkResults.regimes` and :meth:`~BenchmarkResults.audit` unless their
            ``fingerprints=`` is given).
        fingerprint_options : dict, optional
            Options of ``HardnessFingerprint.fit`` (``random_state`` defaults to this call's).
        backend : None, str, Backend or dask.distributed.Client
            Where the cells run (:func:`statcore.distributed.get_backend`).
        progress : bool
            Show a progress bar over the cells.
        random_state : None, int, SeedSequence or Generator
            Draws the seeds when ``seeds`` is a number, and seeds the fingerprints.

        Returns
        -------
        BenchmarkResults
        """
        budget = check_positive_int(budget, name="budget")
        max_clusters = check_positive_int(max_clusters, name="max_clusters", minimum=2)
        criterion = check_option(criterion, name="criterion", options=CRITERIA)
        if not isinstance(fingerprint, bool):
            raise TypeError(f"`fingerprint` must be True or False; got {describe(fingerprint)}")
        rng = check_random_state(random_state)
        seed_list = _resolve_seeds(seeds, rng)
        options = dict(fingerprint_options or {})
        options.setdefault("random_state", int(rng.integers(2**32)))
        if "tuned" in self.tracks:
            for method in self.methods:
                if method.k_param is None and method.builtin is None and method.grid is None:
                    raise ValueError(
                        f"`methods[{method.name!r}]` has no n_clusters/n_components parameter "
                        "to tune: give it a grid, (estimator, {'param': [values]})"
                    )
        units = self._units()
        tasks = [
            (u, m, track, seed)
            for u in range(len(units))
            for m in range(len(self.methods))
            for track in self.tracks
            for seed in seed_list
        ]
        runner = _Runner(units, self.methods, criterion, budget, max_clusters)
        start = time.perf_counter()
        with borrowed_backend(backend) as pool, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = pool.map(runner, tasks, progress=progress, desc="ClusteringBenchmark")
            prints = None
            if fingerprint:
                prints = pool.map(
                    _Fingerprinter(units, options),
                    range(len(units)),
                    progress=progress,
                    desc="HardnessFingerprint",
                )
            backend_name = pool.name
        wall = time.perf_counter() - start
        keys = pd.DataFrame(
            [
                (units[u].dataset, units[u].representation, self.methods[m].name, track, seed)
                for u, m, track, seed in tasks
            ],
            columns=list(GRID),
        )
        scores = pd.concat([keys, pd.DataFrame(rows)], axis=1)
        fingerprints = None
        if prints is not None:
            index = pd.MultiIndex.from_tuples(
                [(u.dataset, u.representation) for u in units], names=["dataset", "representation"]
            )
            fingerprints = pd.DataFrame(prints, index=index)
        n_errors = int((scores["error"] != "").sum())
        notes = ()
        if n_errors:
            notes = (f"{n_errors} cell(s) raised (see the `error` column): their metrics are NaN.",)
        return BenchmarkResults(
            method=self.method_name,
            nobs=len(scores),
            model=self,
            notes=notes,
            scores=scores,
            fingerprints=fingerprints,
            seeds=seed_list,
            backend=backend_name,
            wall_time_s=wall,
        )


# --- results -------------------------------------------------------------------------------------


def _ordered(values: pd.Series) -> list:
    return list(dict.fromkeys(values))


def _plot_scores(results, ax=None, metric="ari", track=None, **kwargs):
    """Mean external metric over seeds as a heatmap: datasets (x representations) by method."""
    table = results.scores_table(metric=metric, track=track)
    ax = get_ax(ax)
    image = ax.imshow(table.to_numpy(dtype=float), cmap="viridis", aspect="auto", **kwargs)
    ax.set_xticks(np.arange(table.shape[1]), table.columns, rotation=45, ha="right")
    ax.set_yticks(np.arange(table.shape[0]), [" / ".join(map(str, i)) for i in table.index])
    for (i, j), value in np.ndenumerate(table.to_numpy(dtype=float)):
        if np.isfinite(value):
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7, color="w")
    ax.figure.colorbar(image, ax=ax, label=metric)
    ax.set_title(f"mean {metric} over seeds ({track or results.tracks[0]} track)")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class BenchmarkResults(Results):
    """The cells of a :class:`ClusteringBenchmark` and the analyses built on them.

    Parameters
    ----------
    scores : DataFrame
        One row per (dataset, representation, method, track, seed): those columns, then
        ``n_clusters_true``, ``ari``, ``ami``, ``nmi``, ``acc``, ``n_clusters_found``,
        ``n_noise``, ``criterion`` (the internal criterion of the labels kept), ``params`` (the
        configuration used), ``n_trials``, ``fit_time_s`` (seconds of clustering, all trials),
        ``error`` (empty unless the cell raised).
    fingerprints : DataFrame, optional
        Fingerprint coordinates, one row per (dataset, representation) (a MultiIndex), one
        column per coordinate.
    seeds : tuple of int
    backend : str
    wall_time_s : float

    References
    ----------
    CHB: Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster 65800.
    """

    scores: pd.DataFrame
    fingerprints: pd.DataFrame | None = None
    seeds: tuple[int, ...] = ()
    backend: str = "serial"
    wall_time_s: float = float("nan")

    _plots: ClassVar[dict] = {"scores": _plot_scores}

    @property
    def datasets(self) -> list[str]:
        return _ordered(self.scores["dataset"])

    @property
    def representations(self) -> list[str]:
        return _ordered(self.scores["representation"])

    @property
    def methods(self) -> list[str]:
        return _ordered(self.scores["method"])

    @property
    def tracks(self) -> list[str]:
        return _ordered(self.scores["track"])

    def tidy(self) -> pd.DataFrame:
        """One row per (dataset, representation, method, track, seed) (see ``scores``)."""
        return self.scores.copy()

    def glance(self) -> pd.DataFrame:
        """One row: method, nobs (cells), n_datasets, n_representations, n_methods, n_tracks,
        n_seeds, n_errors, backend, wall_time_s."""
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "n_datasets": len(self.datasets),
                    "n_representations": len(self.representations),
                    "n_methods": len(self.methods),
                    "n_tracks": len(self.tracks),
                    "n_seeds": self.scores["seed"].nunique(),
                    "n_errors": int((self.scores["error"] != "").sum())
                    if "error" in self.scores
                    else 0,
                    "backend": self.backend,
                    "wall_time_s": self.wall_time_s,
                }
            ]
        )

    def _metric(self, metric: str) -> str:
        return check_option(metric, name="metric", options=METRICS)

    def _track(self, track) -> str:
        return (
            self.tracks[0]
            if track is None
            else check_option(track, name="track", options=self.tracks)
        )

    def scores_table(self, metric: str = "ari", track: str | None = None) -> pd.DataFrame:
        """Mean ``metric`` over seeds: rows (dataset, representation), columns methods."""
        metric, track = self._metric(metric), self._track(track)
        rows = self.scores[self.scores["track"] == track]
        table = rows.pivot_table(
            index=["dataset", "representation"],
            columns="method",
            values=metric,
            aggfunc="mean",
            dropna=False,
        )
        order = pd.MultiIndex.from_tuples(
            _ordered(zip(rows["dataset"], rows["representation"], strict=True)),
            names=["dataset", "representation"],
        )
        return table.reindex(index=order, columns=self.methods)

    def summary(self, alpha: float = 0.05, metric: str = "ari") -> Summary:
        """Mean ``metric`` per cell for each track, and each method's average rank over the
        (dataset, representation) units (rank 1 = best)."""
        check_alpha(alpha)
        metric = self._metric(metric)
        tables = {}
        ranks = {}
        for track in self.tracks:
            table = self.scores_table(metric=metric, track=track)
            table.index = [" / ".join(map(str, i)) for i in table.index]
            tables[f"mean {metric} ({track})"] = table
            ranks[track] = table.rank(axis=1, ascending=False).mean()
        tables["average rank"] = pd.DataFrame(ranks).T
        notes = self.notes + (
            f"Means over {self.scores['seed'].nunique()} seed(s); ranks by mean {metric} within "
            "each dataset / representation, averaged.",
        )
        return Summary(title=self.method, info=self._info(), tables=tables, notes=notes)

    def _repr_lines(self) -> list[str]:
        return [
            f"  {len(self.datasets)} datasets x {len(self.representations)} representations x "
            f"{len(self.methods)} methods x {len(self.tracks)} tracks x "
            f"{self.scores['seed'].nunique()} seeds on {self.backend!r}"
        ]

    def _fingerprints(self, fingerprints) -> pd.DataFrame:
        frame = self.fingerprints if fingerprints is None else fingerprints
        if frame is None:
            raise ValueError(
                "these results hold no fingerprints: fit with `fingerprint=True` or pass "
                "`fingerprints=` (a DataFrame indexed by (dataset, representation))"
            )
        if not isinstance(frame, pd.DataFrame) or frame.index.nlevels != 2:
            raise TypeError(
                "`fingerprints` must be a DataFrame indexed by (dataset, representation), one "
                f"column per coordinate; got {describe(frame)}"
            )
        return frame

    def regimes(
        self,
        by: str,
        *,
        bins=2,
        metric: str = "ari",
        track: str | None = None,
        methods: Sequence[str] | None = None,
        n_resamples: int = 1000,
        alpha: float = 0.05,
        fingerprints: pd.DataFrame | None = None,
        random_state=None,
    ) -> RegimeResults:
        """Bin the (dataset, representation) units by a fingerprint coordinate and compare the
        method rankings between bins.

        Parameters
        ----------
        by : str
            A fingerprint coordinate (a column of ``fingerprints``).
        bins : int or sequence of float
            A number of quantile bins of ``by`` over the units, or the bin edges (units outside
            them are left out).
        metric : {"ari", "ami", "nmi", "acc"}
        track : str, optional
            Default: the first track.
        methods : sequence of str, optional
            The methods to rank (at least two); default all.
        n_resamples : int
            Bootstrap resamples of the seeds.
        alpha : float
            The intervals are ``1 - alpha`` percentile intervals.
        fingerprints : DataFrame, optional
            Coordinates indexed by (dataset, representation); default the results' own.
        random_state : None, int, SeedSequence or Generator
            Seeds the bootstrap.

        Returns
        -------
        RegimeResults

        Notes
        -----
        A method's score in a bin is its metric averaged over the bin's units and the seeds.
        Kendall's tau-b compares the methods' scores in two bins: 1 is the same order, -1 the
        order reversed. The bootstrap resamples the seeds with replacement (the same draw for
        every unit and method, since a seed is shared by all cells), recomputes the scores and
        tau, and gives percentile intervals; ``reversals`` lists the method pairs whose order
        flips between two bins with the share of resamples in which it flips. With one seed,
        or methods that ignore the seed, the intervals only reflect seed noise: they are not
        intervals over datasets.
        """
        metric, track = self._metric(metric), self._track(track)
        n_resamples = check_positive_int(n_resamples, name="n_resamples")
        alpha = check_alpha(alpha)
        frame = self._fingerprints(fingerprints)
        if by not in frame.columns:
            raise ValueError(
                f"`by` must be a fingerprint coordinate, one of {list(frame.columns)}; got {by!r}"
            )
        rows = self.scores[self.scores["track"] == track]
        units = _ordered(zip(rows["dataset"], rows["representation"], strict=True))
        missing = [u for u in units if u not in frame.index]
        if missing:
            raise ValueError(f"`fingerprints` has no row for {missing[:3]}")
        values = frame.loc[units, by].to_numpy(dtype=float)
        if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
            n_bins = check_positive_int(bins, name="bins", minimum=2)
            cut, edges = pd.qcut(values, n_bins, duplicates="drop", retbins=True)
        else:
            edges = as_float_array(bins, name="bins", ndim=1)
            cut = pd.cut(values, edges, include_lowest=True)
        codes = np.asarray(cut.codes)
        labels = [f"[{lo:.3g}, {hi:.3g}]" for lo, hi in itertools.pairwise(edges)]
        present = [b for b in range(len(labels)) if (codes == b).any()]
        if len(present) < 2:
            raise ValueError(
                f"`bins` leaves fewer than two non-empty bins of {by!r} over {len(units)} units"
            )
        if methods is None:
            methods = self.methods
        else:
            methods = [check_option(m, name="methods", options=self.methods) for m in methods]
            if len(set(methods)) < 2:
                raise ValueError(f"`methods` must name at least two methods; got {methods}")
        seeds = _ordered(rows["seed"])
        cube = (
            rows.set_index(["dataset", "representation", "method", "seed"])[metric]
            .reindex(
                pd.MultiIndex.from_tuples(
                    [(*u, m, s) for u in units for m in methods for s in seeds]
                )
            )
            .to_numpy(dtype=float)
            .reshape(len(units), len(methods), len(seeds))
        )
        # per bin, method and seed: the mean over the bin's units
        per_bin = np.stack([np.nanmean(cube[codes == b], axis=0) for b in present])
        point = per_bin.mean(axis=2)
        rng = check_random_state(random_state)
        draws = rng.integers(0, len(seeds), size=(n_resamples, len(seeds)))
        boot = per_bin[:, :, draws].mean(axis=3)  # (bins, methods, resamples)
        tau_rows, flip_rows = [], []
        for a, b in itertools.combinations(range(len(present)), 2):
            tau = _tau(point[a], point[b])
            taus = np.array([_tau(boot[a, :, r], boot[b, :, r]) for r in range(n_resamples)])
            low, high = _percentile_interval(taus, alpha)
            tau_rows.append(
                {
                    "bin_a": labels[present[a]],
                    "bin_b": labels[present[b]],
                    "tau": tau,
                    "conf_low": low,
                    "conf_high": high,
                    "n_units_a": int((codes == present[a]).sum()),
                    "n_units_b": int((codes == present[b]).sum()),
                }
            )
            for i, j in itertools.combinations(range(len(methods)), 2):
                diff_a, diff_b = point[a, i] - point[a, j], point[b, i] - point[b, j]
                if diff_a * diff_b < 0:
                    flips = (boot[a, i] - boot[a, j]) * (boot[b, i] - boot[b, j]) < 0
                    flip_rows.append(
                        {
                            "bin_a": labels[present[a]],
                            "bin_b": labels[present[b]],
                            "method_1": methods[i],
                            "method_2": methods[j],
                            "diff_a": diff_a,
                            "diff_b": diff_b,
                            "bootstrap_share": float(flips.mean()),
                        }
                    )
        rankings = pd.DataFrame(
            [
                {
                    "bin": labels[present[b]],
                    "method": m,
                    metric: point[b, i],
                    "rank": float(stats.rankdata(-point[b])[i]),
                }
                for b in range(len(present))
                for i, m in enumerate(methods)
            ]
        )
        assignment = pd.DataFrame(
            {
                "dataset": [u[0] for u in units],
                "representation": [u[1] for u in units],
                by: values,
                "bin": [labels[c] if c >= 0 else None for c in codes],
            }
        )
        flip_columns = ["bin_a", "bin_b", "method_1", "method_2", "diff_a", "diff_b"]
        return RegimeResults(
            method=f"Ranking reversals across bins of {by}",
            nobs=len(units),
            coordinate=by,
            metric=metric,
            track=track,
            assignment=assignment,
            rankings=rankings,
            taus=pd.DataFrame(tau_rows),
            reversals=pd.DataFrame(flip_rows, columns=[*flip_columns, "bootstrap_share"]),
            n_resamples=n_resamples,
            alpha=alpha,
        )

    def audit(
        self,
        rep_a: str,
        rep_b: str,
        *,
        metric: str = "ari",
        track: str | None = None,
        method: str | None = None,
        coordinates: Sequence[str] | None = None,
        fingerprints: pd.DataFrame | None = None,
    ) -> AuditResults:
        """Attribute the gain of representation ``rep_b`` over ``rep_a`` to the shift of the
        fingerprint coordinates.

        Parameters
        ----------
        rep_a, rep_b : str
            Two representations of the benchmark.
        metric : {"ari", "ami", "nmi", "acc"}
        track : str, optional
            Default: the first track.
        method : str, optional
            One method's gain; default the mean over the methods.
        coordinates : sequence of str, optional
            The coordinates to attribute to; default every coordinate whose shift varies across
            the datasets (one that shifts identically everywhere cannot be told from the
            intercept).
        fingerprints : DataFrame, optional
            Coordinates indexed by (dataset, representation); default the results' own.

        Returns
        -------
        AuditResults
            The regression coefficients (``params``, with t inference), and
            :meth:`AuditResults.contributions`.

        Notes
        -----
        For each dataset ``d`` the gain ``g_d`` is the metric's mean over seeds (and methods)
        under ``rep_b`` less that under ``rep_a``, and the shift ``delta_d`` the difference of
        the fingerprints. Ordinary least squares fits ``g_d = beta_0 + delta_d' beta + e_d``
        over the datasets. Because the fit has an intercept, the mean gain splits exactly into
        ``beta_0`` (not explained by the shifts) plus one contribution ``beta_j mean(delta_j)``
        per coordinate. This is an association across datasets, not a causal effect: it needs
        more datasets than coordinates (and, to be stable, many more), and its t intervals
        treat the datasets as independent.
        """
        metric, track = self._metric(metric), self._track(track)
        reps = self.representations
        rep_a = check_option(rep_a, name="rep_a", options=reps)
        rep_b = check_option(rep_b, name="rep_b", options=reps)
        if rep_a == rep_b:
            raise ValueError(f"`rep_b` must differ from `rep_a`; both are {rep_a!r}")
        rows = self.scores[self.scores["track"] == track]
        if method is not None:
            rows = rows[rows["method"] == check_option(method, name="method", options=self.methods)]
        means = rows.groupby(["dataset", "representation"], sort=False)[metric].mean()
        datasets = self.datasets
        gains = pd.Series(
            [means.get((d, rep_b), np.nan) - means.get((d, rep_a), np.nan) for d in datasets],
            index=pd.Index(datasets, name="dataset"),
        )
        frame = self._fingerprints(fingerprints)
        try:
            shifts = pd.DataFrame(
                frame.loc[[(d, rep_b) for d in datasets]].to_numpy(dtype=float)
                - frame.loc[[(d, rep_a) for d in datasets]].to_numpy(dtype=float),
                index=gains.index,
                columns=frame.columns,
            )
        except KeyError as exc:
            raise ValueError(f"`fingerprints` lacks a row for {exc}") from None
        keep = gains.notna() & shifts.notna().all(axis=1)
        gains, shifts = gains[keep], shifts[keep]
        notes = ()
        if coordinates is None:
            spread = shifts.std(axis=0, ddof=0) > 1e-12 * (1 + shifts.abs().max())
            varying = shifts.columns[spread.to_numpy()]
            dropped = [c for c in shifts.columns if c not in varying]
            if dropped:
                notes = (f"Left out (shift constant across datasets): {', '.join(dropped)}.",)
            shifts = shifts[list(varying)]
        else:
            if isinstance(coordinates, str):
                coordinates = [coordinates]
            for c in coordinates:
                check_option(c, name="coordinates", options=list(shifts.columns))
            shifts = shifts[list(coordinates)]
        n, p = len(gains), shifts.shape[1] + 1
        if n <= p:
            raise ValueError(
                f"`coordinates`: {p - 1} coordinate(s) and an intercept need more than {p} "
                f"datasets; there are {n}. Pass fewer `coordinates`"
            )
        names = ["Intercept", *shifts.columns]
        design = np.column_stack([np.ones(n), shifts.to_numpy()])
        try:
            check_design(design, names)
        except ValueError as exc:
            raise ValueError(f"`coordinates`: {exc}") from None
        beta, *_ = np.linalg.lstsq(design, gains.to_numpy(), rcond=None)
        resid = gains.to_numpy() - design @ beta
        sigma2 = float(resid @ resid) / (n - p)
        vcov = sigma2 * np.linalg.inv(design.T @ design)
        return AuditResults(
            method=f"Representation audit: {rep_b} vs {rep_a} ({metric}, {track} track)",
            nobs=n,
            params=pd.Series(beta, index=names),
            vcov=pd.DataFrame(vcov, index=names, columns=names),
            df_resid=float(n - p),
            inference="t",
            scale=sigma2,
            notes=notes,
            gains=gains,
            shifts=shifts,
        )


def _tau(x: np.ndarray, y: np.ndarray) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0 or len(x) < 2:
        return float("nan")
    return float(stats.kendalltau(x, y).statistic)


def _percentile_interval(values: np.ndarray, alpha: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if not finite.size:
        return float("nan"), float("nan")
    low, high = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _plot_rankings(results, ax=None, **kwargs):
    """Each method's mean metric per bin, one line per method (crossing lines = reversals)."""
    ax = get_ax(ax)
    bins = _ordered(results.rankings["bin"])
    for method, rows in results.rankings.groupby("method", sort=False):
        ax.plot(np.arange(len(bins)), rows[results.metric], "o-", label=method, **kwargs)
    ax.set_xticks(np.arange(len(bins)), bins)
    ax.set_xlabel(f"bin of {results.coordinate}")
    ax.set_ylabel(f"mean {results.metric}")
    ax.legend(frameon=False, fontsize="small")
    ax.set_title(f"method scores by {results.coordinate} ({results.track} track)")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class RegimeResults(Results):
    """Method rankings per fingerprint bin and the Kendall tau between bins.

    Parameters
    ----------
    coordinate, metric, track : str
    assignment : DataFrame
        Each unit (dataset, representation), its coordinate value and its bin.
    rankings : DataFrame
        ``bin, method, <metric>, rank`` (rank 1 = best).
    taus : DataFrame
        ``bin_a, bin_b, tau, conf_low, conf_high, n_units_a, n_units_b``: one row per pair of
        bins.
    reversals : DataFrame
        Method pairs whose order flips between two bins: ``bin_a, bin_b, method_1,
        method_2, diff_a, diff_b`` (method_1 minus method_2 in each bin) and
        ``bootstrap_share``.
    n_resamples : int
    alpha : float

    References
    ----------
    CHB: Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster 65800.
    """

    coordinate: str
    metric: str
    track: str
    assignment: pd.DataFrame
    rankings: pd.DataFrame
    taus: pd.DataFrame
    reversals: pd.DataFrame
    n_resamples: int
    alpha: float = 0.05

    _plots: ClassVar[dict] = {"rankings": _plot_rankings}

    def tidy(self) -> pd.DataFrame:
        """One row per pair of bins: Kendall tau and its bootstrap interval."""
        return self.taus.copy()

    def summary(self, alpha: float | None = None) -> Summary:
        """Rankings per bin, taus and reversals (the interval level is the one computed)."""
        wide = self.rankings.pivot(index="method", columns="bin", values=self.metric)
        wide = wide.reindex(
            index=_ordered(self.rankings["method"]), columns=_ordered(self.rankings["bin"])
        )
        tables = {
            f"mean {self.metric} by bin": wide,
            "kendall tau": self.taus.set_index(["bin_a", "bin_b"]),
        }
        if len(self.reversals):
            tables["reversals"] = self.reversals
        notes = self.notes + (
            f"{100 * (1 - self.alpha):g}% percentile intervals over {self.n_resamples} bootstrap "
            "resamples of the seeds.",
        )
        return Summary(title=self.method, info=self._info(), tables=tables, notes=notes)


def _plot_contributions(results, ax=None, **kwargs):
    """The mean gain split into the unexplained intercept and each coordinate's contribution."""
    ax = get_ax(ax)
    frame = results.contributions()
    colours = ["tab:gray" if t == "Intercept" else "tab:blue" for t in frame["term"]]
    ax.barh(frame["term"], frame["contribution"], color=colours, **kwargs)
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set_xlabel("contribution to the mean gain")
    ax.set_title(f"mean gain {results.gains.mean():+.3f}")
    ax.invert_yaxis()
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class AuditResults(EstimationResults):
    """A representation's gain regressed on the fingerprint shifts it causes.

    ``params`` are the OLS coefficients (``Intercept`` and one per coordinate shift) with t
    inference; ``gains`` the per-dataset gains and ``shifts`` the coordinate shifts (rows =
    datasets). See :meth:`BenchmarkResults.audit`.

    References
    ----------
    CHB: Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster 65800
    ("representation auditing"; the attribution rule is a reconstruction).
    """

    gains: pd.Series = field(default_factory=pd.Series)
    shifts: pd.DataFrame = field(default_factory=pd.DataFrame)

    _plots: ClassVar[dict] = {"contributions": _plot_contributions, "coef": plot_coefficients}

    def contributions(self) -> pd.DataFrame:
        """``term, coefficient, mean_shift, contribution, share``: the mean gain equals the sum
        of ``contribution`` (the intercept's is itself, its mean shift 1)."""
        mean_shift = pd.concat([pd.Series({"Intercept": 1.0}), self.shifts.mean()])
        contribution = self.params * mean_shift
        total = float(self.gains.mean())
        return pd.DataFrame(
            {
                "term": self.params.index,
                "coefficient": self.params.to_numpy(),
                "mean_shift": mean_shift.to_numpy(),
                "contribution": contribution.to_numpy(),
                "share": contribution.to_numpy() / total if total else np.nan,
            }
        )
