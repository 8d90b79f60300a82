"""ClusteringBenchmark (CHB's compute-aware tracks), its metrics, regimes and audit."""

import itertools

import numpy as np
import pandas as pd
import pytest

from statcore.cluster import simulate
from statcore.cluster.benchmark import (
    BenchmarkResults,
    ClusteringBenchmark,
    clustering_accuracy,
    external_scores,
)

sklearn_metrics = pytest.importorskip("sklearn.metrics")

# ---- metrics -----------------------------------------------------------------------------------


def _brute_force_accuracy(truth, pred):
    """Best one-to-one matching by trying every injective map of clusters to classes."""
    classes, clusters = np.unique(truth), np.unique(pred)
    best = 0
    slots = list(classes) + [None] * max(0, len(clusters) - len(classes))
    for assignment in itertools.permutations(slots, len(clusters)):
        mapping = dict(zip(clusters, assignment, strict=True))
        best = max(best, sum(mapping[p] == t for t, p in zip(truth, pred, strict=True)))
    return best / len(truth)


@pytest.mark.parametrize("n_clusters", [2, 3, 4])
def test_accuracy_is_the_best_matching_found_by_brute_force(n_clusters):
    rng = np.random.default_rng(n_clusters)
    for _ in range(20):
        truth = rng.integers(0, 3, 12)
        pred = rng.integers(0, n_clusters, 12)
        assert clustering_accuracy(truth, pred) == pytest.approx(
            _brute_force_accuracy(truth, pred), abs=1e-15
        )


def test_accuracy_of_a_relabelled_partition_is_one():
    truth = np.array([0, 0, 1, 1, 2, 2])
    assert clustering_accuracy(truth, np.array(["c", "c", "a", "a", "b", "b"])) == 1.0
    assert clustering_accuracy(truth, [0, 0, 0, 1, 1, 1]) == pytest.approx(4 / 6)


def test_ari_ami_nmi_equal_scikit_learn():
    rng = np.random.default_rng(0)
    cases = [
        (rng.integers(0, k, n), rng.integers(-1, m, n))  # -1: a noise label, one more cluster
        for n, k, m in [(30, 2, 2), (100, 4, 6), (500, 10, 10), (57, 3, 1)]
    ]
    cases += [
        (np.zeros(10, int), np.zeros(10, int)),  # one cluster each: perfect by convention
        (np.zeros(10, int), np.arange(10)),
        (np.arange(10), np.arange(10)),
        (np.arange(10) % 2, np.arange(10) % 2),
    ]
    for truth, pred in cases:
        got = external_scores(truth, pred)
        # the contingency sums are exact; the logs and gammaln terms agree to rounding
        assert got["ari"] == pytest.approx(
            sklearn_metrics.adjusted_rand_score(truth, pred), abs=1e-12
        )
        assert got["ami"] == pytest.approx(
            sklearn_metrics.adjusted_mutual_info_score(truth, pred), abs=1e-10
        )
        assert got["nmi"] == pytest.approx(
            sklearn_metrics.normalized_mutual_info_score(truth, pred), abs=1e-12
        )


