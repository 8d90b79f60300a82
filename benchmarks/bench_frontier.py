"""Pareto frontier (skyline) of benchmark-risk vectors beside two numpy references.

paretoset is not installed here, so the anchors are (a) the numpy "cull" loop that paretoset's
default path and the usual recipe use (take the next surviving point, drop every point it
dominates, vectorised over the rest; our reading of it, continuous data so copies do not arise)
and (b) the O(M^2 K) definition, blocked (the tests' reference). Ours: a lexicographic sort and a
sweep for two benchmarks, a sort-filter skyline in numba otherwise. Each case checks that both
sides return the same frontier before timing.
"""

import numpy as np

from statcore.theory import pareto_frontier
from statcore.theory.pareto_masks import _brute_force_mask

_data = {}


def setup():
    if not _data:
        rng = np.random.default_rng(0)
        # risks that trade off (a noisy simplex), so the frontier is not tiny
        for K, M in ((2, 20_000), (5, 20_000), (3, 3_000)):
            base = rng.dirichlet(np.ones(K), size=M)
            _data[(K, M)] = base + 0.3 * rng.uniform(size=(M, K))
        for R in _data.values():
            assert np.array_equal(pareto_frontier(R), _numpy_cull(R))


def _numpy_cull(costs):
    efficient = np.arange(len(costs))
    rest = costs
    i = 0
    while i < len(rest):
        keep = np.any(rest < rest[i], axis=1)
        keep[i] = True
        efficient, rest = efficient[keep], rest[keep]
        i = int(np.sum(keep[:i])) + 1
    mask = np.zeros(len(costs), dtype=bool)
    mask[efficient] = True
    return mask


def _case(K, M, anchor, anchor_name):
    return {
        "name": f"Pareto frontier, M={M}, K={K}",
        "setup": setup,
        "ours": lambda: pareto_frontier(_data[(K, M)]),
        "anchor": lambda: anchor(_data[(K, M)]),
        "anchor_name": anchor_name,
    }


CASES = [
    _case(2, 20_000, _numpy_cull, "numpy cull loop (paretoset-style)"),
    _case(5, 20_000, _numpy_cull, "numpy cull loop (paretoset-style)"),
    _case(3, 3_000, lambda R: _brute_force_mask(R, np.zeros(3)), "brute force O(M^2 K), numpy"),
]
