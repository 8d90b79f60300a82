"""Coresets: unbiasedness, weights, approximation preservation, resilience, merge-and-reduce.

Seeded studies, sized to run in well under a minute on one core; the longer studies (the
notes' n = 50,000 blobs at many sizes, n = 10^6) are in the vignette and the benchmark.
"""

import math

import numpy as np
import pytest

from statcore.cluster import _coreset_kernels as CK
from statcore.cluster.coreset import Coreset
from statcore.cluster.metrics import disagreement
from statcore.cluster.resilience import eps_close, resilience
from statcore.cluster.simulate import geometric_clusters, imbalanced_blobs
from statcore.exceptions import ConvergenceWarning


@pytest.fixture(scope="module")
def blobs():
    # imbalanced blobs at the size of the paper's experiments (n = 50,000, d = 20, k = 20)
    return imbalanced_blobs(50_000, 20, 20, random_state=0)[0]


@pytest.fixture(scope="module")
def best_cost(blobs):
    # the denominator of the ratios: scikit-learn's best of 5 greedy k-means++ starts on the
    # full data (the true optimum is unknown; the notes' advice: best of several full runs)
    # only the tests that compare against scikit-learn need it; the coreset itself does not
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    km = sklearn_cluster.KMeans(20, n_init=5, random_state=0).fit(blobs)
    return float(km.inertia_)


@pytest.mark.parametrize(
    ("method", "objective"),
    [
        ("sensitivity", "kmeans"),
        ("lightweight", "kmeans"),
        ("resilient", "kmeans"),
        ("sensitivity", "kmedian"),
    ],
)
def test_cost_and_total_weight_are_unbiased_for_a_fixed_solution(method, objective):
    X = imbalanced_blobs(5000, 5, 5, random_state=1)[0]
    S = np.random.default_rng(2).normal(scale=500, size=(5, 5))
    model = Coreset(X, 5, objective=objective)
    full = None
    ratios, weights = [], []
    for r in range(200):
        res = model.fit(size=200, method=method, random_state=r)
        full = res.cost(S) if full is None else full
        ratios.append(res.coreset_cost(S) / full)
        weights.append(res.total_weight / 5000)
    # the estimators are unbiased: the mean of R = 200 draws lies within 3 standard errors of 1
    # (a wrong weight, e.g. 1/q without 1/m or the counts of repeated draws, is off by far more)
    for values in (np.array(ratios), np.array(weights)):
        assert abs(values.mean() - 1) <= 3 * values.std(ddof=1) / math.sqrt(len(values))


def test_approximation_is_preserved_on_imbalanced_blobs(blobs, best_cost):
    model = Coreset(blobs, 20)
    means = {}
    for method in ("sensitivity", "uniform"):
        for size in (500, 2000):
            check = model.fit(size=size, method=method, random_state=size).check_approximation(
                n_repeats=5, reference_cost=best_cost, random_state=1
            )
            means[method, size] = check.estimate
            assert check.conf_low <= check.estimate <= check.conf_high
    # the notes' acceptance thresholds (mean of 5 seeds): 1.10 at m = 500, 1.05 at m = 2000
    assert means["sensitivity", 500] <= 1.10
    assert means["sensitivity", 2000] <= 1.05
    # uniform sampling misses the small far clusters (notes: mean 10.5 and 1.51)
    assert means["uniform", 500] > means["sensitivity", 500]
    assert means["uniform", 2000] > means["sensitivity", 2000]


def test_every_cluster_is_represented_on_the_geometric_benchmark():
    X, labels = geometric_clusters(10, size_scalar=2000, random_state=0)  # n = 39,970
    true_centres = np.array([X[labels == c].mean(axis=0) for c in range(10)])
    model = Coreset(X, 10)
    missed_uniform = 0
    for seed in range(5):
        res = model.fit(size=200, random_state=seed)
        # the smallest cluster holds 39 of 39,970 points, yet sensitivity gives each cluster of
        # the seeding's solution about size / (2 k) = 10 expected draws
        assert np.unique(labels[res.indices]).size == 10
        solution = res.solve(random_state=seed)
        assert solution.cost() <= 1.1 * res.cost(true_centres)
        uniform = model.fit(size=200, method="uniform", random_state=seed)
        missed_uniform += np.unique(labels[uniform.indices]).size < 10
    # uniform draws expect 0.2 points of the smallest cluster: it is missed nearly always
    assert missed_uniform >= 4


