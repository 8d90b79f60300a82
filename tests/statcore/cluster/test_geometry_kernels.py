"""The shared geometry kernels against numpy/scipy twins written from the definitions."""

import itertools

import numpy as np
import pytest
from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst
from scipy.spatial.distance import cdist

from statcore import neighbours as NB
from statcore.cluster import _kernels as K

# The blocked kernels form squared distances as |x|^2 + |y|^2 - 2 x.y, whose rounding error is a
# few ulp of the squared norms (about 1e-14 for these O(1)-scale points, order 10 squared norms);
# cdist subtracts coordinates first. 1e-12 leaves two orders of margin for both.
TOL = 1e-12


@pytest.fixture(scope="module")
def points():
    rng = np.random.default_rng(20)
    # 600 rows span several 256-row blocks and a ragged last block
    return rng.normal(size=(600, 7)), rng.integers(0, 4, size=600)


@pytest.mark.parametrize("metric", ["sqeuclidean", "euclidean", "cosine"])
def test_pairwise_distances_equal_cdist(points, metric):
    X, _ = points
    Y = X[:300] + 0.5
    np.testing.assert_allclose(K.pairwise_distances(X, Y, metric), cdist(X, Y, metric), atol=TOL)
    own = K.pairwise_distances(X, metric=metric)
    np.testing.assert_allclose(own, cdist(X, X, metric), atol=TOL)
    assert np.all(np.diag(own) == 0.0)  # exactly: a point is at distance 0 from itself


def test_metric_name_is_checked(points):
    with pytest.raises(ValueError, match="metric must be one of"):
        K.pairwise_distances(points[0], metric="manhattan")


def _twin_knn(D, k):
    order = np.argsort(D, axis=1, kind="stable")[:, :k]  # stable sort: ties to the lower index
    return np.take_along_axis(D, order, axis=1), order


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_knn_equals_sorting_the_distance_matrix(points, parallel, metric):
    X, _ = points
    D = cdist(X, X, metric)
    np.fill_diagonal(D, np.inf)
    dist, idx = K.knn(X, 9, metric=metric, parallel=parallel)
    want_dist, want_idx = _twin_knn(D, 9)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(dist, want_dist, atol=TOL)


def test_knn_against_a_second_set_keeps_exact_matches_and_breaks_ties_low():
    grid = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    dist, idx = K.knn(np.zeros((1, 2)), 5, Y=grid)
    np.testing.assert_array_equal(idx, [[0, 1, 2, 3, 4]])  # four ties at 1: by index
    np.testing.assert_allclose(dist, [[0, 1, 1, 1, 1]], atol=0)
    own_dist, own_idx = K.knn(grid, 2, exclude_self=False)
    np.testing.assert_array_equal(own_idx[:, 0], np.arange(5))
    assert np.all(own_dist[:, 0] == 0)


def test_parallel_knn_is_bit_identical(points):
    X, _ = points
    serial, parallel = K.knn(X, 5), K.knn(X, 5, parallel=True)
    np.testing.assert_array_equal(serial[0], parallel[0])
    np.testing.assert_array_equal(serial[1], parallel[1])


def test_assign_nearest_equals_argmin(points):
    X, _ = points
    centres = X[[3, 50, 120, 400]] + 0.01
    labels, sq = K.assign_nearest(X, centres)
    D = cdist(X, centres, "sqeuclidean")
    np.testing.assert_array_equal(labels, D.argmin(axis=1))
    np.testing.assert_allclose(sq, D.min(axis=1), rtol=1e-13)  # same subtraction order: ulps
    tie, _ = K.assign_nearest(np.zeros((1, 1)), np.array([[1.0], [-1.0]]))
    assert tie[0] == 0


def test_mst_equals_scipy_on_the_dense_matrix(points):
    X, _ = points
    edges, weights = K.minimum_spanning_tree(X)
    reference = scipy_mst(cdist(X, X)).data
    np.testing.assert_allclose(np.sort(weights), np.sort(reference), rtol=1e-12)
    # the edges form a spanning tree whose lengths are the reported weights
    assert len(edges) == len(X) - 1
    assert len(np.unique(edges[:, 1])) == len(X) - 1 and 0 not in edges[:, 1]
    np.testing.assert_allclose(
        np.linalg.norm(X[edges[:, 0]] - X[edges[:, 1]], axis=1), weights, rtol=1e-12
    )
    _, squared = K.minimum_spanning_tree(X, metric="sqeuclidean")
    np.testing.assert_allclose(squared, weights**2, rtol=1e-12)


