"""Capacitated fair-range k-clustering: an exact MILP and the tree-embedding approximation.

Clients ``C``, facilities ``F`` with capacities ``U_f`` and (possibly intersecting) groups
``G_1..G_t`` of facilities with ranges ``[alpha_g, beta_g]``: choose ``S`` of ``F`` with
``|S| = k`` and ``alpha_g <= |S & G_g| <= beta_g``, and assign every client to a centre in ``S``
with at most ``U_f`` clients per centre, minimising ``sum_c d(c, sigma(c))^z`` (``z = 1``
k-median, ``z = 2`` k-means).

For a fixed ``S`` the best assignment is a transportation problem, whose polytope is integral,
so the MILP needs integrality only on the opening variables and every assignment here is the
exact optimum of that transportation LP on the original distances.

References
----------
Gadekar, A. and Thejaswi, S. (2025). Capacitated fair-range clustering: hardness and
approximation algorithms. arXiv:2505.15905.
Fakcharoenphol, J., Rao, S. and Talwar, K. (2004). A tight bound on approximating arbitrary
metrics by tree metrics. JCSS 69(3), 485-497.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import optimize, sparse
from scipy.sparse import csgraph

from statcore.base import Estimator
from statcore.cluster import _kernels as K
from statcore.cluster._fairrange_checks import (
    _check_capacities,
    _check_groups,
    _check_ranges,
    _labels,
    _node_ids,
    _read_only,
)
from statcore.cluster.fairrange_trees import _dp_tree, _frt_tree, _run_dp
from statcore.compat import import_optional, renamed_attribute, renamed_keywords, renamed_method
from statcore.results import Results
from statcore.results.plotting import get_ax, legend_beside
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
    describe,
)

__all__ = ["FairRangeKClustering", "FairRangeResults"]

OBJECTIVES = ("kmedian", "kmeans")
METHODS = ("auto", "milp", "tree")
#: ``method="auto"`` solves the MILP up to this many client-facility pairs (the MILP of the
#: notes' 200 x 40 instance takes under a second; 1,000 x 100 needs a time limit)
AUTO_MILP_PAIRS = 20_000
#: largest number of type-count vectors enumerated (types of a constant number of groups)
MAX_VECTORS = 2_000_000


class FairRangeKClustering(Estimator):
    """Capacitated fair-range k-median / k-means clustering (Gadekar & Thejaswi, 2025).

    Parameters
    ----------
    clients : array_like, shape (n, d)
        Client coordinates (Euclidean distances). A DataFrame's index labels the clients.
    facilities : array_like, shape (m, d)
        Candidate centre coordinates; a DataFrame's index labels the facilities.
    n_clusters : int
        Number of centres to open k (one per cluster), ``1 <= k <= m``. ``k=`` is its old
        spelling (warns ``FutureWarning``).
    capacities : int or array_like of int, shape (m,), optional
        Most clients a facility serves. None: uncapacitated (every facility may serve all).
    groups : optional
        Facility groups, possibly intersecting: a boolean membership matrix (m, t) (a
        DataFrame's columns name the groups), a mapping ``name -> facility indices``, a list of
        index lists, or one label per facility (disjoint groups named by the labels).
    ranges : optional
        ``[alpha_g, beta_g]`` per group, integers in ``[0, k]``: a mapping ``name -> (lo, hi)``
        or a sequence of pairs in the order of ``groups``. None (or a group left out of the
        mapping): ``[0, k]``.
    objective : {"kmedian", "kmeans"}
        Sum of distances or of squared distances.

    Raises
    ------
    ValueError
        Before any solve, for infeasible input: a range outside ``[0, k]``, no type-count
        vector meeting the ranges with the facilities available, or too little capacity
        (the ``k`` largest capacities, or the best fair-range choice, serve fewer than ``n``).

    Notes
    -----
    ``fit(method="milp")`` solves the MILP of the notes exactly (cvxpy, HiGHS): binary
    ``y_f``, continuous ``x_cf >= 0``, ``sum_f x_cf = 1``, ``sum_c x_cf <= U_f y_f``,
    ``x_cf <= y_f``, ``sum_f y_f = k``, ``alpha_g <= sum_{f in G_g} y_f <= beta_g``.
    ``fit(method="tree")`` is the polynomial approximation for a constant number of groups:
    facility *types* (membership patterns), the feasible type-count vectors, a seeded FRT
    hierarchically separated tree, the exact min-cost-flow dynamic program on the tree, and the
    assignment re-solved exactly on the original metric.

    Fidelity: reconstruction. The store held only the paper's abstract and first page (and
    summaries): that the polynomial O(log k) / O(log^2 k) algorithm for a constant number of
    groups works by tree embedding and an exact DP on the tree is [paper]; these steps are
    reconstructed: (1) the reduction to ``O(k)`` leaders (k-means++ seeding on the clients,
    each client moved to its nearest leader, each facility hung below its nearest leader) that
    makes the distortion O(log k) rather than O(log n); (2) the FRT embedding of the leaders
    (random permutation, ``beta = 2^U``, edge ``r_{i+1}`` above a level-``i`` cluster); (3) the
    DP state (type-count vector, net clients crossing the edge to the parent, in units of
    ``ceil(n / resolution)`` clients), with the enumeration of feasible count vectors folded
    into the DP's root (equivalent to one DP per vector); (4) for k-means, the HST's levels
    re-weighted so that tree distances are squared HST distances (an HST's distance depends
    only on the level of the common ancestor) and a facility's own edge squared; (5) the best
    of ``n_trees`` embeddings. The MILP is the standard formulation (no reconstruction).

    References
    ----------
    Gadekar, A. and Thejaswi, S. (2025). Capacitated fair-range clustering: hardness and
    approximation algorithms. arXiv:2505.15905.
    Fakcharoenphol, J., Rao, S. and Talwar, K. (2004). A tight bound on approximating
    arbitrary metrics by tree metrics. JCSS 69(3).
    Thejaswi, S., Gadekar, A., Ordozgoiti, B. and Osadnik, M. (2022). Clustering with
    fair-center representation: parameterized approximation algorithms and heuristics. KDD.
    """

    method_name = "Capacitated fair-range k-clustering"

    @renamed_keywords(k="n_clusters")
    def __init__(
        self,
        clients,
        facilities,
        *,
        n_clusters,
        capacities=None,
        groups=None,
        ranges=None,
        objective: str = "kmedian",
        _tree: dict | None = None,
    ):
        # ``_tree`` is :meth:`from_tree`'s prepared tree metric (clients, facilities: node ids)
        self._X = self._F = None
        self._tree = _tree
        if _tree is None:
            X = as_float_array(clients, name="clients", ndim=2, min_rows=1)
            F = as_float_array(facilities, name="facilities", ndim=2, min_rows=1)
            if X.shape[1] != F.shape[1]:
                raise ValueError(
                    f"`clients` and `facilities` must have the same number of columns; got "
                    f"{X.shape[1]} and {F.shape[1]}"
                )
            self._X, self._F = X, F
            dist = K.pairwise_distances(X, F, metric="euclidean")
        else:
            nodes = np.ix_(_tree["clients"], _tree["facilities"])
            dist = np.ascontiguousarray(_tree["node_dist"][nodes])
            clients = facilities = None
        self._setup(clients, facilities, dist, n_clusters, capacities, groups, ranges, objective)

    @classmethod
    @renamed_keywords(k="n_clusters")
    def from_tree(
        cls,
        edges,
        weights,
        *,
        clients,
        facilities,
        n_clusters,
        capacities=None,
        groups=None,
        ranges=None,
        objective: str = "kmedian",
    ) -> FairRangeKClustering:
        """An instance on a tree metric: clients and facilities sit at nodes of a weighted tree.

        Parameters
        ----------
        edges : array_like of int, shape (E, 2)
            The tree's edges between nodes ``0..E`` (connected, no cycle).
        weights : array_like, shape (E,)
            Non-negative edge lengths.
        clients, facilities : array_like of int
            The node of each client and of each facility (several may share a node).
        n_clusters, capacities, groups, ranges, objective
            As for the constructor.

        Notes
        -----
        For ``objective="kmedian"``, ``fit(method="tree")`` runs the dynamic program on this
        tree itself (no embedding, unit flows), which is exact.
        """
        E = np.asarray(edges)
        if E.ndim != 2 or E.shape[1] != 2 or not np.issubdtype(E.dtype, np.integer):
            raise ValueError(
                f"`edges` must be an integer array of shape (E, 2); got {describe(edges)}"
            )
        w = as_float_array(weights, name="weights", ndim=1)
        if len(w) != len(E) or (w < 0).any():
            raise ValueError(
                f"`weights` must be {len(E)} non-negative lengths; got {describe(weights)}"
            )
        n_nodes = len(E) + 1
        if E.size and (E.min() < 0 or E.max() >= n_nodes):
            raise ValueError(f"`edges` must name nodes 0..{n_nodes - 1}")
        adj = sparse.coo_matrix((w + 0.0, (E[:, 0], E[:, 1])), shape=(n_nodes, n_nodes))
        n_comp, _ = csgraph.connected_components(adj, directed=False)
        if n_comp != 1:
            raise ValueError(f"`edges` must form one tree; got {n_comp} components")
        # explicit zeros would be dropped by the sparse graph; a tiny length keeps the edge
        adj = sparse.coo_matrix(
            (np.where(w > 0, w, 1e-300), (E[:, 0], E[:, 1])), shape=(n_nodes, n_nodes)
        ).tocsr()
        node_dist = csgraph.shortest_path(adj, directed=False)
        c_nodes = _node_ids(clients, n_nodes, "clients")
        f_nodes = _node_ids(facilities, n_nodes, "facilities")
        tree = {
            "edges": E.astype(np.int64),
            "weights": w,
            "node_dist": node_dist,
            "clients": c_nodes,
            "facilities": f_nodes,
        }
        return cls(
            c_nodes,
            f_nodes,
            n_clusters=n_clusters,
            capacities=capacities,
            groups=groups,
            ranges=ranges,
            objective=objective,
            _tree=tree,
        )

    # ------------------------------------------------------------------ specification
    def _setup(self, clients, facilities, dist, k, capacities, groups, ranges, objective):
        self.objective = check_option(objective, name="objective", options=OBJECTIVES)
        n, m = dist.shape
        self.n_clusters = check_positive_int(k, name="n_clusters")
        if self.n_clusters > m:
            raise ValueError(
                f"`n_clusters` must be at most the number of facilities ({m}); got {k}"
            )
        self.client_labels = _labels(clients, n)
        self.facility_labels = _labels(facilities, m)
        self.distances = dist
        self.distances.setflags(write=False)
        self._cost = dist if self.objective == "kmedian" else dist**2
        self.capacities = _check_capacities(capacities, m, n)
        self.membership, self.group_names = _check_groups(groups, m)
        self.ranges = _check_ranges(ranges, self.group_names, self.n_clusters)
        patterns, self.facility_type = np.unique(self.membership, axis=0, return_inverse=True)
        self.type_patterns = patterns
        self.facility_type = self.facility_type.ravel().astype(np.int64)
        self._check_feasible()

    def _check_feasible(self) -> None:
        """Refuse what no solver can satisfy: capacity first (cheap), then the ranges."""
        n, k = self.nobs, self.n_clusters
        top = np.sort(self.capacities)[::-1][:k].sum()
        if top < n:
            raise ValueError(
                f"`capacities`: the {k} largest capacities serve {int(top)} clients, fewer "
                f"than the {n} clients; raise the capacities or `n_clusters`"
            )
        available = np.bincount(self.facility_type, minlength=len(self.type_patterns))
        n_vectors = math.comb(k + len(available) - 1, len(available) - 1)
        self._vectors = None
        if n_vectors > MAX_VECTORS:
            return  # too many groups for the types' enumeration: the solver decides
        vectors = _count_vectors(available, k, self.type_patterns, self.ranges[:, 1], total=k)
        ok = _meets_ranges(vectors, self.type_patterns, self.ranges)
        vectors = vectors[ok]
        if not len(vectors):
            raise ValueError(
                "`ranges`: no choice of k = "
                f"{k} facilities meets the ranges {self._ranges_text()} with the facilities "
                "available in each group"
            )
        best = _top_capacity(self.capacities, self.facility_type, vectors)
        if best.max() < n:
            raise ValueError(
                f"`capacities`: the best choice of {k} facilities meeting the ranges serves "
                f"{int(best.max())} clients, fewer than the {n} clients"
            )
        self._vectors = vectors

    def _ranges_text(self) -> str:
        return ", ".join(
            f"{name}: [{lo}, {hi}]"
            for name, (lo, hi) in zip(self.group_names, self.ranges, strict=True)
        )

    @property
    def nobs(self) -> int:
        return self.distances.shape[0]

    @property
    def n_facilities(self) -> int:
        return self.distances.shape[1]

    k = renamed_attribute("k", "n_clusters")

    @property
    def client_coordinates(self) -> np.ndarray | None:
        """The clients' coordinates (read-only; None for a :meth:`from_tree` instance)."""
        return None if self._X is None else _read_only(self._X)

    @property
    def facility_coordinates(self) -> np.ndarray | None:
        """The facilities' coordinates (read-only; None for a :meth:`from_tree` instance)."""
        return None if self._F is None else _read_only(self._F)

    @property
    def cost_matrix(self) -> np.ndarray:
        """Client-facility assignment costs (read-only): ``distances`` (k-median) or their
        squares (k-means)."""
        return _read_only(self._cost)

    def _repr_spec(self) -> str:
        return (
            f"n_clusters={self.n_clusters}, facilities={self.n_facilities}, "
            f"groups={len(self.group_names)}, objective={self.objective!r}"
        )

    def feasible_count_vectors(self) -> pd.DataFrame:
        """The type-count vectors (how many centres of each membership pattern) that meet the
        ranges, with the most clients their ``k`` facilities can serve."""
        if self._vectors is None:
            raise ValueError("too many groups to enumerate the type-count vectors")
        names = [_pattern_name(p, self.group_names) for p in self.type_patterns]
        frame = pd.DataFrame(self._vectors, columns=names)
        frame["max_served"] = _top_capacity(self.capacities, self.facility_type, self._vectors)
        return frame

    # ------------------------------------------------------------------ assignment
    def assign(self, centres) -> tuple[np.ndarray, float]:
        """The best assignment to the open facilities ``centres`` (indices) and its cost.

        Solved exactly as a transportation LP on the original distances (HiGHS dual simplex:
        a vertex, hence integral). Raises ValueError when the centres' capacities are short.
        """
        S = np.unique(np.asarray(centres, dtype=np.int64))
        n = self.nobs
        U = self.capacities[S]
        if U.sum() < n:
            raise ValueError(
                f"`centres` serve at most {int(U.sum())} clients, fewer than the {n} clients"
            )
        cost = self._cost[:, S]
        if np.all(U >= n):  # uncapacitated: nearest centre
            pick = np.argmin(cost, axis=1)
            return S[pick], float(cost[np.arange(n), pick].sum())
        s = len(S)
        rows = np.repeat(np.arange(n), s)
        a_eq = sparse.csr_matrix((np.ones(n * s), (rows, np.arange(n * s))), shape=(n, n * s))
        a_ub = sparse.csr_matrix(
            (np.ones(n * s), (np.tile(np.arange(s), n), np.arange(n * s))), shape=(s, n * s)
        )
        res = optimize.linprog(
            cost.ravel(),
            A_ub=a_ub,
            b_ub=U,
            A_eq=a_eq,
            b_eq=np.ones(n),
            bounds=(0, None),
            method="highs-ds",
        )
        if res.status != 0:
            raise RuntimeError(f"the transportation LP failed: {res.message}")
        x = res.x.reshape(n, s)
        pick = np.argmax(x, axis=1)
        return S[pick], float(cost[np.arange(n), pick].sum())

    # ------------------------------------------------------------------ fitting
    def fit(
        self,
        *,
        method: str = "auto",
        time_limit: float | None = None,
        random_state=None,
        mip_gap: float = 1e-6,
        lower_bound: bool | str = "auto",
        n_trees: int = 4,
        n_leaders: int | None = None,
        resolution: int = 100,
    ) -> FairRangeResults:
        """Choose the centres and the assignment.

        Parameters
        ----------
        method : {"auto", "milp", "tree"}
            ``"milp"``: exact (up to ``mip_gap`` or ``time_limit``); ``"tree"``: the
            polynomial tree-embedding approximation; ``"auto"``: the MILP up to
            ``AUTO_MILP_PAIRS`` client-facility pairs, the approximation beyond.
        time_limit : float, optional
            Seconds HiGHS may spend on the MILP; the best solution found is returned with its
            gap (``status="time_limit"``).
        random_state : None, int, SeedSequence or Generator
            Seeds the leaders and the tree embeddings (the MILP uses none).
        mip_gap : float
            Relative MIP gap at which HiGHS stops.
        lower_bound : bool or "auto"
            Solve the LP relaxation for the gap of the result (the MILP's own dual bound is
            used when it is tighter). ``"auto"``: up to ``AUTO_MILP_PAIRS`` client-facility
            pairs (the relaxation of 1,000 x 100 takes tens of seconds).
        n_trees : int
            Tree embeddings tried by ``"tree"``; the best final cost is kept.
        n_leaders : int, optional
            Leaders the clients are moved to before the embedding (default ``max(4k, 32)``;
            all clients when there are fewer).
        resolution : int
            Flow units the ``n`` clients are split into in the DP (``n <= resolution``:
            one client per unit, exact on the embedded instance).
        """
        method = check_option(method, name="method", options=METHODS)
        if time_limit is not None:
            time_limit = check_positive(time_limit, name="time_limit")
        check_scalar(mip_gap, name="mip_gap", low=0.0, high=1.0)
        n_trees = check_positive_int(n_trees, name="n_trees")
        resolution = check_positive_int(resolution, name="resolution")
        if n_leaders is not None:
            n_leaders = check_positive_int(n_leaders, name="n_leaders")
        rng = check_random_state(random_state)
        small = self.nobs * self.n_facilities <= AUTO_MILP_PAIRS
        if method == "auto":
            method = "milp" if small else "tree"
        if lower_bound == "auto":
            lower_bound = small
        elif not isinstance(lower_bound, bool):
            raise ValueError(
                f"`lower_bound` must be True, False or 'auto'; got {describe(lower_bound)}"
            )
        start = time.perf_counter()
        notes = []
        if method == "milp":
            centres, status, mip_gap_found, dual_bound = self._solve_milp(time_limit, mip_gap)
            details = {}
            if status == "time_limit":
                notes.append(
                    f"HiGHS stopped at the time limit ({time_limit:g} s); "
                    f"MIP gap {mip_gap_found:.3g}."
                )
        else:
            centres, details = self._solve_tree(rng, n_trees, n_leaders, resolution)
            status, mip_gap_found, dual_bound = "approximation", np.nan, -np.inf
        assignment, cost = self.assign(centres)
        lp = self._solve_relaxation() if lower_bound else -np.inf
        bound = max(lp, dual_bound)
        elapsed = time.perf_counter() - start
        return self._results(
            method,
            centres,
            assignment,
            cost,
            bound,
            lp,
            status,
            mip_gap_found,
            elapsed,
            details,
            tuple(notes),
        )

    def _milp_problem(self, relax: bool):
        cp = import_optional("cvxpy", "cluster")
        n, m = self.distances.shape
        y = cp.Variable(m, boolean=not relax, name="open")
        x = cp.Variable((n, m), nonneg=True, name="assign")
        member = self.membership.astype(float)
        constraints = [
            cp.sum(x, axis=1) == 1,
            cp.sum(x, axis=0) <= cp.multiply(self.capacities.astype(float), y),
            x <= np.ones((n, 1)) @ cp.reshape(y, (1, m), order="C"),
            cp.sum(y) == self.n_clusters,
        ]
        if member.shape[1]:
            constraints += [member.T @ y >= self.ranges[:, 0], member.T @ y <= self.ranges[:, 1]]
        if relax:
            constraints += [y >= 0, y <= 1]
        problem = cp.Problem(cp.Minimize(cp.sum(cp.multiply(self._cost, x))), constraints)
        return cp, problem, y

    def _solve_milp(self, time_limit, mip_gap):
        cp, problem, y = self._milp_problem(relax=False)
        options = {"mip_rel_gap": float(mip_gap)}
        if time_limit is not None:
            options["time_limit"] = float(time_limit)
        with warnings.catch_warnings():
            # a time-limited solve is reported through `status` and `mip_gap`
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            problem.solve(solver=cp.HIGHS, **options)
        info = problem.solver_stats.extra_stats
        # at a limit HiGHS hands back its (possibly empty) working point: 2 = feasible
        incumbent = y.value is not None and getattr(info, "primal_solution_status", 2) == 2
        if problem.status not in (cp.OPTIMAL, cp.USER_LIMIT) or not incumbent:
            if problem.status == cp.USER_LIMIT:
                raise RuntimeError(
                    f"HiGHS found no feasible solution within `time_limit`={time_limit}; "
                    "raise it or use method='tree'"
                )
            raise ValueError(
                f"the MILP is {problem.status}: no choice of {self.n_clusters} centres meets the "
                f"`ranges` ({self._ranges_text()}) with enough `capacities`"
            )
        centres = np.flatnonzero(y.value > 0.5)
        status = "optimal" if problem.status == cp.OPTIMAL else "time_limit"
        gap = float(getattr(info, "mip_gap", np.nan))
        bound = float(getattr(info, "mip_dual_bound", -np.inf))
        return centres, status, max(gap, 0.0), bound

    def _solve_relaxation(self) -> float:
        cp, problem, _ = self._milp_problem(relax=True)
        problem.solve(solver=cp.HIGHS)
        return float(problem.value) if problem.status == cp.OPTIMAL else -np.inf

    # ------------------------------------------------------------------ tree approximation
    def _solve_tree(self, rng, n_trees, n_leaders, resolution):
        if self._vectors is None:
            raise ValueError(
                "method='tree' needs a constant number of groups: the type-count vectors of "
                "these `groups` are too many to enumerate; use method='milp'"
            )
        dp = _TypeVectors(self)
        if self._tree is not None and self.objective == "kmedian":
            tree = self._given_tree()
            centres, tree_cost = _run_dp(self, dp, tree, resolution)
            return centres, {"tree_costs": (tree_cost,), "n_trees": 1, "embedding": "given tree"}
        n_leaders = n_leaders or max(4 * self.n_clusters, 32)
        best, tree_costs, final_costs = None, [], []
        for _ in range(n_trees):
            tree = self._embedded_tree(rng, n_leaders)
            centres, tree_cost = _run_dp(self, dp, tree, resolution)
            final = self.assign(centres)[1]
            tree_costs.append(tree_cost)
            final_costs.append(final)
            if best is None or final < best[1]:
                best = (centres, final)
        return best[0], {
            "tree_costs": tuple(tree_costs),
            "embedding_costs": tuple(final_costs),
            "n_trees": n_trees,
            "embedding": "FRT of leaders",
            "n_leaders": n_leaders,
        }

    def _client_metric(self, rows, cols) -> np.ndarray:
        """Distances between clients ``rows`` and clients ``cols`` (the original metric)."""
        if self._tree is not None:
            nodes = self._tree["clients"]
            return self._tree["node_dist"][np.ix_(nodes[rows], nodes[cols])]
        return K.pairwise_distances(self._X[rows], self._X[cols], metric="euclidean")

    def _embedded_tree(self, rng, n_leaders):
        """Leaders by D^z seeding, the FRT tree of the leaders, facilities hung below them."""
        n = self.nobs
        z = 1 if self.objective == "kmedian" else 2
        leaders = [int(rng.integers(n))]
        nearest = self._client_metric(np.arange(n), np.array(leaders))[:, 0]
        while len(leaders) < min(n_leaders, n):
            weight = nearest**z
            if weight.sum() <= 0:
                break  # every client sits on a leader
            nxt = int(rng.choice(n, p=weight / weight.sum()))
            leaders.append(nxt)
            nearest = np.minimum(nearest, self._client_metric(np.arange(n), np.array([nxt]))[:, 0])
        leaders = np.array(leaders)
        to_leader = np.argmin(self._client_metric(np.arange(n), leaders), axis=1)
        demand = np.bincount(to_leader, minlength=len(leaders))
        fac_dist = self.distances[leaders]  # (L, m): leader-facility distances
        hang = np.argmin(fac_dist, axis=0)
        hang_len = fac_dist[hang, np.arange(self.n_facilities)] ** z
        parent, weight, leaf_of = _frt_tree(
            self._client_metric(leaders, leaders), rng, squared=z == 2
        )
        return _dp_tree(parent, weight, leaf_of, demand, hang, hang_len)

    def _given_tree(self):
        """The user's tree rooted at node 0, clients as demands, facilities as leaves."""
        t = self._tree
        n_nodes = len(t["edges"]) + 1
        adj = sparse.coo_matrix(
            (np.arange(1, len(t["edges"]) + 1), (t["edges"][:, 0], t["edges"][:, 1])),
            shape=(n_nodes, n_nodes),
        ).tocsr()
        adj = adj + adj.T
        order, preds = csgraph.breadth_first_order(adj, 0, directed=False)
        parent = np.asarray(preds, dtype=np.int64)
        parent[0] = -1
        weight = np.zeros(n_nodes)
        for v in order[1:]:
            weight[v] = t["weights"][adj[v, parent[v]] - 1]
        demand = np.bincount(t["clients"], minlength=n_nodes)
        return _dp_tree(
            parent, weight, np.arange(n_nodes), demand, t["facilities"], np.zeros(self.n_facilities)
        )

    # ------------------------------------------------------------------ results
    def _results(
        self, method, centres, assignment, cost, bound, lp, status, mip_gap, elapsed, details, notes
    ):
        centres = np.sort(np.asarray(centres, dtype=np.int64))
        load = np.bincount(assignment, minlength=self.n_facilities)
        loads = pd.DataFrame(
            {
                "facility": self.facility_labels[centres],
                "load": load[centres],
                "capacity": self.capacities[centres],
            }
        )
        for g, name in enumerate(self.group_names):
            loads[f"in_{name}"] = self.membership[centres, g]
        counts = self.membership[centres].sum(axis=0)
        group_counts = pd.DataFrame(
            {
                "group": list(self.group_names),
                "count": counts.astype(np.int64),
                "lower": self.ranges[:, 0],
                "upper": self.ranges[:, 1],
            }
        )
        group_counts["within"] = (counts >= self.ranges[:, 0]) & (counts <= self.ranges[:, 1])
        gap = cost / bound - 1.0 if np.isfinite(bound) and bound > 0 else np.nan
        return FairRangeResults(
            method=f"{self.method_name} ({'MILP, HiGHS' if method == 'milp' else 'tree DP'})",
            nobs=self.nobs,
            model=self,
            notes=notes,
            centres=centres,
            assignment=np.asarray(assignment, dtype=np.int64),
            cost=float(cost),
            lower_bound=float(bound),
            lp_bound=float(lp),
            gap=float(gap),
            mip_gap=float(mip_gap),
            status=status,
            objective=self.objective,
            n_clusters=self.n_clusters,
            loads=loads,
            group_counts=group_counts,
            solver=method,
            wall_time_s=float(elapsed),
            details=details,
        )


