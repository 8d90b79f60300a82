"""Capacitated fair-range k-clustering: the MILP beside brute force, the tree approximation
beside the time-limited MILP.

- Small instances (the notes' 30 x 10 with k = 4, and 40 x 14 with k = 5): our MILP (cvxpy,
  HiGHS) against brute force over every k-subset meeting the ranges, each assignment a
  transportation LP (scipy HiGHS). Both give the same optimum (checked in the tests).
- 1,000 clients x 100 facilities, k = 10, two groups with binding ranges: the polynomial
  tree-embedding approximation (``method="tree"``) against the MILP, which cannot finish and
  runs under a time limit (``TIME_LIMIT`` seconds). The harness times both;
  ``python benchmarks/bench_cluster_fairrange.py`` prints their costs, the LP bound and the
  wall times of one run each.
"""

import itertools
import time

import numpy as np
from scipy import optimize, sparse

from statcore.cluster.fairrange import FairRangeKClustering

TIME_LIMIT = 20.0
_data = {}


def _small(n, m, k, seed):
    rng = np.random.default_rng(seed)
    C, F = rng.uniform(size=(n, 2)), rng.uniform(size=(m, 2))
    U = rng.integers(7, 15, size=m) if seed == 1 else rng.integers(n // k, 2 * n // k, size=m)
    groups = [list(range(m * 3 // 5)), list(range(m * 2 // 5, m))]
    return FairRangeKClustering(C, F, k=k, capacities=U, groups=groups, ranges=[(1, 2), (1, 3)])


def _large():
    rng = np.random.default_rng(0)
    n, m = 1000, 100
    centres = rng.uniform(0, 10, size=(8, 2))
    C = centres[rng.integers(8, size=n)] + rng.normal(scale=0.8, size=(n, 2))
    F = rng.uniform(0, 10, size=(m, 2))
    U = rng.integers(n // 8, n // 4, size=m)
    labels = np.where(rng.random(m) < 0.7, "A", "B")
    return FairRangeKClustering(
        C, F, k=10, capacities=U, groups=labels, ranges={"A": (3, 6), "B": (4, 7)}
    )


def setup():
    if not _data:
        _data["notes"] = _small(30, 10, 4, seed=1)
        _data["small"] = _small(40, 14, 5, seed=2)
        _data["large"] = _large()


def transport(cost, U):
    """The transportation LP of a fixed centre set (scipy's HiGHS)."""
    n, s = cost.shape
    a_eq = sparse.kron(sparse.eye(n), np.ones((1, s)))
    a_ub = sparse.kron(np.ones((1, n)), sparse.eye(s))
    res = optimize.linprog(cost.ravel(), A_ub=a_ub, b_ub=U, A_eq=a_eq, b_eq=np.ones(n))
    return res.fun if res.status == 0 else np.inf


def brute_force(model):
    best = np.inf
    for S in itertools.combinations(range(model.n_facilities), model.k):
        S = list(S)
        counts = model.membership[S].sum(axis=0)
        if np.all((counts >= model.ranges[:, 0]) & (counts <= model.ranges[:, 1])):
            best = min(best, transport(model._cost[:, S], model.capacities[S]))
    return best


def milp(name, **options):
    return lambda: _data[name].fit(method="milp", lower_bound=False, **options).cost


def tree(name):
    return lambda: _data[name].fit(method="tree", random_state=0, lower_bound=False).cost


CASES = [
    {
        "name": "fair-range MILP, notes' 30 x 10, k=4",
        "setup": setup,
        "ours": milp("notes"),
        "anchor": lambda: brute_force(_data["notes"]),
        "anchor_name": "brute force + scipy LP",
    },
    {
        "name": "fair-range MILP, 40 x 14, k=5",
        "setup": setup,
        "ours": milp("small"),
        "anchor": lambda: brute_force(_data["small"]),
        "anchor_name": "brute force + scipy LP",
    },
    {
        "name": f"fair-range tree DP vs MILP ({TIME_LIMIT:g} s limit), 1000 x 100, k=10",
        "setup": setup,
        "ours": tree("large"),
        "anchor": milp("large", time_limit=TIME_LIMIT),
        "anchor_name": "cvxpy/HiGHS MILP, time-limited",
    },
]


def main():
    setup()
    rows = []
    for name in ("notes", "small"):
        start = time.perf_counter()
        ours = _data[name].fit(method="milp", lower_bound=False).cost
        t_ours = time.perf_counter() - start
        start = time.perf_counter()
        brute = brute_force(_data[name])
        rows.append((name, "MILP", ours, t_ours, "brute force", brute, time.perf_counter() - start))
    model = _data["large"]
    res_tree = model.fit(method="tree", random_state=0, lower_bound=False)
    res_milp = model.fit(method="milp", time_limit=TIME_LIMIT, lower_bound=False)
    start = time.perf_counter()
    lp = model._solve_relaxation()
    t_lp = time.perf_counter() - start
    rows.append(
        (
            "large",
            "tree DP",
            res_tree.cost,
            res_tree.wall_time_s,
            f"MILP ({res_milp.status}, gap {res_milp.mip_gap:.3g})",
            res_milp.cost,
            res_milp.wall_time_s,
        )
    )
    print("| instance | ours | cost | s | anchor | cost | s |")
    print("|:--|:--|--:|--:|:--|--:|--:|")
    for row in rows:
        print(
            f"| {row[0]} | {row[1]} | {row[2]:.6f} | {row[3]:.2f} | {row[4]} | {row[5]:.6f} "
            f"| {row[6]:.2f} |"
        )
    print(
        f"LP relaxation of the large instance: {lp:.6f} ({t_lp:.1f} s); tree / LP = "
        f"{res_tree.cost / lp:.4f}, MILP / LP = {res_milp.cost / lp:.4f}"
    )


if __name__ == "__main__":
    main()