def test_mst_of_one_and_two_points():
    edges, weights = K.minimum_spanning_tree(np.zeros((1, 3)))
    assert edges.shape == (0, 2) and weights.shape == (0,)
    edges, weights = K.minimum_spanning_tree(np.array([[0.0, 0.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(edges, [[0, 1]])
    np.testing.assert_allclose(weights, [5.0])


def _twin_greedy(X, L, start):
    D = cdist(X, X)
    idx, radii = [start], [np.inf]
    nearest = D[start].copy()
    for _ in range(L - 1):
        nxt = int(np.argmax(nearest))  # argmax: ties to the lower index, as the kernel
        idx.append(nxt)
        radii.append(nearest[nxt])
        nearest = np.minimum(nearest, D[nxt])
    return np.array(idx), np.array(radii), nearest.max()


def test_farthest_points_equal_the_greedy_permutation(points):
    X, _ = points
    idx, radii, cover = K.farthest_points(X, 25, start=7)
    want_idx, want_radii, want_cover = _twin_greedy(X, 25, 7)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(radii, want_radii, rtol=1e-12)
    assert cover == pytest.approx(want_cover, rel=1e-12)
    # the insertion radii of a greedy permutation never increase
    assert np.all(np.diff(radii[1:]) <= 0)


def test_class_distance_sums_and_silhouette_equal_their_twins(points):
    X, y = points
    D = cdist(X, X)
    sums, near_same, near_other = K.class_distance_sums(X, y, 4)
    want = np.stack([D[:, y == c].sum(axis=1) for c in range(4)], axis=1)
    np.testing.assert_allclose(sums, want, rtol=1e-12)
    same = np.where(y[:, None] == y[None, :], D, np.inf)
    np.fill_diagonal(same, np.inf)
    np.testing.assert_allclose(near_same, same.min(axis=1), rtol=1e-12)
    other = np.where(y[:, None] != y[None, :], D, np.inf)
    np.testing.assert_allclose(near_other, other.min(axis=1), rtol=1e-12)
    from sklearn.metrics import silhouette_samples

    np.testing.assert_allclose(K.silhouette_samples(X, y), silhouette_samples(X, y), atol=1e-12)


def test_silhouette_of_a_singleton_class_is_zero():
    X = np.array([[0.0], [0.1], [5.0], [5.2], [9.0]])
    labels = np.array([0, 0, 1, 1, 2])
    s = K.silhouette_samples(X, labels)
    assert s[4] == 0.0
    # brute force from the definition for the others
    for i in range(4):
        own = [abs(X[i, 0] - X[j, 0]) for j in range(5) if labels[j] == labels[i] and j != i]
        others = [
            np.mean([abs(X[i, 0] - X[j, 0]) for j in range(5) if labels[j] == c])
            for c in {0, 1, 2} - {labels[i]}
        ]
        a, b = np.mean(own), min(others)
        assert s[i] == pytest.approx((b - a) / max(a, b), rel=1e-12)


def test_centred_leaves_the_input_alone():
    X = np.arange(6.0).reshape(3, 2)
    copy = X.copy()
    out = K.centred(X)
    np.testing.assert_array_equal(X, copy)
    np.testing.assert_allclose(out.mean(axis=0), 0.0, atol=1e-15)


def test_block_boundaries_do_not_change_results():
    # sizes around the block length: each pair is visited exactly once in the symmetric pass
    rng = np.random.default_rng(3)
    for n in (K.BLOCK - 1, K.BLOCK, K.BLOCK + 1):
        X = rng.normal(size=(n, 3))
        y = np.array(list(itertools.islice(itertools.cycle([0, 1, 2]), n)))
        sums, _, _ = K.class_distance_sums(X, y, 3)
        np.testing.assert_allclose(sums.sum(), cdist(X, X).sum(), rtol=1e-12)


def test_the_shared_neighbour_module_is_the_one_the_areas_use():
    import importlib

    from statcore import neighbours

    for name in ("statcore.geometry.lid", "statcore.geometry.alignment", "statcore.select.model"):
        assert importlib.import_module(name).K is neighbours
    assert K.knn is neighbours.knn and K.centred is neighbours.centred
    assert set(neighbours.__all__) >= {"knn", "centred", "farthest_points", "pairwise_distances"}


def test_old_spatial_module_re_exports_with_a_future_warning():
    import importlib
    import subprocess
    import sys

    from statcore import neighbours

    sys.modules.pop("statcore.cluster.spatial", None)
    with pytest.warns(FutureWarning, match="statcore.neighbours"):
        spatial = importlib.import_module("statcore.cluster.spatial")
    assert spatial.knn is neighbours.knn and spatial.silhouette_samples is K.silhouette_samples
    # importing the cluster area itself does not warn
    code = "import statcore.cluster, statcore.geometry, statcore.select"
    subprocess.run([sys.executable, "-W", "error::FutureWarning", "-c", code], check=True)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "chebyshev"])
@pytest.mark.parametrize("rounded", [False, True])
def test_tree_knn_equals_sorting_the_exact_distance_matrix(metric, rounded):
    rng = np.random.default_rng(11)
    X = rng.standard_normal((700, 3))
    X[:40] = X[40:80]  # exact copies: a point's own copy is a neighbour at distance 0
    if rounded:
        X = np.round(X * 2) / 2  # many ties
    dist, idx = NB.knn(X, 6, metric=metric, algorithm="kd_tree")
    D = cdist(X, X, "chebyshev" if metric == "chebyshev" else "euclidean")
    np.fill_diagonal(D, np.inf)
    power = 2 if metric == "sqeuclidean" else 1
    # the tree takes each distance from the coordinates, as cdist does: equal to rounding
    np.testing.assert_allclose(dist, np.sort(D, axis=1)[:, :6] ** power, rtol=1e-13, atol=0)
    np.testing.assert_allclose(np.take_along_axis(D, idx, 1) ** power, dist, rtol=1e-13)
    assert not (idx == np.arange(len(X))[:, None]).any()
    # equal distances come in ascending index order within each row
    tied = dist[:, 1:] == dist[:, :-1]
    assert (idx[:, 1:][tied] > idx[:, :-1][tied]).all()


def test_auto_takes_the_tree_in_low_dimension_and_brute_force_above():
    assert NB.search_algorithm(5000, 5000, 3, "euclidean") == "kd_tree"
    assert NB.search_algorithm(5000, 5000, 16, "euclidean") == "brute"
    assert NB.search_algorithm(5000, 5000, 3, "cosine") == "brute"
    assert NB.search_algorithm(100, 100, 3, "euclidean") == "brute"
    X = np.random.default_rng(3).standard_normal((2000, 2))
    auto, brute = NB.knn(X, 4), NB.knn(X, 4, algorithm="brute")
    np.testing.assert_array_equal(auto[1], brute[1])  # no ties in continuous data
    # the blocked products lose ~1e-8 near 0 (a square root of cancelled squares)
    np.testing.assert_allclose(auto[0], brute[0], rtol=1e-9, atol=1e-7)
    with pytest.raises(ValueError, match="algorithm"):
        NB.knn(X, 4, algorithm="ball_tree")
    with pytest.raises(ValueError, match="cosine"):
        NB.knn(X, 4, metric="cosine", algorithm="kd_tree")


@pytest.mark.parametrize("dim", [1, 2, 20])
@pytest.mark.parametrize("algorithm", ["brute", "kd_tree"])
@pytest.mark.parametrize("strict", [True, False])
def test_count_within_equals_counting_the_distance_matrix(dim, algorithm, strict):
    if algorithm == "kd_tree" and dim > 15:
        algorithm = "auto"  # the rule sends 20 dimensions to the blocked count
    rng = np.random.default_rng(dim)
    X = np.round(rng.standard_normal((900, dim)) * 3) / 3  # ties on the boundary
    D = cdist(X, X, "chebyshev")
    radius = D[np.arange(len(X)), rng.integers(0, len(X), len(X))]  # radii equal to distances
    radius[:20] = 0.0
    inside = D < radius[:, None] if strict else D <= radius[:, None]
    self_inside = (radius > 0) | (not strict)
    got = NB.count_within(X, radius, strict=strict, algorithm=algorithm)
    np.testing.assert_array_equal(got, inside.sum(1) - self_inside)
    Y = X[::3] + 1 / 3
    Dy = cdist(X, Y, "chebyshev")
    want = (Dy < radius[:, None] if strict else Dy <= radius[:, None]).sum(1)
    got = NB.count_within(X, radius, Y=Y, strict=strict, algorithm=algorithm, parallel=True)
    np.testing.assert_array_equal(got, want)
