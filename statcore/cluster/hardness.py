"""CHB hardness fingerprints: separation, cohesion and scale heterogeneity, and topology of a
labelled dataset in one representation.

A fingerprint maps a (dataset, representation) pair to a dozen interpretable, scale-free
coordinates, so that clustering results can be read against the structure that makes a
problem hard. :class:`HardnessFingerprint` computes one; :func:`fingerprint_map` places several
on one plane.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.sparse import csgraph

from statcore.base import Estimator
from statcore.cluster import _kernels as K
from statcore.cluster.metrics import davies_bouldin
from statcore.compat import import_optional, renamed_attribute, renamed_keywords
from statcore.exceptions import NotApplicableWarning
from statcore.results import Results, Summary
from statcore.results.plotting import get_ax, legend_beside, panel_axes
from statcore.validation import (
    as_float_array,
    check_alpha,
    check_bool,
    check_positive_int,
    check_random_state,
    check_scalar,
    describe,
)

REFERENCE = (
    "CHB: A Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster "
    "65800 (https://icml.cc/virtual/2026/poster/65800)."
)

#: landmarks when fit() is not told: ripser's H1 on 300 points takes well under a second
DEFAULT_LANDMARKS = 300
#: coordinate -> family, in the order tidy() lists them
FAMILIES = {
    "silhouette": "separation",
    "davies_bouldin": "separation",
    "knn_purity": "separation",
    "margin_ratio": "separation",
    "radius_cv": "cohesion",
    "radius_ratio": "cohesion",
    "density_cv": "cohesion",
    "size_entropy": "cohesion",
    "h0_gaps": "topology",
    "class_fragmentation": "topology",
    "h1_max_persistence": "topology",
    "h1_total_persistence": "topology",
}
FAMILY_COLOURS = {"separation": "tab:blue", "cohesion": "tab:orange", "topology": "tab:green"}
#: the coordinates whose intervals come from the within-class bootstrap
BOOTSTRAPPED = (
    "silhouette",
    "davies_bouldin",
    "knn_purity",
    "margin_ratio",
    "radius_cv",
    "radius_ratio",
    "density_cv",
)


def _plot_bars(results, ax=None, alpha=0.05, **kwargs):
    """The coordinates as bars, one panel per family, with their intervals where they have one."""
    frame = results.tidy(alpha=alpha)
    families = list(dict.fromkeys(frame["family"]))
    axes = panel_axes(len(families), ax, ncols=len(families))
    for panel, family in zip(axes, families, strict=True):
        rows = frame[frame["family"] == family]
        positions = np.arange(len(rows))
        values = rows["value"].to_numpy(dtype=float)
        panel.barh(positions, values, color=FAMILY_COLOURS[family], **kwargs)
        low, high = rows["conf_low"].to_numpy(float), rows["conf_high"].to_numpy(float)
        shown = np.isfinite(low) & np.isfinite(high)
        if shown.any():
            err = np.vstack([values - low, high - values])[:, shown]
            panel.errorbar(
                values[shown], positions[shown], xerr=err, fmt="none", color="k", capsize=3
            )
        panel.set_yticks(positions, rows["name"])
        panel.invert_yaxis()
        panel.axvline(0.0, color="black", linewidth=0.8)
        panel.set_title(family)
    title = (
        results.method
        if results.representation is None
        else (f"{results.method} ({results.representation})")
    )
    axes[0].figure.suptitle(title)
    return axes


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class HardnessResults(Results):
    """A hardness fingerprint: the coordinates of the three families and how they were measured.

    Attributes
    ----------
    coordinates : Series
        Coordinate name -> value, in the order of ``FAMILIES`` (what ``ClusteringBenchmark``
        reads).
    families : dict
        Coordinate name -> family (``"separation"``, ``"cohesion"``, ``"topology"``).
    replicates : DataFrame or None
        Bootstrap replicates of the bootstrapped coordinates (``n_resamples`` rows), None when
        ``n_resamples=0``.
    certified : DataFrame
        The certified band of ``h1_max_persistence`` (``conf_low``, ``conf_high``): the
        landmark value plus or minus ``2 * bottleneck_bound``.
    class_table : DataFrame
        One row per class (the user's labels, in order of first appearance): ``size``,
        ``share``, ``radius`` and ``density`` (median k-th neighbour distance), both in units
        of ``scale``, mean ``silhouette``, ``knn_purity`` and ``fragments`` (components of the
        class's spanning tree cut at the gap threshold).
    scale : float
        The root-mean-square distance between two points of ``X``, in ``X``'s units; every
        length of the fingerprint is divided by it.
    cover_radius : float
        Largest distance of a point to its nearest landmark (ripser's ``r_cover``), in units of
        ``scale``; 0 when every point is a landmark.
    landmarks : ndarray
        Row indices of the greedy-permutation landmarks, in the order picked.
    diagram_h1 : ndarray or None
        The landmarks' H1 persistence diagram, ``(birth, death)`` rows in ``X``'s units (None
        when H1 was skipped or ripser is missing).
    h0_deaths : ndarray
        Sorted minimum-spanning-tree edge lengths of the points used for the pairwise
        coordinates, in ``X``'s units (the finite H0 deaths of their Rips filtration).
    representation : str or None
        The name of the representation fingerprinted.
    n_classes, n_sampled : int
        Number of classes; number of points behind the pairwise coordinates (all, unless
        ``max_points`` sub-sampled them).
    n_neighbors : int
        The neighbourhood size, also the smallest component the H0 coordinates count
        (``k`` is its old name, warns ``FutureWarning``).
    gap_factor : float
        The H0 gap threshold, in multiples of the median spanning-tree edge.
    n_resamples : int
        Bootstrap replicates drawn.

    Notes
    -----
    Vocabulary: ``n_neighbors`` is the neighbourhood size of the kNN coordinates, ``n_classes``
    the number of true classes; see :mod:`statcore.cluster`.

    References
    ----------
    CHB: A Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster
    65800.
    """

    coordinates: pd.Series
    families: dict
    replicates: pd.DataFrame | None
    certified: pd.DataFrame
    class_table: pd.DataFrame
    scale: float
    cover_radius: float
    landmarks: np.ndarray
    diagram_h1: np.ndarray | None
    h0_deaths: np.ndarray
    representation: str | None
    n_classes: int
    n_sampled: int
    n_neighbors: int
    gap_factor: float
    n_resamples: int

    _plots: ClassVar[dict] = {"bars": _plot_bars}

    k = renamed_attribute("k", "n_neighbors")

    @property
    def bottleneck_bound(self) -> float:
        """Certified bound ``2 * cover_radius`` (units of ``scale``) on the bottleneck distance
        between the landmarks' persistence diagrams and those of all points."""
        return 2.0 * self.cover_radius

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """``[lower, upper]`` per coordinate: bootstrap percentiles, the certified band of
        ``h1_max_persistence``, the value itself for ``size_entropy`` (fixed by the labels),
        NaN where no interval is computed (``h0_gaps``, ``class_fragmentation``,
        ``h1_total_persistence``)."""
        alpha = check_alpha(alpha)
        out = pd.DataFrame(np.nan, index=self.coordinates.index, columns=["lower", "upper"])
        if self.replicates is not None:
            quantiles = self.replicates.quantile([alpha / 2, 1 - alpha / 2]).T
            out.loc[quantiles.index, ["lower", "upper"]] = quantiles.to_numpy()
        out.loc["size_entropy"] = self.coordinates["size_entropy"]
        out.loc[self.certified.index] = self.certified.to_numpy()
        return out

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """``family, name, value, conf_low, conf_high``: one row per coordinate."""
        intervals = self.conf_int(alpha)
        return pd.DataFrame(
            {
                "family": [self.families[name] for name in self.coordinates.index],
                "name": self.coordinates.index,
                "value": self.coordinates.to_numpy(),
                "conf_low": intervals["lower"].to_numpy(),
                "conf_high": intervals["upper"].to_numpy(),
            }
        )

    def glance(self) -> pd.DataFrame:
        """``method, nobs, representation, n_classes, n_sampled, n_landmarks, cover_radius,
        bottleneck_bound, n_resamples``."""
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "representation": self.representation,
                    "n_classes": self.n_classes,
                    "n_sampled": self.n_sampled,
                    "n_landmarks": len(self.landmarks),
                    "cover_radius": self.cover_radius,
                    "bottleneck_bound": self.bottleneck_bound,
                    "n_resamples": self.n_resamples,
                }
            ]
        )

    def summary(self, alpha: float = 0.05) -> Summary:
        table = self.tidy(alpha).set_index("name")
        return Summary(
            title=self._title(),
            info=self._info(),
            tables={"coordinates": table, "classes": self.class_table},
            notes=self.notes
            + (
                f"Intervals: {100 * (1 - alpha):g}% within-class bootstrap percentiles "
                f"({self.n_resamples} replicates); h1_max_persistence: certified band "
                "+/- 2 * bottleneck_bound.",
            ),
        )

    def _title(self) -> str:
        if self.representation is None:
            return self.method
        return f"{self.method}: {self.representation}"

    def _repr_lines(self) -> list[str]:
        return [f"  {name} = {value:.4g}" for name, value in self.coordinates.items()]


