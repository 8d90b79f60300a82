"""Pareto frontier (skyline) of benchmark-risk vectors against the paretoset package.

The anchor is ``paretoset.paretoset(R, sense=["min"] * K, distinct=False)``: its numba
block-nested-loops skyline. ``distinct=False`` keeps every copy of a frontier row, as ours does
(the default, ``distinct=True``, keeps only the first copy); each case checks in its setup that
both return the same mask. Ours: a pivot prefilter, then a sort and a sweep for two and three
benchmarks, a sort-filter skyline in numba for more.

Cases: a noisy simplex (risks that trade off, so the frontier is large) and a uniform cube (the
frontier is tiny, and sorting every row costs more than the anchor's whole pass).
"""

import numpy as np
import paretoset

from statcore.theory import pareto_frontier

_data = {}


def _noisy_simplex(rng, M, K):
    return rng.dirichlet(np.ones(K), size=M) + 0.3 * rng.uniform(size=(M, K))


def _cube(rng, M, K):
    return rng.uniform(size=(M, K))


def _anchor(R):
    return paretoset.paretoset(R, sense=["min"] * R.shape[1], distinct=False)


def _case(shape, M, K):
    key = (shape.__name__.strip("_").replace("_", " "), M, K)

    def setup():
        if key not in _data:
            R = shape(np.random.default_rng(0), M, K)
            assert np.array_equal(pareto_frontier(R), _anchor(R))
            _data[key] = R

    return {
        "name": f"Pareto frontier, {key[0]}, M={M}, K={K}",
        "setup": setup,
        "ours": lambda: pareto_frontier(_data[key]),
        "anchor": lambda: _anchor(_data[key]),
        "anchor_name": f"paretoset {paretoset.__version__} (distinct=False)",
    }


CASES = [
    _case(_noisy_simplex, 100_000, 3),
    _case(_cube, 100_000, 3),
    _case(_noisy_simplex, 20_000, 5),
    _case(_noisy_simplex, 20_000, 2),
]