def test_size_at_least_n_returns_the_data():
    X = np.random.default_rng(3).normal(size=(50, 3))
    for method in ("sensitivity", "uniform", "resilient"):
        res = Coreset(X, 4).fit(size=50, method=method, random_state=0)
        np.testing.assert_array_equal(res.points, X)
        np.testing.assert_array_equal(res.weights, np.ones(50))
        assert res.total_weight == 50


def test_repeated_draws_accumulate_weight():
    # two distinct points, many draws: every draw lands on one of them
    X = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [5.0, 5.0]])
    res = Coreset(X, 2).fit(size=3, method="uniform", random_state=0)
    assert res.n_points <= 3
    assert res.weights.sum() == pytest.approx(5.0)  # uniform draws: each weighs n / m


def test_resilient_coreset_is_bit_identical_at_eps_zero(blobs):
    X = blobs[:5000]
    a = Coreset(X, 10).fit(size=500, method="resilient", random_state=7)
    b = Coreset(X.copy(), 10).fit(size=500, method="resilient", random_state=7)
    for name in ("points", "weights", "indices", "centres"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(a.solve().centres, b.solve().centres)
    table = resilience(
        X, 10, eps_grid=[0.0], size=500, n_seeds=2, compare_kmeans=False, random_state=0
    ).table
    assert (table["coreset"] == 0).all()


def test_resilient_pipeline_disagrees_less_than_kmeans_on_the_uniform_cube():
    pytest.importorskip("sklearn.cluster")  # the comparison is scikit-learn's KMeans
    # the notes' harness: n = 5000, d = 10, k = 10, X' = X (I + E) with |E|_2 = eps / 2
    X = np.random.default_rng(0).random((5000, 10))
    res = resilience(X, 10, eps_grid=[0.01, 0.05, 0.1], size=1000, n_seeds=3, random_state=0)
    g = res.gamma_hat
    # KMeans(n_init=1) on the cube disagrees by about half already at eps = 0.01 (notes: 0.53);
    # the consistent keys and seeding keep ours below it at every eps (measured here: gamma-hat
    # 21.6 / 7.8 / 4.0 against 51.6 / 13.3 / 6.7). The cube has no cluster structure, so no
    # pipeline is near 0: this claims "more resilient than Lloyd", not "resilient".
    assert (g["coreset_gamma_hat"] < g["kmeans_gamma_hat"]).all()
    assert (g["coreset_mean"] < g["kmeans_mean"]).all()


def test_bicriteria_adds_centres_and_lowers_the_cost(blobs):
    X = blobs[:10_000]
    costs = []
    for delta in (0.0, 0.5):
        res = Coreset(X, 10).fit(size=1000, method="resilient", random_state=3, bicriteria=delta)
        solution = res.solve()
        assert len(solution.centres) == math.ceil((1 + delta) * 10)
        costs.append(solution.cost())
    assert costs[1] <= costs[0]


def test_disagreement_is_zero_under_relabelling_and_counts_moves():
    a = np.array([0, 0, 1, 1, 2, 2])
    assert disagreement(a, (a + 1) % 3) == 0.0
    assert disagreement(a, np.array([0, 0, 1, 1, 2, 1])) == pytest.approx(1 / 6)


def test_eps_close_linear_keeps_distance_ratios_within_eps():
    X = np.random.default_rng(4).normal(size=(200, 6))
    Xp = eps_close(X, 0.1, random_state=0)
    i, j = np.triu_indices(200, 1)
    ratio = np.linalg.norm(Xp[i] - Xp[j], axis=1) / np.linalg.norm(X[i] - X[j], axis=1)
    assert ratio.min() >= 1 - 0.05 - 1e-12 and ratio.max() <= 1 + 0.05 + 1e-12


def test_from_chunks_matches_the_one_shot_coreset_in_quality(blobs):
    X = blobs[:20_000]
    S = np.random.default_rng(5).normal(scale=500, size=(20, 20))
    full = Coreset(X, 20).fit(size=1000, random_state=0).cost(S)
    ratios, totals = [], []
    for seed in range(20):
        chunks = (X[i : i + 2500] for i in range(0, 20_000, 2500))
        res = Coreset.from_chunks(chunks, 20, size=1000, random_state=seed)
        ratios.append(res.coreset_cost(S) / full)
        totals.append(res.total_weight / 20_000)
        assert res.nobs == 20_000 and res.n_points <= 1000
    # merge-and-reduce composes unbiased reductions, so it stays unbiased (3 standard errors)
    for values in (np.array(ratios), np.array(totals)):
        assert abs(values.mean() - 1) <= 3 * values.std(ddof=1) / math.sqrt(len(values))
    res = Coreset.from_chunks([X[:10_000], X[10_000:]], 20, size=1000, random_state=0)
    one_shot = Coreset(X, 20).fit(size=1000, random_state=0)
    merged = res.solve(random_state=0).cost(X)
    direct = one_shot.solve(random_state=0).cost()
    # two levels of sampling cost little: the solutions agree within 5% (both ~1.0-1.04 of best)
    assert merged <= 1.05 * direct
    with pytest.raises(ValueError, match="pass them as `X`"):
        res.cost(S)


def test_from_chunks_gives_the_same_coreset_on_every_backend(blobs):
    X = blobs[:8000]
    chunks = [X[i : i + 2000] for i in range(0, 8000, 2000)]
    serial = Coreset.from_chunks(chunks, 10, size=500, random_state=11)
    threads = Coreset.from_chunks(chunks, 10, size=500, random_state=11, backend="threads")
    np.testing.assert_array_equal(serial.points, threads.points)
    np.testing.assert_array_equal(serial.weights, threads.weights)
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    darr = da.from_array(X, chunks=(2000, 20))
    streamed = Coreset.from_chunks(darr, 10, size=500, random_state=11)
    np.testing.assert_array_equal(serial.points, streamed.points)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1) as client:
        on_dask = Coreset.from_chunks(darr, 10, size=500, random_state=11, backend=client)
    np.testing.assert_array_equal(serial.points, on_dask.points)
    np.testing.assert_array_equal(serial.weights, on_dask.weights)
    np.testing.assert_array_equal(serial.indices, on_dask.indices)