# ---------------------------------------------------------------------- type-count vectors
def _count_vectors(available, k, patterns, upper, *, total=None) -> np.ndarray:
    """Vectors ``c`` with ``c_tau <= available_tau``, group counts ``<= upper`` and
    ``sum(c) == total`` (or ``<= k`` when ``total`` is None)."""
    T = len(available)
    out = []

    def walk(prefix, left, group_counts):
        tau = len(prefix)
        if tau == T:
            if total is None or left == 0:
                out.append(prefix)
            return
        pattern = patterns[tau]
        top = min(int(available[tau]), left)
        if total is not None and tau == T - 1:
            values = [left] if left <= top else []
        else:
            values = range(top + 1)
        for c in values:
            counts = group_counts + c * pattern
            if (counts > upper).any():
                break
            walk(prefix + (c,), left - c, counts)

    walk((), k, np.zeros(patterns.shape[1], dtype=np.int64))
    return np.array(out, dtype=np.int64).reshape(-1, T)


def _meets_ranges(vectors, patterns, ranges) -> np.ndarray:
    counts = vectors @ patterns.astype(np.int64)
    return np.all((counts >= ranges[:, 0]) & (counts <= ranges[:, 1]), axis=1)


def _top_capacity(capacities, facility_type, vectors) -> np.ndarray:
    """Most clients the facilities of each count vector serve (largest capacities per type)."""
    best = np.zeros(len(vectors), dtype=np.int64)
    for tau in range(vectors.shape[1]):
        caps = np.sort(capacities[facility_type == tau])[::-1]
        prefix = np.concatenate([[0], np.cumsum(caps)])
        best += prefix[vectors[:, tau]]
    return best