class HardnessFingerprint(Estimator):
    """The CHB hardness fingerprint of a labelled dataset in one representation.

    Twelve coordinates in three families, all free of the data's units and unchanged by
    rotating, translating or isotropically scaling ``X`` and by renaming the classes:

    - separation: mean silhouette of the true labels, Davies-Bouldin index, kNN label purity,
      median margin ratio (distance to the nearest point of another class over distance to
      the nearest point of the same class);
    - cohesion and scale heterogeneity: coefficient of variation and max/min ratio of the
      per-class RMS radii, coefficient of variation over classes of the median k-th neighbour
      distance (density), normalised entropy of the class sizes;
    - topology: number of long gaps of the minimum spanning tree that separate sizeable
      components (H0), mean number of extra sizeable components per class at the same
      threshold, and the largest and total H1 persistence of the Vietoris-Rips filtration of
      greedy-permutation landmarks.

    Parameters
    ----------
    X : array_like of shape (n, d)
        The points, in the representation to fingerprint. Nothing is modified.
    labels : array_like of shape (n,)
        The true classes (any hashable values); at least two classes of at least two points.
    representation : None, str, callable or transformer, optional
        The representation's name (a string, recorded on the results), or a function
        ``X -> X'`` or an object with ``fit_transform`` applied to ``X`` first (its name is
        then the function's or class's name).

    Notes
    -----
    Every length is measured in units of ``scale``, the root-mean-square distance between
    two points (``sqrt(2 * mean |x_i - mean(x)|^2)``, exact in O(nd)); ``X`` is centred before
    any distance is computed, since distances from inner products lose precision far from
    the origin. Classes are renumbered in order of first appearance, which makes the
    fingerprint, its random draws and its intervals independent of the class names.

    Fidelity: reconstruction. The CHB paper's full text and code were not available (only its
    abstract, which names the three families and "scalable persistent-homology summaries");
    every coordinate definition below is ours:

    - ``silhouette``: scikit-learn's mean silhouette of the true labels (Euclidean);
    - ``davies_bouldin``: scikit-learn's Davies-Bouldin index of the true labels;
    - ``knn_purity``: mean over points of the share of their ``n_neighbors`` nearest neighbours with
      the same label;
    - ``margin_ratio``: median over points of ``d(nearest other-class point) /
      d(nearest same-class point)``;
    - ``radius_cv`` and ``radius_ratio``: coefficient of variation (population) and max/min of
      the per-class RMS radii ``sqrt(mean_{i in c} |x_i - mu_c|^2)``;
    - ``density_cv``: coefficient of variation over classes of the median distance of the
      class's points to their k-th nearest neighbour among all points;
    - ``size_entropy``: ``H(p) / log K`` of the class shares;
    - ``h0_gaps``: cut the minimum spanning tree (the H0 deaths) at ``gap_factor`` times its
      median edge; the number of components of at least ``n_neighbors`` points, minus one.
      ``class_fragmentation``: the mean over classes of the same count (at the same
      threshold, at least 0) on each class's own spanning tree. The threshold is relative to
      the typical nearest-neighbour scale, not to the diameter, and small components are not
      counted: with ``tau * diameter`` every edge of digits (d = 64) counted as a gap, since
      distances concentrate in high dimension, and the Gaussian tails of 2-d blobs gave
      isolated points as "components";
    - ``h1_max_persistence`` and ``h1_total_persistence``: largest and summed
      ``death - birth`` of the H1 diagram of the landmarks' Rips filtration (ripser), divided
      by ``scale``.

    The landmark diagram is certified: its bottleneck distance to the diagram of all points
    is at most ``2 r_cover`` (Rips stability under the Hausdorff distance ``r_cover``), so the
    largest persistence is within ``4 r_cover`` of the full one, the band reported as its
    interval. Total persistence has no such bound and no interval. The other intervals are
    percentile intervals of a bootstrap over points within classes that holds the point-level
    scores (silhouette, purity, margin, neighbour distance) fixed and recomputes the class
    centroids and radii, so they capture the averaging step and understate the variance of the
    pairwise scores. Above ``max_points`` points the pairwise coordinates are computed on a
    class-stratified random subsample, as scikit-learn's ``silhouette_score(sample_size=)``
    does.

    References
    ----------
    CHB: A Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster
    65800 (https://icml.cc/virtual/2026/poster/65800).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from statcore.cluster import HardnessFingerprint
    >>> data = load_iris()
    >>> res = HardnessFingerprint(data.data, data.target, representation="raw").fit(
    ...     random_state=0
    ... )
    >>> round(res.coordinates["silhouette"], 4)
    0.5035
    """

    method_name = "CHB hardness fingerprint"

    def __init__(self, X, labels, *, representation=None):
        X = as_float_array(X, name="X", ndim=2, min_rows=4)
        self.representation, X = _apply_representation(representation, X)
        codes, classes = _as_labels(labels, len(X))
        self.X = X
        self.X.setflags(write=False)
        self.labels = codes
        self.labels.setflags(write=False)
        self.classes = classes
        centred = K.centred(X)
        self.scale = float(np.sqrt(2.0 * np.einsum("ij,ij->", centred, centred) / len(X)))
        if self.scale == 0.0:
            raise ValueError("`X` must hold at least two distinct points; all rows are equal")
        self._Z = centred / self.scale

    @property
    def nobs(self) -> int:
        return len(self.X)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def _repr_spec(self) -> str:
        rep = f"representation={self.representation!r}, " if self.representation else ""
        return f"{rep}n_classes={self.n_classes}"

    @renamed_keywords(k="n_neighbors")
    def fit(
        self,
        *,
        n_landmarks: int | None = None,
        n_neighbors: int = 10,
        gap_factor: float = 5.0,
        max_points: int = 10_000,
        n_resamples: int = 200,
        h1: bool = True,
        random_state=None,
    ) -> HardnessResults:
        """Compute the fingerprint.

        Parameters
        ----------
        n_landmarks : int, optional
            Greedy-permutation landmarks for the H1 persistence (at most the number of points;
            all points give the exact diagram); by default ``min(300, n)``. ripser's cost grows
            quickly with it: a few hundred keep H1 under a second.
        n_neighbors : int
            Neighbours for the kNN purity and the density coordinate (``k=`` is its old
            spelling, warns ``FutureWarning``).
        gap_factor : float
            Gap threshold of the H0 coordinates, in multiples of the median edge of the
            minimum spanning tree (> 1).
        max_points : int
            Above this many points the pairwise coordinates (silhouette, margin, purity,
            density, H0) use a class-stratified random subsample of about this size; O(n^2 d)
            work below it.
        n_resamples : int
            Bootstrap replicates for the intervals (0: none).
        h1 : bool
            Compute the H1 coordinates (needs ripser, the ``cluster`` extra). Without ripser
            they are NaN with a ``NotApplicableWarning``; ``h1=False`` skips them silently.
        random_state : None, int, SeedSequence or Generator
            Seeds the subsample and the bootstrap.

        Returns
        -------
        HardnessResults
        """
        n, n_classes = self.nobs, self.n_classes
        if n_landmarks is None:
            n_landmarks = min(DEFAULT_LANDMARKS, n)
        n_landmarks = check_scalar(
            n_landmarks, name="n_landmarks", kind=numbers.Integral, low=2, high=n
        )
        max_points = check_scalar(
            max_points, name="max_points", kind=numbers.Integral, low=2 * n_classes
        )
        gap_factor = check_scalar(gap_factor, name="gap_factor", low=1.0, low_inclusive=False)
        n_resamples = check_positive_int(n_resamples, name="n_resamples", minimum=0)
        check_bool(h1, name="h1")
        rng = check_random_state(random_state)

        Z, y = self._Z, self.labels
        sizes = np.bincount(y, minlength=n_classes)
        sample = _stratified_sample(y, sizes, max_points, rng)
        Zs, ys = Z[sample], y[sample]
        k = check_scalar(
            n_neighbors, name="n_neighbors", kind=numbers.Integral, low=1, high=len(sample) - 1
        )

        point = _point_scores(Zs, ys, n_classes, k)
        gaps, fragments, h0_deaths = _h0(Zs, ys, n_classes, gap_factor, k)
        centres = _centroids(Z, y, sizes)
        radii, spreads = _radii(Z, y, centres, sizes)
        share = sizes / n
        coordinates = {
            "silhouette": point["silhouette"].mean(),
            "davies_bouldin": davies_bouldin(spreads, centres),
            "knn_purity": point["purity"].mean(),
            "margin_ratio": np.median(point["margin"]),
            "radius_cv": _cv(radii),
            "radius_ratio": radii.max() / radii.min() if radii.min() > 0 else np.inf,
            "density_cv": _cv(_class_medians(point["kth"], ys, n_classes)),
            "size_entropy": float(-(share * np.log(share)).sum() / np.log(n_classes)),
            "h0_gaps": float(gaps),
            "class_fragmentation": float(fragments.mean()),
        }
        landmarks, _, cover = K.farthest_points(Z, n_landmarks)
        diagram, notes = None, []
        if h1:
            diagram = _h1_diagram(Z[landmarks])
        if diagram is None:
            coordinates["h1_max_persistence"] = coordinates["h1_total_persistence"] = np.nan
            certified = pd.DataFrame(
                np.nan, index=["h1_max_persistence"], columns=["conf_low", "conf_high"]
            )
        else:
            persistence = diagram[:, 1] - diagram[:, 0]
            top = float(persistence.max()) if len(persistence) else 0.0
            coordinates["h1_max_persistence"] = top
            coordinates["h1_total_persistence"] = float(persistence.sum())
            certified = pd.DataFrame(
                [[max(top - 4.0 * cover, 0.0), top + 4.0 * cover]],
                index=["h1_max_persistence"],
                columns=["conf_low", "conf_high"],
            )
        if len(sample) < n:
            notes.append(
                f"Silhouette, margin, purity, density and H0 use a class-stratified subsample "
                f"of {len(sample)} of the {n} points (max_points={max_points})."
            )
        replicates = None
        if n_resamples:
            replicates = pd.concat(
                [
                    _bootstrap_points(point, ys, n_classes, n_resamples, rng),
                    _bootstrap_classes(Z, y, sizes, n_resamples, rng),
                ],
                axis=1,
            )[list(BOOTSTRAPPED)]
        class_table = pd.DataFrame(
            {
                "size": sizes,
                "share": share,
                "radius": radii,
                "density": _class_medians(point["kth"], ys, n_classes),
                "silhouette": _class_means(point["silhouette"], ys, n_classes),
                "knn_purity": _class_means(point["purity"], ys, n_classes),
                "fragments": fragments + 1,
            },
            index=pd.Index(self.classes, name="class"),
        )
        return HardnessResults(
            method=self.method_name,
            nobs=n,
            model=self,
            notes=tuple(notes),
            coordinates=pd.Series(coordinates, dtype=float)[list(FAMILIES)],
            families=dict(FAMILIES),
            replicates=replicates,
            certified=certified,
            class_table=class_table,
            scale=self.scale,
            cover_radius=float(cover),
            landmarks=landmarks,
            diagram_h1=None if diagram is None else diagram * self.scale,
            h0_deaths=h0_deaths * self.scale,
            representation=self.representation,
            n_classes=n_classes,
            n_sampled=len(sample),
            n_neighbors=k,
            gap_factor=gap_factor,
            n_resamples=n_resamples,
        )