@pytest.mark.parametrize("algorithm", ["lloyd", "sklearn", "kmedoids", "kmedian", "consistent"])
def test_solvers_run_and_report_iterations(blobs, algorithm):
    if algorithm == "sklearn":
        pytest.importorskip("sklearn.cluster")
    res = Coreset(blobs[:5000], 5).fit(size=300, random_state=0)
    solution = res.solve(algorithm, random_state=0)
    assert solution.centres.shape == (5, 20)
    assert solution.converged is True and solution.n_iter >= 1
    assert solution.cost() > 0


def test_lloyd_warns_when_it_stops_at_maxiter(blobs):
    res = Coreset(blobs[:5000], 10).fit(size=500, random_state=0)
    with pytest.warns(ConvergenceWarning, match="maxiter=1"):
        solution = res.solve("lloyd", maxiter=1, tol=0.0)
    assert solution.converged is False


def test_lloyd_kernel_decreases_the_cost_monotonically():
    X = np.random.default_rng(6).normal(size=(500, 3))
    w = np.random.default_rng(7).random(500)
    for power in (1, 2):
        start = X[CK.seed_dz(X, w, np.random.default_rng(8).random((4, 1)), power)]
        history = CK.lloyd(X, w, start, power, 100, 0.0)[6]
        assert np.all(np.diff(history) <= 1e-9 * history[0])


def test_distortion_and_evaluate_agree(blobs):
    res = Coreset(blobs[:5000], 5).fit(size=300, random_state=0)
    grid = np.random.default_rng(9).normal(scale=500, size=(3, 5, 20))
    table = res.evaluate(grid)
    assert list(table["solution"]) == [0, 1, 2]
    for row, S in zip(table.itertuples(), grid, strict=True):
        assert row.cost_data == pytest.approx(res.cost(S))
        assert row.distortion == pytest.approx(res.distortion(S))
        assert row.distortion >= 1


def test_bad_input_is_refused_naming_the_argument():
    X = np.random.default_rng(0).normal(size=(20, 2))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="`X` must not contain NaN"):
        Coreset(bad, 2)
    with pytest.raises(ValueError, match="`n_clusters` must be at most"):
        Coreset(X, 21)
    with pytest.raises(ValueError, match="`weights` must be non-negative"):
        Coreset(X, 2, weights=-np.ones(20))
    with pytest.raises(ValueError, match="`objective`"):
        Coreset(X, 2, objective="kcenter")
    with pytest.raises(ValueError, match="`size` must be at least `n_clusters`"):
        Coreset(X, 5).fit(size=4)
    with pytest.raises(ValueError, match="`method`"):
        Coreset(X, 2).fit(size=10, method="bico")
    res = Coreset(X, 2).fit(size=10, random_state=0)
    with pytest.raises(ValueError, match="`algorithm`"):
        res.solve("dbscan")
    with pytest.raises(ValueError, match="`S` must have 2 columns"):
        res.cost(np.zeros((2, 3)))


