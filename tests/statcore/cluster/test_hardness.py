"""CHB hardness fingerprints: each coordinate against an independent twin (scikit-learn, scipy,
ripser), the landmark certificate, invariance, and what users see from bad input."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist
from scipy.stats import ortho_group
from sklearn import datasets
from sklearn.metrics import davies_bouldin_score, silhouette_score
from sklearn.preprocessing import StandardScaler

from statcore.cluster import hardness
from statcore.cluster.hardness import FAMILIES, HardnessFingerprint, HardnessResults
from statcore.exceptions import NotApplicableWarning

ripser = pytest.importorskip("ripser")
persim = pytest.importorskip("persim")

LOADERS = {
    "iris": datasets.load_iris,
    "wine": datasets.load_wine,
    "breast_cancer": datasets.load_breast_cancer,
    "digits": datasets.load_digits,
}


def _data(name, standardized):
    data = LOADERS[name]()
    X = StandardScaler().fit_transform(data.data) if standardized else data.data
    return X, data.target


def _quick(X, labels, **options):
    """The fingerprint without the bootstrap and H1 (the coordinates under test need neither)."""
    options = {"n_resamples": 0, "h1": False, **options}
    return HardnessFingerprint(X, labels).fit(**options)


def _blobs(seed=0, n=120, d=4, classes=3):
    gen = np.random.default_rng(seed)
    y = np.repeat(np.arange(classes), n // classes)
    centres = gen.normal(scale=3.0, size=(classes, d))
    scales = np.linspace(0.5, 1.5, classes)[y]
    return centres[y] + scales[:, None] * gen.normal(size=(len(y), d)), y


# the research notes' values, measured with sklearn.metrics.silhouette_score
@pytest.mark.parametrize(
    ("name", "standardized", "expected"),
    [
        ("iris", False, 0.5035),
        ("iris", True, 0.3811),
        ("wine", False, 0.2001),
        ("wine", True, 0.2798),
        ("breast_cancer", False, 0.5137),
        ("breast_cancer", True, 0.2941),
        ("digits", False, 0.1629),
    ],
)
def test_separation_equals_scikit_learn(name, standardized, expected):
    X, y = _data(name, standardized)
    res = _quick(X, y)
    # both sides sum the same distances in another order: rounding differs at 1e-15
    assert res.coordinates["silhouette"] == pytest.approx(silhouette_score(X, y), abs=1e-10)
    assert round(res.coordinates["silhouette"], 4) == expected
    assert res.coordinates["davies_bouldin"] == pytest.approx(davies_bouldin_score(X, y), abs=1e-10)


def test_point_and_class_coordinates_equal_their_numpy_twins():
    X, y = _blobs(seed=1)
    k = 7
    res = _quick(X, y, n_neighbors=k)
    assert res.n_neighbors == k
    D = cdist(X, X)
    same = y[:, None] == y[None, :]
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")[:, :k]
    purity = (y[order] == y[:, None]).mean()
    kth = np.sort(D, axis=1)[:, k - 1]
    near_same = np.where(same, D, np.inf).min(axis=1)
    near_other = np.where(~same, D, np.inf).min(axis=1)
    radii = np.array(
        [np.sqrt(((X[y == c] - X[y == c].mean(0)) ** 2).sum(1).mean()) for c in range(3)]
    )
    density = np.array([np.median(kth[y == c]) for c in range(3)])
    share = np.bincount(y) / len(y)
    twin = {
        "knn_purity": purity,
        "margin_ratio": np.median(near_other / near_same),
        "radius_cv": radii.std() / radii.mean(),
        "radius_ratio": radii.max() / radii.min(),
        "density_cv": density.std() / density.mean(),
        "size_entropy": -(share * np.log(share)).sum() / np.log(3),
    }
    for name, value in twin.items():
        # GEMM distances against cdist's direct differences: 1e-12 relative
        assert res.coordinates[name] == pytest.approx(value, rel=1e-10), name
    table = res.class_table
    assert np.allclose(table["radius"] * res.scale, radii, rtol=1e-10)
    assert table["size"].tolist() == [40, 40, 40]


def test_h0_deaths_are_ripser_h0():
    X = np.random.default_rng(3).normal(size=(300, 3))
    res = _quick(X, np.repeat([0, 1], 150))
    deaths = ripser.ripser(X, maxdim=0)["dgms"][0][:, 1]
    deaths = np.sort(deaths[np.isfinite(deaths)])
    assert len(res.h0_deaths) == 299
    # ripser stores filtration values in float32 (relative rounding 6e-8; notes measured 5.5e-8)
    assert np.max(np.abs(res.h0_deaths - deaths)) < 2e-7


def test_equispaced_circle_has_its_exact_h1_bar():
    angles = 2 * np.pi * np.arange(200) / 200
    X = np.column_stack([np.cos(angles), np.sin(angles)])
    labels = (angles > np.pi).astype(int)
    res = HardnessFingerprint(X, labels).fit(n_landmarks=200, n_resamples=0)
    assert res.cover_radius == 0.0
    top = res.diagram_h1[np.argmax(np.diff(res.diagram_h1, axis=1))]
    # exact bar (2 sin(pi/200), 2 sin(67 pi/200)), up to ripser's float32 rounding
    np.testing.assert_allclose(
        top, [2 * np.sin(np.pi / 200), 2 * np.sin(67 * np.pi / 200)], atol=1e-6
    )
    assert top == pytest.approx([0.0314, 1.7373], abs=1e-4)
    assert res.coordinates["h1_max_persistence"] * res.scale == pytest.approx(
        top[1] - top[0], rel=1e-12
    )
    low, high = res.conf_int().loc["h1_max_persistence"]
    assert low == high == res.coordinates["h1_max_persistence"]  # all points: exact


def test_landmark_certificate_holds_on_a_noisy_circle():
    gen = np.random.default_rng(0)
    angles = gen.uniform(0, 2 * np.pi, 400)
    X = np.column_stack([np.cos(angles), np.sin(angles)]) + gen.normal(scale=0.05, size=(400, 2))
    res = HardnessFingerprint(X, (angles > np.pi).astype(int)).fit(n_landmarks=80, n_resamples=0)
    full = ripser.ripser(X, maxdim=1)["dgms"][1]
    reference = ripser.ripser(X, maxdim=1, n_perm=80)
    # the same greedy permutation from point 0: the same cover radius (float32 in ripser)
    assert res.cover_radius * res.scale == pytest.approx(reference["r_cover"], rel=1e-6)
    bound = res.bottleneck_bound * res.scale
    assert 0 < persim.bottleneck(full, res.diagram_h1) <= bound
    full_top = np.max(full[:, 1] - full[:, 0]) / res.scale
    low, high = res.conf_int().loc["h1_max_persistence"]
    assert low <= full_top <= high


def test_fingerprint_is_invariant_to_similarity_transforms_and_class_names():
    X, y = _blobs(seed=2)
    options = {"n_landmarks": 60, "n_resamples": 50, "random_state": 5}
    base = HardnessFingerprint(X, y).fit(**options).tidy()
    Q = ortho_group.rvs(X.shape[1], random_state=4)
    moved = HardnessFingerprint(3.7 * X @ Q + 1e3, y).fit(**options).tidy()
    names = np.array(["virginica", "setosa", "versicolor"])[(y + 1) % 3]
    renamed = HardnessFingerprint(X, names).fit(**options).tidy()
    columns = ["value", "conf_low", "conf_high"]
    # centred, rescaled points agree to ~1e-13 after a rotation and a shift of 1e3
    np.testing.assert_allclose(moved[columns], base[columns], atol=1e-9, equal_nan=True)
    # classes are renumbered by first appearance: the same computation, bit for bit
    pd.testing.assert_frame_equal(renamed, base)


def test_h0_coordinates_count_separated_components_and_split_classes():
    gen = np.random.default_rng(6)
    centres = np.array([[0.0, 0.0], [30.0, 0.0], [0.0, 30.0], [30.0, 30.0]])
    X = np.repeat(centres, 50, axis=0) + gen.normal(size=(200, 2))
    # class 2 holds two of the four blobs
    y = np.repeat([0, 1, 2, 2], 50)
    res = _quick(X, y)
    assert res.coordinates["h0_gaps"] == 3
    assert res.coordinates["class_fragmentation"] == pytest.approx(1 / 3)
    assert res.class_table["fragments"].tolist() == [1, 1, 2]
    touching = _quick(gen.normal(size=(200, 2)), np.repeat([0, 1], 100))
    assert touching.coordinates["h0_gaps"] == 0


def test_large_inputs_use_a_stratified_subsample():
    X, y = _blobs(seed=7, n=3000)
    res = _quick(X, y, max_points=600, random_state=0)
    assert res.n_sampled == 600
    assert "subsample of 600 of the 3000 points" in res.notes[0]
    # the silhouette of 600 points is an average of 600 scores with spread ~0.2: SE ~0.01
    assert res.coordinates["silhouette"] == pytest.approx(silhouette_score(X, y), abs=0.04)
    # class-level coordinates always use every point
    assert res.coordinates["davies_bouldin"] == pytest.approx(davies_bouldin_score(X, y), abs=1e-10)


def test_bootstrap_intervals_are_seeded_and_cover_the_estimates():
    X, y = _data("iris", True)
    first = HardnessFingerprint(X, y).fit(n_resamples=100, random_state=1)
    again = HardnessFingerprint(X, y).fit(n_resamples=100, random_state=1)
    pd.testing.assert_frame_equal(first.tidy(), again.tidy())
    table = first.tidy().set_index("name")
    for name in hardness.BOOTSTRAPPED:
        assert table.loc[name, "conf_low"] < table.loc[name, "value"] < table.loc[name, "conf_high"]
    assert first.replicates.shape == (100, len(hardness.BOOTSTRAPPED))
    narrow = first.tidy(alpha=0.5).set_index("name")
    assert (narrow["conf_high"] - narrow["conf_low"]).loc["silhouette"] < (
        table["conf_high"] - table["conf_low"]
    ).loc["silhouette"]
    none = HardnessFingerprint(X, y).fit(n_resamples=0).tidy().set_index("name")
    assert none.loc[list(hardness.BOOTSTRAPPED), "conf_low"].isna().all()
    assert none.loc["size_entropy", "conf_low"] == none.loc["size_entropy", "value"]


def test_missing_ripser_leaves_h1_nan_and_the_rest_intact(monkeypatch):
    def no_ripser(module, extra):
        raise ImportError(f"this feature needs `{module}`: install statcore[{extra}]")

    monkeypatch.setattr(hardness, "import_optional", no_ripser)
    X, y = _data("iris", False)
    with pytest.warns(NotApplicableWarning, match=r"needs `ripser`.*h1=False"):
        res = HardnessFingerprint(X, y).fit(n_resamples=0)
    h1 = ["h1_max_persistence", "h1_total_persistence"]
    assert res.coordinates[h1].isna().all()
    assert np.isfinite(res.coordinates.drop(h1)).all()
    assert res.diagram_h1 is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HardnessFingerprint(X, y).fit(n_resamples=0, h1=False)


def test_results_report_every_coordinate():
    X, y = _data("wine", True)
    res = HardnessFingerprint(X, y, representation="standardized").fit(
        n_landmarks=60, n_resamples=20, random_state=0
    )
    assert isinstance(res, HardnessResults)
    tidy = res.tidy()
    assert list(tidy.columns) == ["family", "name", "value", "conf_low", "conf_high"]
    assert list(tidy["name"]) == list(FAMILIES) == list(res.coordinates.index)
    assert res.families == FAMILIES
    assert set(res.families.values()) == {"separation", "cohesion", "topology"}
    glance = res.glance().iloc[0]
    assert glance["representation"] == "standardized"
    assert glance["bottleneck_bound"] == 2 * res.cover_radius > 0
    text = res.summary().as_text()
    assert "h1_max_persistence" in text and "classes" in text
    assert res.fit_options["n_resamples"] == 20
    assert "silhouette" in repr(res)


def test_representation_may_be_a_transformer():
    data = datasets.load_iris()
    res = HardnessFingerprint(data.data, data.target, representation=StandardScaler()).fit(
        n_resamples=0, h1=False
    )
    assert res.representation == "StandardScaler"
    assert round(res.coordinates["silhouette"], 4) == 0.3811


def test_plots_draw_the_fingerprint_and_the_map():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fits = {
        f"{name} {rep}": HardnessFingerprint(*_data(name, rep == "std")).fit(
            n_resamples=10, n_landmarks=60, random_state=0
        )
        for name in ("iris", "wine")
        for rep in ("raw", "std")
    }
    axes = next(iter(fits.values())).plot()
    assert [ax.get_title() for ax in axes] == ["separation", "cohesion", "topology"]
    ax = hardness.fingerprint_map(list(fits.values()), labels=list(fits))
    offsets = ax.collections[-1].get_offsets()
    assert offsets.shape == (4, 2)
    # principal component scores are centred
    assert np.allclose(np.asarray(offsets).mean(axis=0), 0.0, atol=1e-12)
    assert {t.get_text() for t in ax.texts} >= set(fits)
    with pytest.raises(ValueError, match="`results` must hold at least 2"):
        hardness.fingerprint_map(list(fits.values())[:1])
    with pytest.raises(ValueError, match="`labels` must have one name per fingerprint"):
        hardness.fingerprint_map(list(fits.values()), labels=["a"])
    plt.close("all")


X_SMALL, Y_SMALL = _blobs(seed=8, n=30)


@pytest.mark.parametrize(
    ("X", "labels", "error", "fragment"),
    [
        (X_SMALL, Y_SMALL[:-1], ValueError, "`labels` must have one entry per row of `X`"),
        (
            np.where(np.arange(30)[:, None] == 3, np.nan, X_SMALL),
            Y_SMALL,
            ValueError,
            "`X` must not contain NaN",
        ),
        (
            X_SMALL,
            np.where(np.arange(30) == 2, np.nan, Y_SMALL),
            ValueError,
            "`labels` must not contain missing values; found one at index 2",
        ),
        (X_SMALL, np.zeros(30), ValueError, "`labels` must name at least 2 classes; got 1"),
        (
            X_SMALL,
            np.r_[Y_SMALL[:-1], 7],
            ValueError,
            r"`labels` must give every class at least 2 points.*\[7\]",
        ),
        (X_SMALL[:, 0], Y_SMALL, ValueError, "`X` must be 2-D"),
        (np.zeros((30, 2)), Y_SMALL, ValueError, "`X` must hold at least two distinct points"),
    ],
)
def test_bad_data_is_refused_naming_the_argument(X, labels, error, fragment):
    with pytest.raises(error, match=fragment):
        HardnessFingerprint(X, labels)


@pytest.mark.parametrize(
    ("options", "error", "fragment"),
    [
        ({"n_landmarks": 31}, ValueError, r"`n_landmarks` must lie in \[2, 30\]; got 31"),
        ({"n_landmarks": 2.5}, TypeError, "`n_landmarks` must be an integer"),
        ({"n_neighbors": 30}, ValueError, r"`n_neighbors` must lie in \[1, 29\]; got 30"),
        ({"n_neighbors": 0}, ValueError, "`n_neighbors` must lie in"),
        ({"gap_factor": 1.0}, ValueError, "`gap_factor` must lie in"),
        ({"max_points": 5}, ValueError, r"`max_points` must lie in \[6, inf\]"),
        ({"n_resamples": -1}, ValueError, "`n_resamples` must lie in"),
        ({"h1": "yes"}, TypeError, "`h1` must be True or False"),
        ({"random_state": "seed"}, TypeError, "`random_state` must be None"),
    ],
)
def test_bad_fit_options_are_refused_naming_the_argument(options, error, fragment):
    with pytest.raises(error, match=fragment):
        HardnessFingerprint(X_SMALL, Y_SMALL).fit(**options)


def test_representation_must_keep_the_rows():
    with pytest.raises(ValueError, match="`representation` must keep the 30 rows"):
        HardnessFingerprint(X_SMALL, Y_SMALL, representation=lambda x: x[:10])
    with pytest.raises(TypeError, match="`representation` must be None, a name"):
        HardnessFingerprint(X_SMALL, Y_SMALL, representation=3)


def test_inputs_are_not_modified():
    X, y = X_SMALL.copy(), Y_SMALL.copy()
    HardnessFingerprint(X, y).fit(n_resamples=5, random_state=0)
    np.testing.assert_array_equal(X, X_SMALL)
    np.testing.assert_array_equal(y, Y_SMALL)


def test_old_k_spelling_warns_and_maps_onto_n_neighbors():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.repeat([0, 1], 20)
    with pytest.warns(FutureWarning, match="n_neighbors"):
        old = _quick(X, y, k=6)
    new = _quick(X, y, n_neighbors=6)
    pd.testing.assert_series_equal(old.coordinates, new.coordinates)
    assert old.fit_options["n_neighbors"] == 6
    with pytest.warns(FutureWarning, match="n_neighbors"):
        assert new.k == 6