def _pattern_name(pattern, names) -> str:
    inside = [n for n, p in zip(names, pattern, strict=True) if p]
    return "+".join(inside) if inside else "none"


class _TypeVectors:
    """The DP's count vectors (sum <= k, within the upper ranges) and their addition table."""

    def __init__(self, model: FairRangeKClustering):
        T = len(model.type_patterns)
        available = np.bincount(model.facility_type, minlength=T)
        vecs = _count_vectors(available, model.n_clusters, model.type_patterns, model.ranges[:, 1])
        base = model.n_clusters + 1
        codes = vecs @ (base ** np.arange(T))
        order = np.argsort(codes)
        vecs, codes = vecs[order], codes[order]  # the zero vector comes first
        V = len(vecs)
        total = vecs.sum(axis=1)
        sums = codes[:, None] + codes[None, :]
        pos = np.clip(np.searchsorted(codes, sums), 0, V - 1)
        valid = (total[:, None] + total[None, :] <= model.n_clusters) & (codes[pos] == sums)
        self.add = np.where(valid, pos, -1).astype(np.int64)
        self.sub = np.full((V, V), -1, dtype=np.int64)
        ia, ib = np.nonzero(valid)
        self.sub[self.add[ia, ib], ia] = ib
        self.unit = np.full((T, V), -1, dtype=np.int64)
        self.minus = np.full((T, V), -1, dtype=np.int64)
        for tau in range(T):
            e = np.searchsorted(codes, base**tau)
            if e < V and codes[e] == base**tau:
                self.unit[tau] = self.add[:, e]
                self.minus[tau] = self.sub[:, e]
        self.vectors = vecs
        self.root_ok = (total == model.n_clusters) & _meets_ranges(
            vecs, model.type_patterns, model.ranges
        )


