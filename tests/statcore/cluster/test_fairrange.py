"""Capacitated fair-range k-clustering: MILP against brute force and the notes' reference
numbers, the tree DP against the MILP on tree metrics, the feasibility audit, the errors."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("cvxpy")

from statcore.cluster.fairrange import FairRangeKClustering  # noqa: E402
from statcore.cluster.fairrange_trees import _frt_tree  # noqa: E402

GROUPS = [list(range(6)), list(range(4, 10))]  # intersecting: facilities 4 and 5 in both
RANGES = [(1, 2), (1, 3)]
#: the LP/MILP solvers stop at relative tolerances ~1e-9; costs are O(1)-O(100)
TOL = 1e-6


def notes_instance():
    """The notes' instance (statcore_clustering_geometry.md section 5)."""
    rng = np.random.default_rng(1)
    clients = rng.uniform(size=(30, 2))
    facilities = rng.uniform(size=(10, 2))
    return clients, facilities, rng.integers(7, 15, size=10)


def brute_force(model):
    """Best cost over every k-subset meeting the ranges, each assigned exactly."""
    best = (np.inf, None)
    for S in itertools.combinations(range(model.n_facilities), model.n_clusters):
        counts = model.membership[list(S)].sum(axis=0)
        if np.any(counts < model.ranges[:, 0]) or np.any(counts > model.ranges[:, 1]):
            continue
        if model.capacities[list(S)].sum() < model.nobs:
            continue
        best = min(best, (model.assign(S)[1], S))
    return best


@pytest.mark.parametrize(("objective", "expected"), [("kmedian", 6.039470), ("kmeans", 1.533011)])
def test_milp_equals_brute_force_and_the_notes(objective, expected):
    C, F, U = notes_instance()
    model = FairRangeKClustering(
        C, F, n_clusters=4, capacities=U, groups=GROUPS, ranges=RANGES, objective=objective
    )
    res = model.fit(method="milp")
    cost, S = brute_force(model)
    assert res.cost == pytest.approx(cost, abs=TOL)
    # the notes print 6 decimals
    assert res.cost == pytest.approx(expected, abs=5e-7)
    assert res.centres.tolist() == [3, 6, 7, 8] == list(S)
    assert res.status == "optimal" and res.feasible
    assert res.lower_bound <= res.cost + TOL and res.lp_bound <= res.cost + TOL


def test_without_capacities_and_ranges_equals_uncapacitated_kmedian():
    C, F, _ = notes_instance()
    plain = FairRangeKClustering(C, F, n_clusters=4).fit(method="milp")
    assert plain.cost == pytest.approx(5.783524, abs=5e-7)
    D = np.sqrt(((C[:, None, :] - F[None, :, :]) ** 2).sum(-1))
    best = min(D[:, list(S)].min(axis=1).sum() for S in itertools.combinations(range(10), 4))
    assert plain.cost == pytest.approx(best, abs=TOL)
    # capacities >= n and ranges [0, k] on groups change nothing
    loose = FairRangeKClustering(
        C, F, n_clusters=4, capacities=np.full(10, 30), groups=GROUPS, ranges=[(0, 4), (0, 4)]
    )
    assert loose.fit(method="milp").cost == pytest.approx(best, abs=TOL)
    assert loose.fit(method="tree", random_state=0).cost >= best - TOL


def random_tree(rng, n_nodes, kind):
    if kind == "path":
        edges = np.array([[i, i + 1] for i in range(n_nodes - 1)])
    elif kind == "star":
        edges = np.array([[0, i] for i in range(1, n_nodes)])
    else:
        edges = np.array([[rng.integers(i), i] for i in range(1, n_nodes)])
    return edges, rng.uniform(0.1, 2.0, n_nodes - 1)


def tree_instance(seed, kind):
    """Clients and facilities on the nodes of a path / star / random tree, two intersecting
    groups with binding ranges, capacities raised until the instance is feasible."""
    rng = np.random.default_rng(seed)
    n_nodes = int(rng.integers(8, 30))
    edges, weights = random_tree(rng, n_nodes, kind)
    n, m, k = int(rng.integers(10, 41)), int(rng.integers(6, 12)), int(rng.integers(2, 5))
    capacities = rng.integers(3, 15, size=m)
    while np.sort(capacities)[::-1][: k - 1].sum() < n:
        capacities += 2
    groups = np.stack([np.arange(m) % 2 == 0, np.arange(m) % 3 == 0], axis=1)
    return FairRangeKClustering.from_tree(
        edges,
        weights,
        clients=rng.integers(n_nodes, size=n),
        facilities=rng.integers(n_nodes, size=m),
        n_clusters=k,
        capacities=capacities,
        groups=groups,
        ranges=[(1, k - 1), (1, k)],
    )


