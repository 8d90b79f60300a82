"""The runs of CHB's compute-aware benchmark: the named clusterers and how each is run, the
representations, the resolution of the benchmark's arguments, and the two tracks (``default``:
the library's defaults at the true number of clusters; ``tuned``: a budgeted random search
picked by a label-free criterion).

References
----------
CHB: a diagnostic toolkit for hardness-aware clustering evaluation. ICML 2026 (poster 65800).
"""

from __future__ import annotations

import copy
import itertools
import numbers
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from statcore.cluster import _kernels as K
from statcore.cluster.metrics import external_scores, internal_score
from statcore.cluster.simulate import BENCHMARK_DATASETS, ClusteringDataset, load_benchmark_datasets
from statcore.compat import import_optional
from statcore.validation import (
    as_float_array,
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

#: name -> (scikit-learn module or None for statcore's own, class, the number-of-clusters
#: parameter, takes random_state, options that replace the library's defaults)
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
    # statcore's own clusterer: no module to import, :class:`_SizeConstrainedAdapter` below
    "sc_fagc": (None, "_SizeConstrainedAdapter", "n_clusters", True, {}),
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
    if name == "sc_fagc":
        return _product(
            {"n_clusters": ks, "n_neighbors": [3, 5, 10], "size_bounds": [(0.5, 1.5), (0.1, 5.0)]}
        )
    raise ValueError(f"no tuning grid for method {name!r}; the named methods are {METHODS}")


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
            factory = (
                _SizeConstrainedAdapter
                if module is None
                else getattr(import_optional(module, "cluster"), cls)
            )
            estimator = factory(**{**defaults, **params})
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
                score = np.nan if labels is None else internal_score(X, labels, self.criterion, rng)
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
            score = internal_score(X, labels, self.criterion, rng)
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