# ---------------------------------------------------------------------- results
def _plot_assignment(res, ax=None, **kwargs):
    """Clients coloured by their centre, a line to it, closed facilities as grey crosses."""
    model = res.model
    X = None if model is None else model.client_coordinates
    if X is None or X.shape[1] != 2:
        raise ValueError(
            "the assignment plot needs the model's 2-D client and facility coordinates"
        )
    ax = get_ax(ax)
    F = model.facility_coordinates
    slot = np.searchsorted(res.centres, res.assignment)
    colours = np.array([f"C{i % 10}" for i in range(len(res.centres))])
    for c in range(len(X)):
        f = res.assignment[c]
        ax.plot([X[c, 0], F[f, 0]], [X[c, 1], F[f, 1]], color=colours[slot[c]], lw=0.5, alpha=0.4)
    ax.scatter(X[:, 0], X[:, 1], s=kwargs.get("s", 12), c=colours[slot], label="clients")
    closed = np.setdiff1d(np.arange(len(F)), res.centres)
    ax.scatter(F[closed, 0], F[closed, 1], marker="x", color="0.6", label="closed facilities")
    ax.scatter(
        F[res.centres, 0],
        F[res.centres, 1],
        marker="*",
        s=220,
        c=colours,
        edgecolors="k",
        label="centres",
    )
    ax.set_title(f"{res.objective} cost {res.cost:.4g} (k = {res.n_clusters})")
    legend_beside(ax)
    return ax