def _apply_representation(representation, X):
    if representation is None or isinstance(representation, str):
        return representation, X
    if hasattr(representation, "fit_transform"):
        transformed, name = representation.fit_transform(X), type(representation).__name__
    elif callable(representation):
        transformed = representation(X)
        name = getattr(representation, "__name__", type(representation).__name__)
    else:
        raise TypeError(
            "`representation` must be None, a name, a function X -> X' or an object with "
            f"fit_transform; got {describe(representation)}"
        )
    out = as_float_array(transformed, name="representation(X)", ndim=2)
    if len(out) != len(X):
        raise ValueError(
            f"`representation` must keep the {len(X)} rows of `X`; it returned {len(out)}"
        )
    return name, out


def _as_labels(labels, n: int) -> tuple[np.ndarray, list]:
    """Integer codes 0..K-1 in order of first appearance, and the classes in that order."""
    if labels is None:
        raise TypeError("`labels` must be array-like of shape (n,); got None")
    values = np.asarray(labels)
    if values.ndim != 1:
        raise ValueError(f"`labels` must be 1-D; got an array of shape {values.shape}")
    if len(values) != n:
        raise ValueError(f"`labels` must have one entry per row of `X` ({n}); got {len(values)}")
    codes, classes = pd.factorize(values, use_na_sentinel=True)
    if (codes < 0).any():
        first = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(f"`labels` must not contain missing values; found one at index {first}")
    if len(classes) < 2:
        raise ValueError(f"`labels` must name at least 2 classes; got {len(classes)}")
    counts = np.bincount(codes)
    if counts.min() < 2:
        alone = pd.Index(classes)[counts < 2].tolist()
        raise ValueError(
            "`labels` must give every class at least 2 points (radii, silhouettes and margins "
            f"need a neighbour in the class); single-point classes: {alone[:5]}"
        )
    return codes.astype(np.int64), list(classes)


