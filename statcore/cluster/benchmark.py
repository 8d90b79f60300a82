"""CHB's compute-aware clustering benchmark: :class:`ClusteringBenchmark` runs clusterers over
datasets, representations, tracks and seeds; its results rank the methods, bin the datasets by
their hardness fingerprints to expose ranking reversals (:meth:`BenchmarkResults.regimes`,
module :mod:`statcore.cluster.regimes`) and attribute a representation's gain to fingerprint
shifts (:meth:`BenchmarkResults.attribute_gain`, module :mod:`statcore.cluster.attribution`).
The runs themselves are in :mod:`statcore.cluster.tracks`, the scores in
:mod:`statcore.cluster.metrics`.

References
----------
CHB: a diagnostic toolkit for hardness-aware clustering evaluation. ICML 2026 (poster 65800).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from statcore.base import Estimator
from statcore.cluster.attribution import AuditResults, attribute_gain
from statcore.cluster.metrics import clustering_accuracy, external_scores
from statcore.cluster.regimes import RegimeResults, _ordered, ranking_regimes
from statcore.cluster.tracks import (
    CRITERIA,
    GRID,
    METHODS,
    METRICS,
    PCA_VARIANCE,
    REPRESENTATIONS,
    TRACKS,
    _resolve_datasets,
    _resolve_methods,
    _resolve_representations,
    _resolve_seeds,
    _resolve_tracks,
    _Runner,
    _silenced,
    _Unit,
)
from statcore.compat import renamed_method
from statcore.distributed import borrowed_backend
from statcore.results import Results, Summary
from statcore.results.plotting import get_ax
from statcore.validation import (
    as_float_array,
    check_alpha,
    check_option,
    check_positive_int,
    check_random_state,
    describe,
)

__all__ = [
    "CRITERIA",
    "GRID",
    "METHODS",
    "METRICS",
    "PCA_VARIANCE",
    "REPRESENTATIONS",
    "TRACKS",
    "AuditResults",
    "BenchmarkResults",
    "ClusteringBenchmark",
    "RegimeResults",
    "clustering_accuracy",
    "external_scores",
]


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
        Labelled data: names from ``statcore.cluster.simulate.BENCHMARK_DATASETS`` (generated
        ones seeded with 0), :class:`~statcore.cluster.simulate.ClusteringDataset` objects, or a
        dict mapping a name to a pair ``(X, labels)`` or a ClusteringDataset. Labels are required
        (they are what the external metrics compare to and what the ``"default"`` track's oracle
        ``k`` counts).
    methods : sequence or dict, optional
        Names among ``METHODS`` (``"kmeans"``, ``"agglomerative"`` (Ward), ``"spectral"``
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
        track, and :meth:`BenchmarkResults.attribute_gain` compares two of them.

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
    :meth:`BenchmarkResults.attribute_gain`). The datasets are scikit-learn's and its generators'.

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
            :meth:`BenchmarkResults.regimes` and :meth:`~BenchmarkResults.attribute_gain`
            unless their ``fingerprints=`` is given).
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

    # the analyses live in their own modules; as methods the results are their first argument
    regimes = ranking_regimes
    attribute_gain = attribute_gain


renamed_method(BenchmarkResults, "audit", "attribute_gain")