@pytest.mark.parametrize("kind", ["path", "star", "random"])
@pytest.mark.parametrize("seed", range(3))
def test_tree_dp_equals_milp_on_tree_metrics(kind, seed):
    model = tree_instance(seed, kind)
    exact = model.fit(method="milp", lower_bound=False)
    tree = model.fit(method="tree", lower_bound=False)
    assert tree.cost == pytest.approx(exact.cost, rel=1e-9, abs=TOL)
    # on the tree itself the DP's own optimum is the transportation cost (no embedding)
    assert tree.details["tree_costs"][0] == pytest.approx(exact.cost, rel=1e-9, abs=TOL)
    assert exact.feasible and tree.feasible


@pytest.mark.parametrize("objective", ["kmedian", "kmeans"])
def test_every_solution_passes_the_audit(objective):
    rng = np.random.default_rng(7)
    C, F = rng.uniform(size=(60, 2)), rng.uniform(size=(15, 2))
    labels = np.array(["a", "b", "c"])[np.arange(15) % 3]
    model = FairRangeKClustering(
        C,
        F,
        n_clusters=5,
        capacities=rng.integers(10, 20, size=15),
        groups=labels,
        ranges={"a": (2, 3), "b": (1, 1)},
        objective=objective,
    )
    for res in (model.fit(method="milp"), model.fit(method="tree", random_state=1)):
        assert res.constraint_violations() == []
        assert len(res.centres) == 5
        loads = np.bincount(res.assignment, minlength=15)
        assert np.all(loads <= model.capacities)
        counts = res.group_counts.set_index("group")["count"]
        assert 2 <= counts["a"] <= 3 and counts["b"] == 1
        cost = model.cost_matrix[np.arange(60), res.assignment].sum()
        assert res.cost == pytest.approx(cost, rel=1e-12)


def test_approximation_ratio_on_uniform_data():
    """The tree pipeline's cost over the MILP optimum; O(log k) in theory, the notes expect
    <= 2 on uniform data (reported in the assertion message)."""
    ratios = []
    for seed in range(3):
        rng = np.random.default_rng(100 + seed)
        C, F = rng.uniform(size=(80, 2)), rng.uniform(size=(20, 2))
        model = FairRangeKClustering(
            C,
            F,
            n_clusters=6,
            capacities=rng.integers(15, 30, size=20),
            groups=np.arange(20) % 2,
            ranges=[(2, 4), (2, 4)],
        )
        opt = model.fit(method="milp", lower_bound=False).cost
        approx = model.fit(method="tree", random_state=seed, lower_bound=False).cost
        ratios.append(approx / opt)
    assert min(ratios) >= 1 - 1e-9
    assert max(ratios) <= 2.0, f"empirical ratios {ratios}, log k = {math.log(6):.2f}"


def test_frt_tree_dominates_and_squares():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(25, 2))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))

    def tree_distances(parent, weight, leaf_of):
        depth = np.zeros(len(parent))
        ancestors = []
        for v in range(len(parent)):  # parents come first
            depth[v] = depth[parent[v]] + weight[v] if parent[v] >= 0 else 0.0
            ancestors.append(({v} | ancestors[parent[v]]) if parent[v] >= 0 else {v})
        out = np.zeros((len(leaf_of), len(leaf_of)))
        for a, b in itertools.combinations(range(len(leaf_of)), 2):
            u, v = leaf_of[a], leaf_of[b]
            lca = max(ancestors[u] & ancestors[v], key=lambda w: depth[w])
            out[a, b] = out[b, a] = depth[u] + depth[v] - 2 * depth[lca]
        return out

    plain = tree_distances(*_frt_tree(D, np.random.default_rng(0), squared=False))
    squared = tree_distances(*_frt_tree(D, np.random.default_rng(0), squared=True))
    assert np.all(plain >= D - 1e-12)  # FRT trees dominate the metric
    np.testing.assert_allclose(squared, plain**2, rtol=1e-12)