def _stratified_sample(y, sizes, max_points, rng) -> np.ndarray:
    """All rows, or per class about ``max_points * share`` rows (at least 2), sorted."""
    if len(y) <= max_points:
        return np.arange(len(y))
    take = np.minimum(np.maximum(np.round(max_points * sizes / len(y)).astype(int), 2), sizes)
    rows = [
        rng.choice(np.flatnonzero(y == c), size=take[c], replace=False) for c in range(len(sizes))
    ]
    return np.sort(np.concatenate(rows))


def _point_scores(Z, y, n_classes, k) -> dict:
    """Silhouette, margin ratio, kNN purity and k-th neighbour distance of every point."""
    # one pass over the pairs serves both the silhouette and the margins
    sums, near_same, near_other = K.class_distance_sums(Z, y, n_classes)
    silhouette = K.silhouette_from_sums(sums, y)
    with np.errstate(invalid="ignore", divide="ignore"):
        margin = near_other / near_same
    # duplicates of one point in two classes: indistinguishable, ratio 1
    margin[(near_other == 0) & (near_same == 0)] = 1.0
    dist, idx = K.knn(Z, k)
    return {
        "silhouette": silhouette,
        "margin": margin,
        "purity": (y[idx] == y[:, None]).mean(axis=1),
        "kth": dist[:, -1],
    }


