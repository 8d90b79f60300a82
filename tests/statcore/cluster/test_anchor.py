"""SC-FAGC: the size bounds hold at every IRW step, the objective never decreases, sizes are
recovered on imbalanced blobs (beating plain anchor spectral clustering), digits accuracy,
predict, reproducibility and bad input. Each fit takes about a second."""

import warnings

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from statcore.cluster import _anchor_kernels as AK
from statcore.cluster.anchor import (
    AnchorClusteringResults,
    SizeConstrainedAnchorClustering,
    anchor_graph,
    kmeans,
)
from statcore.exceptions import ConvergenceWarning

SIZES = np.array([0.4, 0.3, 0.2, 0.1])
#: true size ratios to 1/c are (1.6, 1.2, 0.8, 0.4): inside these bounds
BOUNDS = (0.3, 1.8)


def accuracy(truth, labels):
    """Hungarian-matched accuracy (an independent twin of the benchmark's ACC)."""
    k = max(truth.max(), labels.max()) + 1
    table = np.zeros((k, k))
    np.add.at(table, (truth, labels), 1)
    rows, cols = linear_sum_assignment(-table)
    return table[rows, cols].sum() / len(truth)


def matched_sizes(truth, labels):
    """Data-level sizes of the fitted clusters, in the order of the true clusters."""
    k = truth.max() + 1
    table = np.zeros((k, k))
    np.add.at(table, (truth, labels), 1)
    rows, cols = linear_sum_assignment(-table)
    order = np.empty(k, dtype=int)
    order[rows] = cols
    return np.bincount(labels, minlength=k)[order] / len(truth)


def imbalanced_blobs(seed, n=4000):
    """Four blobs on a circle of radius 3.5 holding 40/30/20/10% of the points, spreads
    growing with the size (equal densities), so the small blob is also the tight one."""
    gen = np.random.default_rng(seed)
    counts = np.round(SIZES * n).astype(int)
    angles = np.arange(4) * np.pi / 2
    centres = 3.5 * np.c_[np.cos(angles), np.sin(angles)]
    X = np.vstack(
        [
            gen.normal(size=(k, 2)) * np.sqrt(SIZES[j] / 0.25) + centres[j]
            for j, k in enumerate(counts)
        ]
    )
    return X, np.repeat(np.arange(4), counts)


def anchor_spectral(res, X, seed):
    """Plain anchor spectral clustering on the same anchors and graph (the notes' baseline):
    left singular vectors of ``Z D^-1/2``, rows normalised, k-means on them."""
    c = res.n_clusters
    idx, z = anchor_graph(X - res.centre, np.ascontiguousarray(res.anchors - res.centre), 5)
    gram, degree = AK.anchor_gram(idx, z, res.n_anchors)
    scale = 1 / np.sqrt(degree)
    values, vectors = np.linalg.eigh(gram * scale[:, None] * scale[None, :])
    vectors, values = vectors[:, ::-1][:, :c], values[::-1][:c]
    # u = Z D^-1/2 v / sigma, built from the sparse graph
    embedding = np.zeros((len(X), c))
    for h in range(idx.shape[1]):
        embedding += z[:, h, None] * scale[idx[:, h], None] * vectors[idx[:, h]]
    embedding /= np.sqrt(values)
    embedding /= np.linalg.norm(embedding, axis=1, keepdims=True)
    _, labels = kmeans(np.ascontiguousarray(embedding), c, np.random.default_rng(seed), n_init=10)
    return labels


@pytest.fixture(scope="module")
def digits():
    datasets = pytest.importorskip("sklearn.datasets")
    data = datasets.load_digits()
    return data.data / 16, data.target


@pytest.fixture(scope="module")
def digits_fit(digits):
    X, _ = digits
    model = SizeConstrainedAnchorClustering(X, 10, n_anchors=300, size_bounds=(0.7, 1.3))
    return model.fit(lam=0.02, random_state=0)


def test_digits_accuracy(digits, digits_fit):
    _, y = digits
    # the notes' reconstruction reached 0.875-0.879 with spectral starts; this seed gives
    # 0.865, seeds 1 and 2 give 0.874 and 0.884 (KMeans: 0.79, SpectralClustering: 0.81)
    assert accuracy(y, digits_fit.labels) >= 0.85
    assert digits_fit.converged


