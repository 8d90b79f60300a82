"""The benchmark's offline datasets and generators (statcore.cluster.simulate)."""

import numpy as np
import pytest

from statcore.cluster import simulate
from statcore.cluster.simulate import ClusteringDataset, geometric_clusters, imbalanced_blobs

pytest.importorskip("sklearn")


def test_real_datasets_have_their_published_shapes_and_classes():
    shapes = {
        "iris": (150, 4, 3),
        "wine": (178, 13, 3),
        "breast_cancer": (569, 30, 2),
        "digits": (1797, 64, 10),
    }
    for name, (n, d, k) in shapes.items():
        data = simulate.load_real(name)
        assert data.X.shape == (n, d) and data.n_clusters == k and data.name == name
        assert data.labels.dtype == np.int64 and set(np.unique(data.labels)) == set(range(k))


def test_blobs_sizes_are_exact_and_scales_are_per_cluster():
    data = simulate.blobs(
        2000, n_clusters=3, scales=(0.5, 1.0, 3.0), sizes=(0.7, 0.2, 0.1), random_state=1
    )
    assert np.bincount(data.labels).tolist() == [1400, 400, 200]
    spread = [data.X[data.labels == c].std(axis=0).mean() for c in range(3)]
    # sd of a sample sd from 200+ normal draws is about sd/sqrt(2*200) = 5%: 15% is 3 of them
    np.testing.assert_allclose(spread, [0.5, 1.0, 3.0], rtol=0.15)


def test_largest_remainder_rounding_keeps_the_total():
    data = simulate.blobs(10, n_clusters=3, random_state=0)
    assert np.bincount(data.labels).tolist() in ([4, 3, 3], [3, 4, 3], [3, 3, 4])
    assert data.nobs == 10


def test_noise_free_moons_and_circles_lie_on_their_curves():
    moons = simulate.moons(101, noise=0.0, random_state=0)
    upper, lower = moons.X[moons.labels == 0], moons.X[moons.labels == 1]
    np.testing.assert_allclose(np.hypot(*upper.T), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1, lower[:, 1] - 0.5), 1.0, atol=1e-12)
    assert len(upper) == 50 and len(lower) == 51
    circles = simulate.circles(200, noise=0.0, factor=0.3, random_state=0)
    radius = np.hypot(*circles.X.T)
    np.testing.assert_allclose(radius[circles.labels == 0], 1.0, atol=1e-12)
    np.testing.assert_allclose(radius[circles.labels == 1], 0.3, atol=1e-12)


def test_anisotropic_blobs_are_sheared_blobs():
    base = simulate.blobs(90, random_state=3)
    sheared = simulate.anisotropic_blobs(90, random_state=3)
    np.testing.assert_array_equal(sheared.X, base.X @ np.array([[0.6, -0.6], [-0.4, 0.8]]))
    np.testing.assert_array_equal(sheared.labels, base.labels)


def test_generators_are_seeded_and_shuffled():
    a = simulate.moons(50, random_state=7)
    b = simulate.moons(50, random_state=7)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, simulate.moons(50, random_state=8).X)
    # shuffled: the labels are not in two sorted runs
    assert np.count_nonzero(np.diff(a.labels)) > 1


def test_a_generated_dataset_does_not_depend_on_which_others_are_loaded():
    alone = simulate.load_benchmark_datasets("circles", n_samples=80, random_state=5)
    together = simulate.load_benchmark_datasets(
        ["moons", "circles", "blobs"], n_samples=80, random_state=5
    )
    np.testing.assert_array_equal(alone["circles"].X, together["circles"].X)
    assert list(together) == ["moons", "circles", "blobs"]


def test_all_benchmark_datasets_load_with_labels():
    datasets = simulate.load_benchmark_datasets(n_samples=60, random_state=0)
    assert list(datasets) == list(simulate.BENCHMARK_DATASETS)
    assert all(d.n_clusters >= 2 for d in datasets.values())
    assert np.bincount(datasets["unbalanced_blobs"].labels).tolist() == [42, 12, 6]


def test_dataset_is_read_only_encoded_and_unpacks():
    X = np.arange(8.0).reshape(4, 2)
    data = ClusteringDataset("toy", X, np.array(["b", "a", "b", "c"]))
    assert data.labels.tolist() == [1, 0, 1, 2]
    features, labels = data
    with pytest.raises(ValueError, match="read-only"):
        features[0, 0] = 1.0
    X[0, 0] = 99.0  # the dataset holds a copy
    assert data.X[0, 0] == 0.0 and labels is data.labels
    assert repr(data) == "ClusteringDataset('toy', n=4, d=2, n_clusters=3)"


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="`sizes` must hold 3 positive proportions"):
        simulate.blobs(30, sizes=(0.5, 0.5))
    with pytest.raises(ValueError, match="`scales` must be a positive number or 3"):
        simulate.blobs(30, scales=(1.0, -1.0, 1.0))
    with pytest.raises(ValueError, match="`factor`"):
        simulate.circles(30, factor=1.5)
    with pytest.raises(ValueError, match="`names` must be one of"):
        simulate.load_benchmark_datasets(["iris", "mnist"])
    with pytest.raises(ValueError, match="`names` must not repeat"):
        simulate.load_benchmark_datasets(["iris", "iris"])
    with pytest.raises(ValueError, match="`labels` must be 1-D with one label per row"):
        ClusteringDataset("x", np.zeros((3, 2)), [0, 1])
    with pytest.raises(ValueError, match="`X` must not contain NaN"):
        ClusteringDataset("x", [[np.nan, 0.0], [1.0, 1.0]], [0, 1])
    with pytest.raises(ValueError, match="`n_samples`=4 is too small"):
        simulate.blobs(4, sizes=(0.9, 0.05, 0.05))


def test_centre_box_bounds_the_centres_and_the_old_spelling_warns():
    data = simulate.blobs(200, n_clusters=4, scales=1e-6, centre_box=(2.0, 3.0), random_state=0)
    assert data.X.min() > 2.0 - 1e-3 and data.X.max() < 3.0 + 1e-3
    with pytest.warns(FutureWarning, match="centre_box"):
        old = simulate.blobs(200, n_clusters=4, scales=1e-6, center_box=(2.0, 3.0), random_state=0)
    np.testing.assert_array_equal(old.X, data.X)


def test_cluster_counts_are_spelled_n_clusters_and_the_old_k_warns():
    X, labels = imbalanced_blobs(300, 2, n_clusters=4, random_state=0)
    with pytest.warns(FutureWarning, match="`k=` is now spelled `n_clusters=`"):
        X_old, labels_old = imbalanced_blobs(300, 2, k=4, random_state=0)
    np.testing.assert_array_equal(X, X_old)
    assert len(np.unique(labels)) == 4
    with pytest.warns(FutureWarning, match="`k=` is now spelled `n_clusters=`"):
        _, geo = geometric_clusters(k=3, size_scalar=8, random_state=0)
    assert len(np.unique(geo)) == 3