def test_inputs_are_not_modified():
    X = np.random.default_rng(0).normal(size=(100, 3))
    w = np.ones(100)
    before = X.copy(), w.copy()
    res = Coreset(X, 3, weights=w).fit(size=30, random_state=0)
    res.solve()
    np.testing.assert_array_equal(X, before[0])
    np.testing.assert_array_equal(w, before[1])
    assert X.flags.writeable and w.flags.writeable


def test_old_k_spellings_warn_and_map_onto_n_clusters():
    X = np.random.default_rng(0).normal(size=(60, 2))
    with pytest.warns(FutureWarning, match="n_clusters"):
        model = Coreset(X, k=3)
    assert model.n_clusters == 3
    with pytest.warns(FutureWarning, match="n_clusters"):
        assert model.k == 3
    res = model.fit(size=20, random_state=0)
    assert res.n_clusters == 3 and res.glance()["n_clusters"].iloc[0] == 3
    with pytest.warns(FutureWarning, match="n_clusters"):
        assert res.k == 3
    with pytest.warns(FutureWarning, match="n_clusters"):
        old = Coreset.from_chunks([X[:30], X[30:]], k=3, size=20, random_state=0)
    new = Coreset.from_chunks([X[:30], X[30:]], 3, size=20, random_state=0)
    np.testing.assert_array_equal(old.indices, new.indices)
    with pytest.warns(FutureWarning, match="n_clusters"):
        resilience(X, k=3, eps_grid=[0.05], size=30, n_seeds=1, compare_kmeans=False)


def test_row_ids_are_a_constructor_argument():
    X = np.random.default_rng(1).normal(size=(50, 2))
    ids = np.arange(100, 150)
    model = Coreset(X, 3, row_ids=ids)
    np.testing.assert_array_equal(model.row_ids, ids)
    assert not model.row_ids.flags.writeable
    res = model.fit(size=20, method="resilient", random_state=4)
    assert set(res.indices) <= set(ids)
    np.testing.assert_array_equal(Coreset(X, 3).row_ids, np.arange(50))
    with pytest.raises(ValueError, match="`row_ids`"):
        Coreset(X, 3, row_ids=np.arange(49))


def test_check_approximation_uses_the_given_coreset_without_refitting(blobs, monkeypatch):
    model = Coreset(blobs, 20)
    res = model.fit(size=500, random_state=0)

    def no_refit(*args, **kwargs):
        raise AssertionError("check_approximation refitted the model")

    monkeypatch.setattr(model, "fit", no_refit)
    check = res.check_approximation(n_repeats=3, reference_cost=res.solution_cost, random_state=0)
    assert len(check.ratios) == 3 and check.size == res.size


def test_a_1000_point_coreset_solution_is_within_2_percent_of_kmeans_on_imbalanced_blobs():
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    X, labels = imbalanced_blobs(20_000, 20, 20, random_state=0)
    sizes = np.bincount(labels)
    assert sizes[sizes > 0].max() / sizes[sizes > 0].min() >= 100  # two orders of magnitude
    best = sklearn_cluster.KMeans(20, n_init=10, random_state=0).fit(X).inertia_
    model = Coreset(X, 20)
    ratios = []
    for seed in range(6):
        res = model.fit(size=1000, random_state=seed)
        ratios.append(res.solve(random_state=seed).cost() / best)
    # Measured 0.9998 to 1.004 with the default full-data Lloyd step. Without it the coreset's
    # sampling error alone leaves 1.016 to 1.034 (about 1/50 of each cluster's cost from ~50
    # points per cluster), and a far one-point cluster left uncovered costs 1.11x to 1.32x: the
    # 2% bound fails on either, with room for the BLAS rounding of other machines.
    assert max(ratios) <= 1.02
    unrefined = model.fit(size=1000, random_state=0).solve(random_state=0, refine=0)
    assert unrefined.cost() <= 1.05 * best  # the starts and swaps alone cover every cluster


def test_refine_is_refused_where_it_cannot_run(blobs):
    res = Coreset(blobs[:2000], 5).fit(size=200, random_state=0)
    with pytest.raises(ValueError, match="refine"):
        res.solve("kmedoids", refine=1)
    solution = res.solve(refine=0)
    assert solution.coreset_cost_value == pytest.approx(res.coreset_cost(solution.centres))