def _h0(Z, y, n_classes, gap_factor, min_size) -> tuple[int, np.ndarray, np.ndarray]:
    """Gaps of all points' spanning tree, extra components per class (both counting components
    of at least ``min_size`` points after cutting the edges longer than ``gap_factor`` times
    the median edge), and the sorted spanning-tree lengths."""
    edges, weights = K.minimum_spanning_tree(Z)
    threshold = gap_factor * np.median(weights)
    gaps = _large_components(edges, weights, len(Z), threshold, min_size) - 1
    fragments = np.empty(n_classes)
    for c in range(n_classes):
        members = np.flatnonzero(y == c)
        class_edges, class_weights = K.minimum_spanning_tree(Z[members])
        found = _large_components(class_edges, class_weights, len(members), threshold, min_size)
        fragments[c] = max(found - 1, 0)
    return max(gaps, 0), fragments, np.sort(weights)


def _large_components(edges, weights, n, threshold, min_size) -> int:
    """Components of at least ``min_size`` points once the edges above ``threshold`` are cut."""
    kept = edges[weights <= threshold]
    graph = sparse.coo_matrix((np.ones(len(kept)), (kept[:, 0], kept[:, 1])), shape=(n, n))
    _, component = csgraph.connected_components(graph, directed=False)
    return int(np.count_nonzero(np.bincount(component) >= min_size))