def test_metrics_refuse_mismatched_labels():
    with pytest.raises(ValueError, match="same length; got 3 and 2"):
        external_scores([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="`labels_pred` must be 1-D"):
        clustering_accuracy([0, 1], [[0, 1]])


# ---- the grid ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small():
    return simulate.load_benchmark_datasets(["blobs", "moons"], n_samples=60, random_state=0)


@pytest.fixture(scope="module")
def grid_results(small):
    bench = ClusteringBenchmark(
        small,
        ["kmeans", "agglomerative"],
        tracks=("default", "tuned"),
        representations=("raw", "standardized"),
    )
    return bench.fit(seeds=2, budget=3, max_clusters=4, random_state=0)


def test_tidy_has_one_row_per_cell_of_the_grid(grid_results):
    tidy = grid_results.tidy()
    assert len(tidy) == 2 * 2 * 2 * 2 * 2
    cells = tidy[["dataset", "representation", "method", "track", "seed"]]
    assert not cells.duplicated().any()
    assert (tidy["error"] == "").all()
    assert tidy[["ari", "ami", "nmi", "acc"]].notna().all().all()
    assert grid_results.glance()["n_seeds"].item() == 2
    assert len(grid_results.seeds) == 2


def test_default_track_uses_the_oracle_number_of_clusters(grid_results):
    default = grid_results.tidy().query("track == 'default'")
    assert (default["n_clusters_found"] == default["n_clusters_true"]).all()
    assert (default["n_trials"] == 1).all()


def test_blobs_are_solved_and_the_tuned_track_spends_its_budget(grid_results):
    tidy = grid_results.tidy()
    blobs = tidy.query("dataset == 'blobs' and track == 'default'")
    # three well separated unit-scale blobs: every method recovers them
    assert (blobs["ari"] > 0.95).all()
    assert (tidy.query("track == 'tuned'")["n_trials"] == 3).all()


def test_summary_and_scores_table(grid_results):
    table = grid_results.scores_table("acc", track="tuned")
    assert list(table.columns) == ["kmeans", "agglomerative"]
    assert table.index.tolist() == [
        ("blobs", "raw"),
        ("blobs", "standardized"),
        ("moons", "raw"),
        ("moons", "standardized"),
    ]
    tidy = grid_results.tidy()
    expected = tidy.query(
        "track == 'tuned' and dataset == 'moons' and representation == 'raw' and method == 'kmeans'"
    )["acc"].mean()
    assert table.loc[("moons", "raw"), "kmeans"] == pytest.approx(expected, abs=1e-15)
    summary = grid_results.summary()
    assert set(summary.tables) == {"mean ari (default)", "mean ari (tuned)", "average rank"}


def test_tuned_track_never_reads_the_labels(small):
    data = small["moons"]
    rng = np.random.default_rng(1)
    scrambled = simulate.ClusteringDataset("moons", data.X, rng.permutation(data.labels))
    runs = []
    for dataset in (data, scrambled):
        bench = ClusteringBenchmark([dataset], ["kmeans", "agglomerative"], tracks="tuned")
        runs.append(bench.fit(seeds=[3, 4], budget=4, max_clusters=5).tidy())
    same = ["params", "criterion", "n_clusters_found", "n_trials"]
    pd.testing.assert_frame_equal(runs[0][same], runs[1][same])
    assert not np.allclose(runs[0]["ari"], runs[1]["ari"])


def test_serial_and_threads_give_the_same_table(small):
    bench = ClusteringBenchmark(small, ["kmeans", "agglomerative"], tracks=("default", "tuned"))
    serial = bench.fit(seeds=2, budget=2, max_clusters=3, random_state=5).tidy()
    threads = bench.fit(seeds=2, budget=2, max_clusters=3, random_state=5, backend="threads").tidy()
    pd.testing.assert_frame_equal(
        serial.drop(columns="fit_time_s"), threads.drop(columns="fit_time_s")
    )


def test_estimators_functions_and_grids_as_methods(small):
    from sklearn.cluster import KMeans

    template = KMeans(n_init=1)

    def halves(X, *, n_clusters, random_state):
        # a deterministic "clusterer": split on the first coordinate's quantiles
        edges = np.quantile(X[:, 0], np.linspace(0, 1, n_clusters + 1)[1:-1])
        return np.searchsorted(edges, X[:, 0])

    bench = ClusteringBenchmark(
        small,
        {"km": template, "halves": halves, "km_grid": (KMeans(n_init=1), {"n_clusters": [2, 3]})},
        tracks=("default", "tuned"),
    )
    tidy = bench.fit(seeds=1, budget=5, max_clusters=3, random_state=0).tidy()
    assert template.get_params()["n_clusters"] == 8  # the user's estimator is untouched
    assert set(tidy.query("method == 'km_grid' and track == 'tuned'")["params"]) <= {
        "n_clusters=2",
        "n_clusters=3",
    }
    default = tidy.query("track == 'default'")
    assert (default["n_clusters_found"] == default["n_clusters_true"]).all()


def test_a_failing_method_is_recorded_not_raised(small):
    def broken(X, *, n_clusters, random_state):
        raise RuntimeError("no luck")

    tidy = ClusteringBenchmark(small, {"broken": broken}).fit(seeds=1).tidy()
    assert (tidy["error"] == "RuntimeError: no luck").all()
    assert tidy["ari"].isna().all()


def test_representations_include_pca_and_functions(small):
    bench = ClusteringBenchmark(
        {"blobs": small["blobs"]},
        ["kmeans"],
        representations={"pca": "pca", "scaled": lambda X: 1000.0 * X},
    )
    tidy = bench.fit(seeds=1).tidy()
    # k-means is equivariant to a global scale: the same partition as on the raw points
    raw = ClusteringBenchmark({"blobs": small["blobs"]}, ["kmeans"]).fit(seeds=1).tidy()
    assert tidy.query("representation == 'scaled'")["ari"].item() == pytest.approx(
        raw["ari"].item(), abs=1e-12
    )


# ---- regimes and audit on constructed tables ----------------------------------------------------


def _constructed(ranks_flip=True):
    """Four datasets, two methods, three seeds: A beats B on the low-coordinate datasets and
    (when ``ranks_flip``) loses on the high ones."""
    rows = []
    for d, dataset in enumerate(["d1", "d2", "d3", "d4"]):
        high = d >= 2
        for seed in range(3):
            noise = 0.01 * seed
            a, b = (0.4, 0.8) if (high and ranks_flip) else (0.8, 0.4)
            rows.append((dataset, "raw", "A", "default", seed, a + noise))
            rows.append((dataset, "raw", "B", "default", seed, b - noise))
    scores = pd.DataFrame(
        rows, columns=["dataset", "representation", "method", "track", "seed", "ari"]
    )
    scores["error"] = ""
    index = pd.MultiIndex.from_tuples(
        [(d, "raw") for d in ["d1", "d2", "d3", "d4"]], names=["dataset", "representation"]
    )
    fingerprints = pd.DataFrame({"loops": [0.0, 0.1, 0.9, 1.0]}, index=index)
    return BenchmarkResults(method="constructed", scores=scores, fingerprints=fingerprints)


def test_a_constructed_ranking_reversal_gives_tau_minus_one():
    regimes = _constructed().regimes("loops", bins=2, n_resamples=200, random_state=0)
    [row] = regimes.tidy().to_dict("records")
    assert row["tau"] == -1.0 and row["conf_low"] == -1.0 and row["conf_high"] == -1.0
    assert (row["n_units_a"], row["n_units_b"]) == (2, 2)
    [flip] = regimes.reversals.to_dict("records")
    assert (flip["method_1"], flip["method_2"]) == ("A", "B")
    assert flip["diff_a"] > 0 > flip["diff_b"] and flip["bootstrap_share"] == 1.0
    ranks = regimes.rankings.pivot(index="method", columns="bin", values="rank")
    assert ranks.iloc[:, 0].tolist() == [1.0, 2.0] and ranks.iloc[:, 1].tolist() == [2.0, 1.0]


def test_the_same_order_in_every_bin_gives_tau_one_and_no_reversal():
    regimes = _constructed(ranks_flip=False).regimes("loops", n_resamples=50, random_state=0)
    assert regimes.tidy()["tau"].item() == 1.0
    assert regimes.reversals.empty
    assert "kendall tau" in regimes.summary().tables


def test_regimes_with_explicit_edges_and_errors():
    res = _constructed()
    regimes = res.regimes("loops", bins=[0.0, 0.5, 1.0], n_resamples=20, random_state=0)
    assert regimes.assignment["bin"].tolist() == ["[0, 0.5]"] * 2 + ["[0.5, 1]"] * 2
    with pytest.raises(ValueError, match="`by` must be a fingerprint coordinate"):
        res.regimes("holes")
    with pytest.raises(ValueError, match="`metric` must be one of"):
        res.regimes("loops", metric="f1")
    with pytest.raises(ValueError, match="fewer than two non-empty bins"):
        res.regimes("loops", bins=[0.0, 5.0])
    bare = BenchmarkResults(method="bare", scores=res.scores)
    with pytest.raises(ValueError, match="fit with `fingerprint=True` or pass `fingerprints=`"):
        bare.regimes("loops")


def test_audit_recovers_a_linear_attribution_and_splits_the_mean_gain():
    rng = np.random.default_rng(0)
    datasets = [f"d{i}" for i in range(8)]
    shift_sep = rng.normal(size=8)
    shift_other = rng.normal(size=8)
    gain = 0.1 + 0.5 * shift_sep  # exactly linear: the regression must recover 0.1 and 0.5
    rows, prints = [], []
    for d, name in enumerate(datasets):
        base_sep, base_other = rng.normal(), rng.normal()
        prints.append((name, "raw", base_sep, base_other))
        prints.append((name, "pca", base_sep + shift_sep[d], base_other + shift_other[d]))
        rows.append((name, "raw", "A", "default", 0, 0.3))
        rows.append((name, "pca", "A", "default", 0, 0.3 + gain[d]))
    scores = pd.DataFrame(
        rows, columns=["dataset", "representation", "method", "track", "seed", "ari"]
    )
    fingerprints = pd.DataFrame(
        prints, columns=["dataset", "representation", "separation", "other"]
    ).set_index(["dataset", "representation"])
    res = BenchmarkResults(method="constructed", scores=scores, fingerprints=fingerprints)
    audit = res.attribute_gain("raw", "pca")
    # an exact linear relation: least squares recovers it to rounding
    np.testing.assert_allclose(audit.params.to_numpy(), [0.1, 0.5, 0.0], atol=1e-12)
    parts = audit.contributions()
    assert parts["contribution"].sum() == pytest.approx(gain.mean(), abs=1e-12)
    assert audit.gains.to_numpy() == pytest.approx(gain, abs=1e-12)
    with pytest.raises(ValueError, match="`rep_b` must differ from `rep_a`"):
        res.attribute_gain("raw", "raw")
    with pytest.raises(ValueError, match="`rep_a` must be one of"):
        res.attribute_gain("umap", "raw")
    with pytest.raises(ValueError, match="`coordinates` must be one of"):
        res.attribute_gain("raw", "pca", coordinates=["holes"])


def test_old_audit_name_warns_and_matches_attribute_gain():
    rng = np.random.default_rng(1)
    rows, prints = [], []
    for d in range(5):
        prints.append((f"d{d}", "raw", rng.normal()))
        prints.append((f"d{d}", "pca", rng.normal()))
        rows.append((f"d{d}", "raw", "A", "default", 0, rng.uniform()))
        rows.append((f"d{d}", "pca", "A", "default", 0, rng.uniform()))
    scores = pd.DataFrame(
        rows, columns=["dataset", "representation", "method", "track", "seed", "ari"]
    )
    fingerprints = pd.DataFrame(
        prints, columns=["dataset", "representation", "separation"]
    ).set_index(["dataset", "representation"])
    res = BenchmarkResults(method="constructed", scores=scores, fingerprints=fingerprints)
    with pytest.warns(FutureWarning, match="attribute_gain"):
        old = res.audit("raw", "pca")
    pd.testing.assert_series_equal(old.params, res.attribute_gain("raw", "pca").params)


def test_audit_needs_more_datasets_than_coordinates():
    res = _constructed()
    extra = res.fingerprints.assign(other=[1.0, 3.0, 2.0, 5.0], third=[0.0, 1.0, 0.0, 2.0])
    scores = pd.concat([res.scores, res.scores.assign(representation="std")])
    prints = pd.concat([extra, extra.rename(index={"raw": "std"}) * [2.0, 3.0, 4.0]])
    wide = BenchmarkResults(method="c", scores=scores, fingerprints=prints)
    with pytest.raises(ValueError, match="need more than 4 datasets; there are 4"):
        wide.attribute_gain("raw", "std")
    # a coordinate that does not move (factor 1: zero shift everywhere) is left out
    prints = pd.concat([extra, extra.rename(index={"raw": "std"}) * [2.0, 1.0, 4.0]])
    audit = BenchmarkResults(method="c", scores=scores, fingerprints=prints).attribute_gain(
        "raw", "std"
    )
    assert audit.params.index.tolist() == ["Intercept", "loops", "third"]
    assert "Left out (shift constant across datasets): other." in audit.notes


# ---- bad input ---------------------------------------------------------------------------------


def test_bad_input_names_the_argument(small):
    with pytest.raises(ValueError, match="`methods` must be one of"):
        ClusteringBenchmark(small, ["kmeans", "kmedoids"])
    with pytest.raises(ValueError, match="`tracks` must be one of"):
        ClusteringBenchmark(small, ["kmeans"], tracks="fast")
    with pytest.raises(ValueError, match="the representation swap is the `representations="):
        ClusteringBenchmark(small, ["kmeans"], tracks=("default", "representation"))
    with pytest.raises(ValueError, match="`representations` must be one of"):
        ClusteringBenchmark(small, ["kmeans"], representations=("raw", "umap"))
    with pytest.raises(TypeError, match=r"`datasets\['x'\]` must carry true labels"):
        ClusteringBenchmark({"x": np.zeros((10, 2))}, ["kmeans"])
    with pytest.raises(ValueError, match=r"`datasets\['x'\]\[1\]` \(labels\) must be 1-D"):
        ClusteringBenchmark({"x": (np.zeros((10, 2)), np.zeros(9))}, ["kmeans"])
    with pytest.raises(ValueError, match=r"`datasets\['x'\]\[0\]` must not contain NaN"):
        ClusteringBenchmark({"x": (np.full((4, 2), np.nan), [0, 1, 0, 1])}, ["kmeans"])
    with pytest.raises(ValueError, match=r"`datasets\['x'\]` has a single class"):
        ClusteringBenchmark({"x": (np.ones((4, 2)), [0, 0, 0, 0])}, ["kmeans"])
    with pytest.raises(ValueError, match="`datasets` must be one of"):
        ClusteringBenchmark(["iris", "mnist"], ["kmeans"])
    with pytest.raises(TypeError, match=r"`methods\['m'\]` must be a method name"):
        ClusteringBenchmark(small, {"m": 3})
    bench = ClusteringBenchmark(small, ["kmeans"])
    with pytest.raises(ValueError, match="`criterion` must be one of"):
        bench.fit(criterion="bic")
    with pytest.raises(ValueError, match="`seeds` must not repeat"):
        bench.fit(seeds=[1, 1])
    with pytest.raises(ValueError, match="`backend` must be one of"):
        bench.fit(seeds=1, backend="gpu")

    class NoK:
        def fit_predict(self, X):
            return np.zeros(len(X), int)

    with pytest.raises(ValueError, match=r"`methods\['nok'\]` has no n_clusters"):
        ClusteringBenchmark(small, {"nok": NoK()}, tracks="tuned").fit(seeds=1)


def test_fingerprints_from_the_hardness_module(small):
    pytest.importorskip("statcore.cluster.hardness")
    res = ClusteringBenchmark(small, ["kmeans"]).fit(seeds=1, fingerprint=True, random_state=0)
    assert res.fingerprints.index.tolist() == [("blobs", "raw"), ("moons", "raw")]
    assert res.fingerprints.notna().all().all()


def test_regimes_restricted_to_some_methods():
    res = _constructed()
    scores = pd.concat([res.scores, res.scores.query("method == 'A'").assign(method="C")])
    three = BenchmarkResults(method="c", scores=scores, fingerprints=res.fingerprints)
    pair = three.regimes("loops", methods=["A", "B"], n_resamples=20, random_state=0)
    assert pair.tidy()["tau"].item() == -1.0
    assert set(pair.rankings["method"]) == {"A", "B"}
    with pytest.raises(ValueError, match="`methods` must name at least two"):
        three.regimes("loops", methods=["A"])


def test_size_constrained_anchor_clustering_runs_as_a_named_method(small):
    pytest.importorskip("statcore.cluster.anchor")
    tidy = ClusteringBenchmark({"blobs": small["blobs"]}, ["sc_fagc"]).fit(seeds=1).tidy()
    assert tidy["error"].item() == ""
    # three separated unit blobs: the size-constrained partition recovers them
    assert tidy["ari"].item() > 0.9
