"""Labelled datasets of the clustering benchmark: scikit-learn's bundled real data sets (iris,
wine, breast cancer, digits) and seeded generators of the hardness regimes CHB probes (blobs
with per-cluster scales and sizes, anisotropic blobs, moons, concentric circles).

Every loader and generator returns a :class:`ClusteringDataset`: the points, integer labels
``0..K-1`` and a name. The generators draw from numpy Generators (``random_state`` as
everywhere in statcore), so they need no scikit-learn; the real data sets ship with
scikit-learn and are read offline through the ``cluster`` extra.

References
----------
CHB: Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster 65800
(https://icml.cc/virtual/2026/poster/65800): the datasets x representations grid its
fingerprints and tracks are evaluated on.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from statcore.compat import import_optional, renamed_keywords
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    describe,
)

#: The real data sets, read from scikit-learn's bundled files (no download).
REAL_DATASETS = ("iris", "wine", "breast_cancer", "digits")
#: The generated regimes, in the order their random streams are assigned.
GENERATED_DATASETS = (
    "blobs",
    "varied_blobs",
    "unbalanced_blobs",
    "anisotropic_blobs",
    "moons",
    "circles",
)
BENCHMARK_DATASETS = REAL_DATASETS + GENERATED_DATASETS

#: The shear of scikit-learn's "comparing clustering algorithms" demo.
_ANISOTROPIC = np.array([[0.6, -0.6], [-0.4, 0.8]])


@dataclass(frozen=True, eq=False)
class ClusteringDataset:
    """Points with their true cluster labels.

    Parameters
    ----------
    name : str
        How the benchmark tables name it.
    X : ndarray of shape (n, d)
        The points (float64, read-only).
    labels : ndarray of shape (n,)
        True labels encoded as ``0..K-1`` (int64, read-only).
    description : str
        Where the data come from, in a few words.

    ``X, labels = dataset`` unpacks it.
    """

    name: str
    X: np.ndarray
    labels: np.ndarray
    description: str = ""

    def __post_init__(self):
        X = as_float_array(self.X, name="X", ndim=2, min_rows=2)
        raw = np.asarray(self.labels)
        if raw.ndim != 1 or len(raw) != len(X):
            raise ValueError(
                f"`labels` must be 1-D with one label per row of `X` ({len(X)}); "
                f"got {describe(self.labels)}"
            )
        _, labels = np.unique(raw, return_inverse=True)
        labels = labels.astype(np.int64)
        for array in (X, labels):
            array.setflags(write=False)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "labels", labels)

    @property
    def n_clusters(self) -> int:
        """Number of true clusters."""
        return int(self.labels.max()) + 1

    @property
    def nobs(self) -> int:
        """Number of points."""
        return self.X.shape[0]

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter((self.X, self.labels))

    def __repr__(self) -> str:
        n, d = self.X.shape
        return f"ClusteringDataset({self.name!r}, n={n}, d={d}, n_clusters={self.n_clusters})"


def load_real(name: str) -> ClusteringDataset:
    """One of scikit-learn's bundled labelled data sets: iris, wine, breast_cancer, digits.

    The files ship with scikit-learn, so nothing is downloaded (``pip install
    statcore[cluster]``).

    Parameters
    ----------
    name : {"iris", "wine", "breast_cancer", "digits"}

    Returns
    -------
    ClusteringDataset

    References
    ----------
    Pedregosa, F. et al. (2011). Scikit-learn: machine learning in Python. *JMLR* 12, 2825-2830
    (``sklearn.datasets``); the data sets CHB fingerprints (ICML 2026, poster 65800).
    """
    name = check_option(name, name="name", options=REAL_DATASETS)
    datasets = import_optional("sklearn.datasets", "cluster")
    bunch = getattr(datasets, f"load_{name}")()
    return ClusteringDataset(
        name, bunch.data, bunch.target, description=f"sklearn.datasets.load_{name}()"
    )


def _sizes(n_samples: int, sizes, n_clusters: int) -> np.ndarray:
    """Cluster sizes summing to ``n_samples`` from proportions (largest remainder rounding)."""
    if sizes is None:
        props = np.full(n_clusters, 1.0 / n_clusters)
    else:
        props = as_float_array(sizes, name="sizes", ndim=1)
        if len(props) != n_clusters or (props <= 0).any():
            raise ValueError(
                f"`sizes` must hold {n_clusters} positive proportions (one per cluster); "
                f"got {describe(sizes)}"
            )
        props = props / props.sum()
    raw = props * n_samples
    counts = np.floor(raw).astype(np.int64)
    counts[np.argsort(counts - raw, kind="stable")[: n_samples - counts.sum()]] += 1
    if (counts < 1).any():
        raise ValueError(
            f"`n_samples`={n_samples} is too small for the proportions `sizes`: a cluster "
            "would be empty"
        )
    return counts


def _per_cluster(value, n_clusters: int, *, name: str) -> np.ndarray:
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return np.full(n_clusters, check_positive(value, name=name))
    arr = as_float_array(value, name=name, ndim=1)
    if len(arr) != n_clusters or (arr <= 0).any():
        raise ValueError(
            f"`{name}` must be a positive number or {n_clusters} positive numbers (one per "
            f"cluster); got {describe(value)}"
        )
    return arr


def _shuffled(name, X, labels, rng, description) -> ClusteringDataset:
    order = rng.permutation(len(X))
    return ClusteringDataset(name, X[order], labels[order], description=description)


@renamed_keywords(center_box="centre_box")
def blobs(
    n_samples: int = 300,
    *,
    n_clusters: int = 3,
    n_features: int = 2,
    scales=1.0,
    sizes=None,
    centre_box: tuple[float, float] = (-10.0, 10.0),
    random_state=None,
    name: str = "blobs",
) -> ClusteringDataset:
    """Isotropic Gaussian clusters with per-cluster scales and sizes.

    Centres are uniform in ``centre_box`` in every coordinate; cluster ``c`` is
    ``N(mu_c, scales[c]^2 I)`` with ``round(sizes[c] n_samples)`` points (largest-remainder
    rounding). Unequal ``scales`` make the scale-heterogeneity regime, unequal ``sizes`` the
    imbalance regime. The points come shuffled.

    Parameters
    ----------
    n_samples : int
    n_clusters, n_features : int
    scales : float or sequence of float
        Standard deviation of each cluster (one number for all).
    sizes : sequence of float, optional
        Cluster proportions (normalised to sum to 1); equal by default.
    centre_box : (float, float)
        Range of the centres' coordinates. ``center_box=`` is its old spelling (warns
        ``FutureWarning``).
    random_state : None, int, SeedSequence or Generator
    name : str
        The dataset's name in benchmark tables.

    Returns
    -------
    ClusteringDataset

    References
    ----------
    The ``make_blobs`` design of scikit-learn (Pedregosa et al., 2011), with per-cluster scales
    as in its "comparing clustering algorithms" demo; CHB (ICML 2026, poster 65800) for the
    regimes.
    """
    n_samples = check_positive_int(n_samples, name="n_samples")
    n_clusters = check_positive_int(n_clusters, name="n_clusters")
    n_features = check_positive_int(n_features, name="n_features")
    counts = _sizes(n_samples, sizes, n_clusters)
    std = _per_cluster(scales, n_clusters, name="scales")
    low, high = (float(v) for v in centre_box)
    if not low < high:
        raise ValueError(f"`centre_box` must be (low, high) with low < high; got {centre_box!r}")
    rng = check_random_state(random_state)
    centres = rng.uniform(low, high, size=(n_clusters, n_features))
    labels = np.repeat(np.arange(n_clusters), counts)
    X = centres[labels] + std[labels, None] * rng.standard_normal((n_samples, n_features))
    return _shuffled(
        name, X, labels, rng, f"{n_clusters} Gaussian blobs, scales {np.round(std, 3).tolist()}"
    )


def anisotropic_blobs(
    n_samples: int = 300,
    *,
    n_clusters: int = 3,
    transformation=None,
    random_state=None,
    name: str = "anisotropic_blobs",
) -> ClusteringDataset:
    """Gaussian blobs in the plane, sheared by a linear map into elongated, tilted clusters.

    Parameters
    ----------
    n_samples, n_clusters : int
    transformation : array_like of shape (2, 2), optional
        The map applied to every point (``X @ transformation``); default
        ``[[0.6, -0.6], [-0.4, 0.8]]``, scikit-learn's demo.
    random_state : None, int, SeedSequence or Generator
    name : str

    Returns
    -------
    ClusteringDataset

    References
    ----------
    scikit-learn's "comparing clustering algorithms" demo (Pedregosa et al., 2011); CHB (ICML
    2026, poster 65800) for the regimes.
    """
    shear = (
        _ANISOTROPIC
        if transformation is None
        else as_float_array(transformation, name="transformation", ndim=2)
    )
    if shear.shape != (2, 2):
        raise ValueError(f"`transformation` must be 2 x 2; got shape {shear.shape}")
    base = blobs(n_samples, n_clusters=n_clusters, random_state=random_state, name=name)
    return ClusteringDataset(
        name, base.X @ shear, base.labels, description=f"{n_clusters} sheared Gaussian blobs"
    )


def moons(
    n_samples: int = 300, *, noise: float = 0.05, random_state=None, name: str = "moons"
) -> ClusteringDataset:
    """Two interleaving half circles with Gaussian noise (non-convex clusters).

    The upper moon is ``(cos t, sin t)``, the lower ``(1 - cos t, 1/2 - sin t)``, ``t`` evenly
    spaced on ``[0, pi]``, plus ``N(0, noise^2 I)``; ``n_samples // 2`` points on the first.

    Returns
    -------
    ClusteringDataset

    References
    ----------
    The ``make_moons`` design of scikit-learn (Pedregosa et al., 2011); CHB (ICML 2026, poster
    65800) for the regimes.
    """
    n_samples = check_positive_int(n_samples, name="n_samples", minimum=2)
    noise = check_positive(noise, name="noise", strict=False)
    rng = check_random_state(random_state)
    n_out = n_samples // 2
    t_out = np.linspace(0.0, np.pi, n_out)
    t_in = np.linspace(0.0, np.pi, n_samples - n_out)
    X = np.vstack(
        [
            np.column_stack([np.cos(t_out), np.sin(t_out)]),
            np.column_stack([1.0 - np.cos(t_in), 0.5 - np.sin(t_in)]),
        ]
    )
    X += noise * rng.standard_normal(X.shape)
    labels = np.repeat([0, 1], [n_out, n_samples - n_out])
    return _shuffled(name, X, labels, rng, f"two moons, noise {noise:g}")


def circles(
    n_samples: int = 300,
    *,
    noise: float = 0.05,
    factor: float = 0.5,
    random_state=None,
    name: str = "circles",
) -> ClusteringDataset:
    """Two concentric circles with Gaussian noise: the loop (H1) regime.

    The outer circle has radius 1 and ``n_samples // 2`` evenly spaced points, the inner radius
    ``factor``; then ``N(0, noise^2 I)`` is added.

    Returns
    -------
    ClusteringDataset

    References
    ----------
    The ``make_circles`` design of scikit-learn (Pedregosa et al., 2011); CHB (ICML 2026,
    poster 65800) for the topology regime.
    """
    n_samples = check_positive_int(n_samples, name="n_samples", minimum=2)
    noise = check_positive(noise, name="noise", strict=False)
    factor = check_positive(factor, name="factor")
    if factor >= 1:
        raise ValueError(f"`factor` (inner radius / outer radius) must be < 1; got {factor!r}")
    rng = check_random_state(random_state)
    n_out = n_samples // 2
    t_out = np.linspace(0.0, 2 * np.pi, n_out, endpoint=False)
    t_in = np.linspace(0.0, 2 * np.pi, n_samples - n_out, endpoint=False)
    X = np.vstack(
        [
            np.column_stack([np.cos(t_out), np.sin(t_out)]),
            factor * np.column_stack([np.cos(t_in), np.sin(t_in)]),
        ]
    )
    X += noise * rng.standard_normal(X.shape)
    labels = np.repeat([0, 1], [n_out, n_samples - n_out])
    return _shuffled(name, X, labels, rng, f"two circles, factor {factor:g}, noise {noise:g}")


def _generate(name: str, n_samples: int, rng: np.random.Generator) -> ClusteringDataset:
    if name == "blobs":
        return blobs(n_samples, random_state=rng)
    if name == "varied_blobs":
        return blobs(n_samples, scales=(1.0, 2.5, 0.5), random_state=rng, name=name)
    if name == "unbalanced_blobs":
        return blobs(n_samples, sizes=(0.7, 0.2, 0.1), random_state=rng, name=name)
    if name == "anisotropic_blobs":
        return anisotropic_blobs(n_samples, random_state=rng)
    if name == "moons":
        return moons(n_samples, random_state=rng)
    return circles(n_samples, random_state=rng)


def load_benchmark_datasets(
    names: str | Sequence[str] | None = None, *, n_samples: int = 300, random_state=None
) -> dict[str, ClusteringDataset]:
    """The benchmark's offline datasets, by name.

    Parameters
    ----------
    names : str or sequence of str, optional
        Any of ``BENCHMARK_DATASETS`` (default: all): the real ``"iris"``, ``"wine"``,
        ``"breast_cancer"``, ``"digits"`` and the generated ``"blobs"`` (three unit-scale
        blobs), ``"varied_blobs"`` (scales 1, 2.5, 0.5), ``"unbalanced_blobs"`` (sizes 70 / 20
        / 10 %), ``"anisotropic_blobs"``, ``"moons"``, ``"circles"``.
    n_samples : int
        Points of each generated dataset (the real ones keep their size).
    random_state : None, int, SeedSequence or Generator
        Seeds the generated datasets. Each has its own stream, fixed by its position in
        ``GENERATED_DATASETS``, so a dataset is the same whichever others are asked for.

    Returns
    -------
    dict of str to ClusteringDataset
        In the order of ``names``.

    References
    ----------
    CHB: Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster 65800
    (the offline datasets of its benchmark are a reconstruction: the paper's list is not
    public).
    """
    if names is None:
        names = BENCHMARK_DATASETS
    elif isinstance(names, str):
        names = (names,)
    names = [check_option(n, name="names", options=BENCHMARK_DATASETS) for n in names]
    if len(set(names)) != len(names):
        raise ValueError(f"`names` must not repeat a dataset; got {names}")
    n_samples = check_positive_int(n_samples, name="n_samples", minimum=10)
    entropy = int.from_bytes(check_random_state(random_state).bytes(16), "little")
    out = {}
    for name in names:
        if name in REAL_DATASETS:
            out[name] = load_real(name)
        else:
            stream = np.random.SeedSequence(entropy, spawn_key=(GENERATED_DATASETS.index(name),))
            out[name] = _generate(name, n_samples, np.random.default_rng(stream))
    return out


@renamed_keywords(k="n_clusters")
def imbalanced_blobs(
    n: int = 50_000,
    d: int = 20,
    n_clusters: int = 20,
    *,
    scale: float = 1000.0,
    noise_var: float = 500.0,
    class_imbalance: float = 5.0,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian blobs of very unequal sizes (the coreset benchmark's ``get_blobs_dataset``).

    Cluster sizes: each takes its fair share of the points left times ``exp(U - 1/2) *
    class_imbalance)``; centres ``N(0, I_d)`` centred and scaled by ``scale``; isotropic noise
    of variance ``noise_var``. Returns ``(X, labels)``.
    """
    n = check_positive_int(n, name="n")
    k = check_positive_int(n_clusters, name="n_clusters")
    d = check_positive_int(d, name="d")
    rng = check_random_state(random_state)
    sizes = np.zeros(k, dtype=int)
    for i in range(k):
        left = n - sizes.sum()
        share = left / (k - i) * math.exp((rng.random() - 0.5) * class_imbalance)
        sizes[i] = int(min(share, left)) if i < k - 1 else left
    labels = np.repeat(np.arange(k), sizes)
    centres = rng.normal(size=(k, d))
    X = centres[labels]
    X = (X - X.mean(axis=0)) * scale
    X += rng.normal(scale=math.sqrt(noise_var), size=X.shape)
    return X, labels


@renamed_keywords(k="n_clusters")
def geometric_clusters(
    n_clusters: int = 10, *, size_scalar: int = 1000, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """The geometric benchmark: cluster i of ``k = n_clusters`` has ``size_scalar * k / 2**i``
    points at the unit vector e_i (d = k), plus uniform noise of width 1e-3. Returns
    ``(X, labels)``."""
    k = check_positive_int(n_clusters, name="n_clusters")
    rng = check_random_state(random_state)
    sizes = [max(1, int(size_scalar * k / 2**i)) for i in range(k)]
    labels = np.repeat(np.arange(k), sizes)
    X = np.zeros((len(labels), k))
    X[np.arange(len(labels)), labels] = 1.0
    X += rng.random(X.shape) / 1000
    return X, labels