def _centroids(Z, y, sizes) -> np.ndarray:
    out = np.zeros((len(sizes), Z.shape[1]))
    np.add.at(out, y, Z)
    return out / sizes[:, None]


def _radii(Z, y, centres, sizes) -> tuple[np.ndarray, np.ndarray]:
    """Per class, the RMS and the mean distance to the centroid."""
    dist = np.sqrt(np.einsum("ij,ij->i", Z - centres[y], Z - centres[y]))
    n_classes = len(sizes)
    rms = np.sqrt(np.bincount(y, weights=dist**2, minlength=n_classes) / sizes)
    return rms, np.bincount(y, weights=dist, minlength=n_classes) / sizes


def _cv(values: np.ndarray) -> float:
    """Population coefficient of variation along the last axis."""
    return values.std(axis=-1) / values.mean(axis=-1)


def _class_medians(values, y, n_classes) -> np.ndarray:
    return np.array([np.median(values[y == c]) for c in range(n_classes)])


def _class_means(values, y, n_classes) -> np.ndarray:
    return np.bincount(y, weights=values, minlength=n_classes) / np.bincount(y)


def _bootstrap_points(point, y, n_classes, n_resamples, rng) -> pd.DataFrame:
    """Resample points within classes; the point-level scores are held fixed."""
    draws = []
    for c in range(n_classes):
        members = np.flatnonzero(y == c)
        draws.append(members[rng.integers(0, len(members), (n_resamples, len(members)))])
    kth = np.column_stack([np.median(point["kth"][d], axis=1) for d in draws])
    rows = np.concatenate(draws, axis=1)
    return pd.DataFrame(
        {
            "silhouette": point["silhouette"][rows].mean(axis=1),
            "knn_purity": point["purity"][rows].mean(axis=1),
            "margin_ratio": np.median(point["margin"][rows], axis=1),
            "density_cv": _cv(kth),
        }
    )