def test_bounds_hold_at_every_step_and_objective_never_decreases(digits_fit):
    history = digits_fit.iterations.history
    lower, upper = digits_fit.size_limits
    # an upper bound binds here (a digit cluster of 0.13 = 1.3/10), so the box is exercised;
    # the DB-OT plan's columns are in the box by construction, up to rounding (1e-8: the
    # issue's tolerance)
    assert np.isclose(history["max_size"], upper, atol=1e-12).any()
    assert (history["min_size"] >= lower - 1e-8).all()
    assert (history["max_size"] <= upper + 1e-8).all()
    # majorise-minimise: each step maximises a minorant that touches the objective at the
    # previous F; 1e-9 allows for the DB-OT rows being exact to 1e-10 only
    assert (np.diff(history["objective"]) >= -1e-9).all()
    assert history["objective"].iloc[-1] == digits_fit.objective
    np.testing.assert_allclose(digits_fit.anchor_sizes.sum(), 1.0, atol=1e-9)
    np.testing.assert_allclose(
        digits_fit.anchor_assignment.sum(axis=1), digits_fit.anchor_weights, atol=1e-9
    )


def test_imbalanced_blobs_recover_sizes_and_beat_anchor_spectral():
    ours, baseline = [], []
    for seed in (0, 1, 2):
        X, y = imbalanced_blobs(seed)
        res = SizeConstrainedAnchorClustering(X, 4, n_anchors=200, size_bounds=BOUNDS).fit(
            random_state=seed
        )
        # +-10 % of each true size (the criterion; observed within 3 %)
        np.testing.assert_allclose(matched_sizes(y, res.labels), SIZES, rtol=0.10)
        # the results keep the user's scale; size_limits are the shares of the data
        assert res.size_bounds == pytest.approx(BOUNDS)
        lower, upper = res.size_limits
        assert lower == pytest.approx(0.3 / 4) and upper == pytest.approx(1.8 / 4)
        ours.append(accuracy(y, res.labels))
        baseline.append(accuracy(y, anchor_spectral(res, X, seed)))
    ours, baseline = np.array(ours), np.array(baseline)
    # the blobs touch, so about 2 % of the points are ambiguous to any method: per seed the
    # two may trade a few of them (seed 0: 3 points of 4000 to the baseline; seeds 1, 2: 13
    # and 16 points to us), on average SC-FAGC is at least as accurate
    assert ours.mean() >= baseline.mean()
    assert np.all(ours >= baseline - 0.002)


def test_tight_upper_bound_caps_the_largest_cluster():
    """Bounds that exclude the truth are met anyway: the anchor-level size of the largest
    cluster is pinned at the upper bound, and the data-level size follows it approximately."""
    X, y = imbalanced_blobs(0)
    res = SizeConstrainedAnchorClustering(X, 4, n_anchors=200, size_bounds=(0.3, 1.2)).fit(
        random_state=0
    )
    assert res.anchor_sizes.max() == pytest.approx(0.3, abs=1e-9)
    # label transmission inherits the size control approximately (a few % of the points)
    assert res.data_sizes.max() <= 0.3 + 0.03


def test_predict_reproduces_training_labels_and_seeds_reproduce_fits(digits, digits_fit):
    X, _ = digits
    np.testing.assert_array_equal(digits_fit.predict(X), digits_fit.labels)
    np.testing.assert_array_equal(digits_fit.predict(X[:7]), digits_fit.labels[:7])
    again = digits_fit.model.fit(lam=0.02, random_state=0)
    np.testing.assert_array_equal(again.labels, digits_fit.labels)
    np.testing.assert_array_equal(again.anchor_assignment, digits_fit.anchor_assignment)
    with pytest.raises(ValueError, match=r"`X` must have 64 columns"):
        digits_fit.predict(X[:, :5])


def test_reports(digits_fit):
    assert isinstance(digits_fit, AnchorClusteringResults)
    table = digits_fit.tidy()
    assert len(table) == 10 and table["n_points"].sum() == 1797
    assert {"estimate", "anchor_size", "lower", "upper", "n_anchors"} <= set(table.columns)
    np.testing.assert_allclose(table["estimate"], digits_fit.data_sizes)
    text = digits_fit.summary().as_text()
    assert "SC-FAGC" in text and "cluster 9" in text
    assert digits_fit.glance()["n_anchors"].iloc[0] == 300
    assert digits_fit.fit_options["lam"] == 0.02
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    assert digits_fit.plot() is not None
    assert digits_fit.plot("objective") is not None