def _plot_loads(res, ax=None, **kwargs):
    """Load of each centre against its capacity."""
    ax = get_ax(ax)
    pos = np.arange(len(res.loads))
    ax.bar(pos, res.loads["capacity"], color="0.85", label="capacity")
    ax.bar(pos, res.loads["load"], width=0.5, label="load")
    ax.set_xticks(pos, [str(v) for v in res.loads["facility"]])
    ax.set_xlabel("centre")
    ax.set_ylabel("clients")
    legend_beside(ax)
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class FairRangeResults(Results):
    """Centres and assignment of a capacitated fair-range k-clustering fit.

    Attributes
    ----------
    centres : ndarray of int
        The open facilities (indices, sorted).
    assignment : ndarray of int, shape (n,)
        The facility index serving each client (the exact transportation optimum for these
        centres).
    cost : float
        ``sum_c d(c, sigma(c))`` (k-median) or of squared distances (k-means).
    lower_bound : float
        The larger of the LP relaxation and the MILP's dual bound (``-inf`` when not solved).
    lp_bound : float
        The LP relaxation's optimum.
    gap : float
        ``cost / lower_bound - 1``: the optimality gap to the bound.
    mip_gap : float
        HiGHS's relative MIP gap (NaN for the tree approximation).
    status : str
        ``"optimal"``, ``"time_limit"`` (MILP) or ``"approximation"`` (tree DP).
    loads : DataFrame
        Per centre: ``facility, load, capacity`` and its group memberships.
    group_counts : DataFrame
        Per group: ``group, count, lower, upper, within``.
    solver : str
        ``"milp"`` or ``"tree"``.
    wall_time_s : float
        Seconds the fit took (solve, assignment and bound).
    details : dict
        Tree method: the DP's tree costs and final costs per embedding, the embedding.

    Notes
    -----
    Vocabulary: ``n_clusters`` is the number of open centres k (``k`` is its old name, warns
    ``FutureWarning``); see :mod:`statcore.cluster`.
    """

    centres: np.ndarray
    assignment: np.ndarray
    cost: float
    lower_bound: float
    lp_bound: float
    gap: float
    mip_gap: float
    status: str
    objective: str
    n_clusters: int
    loads: pd.DataFrame
    group_counts: pd.DataFrame
    solver: str
    wall_time_s: float
    details: dict

    _plots: ClassVar[dict] = {"assignment": _plot_assignment, "loads": _plot_loads}

    k = renamed_attribute("k", "n_clusters")

    @property
    def feasible(self) -> bool:
        """Whether :meth:`constraint_violations` finds none: ``n_clusters`` centres, every
        client assigned to an open centre, loads within capacities, counts within ranges."""
        return not self.constraint_violations()

    def constraint_violations(self) -> list[str]:
        """The constraints this solution violates, as sentences (empty: feasible); the cost is
        also recomputed from the assignment. ``audit()`` is its old name (warns)."""
        problems = []
        model = self.model
        n_open = len(np.unique(self.centres))
        if n_open != self.n_clusters:
            problems.append(f"{n_open} centres instead of n_clusters = {self.n_clusters}")
        if not np.isin(self.assignment, self.centres).all():
            problems.append("a client is assigned to a closed facility")
        over = self.loads["load"] > self.loads["capacity"]
        if over.any():
            problems.append(f"centres over capacity: {list(self.loads['facility'][over])}")
        outside = ~self.group_counts["within"]
        if outside.any():
            problems.append(
                f"group counts outside the ranges: {list(self.group_counts['group'][outside])}"
            )
        if model is not None:
            n = len(self.assignment)
            recomputed = model.cost_matrix[np.arange(n), self.assignment].sum()
            if not np.isclose(recomputed, self.cost, rtol=1e-9, atol=1e-12):
                problems.append(f"the cost {self.cost} differs from the assignment's {recomputed}")
        return problems

    def tidy(self) -> pd.DataFrame:
        """One row per centre: ``term`` (the facility), ``estimate`` (its load), ``capacity``,
        ``utilisation`` and the group memberships."""
        frame = self.loads.rename(columns={"facility": "term", "load": "estimate"})
        frame.insert(2, "utilisation", frame["estimate"] / frame["capacity"].clip(lower=1))
        return frame

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["n_clusters"] = self.n_clusters
        row["objective"] = self.objective
        row["cost"] = self.cost
        row["lower_bound"] = self.lower_bound
        row["gap"] = self.gap
        row["mip_gap"] = self.mip_gap
        row["status"] = self.status
        row["wall_time_s"] = self.wall_time_s
        return row

    def summary(self, alpha: float = 0.05):
        report = super().summary(alpha)
        report.tables["groups"] = self.group_counts
        return report

    def _repr_lines(self) -> list[str]:
        return [
            f"{self.objective} cost={self.cost:.6g}, centres={self.centres.tolist()}, "
            f"gap to bound={self.gap:.3g}, status={self.status}"
        ]


renamed_method(FairRangeResults, "audit", "constraint_violations")