def test_group_forms_agree():
    C, F, U = notes_instance()
    membership = np.zeros((10, 2), dtype=bool)
    membership[:6, 0] = membership[4:, 1] = True
    forms = [
        GROUPS,
        membership,
        {"group0": range(6), "group1": range(4, 10)},
        pd.DataFrame(membership, columns=["group0", "group1"]),
    ]
    costs = [
        FairRangeKClustering(C, F, n_clusters=4, capacities=U, groups=g, ranges=RANGES)
        .fit(method="milp", lower_bound=False)
        .cost
        for g in forms
    ]
    np.testing.assert_allclose(costs, costs[0], rtol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"capacities": np.full(10, 7)}, "capacities"),  # 4 x 7 = 28 < 30 clients
        ({"ranges": [(0, 5), (0, 4)]}, "ranges"),  # upper > k
        ({"ranges": [(-1, 2), (0, 4)]}, "ranges"),
        ({"ranges": [(4, 4), (4, 4)]}, "ranges"),  # no 4 of group0 are all in group1
        ({"n_clusters": 11}, "n_clusters"),
        # the k largest capacities suffice, but 4 centres of group0 serve 4 x 5 < 30
        ({"capacities": [5] * 6 + [20] * 4, "ranges": [(4, 4), (0, 4)]}, "capacities"),
    ],
)
def test_infeasible_input_raises_before_any_solve(kwargs, argument):
    C, F, U = notes_instance()
    options = {"n_clusters": 4, "capacities": U, "groups": GROUPS, "ranges": RANGES, **kwargs}
    with pytest.raises(ValueError, match=f"`{argument}`"):
        FairRangeKClustering(C, F, **options)


def test_inputs_are_not_modified_and_results_report():
    C, F, U = notes_instance()
    copies = (C.copy(), F.copy(), U.copy())
    model = FairRangeKClustering(C, F, n_clusters=4, capacities=U, groups=GROUPS, ranges=RANGES)
    res = model.fit(method="auto")
    assert res.solver == "milp" and res.fit_options["method"] == "auto"
    for before, after in zip(copies, (C, F, U), strict=True):
        np.testing.assert_array_equal(before, after)
    assert list(res.tidy()["term"]) == [3, 6, 7, 8]
    assert res.tidy()["estimate"].sum() == 30
    glance = res.glance().iloc[0]
    assert glance["cost"] == res.cost and glance["n_clusters"] == 4
    text = res.summary().as_text()
    assert "group0" in text and "cost" in text
    vectors = model.feasible_count_vectors()
    assert (vectors.drop(columns="max_served").sum(axis=1) == 4).all()
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    assert res.plot() is not None
    assert res.plot(kind="loads") is not None


def test_time_limit_is_passed_to_highs():
    rng = np.random.default_rng(11)
    C, F = rng.uniform(size=(150, 2)), rng.uniform(size=(40, 2))
    model = FairRangeKClustering(
        C, F, n_clusters=8, capacities=np.full(40, 25), groups=np.arange(40) % 2
    )
    try:
        res = model.fit(method="milp", time_limit=1e-3, lower_bound=False)
    except RuntimeError as exc:  # stopped before any incumbent
        assert "time_limit" in str(exc)
    else:
        assert res.status == "time_limit" and res.feasible


def test_old_names_warn_and_agree_with_the_new_ones():
    C, F, U = notes_instance()
    with pytest.warns(FutureWarning, match="n_clusters"):
        old = FairRangeKClustering(C, F, k=4, capacities=U, groups=GROUPS, ranges=RANGES)
    assert old.n_clusters == 4
    with pytest.warns(FutureWarning, match="n_clusters"):
        assert old.k == 4
    res = old.fit(method="milp")
    with pytest.warns(FutureWarning, match="n_clusters"):
        assert res.k == 4
    with pytest.warns(FutureWarning, match="constraint_violations"):
        assert res.audit() == res.constraint_violations() == []
    with pytest.warns(FutureWarning, match="n_clusters"):
        tree = FairRangeKClustering.from_tree(
            [[0, 1], [1, 2]], [1.0, 2.0], clients=[0, 1, 2], facilities=[0, 2], k=1
        )
    assert tree.n_clusters == 1


def test_public_views_of_the_instance_are_read_only():
    C, F, U = notes_instance()
    model = FairRangeKClustering(C, F, n_clusters=4, capacities=U, groups=GROUPS, ranges=RANGES)
    np.testing.assert_array_equal(model.client_coordinates, C)
    np.testing.assert_array_equal(model.facility_coordinates, F)
    np.testing.assert_array_equal(model.cost_matrix, model.distances)
    for array in (model.client_coordinates, model.facility_coordinates, model.cost_matrix):
        assert not array.flags.writeable
    tree = FairRangeKClustering.from_tree(
        [[0, 1], [1, 2]], [1.0, 2.0], clients=[0, 1, 2], facilities=[0, 2], n_clusters=1
    )
    assert tree.client_coordinates is None and tree.facility_coordinates is None
    np.testing.assert_allclose(tree.distances, [[0.0, 3.0], [1.0, 2.0], [3.0, 0.0]])