def test_non_convergence_warns_and_inputs_are_untouched():
    X, _ = imbalanced_blobs(1, n=800)
    before = X.copy()
    model = SizeConstrainedAnchorClustering(X, 4, n_anchors=60, size_bounds=BOUNDS)
    with pytest.warns(ConvergenceWarning, match="SizeConstrainedAnchorClustering.fit reached"):
        res = model.fit(maxiter=1, tol=1e-12, random_state=0)
    assert not res.converged and res.n_iter == 1
    assert np.array_equal(X, before)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert model.fit(random_state=0).converged


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((np.zeros((3, 2)), 4), {}, r"fewer points \(3\) than `n_clusters` \(4\)"),
        ((None, 1), {}, r"`n_clusters` must lie in \[2, inf\]"),
        ((None, 4), {"size_bounds": (1.2, 1.5)}, r"`size_bounds` .* alpha <= 1 <= beta"),
        ((None, 4), {"size_bounds": (0.5, 0.9)}, r"`size_bounds` .* alpha <= 1 <= beta"),
        ((None, 4), {"size_bounds": (-0.1, 2.0)}, r"`size_bounds\[0\] \(alpha\)` must lie"),
        ((None, 4), {"size_bounds": 1.5}, r"`size_bounds` must be a pair"),
        ((None, 4), {"n_anchors": 3}, r"`n_anchors` must be at least `n_clusters` \(4\)"),
        ((None, 4), {"n_anchors": 500}, r"`n_anchors` must be at most the number of points"),
        ((None, 4), {"n_anchors": 5}, r"`n_neighbors` must be smaller than the number"),
    ],
)
def test_bad_input_names_the_argument(args, kwargs, match):
    X = imbalanced_blobs(0, n=200)[0] if args[0] is None else args[0]
    with pytest.raises((ValueError, TypeError), match=match):
        SizeConstrainedAnchorClustering(X, args[1], **kwargs)


def test_nan_and_bad_fit_options_are_refused():
    X, _ = imbalanced_blobs(0, n=200)
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match=r"`X` must not contain NaN"):
        SizeConstrainedAnchorClustering(bad, 4)
    model = SizeConstrainedAnchorClustering(X, 4, n_anchors=40)
    with pytest.raises(ValueError, match=r"`lam` must lie in"):
        model.fit(lam=0.0)
    with pytest.raises(TypeError, match=r"`random_state` must be"):
        model.fit(random_state="seed")


def test_old_center_spelling_warns_and_returns_the_centre(digits_fit):
    with pytest.warns(FutureWarning, match="centre"):
        old = digits_fit.center
    np.testing.assert_array_equal(old, digits_fit.centre)


def test_size_bounds_keep_the_input_scale(digits_fit):
    model = digits_fit.model
    assert digits_fit.size_bounds == model.size_bounds
    c = digits_fit.n_clusters
    assert digits_fit.size_limits == pytest.approx(tuple(b / c for b in model.size_bounds))
    frame = digits_fit.tidy()
    assert frame["lower"].iloc[0] == pytest.approx(digits_fit.size_limits[0])


def separated_blobs(sizes, n=5000, d=10, seed=0):
    """Blobs with the given shares, unit spread, centres at distance 7 from the origin (the
    benchmark's design): nearly every point is nearer its own centre than any other."""
    gen = np.random.default_rng(seed)
    centres = gen.normal(size=(len(sizes), d))
    centres *= 7.0 / np.linalg.norm(centres, axis=1, keepdims=True)
    counts = np.round(np.asarray(sizes) * n).astype(int)
    counts[0] += n - counts.sum()
    labels = np.repeat(np.arange(len(sizes)), counts)
    return centres[labels] + gen.normal(size=(n, d)), labels


def test_default_fit_is_unconstrained_and_keeps_imbalanced_blobs_whole():
    metrics = pytest.importorskip("sklearn.metrics")
    X, y = separated_blobs([0.25, 0.2, 0.15, 0.12, 0.1, 0.08, 0.05, 0.05])
    model = SizeConstrainedAnchorClustering(X, 8)
    assert model.size_bounds == (0.0, np.inf)
    ari = metrics.adjusted_rand_score(y, model.fit(random_state=0).labels)
    # measured 0.993 against 0.995 for the nearest true centre (0.24% of the points lie nearer
    # a foreign centre); the earlier default bounds (0.5, 1.5) exclude the true shares 2.0 and
    # 0.4 of the average and give 0.883, so 0.95 separates the two with room on either side
    assert ari >= 0.95
    constrained = SizeConstrainedAnchorClustering(X, 8, size_bounds=(0.5, 1.5))
    assert metrics.adjusted_rand_score(y, constrained.fit(random_state=0).labels) < ari


def test_default_fit_recovers_balanced_blobs():
    metrics = pytest.importorskip("sklearn.metrics")
    X, y = separated_blobs(np.full(6, 1 / 6), seed=1)
    res = SizeConstrainedAnchorClustering(X, 6).fit(random_state=0)
    # measured 0.9995; the nearest true centre labels every point correctly here, so only the
    # 5-anchor label transmission can lose points at the blobs' edges
    assert metrics.adjusted_rand_score(y, res.labels) >= 0.99
