"""The tree route of capacitated fair-range clustering: a random hierarchically well-separated
tree embedding of the metric (Fakcharoenphol-Rao-Talwar) and the dynamic programme over it
that opens facilities under the capacities and the group ranges.

References
----------
Gadekar, A. and Thejaswi, S. Capacitated fair-range clustering: hardness and approximation
algorithms. arXiv:2505.15905.

Fakcharoenphol, J., Rao, S. and Talwar, K. (2004). A tight bound on approximating arbitrary
metrics by tree metrics. *JCSS* 69, 485-497.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from statcore.cluster import _fairrange_kernels as FK


def _frt_tree(metric, rng, *, squared):
    """FRT embedding of points with distance matrix ``metric``: returns ``parent``, ``weight``
    (length of the edge to the parent) and ``leaf_of`` (the tree node of each point).

    Levels ``i`` have radius ``r_i = beta 2^(i-1)``; a point's level-``i`` cluster centre is
    the first point of a random permutation within ``r_i`` of it; the edge above a level-``i``
    cluster has length ``r_{i+1}``, so tree distances dominate the metric. With ``squared``,
    the edges are re-weighted so that each tree distance is the square of the HST's (exact on
    an HST, whose distances depend only on the level of the common ancestor).
    """
    L = len(metric)
    positive = metric[metric > 0]
    if not positive.size:
        return np.array([-1, 0]), np.zeros(2), np.ones(L, dtype=np.int64)
    beta = 2.0 ** rng.uniform()
    perm = rng.permutation(L)
    rank = np.empty(L, dtype=np.int64)
    rank[perm] = np.arange(L)
    top = math.ceil(math.log2(positive.max() / beta)) + 2
    bottom = math.floor(math.log2(positive.min() / beta)) - 1
    radii = {i: beta * 2.0 ** (i - 1) for i in range(bottom, top + 1)}
    # height of each level above the leaves: h_i = sum_{j < i} r_{j+1}
    height, h = {}, 0.0
    for i in range(bottom, top + 1):
        height[i] = h
        h += radii[i + 1] if i + 1 in radii else 0.0
    if squared:
        height = {i: 2.0 * height[i] ** 2 for i in height}
    parent, weight, level = [-1], [0.0], [top]
    cluster = {0: np.arange(L)}
    for i in range(top - 1, bottom - 1, -1):
        new_cluster = {}
        for node, members in cluster.items():
            if len(members) == 1:
                new_cluster[node] = members
                continue
            within = metric[np.ix_(members, np.arange(L))] <= radii[i]
            # first point of the permutation within r_i of each member
            centre = np.argmin(np.where(within, rank[None, :], L), axis=1)
            if np.all(centre == centre[0]):
                new_cluster[node] = members  # no split: the next split spans the levels
                continue
            for c in np.unique(centre):
                parent.append(node)
                weight.append(height[level[node]] - height[i])
                level.append(i)
                new_cluster[len(parent) - 1] = members[centre == c]
        cluster = new_cluster
    leaf_of = np.empty(L, dtype=np.int64)
    for node, members in cluster.items():
        leaf_of[members] = node  # points at distance 0 share a leaf
        # a cluster that stopped splitting early reaches down to the bottom level, so that
        # every leaf-to-ancestor length is the ancestor's height (the squared re-weighting
        # relies on it)
        weight[node] += height[level[node]] - height[bottom]
    return np.array(parent), np.array(weight), leaf_of


@dataclass
class _Tree:
    """A rooted tree for the DP: ``parent`` (root -1, parents before children), edge
    ``weight`` per client unit, ``demand`` of clients per node, ``facility`` index of the
    facility leaves (-1 for other nodes)."""

    parent: np.ndarray
    weight: np.ndarray
    demand: np.ndarray
    facility: np.ndarray


def _dp_tree(parent, weight, leaf_of, demand, hang, hang_len) -> _Tree:
    """Add the demand of each point to its leaf and hang each facility below its point's
    leaf, returning nodes in an order where parents come before children."""
    parent = np.asarray(parent, dtype=np.int64)
    n_nodes = len(parent)
    m = len(hang)
    node_demand = np.zeros(n_nodes, dtype=np.int64)
    np.add.at(node_demand, leaf_of, demand)
    children = [[] for _ in range(n_nodes)]
    for v in range(n_nodes):
        if parent[v] >= 0:
            children[parent[v]].append(v)
    order, stack = [], [int(np.flatnonzero(parent < 0)[0])]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(children[v])
    new_id = {v: i for i, v in enumerate(order)}
    total = n_nodes + m
    p = np.full(total, -1, dtype=np.int64)
    w = np.zeros(total)
    d = np.zeros(total, dtype=np.int64)
    fac = np.full(total, -1, dtype=np.int64)
    for v in order:
        i = new_id[v]
        p[i] = new_id[parent[v]] if parent[v] >= 0 else -1
        w[i] = weight[v]
        d[i] = node_demand[v]
    for f in range(m):
        i = n_nodes + f
        p[i] = new_id[int(leaf_of[hang[f]])]
        w[i] = hang_len[f]
        fac[i] = f
    return _Tree(p, w, d, fac)


def _unit_demands(demand, unit) -> np.ndarray:
    """Demands in units of ``unit`` clients, rounded by largest remainders (total preserved)."""
    exact = demand / unit
    out = np.floor(exact).astype(np.int64)
    short = int(round(demand.sum() / unit)) - out.sum()
    if short > 0:
        out[np.argsort(out - exact)[:short]] += 1
    return out


def _run_dp(model, dp, tree, resolution):
    """The DP at the coarsest unit that finds a solution (halving it when rounding the
    capacities down leaves none); returns the centres and the tree cost."""
    n = model.nobs
    unit = max(1, math.ceil(n / resolution))
    while True:
        found = _tree_dp(model, dp, tree, unit)
        if found is not None:
            centres, tree_cost = found
            S = np.asarray(centres)
            if model.capacities[S].sum() >= n:
                return S, tree_cost
        if unit == 1:
            raise RuntimeError(
                "the tree DP found no feasible solution"
            )  # excluded by _check_feasible
        unit = max(1, unit // 2)


def _tree_dp(model, dp, tree, unit):
    """One bottom-up pass and the backtrack; None when the root has no feasible state."""
    n_nodes = len(tree.parent)
    demand = np.zeros(n_nodes, dtype=np.int64)
    is_fac = tree.facility >= 0
    demand[~is_fac] = _unit_demands(tree.demand[~is_fac], unit)
    caps = np.zeros(n_nodes, dtype=np.int64)
    caps[is_fac] = model.capacities[tree.facility[is_fac]] // unit
    total = int(demand.sum())
    weight = tree.weight * unit
    children = [[] for _ in range(n_nodes)]
    for v in range(1, n_nodes):
        children[tree.parent[v]].append(v)
    V = len(dp.vectors)
    tables, lows, sub_demand, sub_cap, records = {}, {}, {}, {}, {}
    for v in range(n_nodes - 1, -1, -1):
        if is_fac[v]:
            continue  # merged into its parent by add_facility
        T = np.full((V, 1), np.inf)
        T[0, 0] = 0.0
        lo, nd, nc = int(demand[v]), int(demand[v]), 0
        rec = []
        for c in children[v]:
            if is_fac[c]:
                nc += caps[c]
                lo_r, hi_r = -min(total - nd, nc), nd
                tau = model.facility_type[tree.facility[c]]
                R, choice = FK.add_facility(
                    T, lo, dp.unit[tau], int(caps[c]), float(weight[c]), lo_r, hi_r
                )
                rec.append(("facility", c, choice, lo, T.shape[1], lo_r))
            else:
                B = FK.add_edge_cost(tables.pop(c), lows[c], weight[c])
                nd += sub_demand[c]
                nc += sub_cap[c]
                lo_r, hi_r = -min(total - nd, nc), nd
                R, choice = FK.merge_tables(T, lo, B, lows[c], lo_r, hi_r, dp.add)
                rec.append(("subtree", c, choice, lo, T.shape[1], lo_r))
            T, lo = R, lo_r
        tables[v], lows[v], sub_demand[v], sub_cap[v], records[v] = T, lo, nd, nc, rec
    root_table, root_lo = tables[0], lows[0]
    values = np.where(dp.root_ok, root_table[:, -root_lo], np.inf)
    if not np.isfinite(values.min()):
        return None
    i_best = int(np.argmin(values))
    centres = []
    stack = [(0, i_best, -root_lo)]
    while stack:
        v, i, j = stack.pop()
        for kind, c, choice, lo_prev, g_prev, lo_cur in reversed(records[v]):
            phi = lo_cur + j
            if kind == "facility":
                served = int(choice[i, j])
                if served >= 0:
                    centres.append(int(tree.facility[c]))
                    i = int(dp.minus[model.facility_type[tree.facility[c]], i])
                    phi += served
                j = phi - lo_prev
            else:
                packed = int(choice[i, j])
                ia, ja = divmod(packed, g_prev)
                ib = int(dp.sub[i, ia])
                phi_b = phi - (lo_prev + ja)
                stack.append((c, ib, phi_b - lows[c]))
                i, j = ia, ja
    return centres, float(values[i_best])