def _bootstrap_classes(Z, y, sizes, n_resamples, rng) -> pd.DataFrame:
    """Resample points within classes and recompute centroids, radii and Davies-Bouldin."""
    n_classes, d = len(sizes), Z.shape[1]
    centres = np.empty((n_resamples, n_classes, d))
    rms = np.empty((n_resamples, n_classes))
    spreads = np.empty((n_resamples, n_classes))
    for c in range(n_classes):
        # about its own centroid, so that the distances from inner products stay accurate
        members = Z[y == c]
        mean = members.mean(axis=0)
        points = members - mean
        # about 2**21 replicate weights at a time: a few MB whatever the class size
        chunk = max(1, 2**21 // len(points))
        for b0 in range(0, n_resamples, chunk):
            b1 = min(b0 + chunk, n_resamples)
            draws = rng.integers(0, len(points), (b1 - b0, len(points)))
            draws += len(points) * np.arange(b1 - b0)[:, None]
            weights = np.bincount(draws.ravel(), minlength=draws.size).reshape(draws.shape)
            weights = weights / len(points)
            moved = weights @ points
            # distances of every point to every replicate's centroid in one product
            dist2 = (
                np.einsum("ij,ij->i", points, points)[None, :]
                + np.einsum("bj,bj->b", moved, moved)[:, None]
                - 2.0 * moved @ points.T
            )
            np.maximum(dist2, 0.0, out=dist2)
            centres[b0:b1, c] = mean + moved
            rms[b0:b1, c] = np.sqrt(np.einsum("bi,bi->b", weights, dist2))
            spreads[b0:b1, c] = np.einsum("bi,bi->b", weights, np.sqrt(dist2))
    db = [davies_bouldin(spreads[b], centres[b]) for b in range(n_resamples)]
    smallest = rms.min(axis=1)
    ratio = np.divide(
        rms.max(axis=1), smallest, out=np.full(n_resamples, np.inf), where=smallest > 0
    )
    return pd.DataFrame({"davies_bouldin": db, "radius_cv": _cv(rms), "radius_ratio": ratio})


def _h1_diagram(points) -> np.ndarray | None:
    """The H1 diagram of the points' Rips filtration, or None (with a warning) without ripser."""
    try:
        ripser = import_optional("ripser", "cluster")
    except ImportError as exc:
        warnings.warn(
            f"{exc}; h1_max_persistence and h1_total_persistence are NaN (fit(h1=False) skips "
            "them without this warning)",
            NotApplicableWarning,
            stacklevel=3,
        )
        return None
    distances = K.pairwise_distances(points, metric="euclidean")
    diagram = ripser.ripser(distances, maxdim=1, distance_matrix=True)["dgms"][1]
    return np.asarray(diagram, dtype=np.float64).reshape(-1, 2)


def fingerprint_map(results, labels=None, ax=None, *, n_arrows: int = 4):
    """Several fingerprints on one plane: the first two principal components of the
    standardised coordinate vectors.

    Parameters
    ----------
    results : sequence of HardnessResults
        At least two fingerprints (datasets, representations).
    labels : sequence of str, optional
        One name per fingerprint; by default the representation names (or their positions).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.
    n_arrows : int
        The coordinates with the longest loadings drawn as arrows (0: none).

    Returns
    -------
    matplotlib Axes

    Notes
    -----
    Each coordinate is centred and divided by its standard deviation across the
    fingerprints; coordinates that are NaN or infinite in any fingerprint, or constant across
    them, are left out (and listed in the axis title's footnote).

    References
    ----------
    CHB: A Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster
    65800.
    """
    results = list(results)
    if len(results) < 2 or not all(isinstance(r, HardnessResults) for r in results):
        raise ValueError(
            "`results` must hold at least 2 HardnessResults; got "
            + describe([type(r).__name__ for r in results])
        )
    if labels is None:
        labels = [r.representation or str(i) for i, r in enumerate(results)]
    labels = [str(label) for label in labels]
    if len(labels) != len(results):
        raise ValueError(
            f"`labels` must have one name per fingerprint ({len(results)}); got {len(labels)}"
        )
    n_arrows = check_positive_int(n_arrows, name="n_arrows", minimum=0)
    frame = pd.DataFrame([r.coordinates for r in results], index=labels)
    values = frame.to_numpy(dtype=float)
    spread = values.std(axis=0)
    kept = np.isfinite(values).all(axis=0) & (np.nan_to_num(spread) > 0)
    if not kept.any():
        raise ValueError("`results` must differ in at least one finite coordinate")
    scaled = (values[:, kept] - values[:, kept].mean(axis=0)) / spread[kept]
    u, s, vt = np.linalg.svd(scaled, full_matrices=False)
    scores = np.zeros((len(results), 2))
    loadings = np.zeros((kept.sum(), 2))
    n_comp = min(2, len(s))
    scores[:, :n_comp] = u[:, :n_comp] * s[:n_comp]
    loadings[:, :n_comp] = vt[:n_comp].T
    explained = np.zeros(2)
    explained[:n_comp] = s[:n_comp] ** 2 / (s**2).sum()

    ax = get_ax(ax)
    for family in dict.fromkeys(FAMILIES.values()):
        ax.scatter([], [], color=FAMILY_COLOURS[family], label=f"{family} coordinate")
    ax.scatter(scores[:, 0], scores[:, 1], color="black", zorder=3)
    for (x, y), label in zip(scores, labels, strict=True):
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    names = frame.columns[kept]
    reach = np.abs(scores).max() or 1.0
    for j in np.argsort(-np.hypot(*loadings.T))[:n_arrows]:
        dx, dy = loadings[j] * reach
        colour = FAMILY_COLOURS[FAMILIES[names[j]]]
        ax.annotate(
            "", xy=(dx, dy), xytext=(0, 0), arrowprops={"arrowstyle": "->", "color": colour}
        )
        ax.annotate(names[j], (dx, dy), color=colour, fontsize=8)
    ax.set_xlabel(f"PC1 ({100 * explained[0]:.0f}% of the standardised variance)")
    ax.set_ylabel(f"PC2 ({100 * explained[1]:.0f}%)")
    dropped = list(frame.columns[~kept])
    title = "hardness fingerprints"
    if dropped:
        title += f"\n(left out, not finite or constant: {', '.join(dropped)})"
    ax.set_title(title, fontsize=9)
    if n_arrows:
        legend_beside(ax)
    return ax
