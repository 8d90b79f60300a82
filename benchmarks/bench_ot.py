"""statcore.ot beside POT: dense log-domain Sinkhorn, and matrix-free Sinkhorn on point clouds.

Both sides solve to the same L1 marginal tolerance (POT's ``stopThr`` is checked on one
marginal, ours on both). Peak memory at large n is shown by ``python benchmarks/bench_ot.py``.
"""

import numpy as np
import ot
from scipy.spatial.distance import cdist

from statcore.ot import sinkhorn, sinkhorn_points

rng = np.random.default_rng(0)
x_small, y_small = rng.normal(size=(500, 2)), rng.normal(size=(500, 2)) + 0.5
cost_small = cdist(x_small, y_small, "sqeuclidean")
cost_small /= cost_small.max()
w_small = np.full(500, 1 / 500)
x_mid, y_mid = rng.normal(size=(1000, 10)), rng.normal(size=(1000, 10)) + 0.3
w_mid = np.full(1000, 1 / 1000)


def pot_points():
    cost = cdist(x_mid, y_mid)
    return ot.sinkhorn(w_mid, w_mid, cost, 0.5, method="sinkhorn_log", stopThr=1e-9)


CASES = [
    {
        "name": "dense Sinkhorn log, n=500, eps=0.05, tol 1e-9",
        "ours": lambda: sinkhorn(w_small, w_small, cost_small, 0.05, tol=1e-9),
        "anchor": lambda: ot.sinkhorn(
            w_small, w_small, cost_small, 0.05, method="sinkhorn_log", stopThr=1e-9
        ),
        "anchor_name": f"POT {ot.__version__} sinkhorn_log",
    },
    {
        "name": "points Sinkhorn (no cost matrix), n=1000, d=10, eps=0.5",
        "ours": lambda: sinkhorn_points(x_mid, y_mid, epsilon=0.5, tol=1e-9, plan=False),
        "anchor": pot_points,
        "anchor_name": f"POT {ot.__version__} cdist + sinkhorn_log",
    },
]


if __name__ == "__main__":
    import time
    import tracemalloc

    for n in (1_000, 5_000, 20_000):
        x, y = rng.normal(size=(n, 10)), rng.normal(size=(n, 10)) + 0.3
        tracemalloc.start()
        start = time.perf_counter()
        res = sinkhorn_points(x, y, epsilon=0.5, tol=1e-6)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(
            f"n={n}: {seconds:.1f} s, {res.n_iter} iterations, peak {peak:.1f} MiB "
            f"(dense cost would be {8 * n * n / 2**20:.0f} MiB)"
        )
