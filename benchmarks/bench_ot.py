"""statcore.ot beside POT: dense log-domain Sinkhorn, and matrix-free Sinkhorn on point clouds.

Tolerances: ours stops on the L1 error of both marginals, POT's ``stopThr`` on the L2 error of
one (checked every 10 iterations), a looser test. The dense cases give POT ``stopThr``; the
point cases run it for the number of iterations that the case's setup found it needs for an
L1 error of both marginals within the tolerance (POT run in blocks of 10 iterations with warm
starts, 10 being the step of its own check). At d = 10 and eps = 0.05 (costs ~4.5, so eps is
1% of them) plain Sinkhorn, which POT's ``sinkhorn_log`` is, needs far more than 10^4
iterations to 1e-9, so there the table has (a) a per-iteration case, both sides running
exactly 10 plain iterations, and (b) a case to L1 error 1e-4. At n = 5000 two cases run POT
to the L1 tolerance itself (eps = 0.2 to 1e-9, eps = 0.1 to 1e-6: POT needs minutes, so each
side is measured once). The last two cases measure peak memory at n = m = 10,000 and 20,000:
``sinkhorn_points`` run to convergence beside POT run for one iteration (its memory is its
n x m matrices, whatever the iteration count). At 20,000, where the cost matrix alone takes
3 GiB, POT's ``sinkhorn_log`` was killed by the kernel's out-of-memory killer on a 24 GiB
machine, so that row has no anchor. ``python benchmarks/bench_ot.py`` prints iteration
counts and the run to 1e-9.
"""

import warnings

import numpy as np
import ot
from scipy.spatial.distance import cdist

from statcore.exceptions import ConvergenceWarning
from statcore.ot import sinkhorn, sinkhorn_points

POT = f"POT {ot.__version__}"
rng = np.random.default_rng(0)
x_small, y_small = rng.normal(size=(500, 2)), rng.normal(size=(500, 2)) + 0.5
cost_small = cdist(x_small, y_small, "sqeuclidean")
cost_small /= cost_small.max()
w_small = np.full(500, 1 / 500)
_clouds = {}


def clouds(n):
    if n not in _clouds:
        gen = np.random.default_rng(n)
        _clouds[n] = (gen.normal(size=(n, 10)), gen.normal(size=(n, 10)) + 0.3)
    return _clouds[n]


def pot(n, eps, **options):
    x, y = clouds(n)
    w = np.full(n, 1 / n)
    return ot.sinkhorn(w, w, cdist(x, y), eps, method="sinkhorn_log", **options)


def pot_l1_error(plan, n):
    return np.abs(plan.sum(1) - 1 / n).sum() + np.abs(plan.sum(0) - 1 / n).sum()


def pot_to(n, eps, tol, limit=5000):
    """POT run to an L1 marginal error ``tol``: blocks of 10 iterations, warm started.

    Returns the plan and the iterations it took. Each block costs POT one more ``-C / eps``
    and one more plan than a single call would: three passes over the n x m matrix, against
    the two log-sum-exps over it that each of its 10 iterations makes.
    """
    x, y = clouds(n)
    w, cost = np.full(n, 1 / n), cdist(x, y)
    warm, done = None, 0
    while done < limit:
        plan, log = ot.sinkhorn(
            w,
            w,
            cost,
            eps,
            method="sinkhorn_log",
            numItermax=10,
            stopThr=0.0,
            warmstart=warm,
            log=True,
            warn=False,
        )
        done += 10
        if pot_l1_error(plan, n) <= tol:
            return plan, done
        warm = (log["log_u"], log["log_v"])
    raise RuntimeError(f"POT did not reach {tol} in {limit} iterations")


def pot_iterations_to(n, eps, tol, limit=5000):
    """POT's iterations to an L1 marginal error ``tol``."""
    return pot_to(n, eps, tol, limit)[1]


_needed = {}


def _need(n, eps, tol):
    def setup():
        if (n, eps, tol) not in _needed:
            _needed[n, eps, tol] = pot_iterations_to(n, eps, tol)

    return setup


def ours_plain(n, eps, iterations):
    x, y = clouds(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return sinkhorn_points(
            x, y, epsilon=eps, tol=1e-300, maxiter=iterations, epsilon_scaling=None, plan=False
        )


CASES = (
    [
        {
            "name": "dense Sinkhorn log, n=500, eps=0.05, tol 1e-9",
            "ours": lambda: sinkhorn(w_small, w_small, cost_small, 0.05, tol=1e-9),
            "anchor": lambda: ot.sinkhorn(
                w_small, w_small, cost_small, 0.05, method="sinkhorn_log", stopThr=1e-9
            ),
            "anchor_name": f"{POT} sinkhorn_log",
        },
        {
            "name": "dense Sinkhorn scaling, n=500, eps=0.05, tol 1e-9",
            "ours": lambda: sinkhorn(
                w_small, w_small, cost_small, 0.05, tol=1e-9, method="standard"
            ),
            "anchor": lambda: ot.sinkhorn(w_small, w_small, cost_small, 0.05, stopThr=1e-9),
            "anchor_name": f"{POT} sinkhorn",
        },
    ]
    + [
        {
            "name": f"points Sinkhorn (no cost matrix), n={n}, d=10, eps=0.5, tol 1e-9",
            "ours": lambda n=n: sinkhorn_points(*clouds(n), epsilon=0.5, tol=1e-9, plan=False),
            "setup": _need(n, 0.5, 1e-9),
            "anchor": lambda n=n: pot(
                n, 0.5, numItermax=_needed[n, 0.5, 1e-9], stopThr=0.0, warn=False
            ),
            "anchor_name": f"{POT} cdist + sinkhorn_log (iterations it needs)",
        }
        for n in (1000, 5000)
    ]
    + [
        {
            "name": (
                f"points Sinkhorn n={n}, d=10, eps=0.05: 10 plain iterations each (per-iteration)"
            ),
            "setup": lambda n=n: clouds(n),
            "ours": lambda n=n: ours_plain(n, 0.05, 10),
            "anchor": lambda n=n: pot(n, 0.05, numItermax=10, stopThr=0.0, warn=False),
            "anchor_name": f"{POT} cdist + sinkhorn_log",
        }
        for n in (1000, 5000)
    ]
    + [
        {
            "name": "points Sinkhorn n=1000, d=10, eps=0.05, to L1 marginal error 1e-4",
            "setup": _need(1000, 0.05, 1e-4),
            "ours": lambda: sinkhorn_points(*clouds(1000), epsilon=0.05, tol=1e-4, plan=False),
            "anchor": lambda: pot(
                1000, 0.05, numItermax=_needed[1000, 0.05, 1e-4], stopThr=0.0, warn=False
            ),
            "anchor_name": f"{POT} cdist + sinkhorn_log (iterations it needs)",
        },
    ]
    + [
        {
            "name": f"points Sinkhorn n=5000, d=10, eps={eps}, to L1 marginal error {tol:g}",
            "setup": lambda: clouds(5000),
            "ours": lambda eps=eps, tol=tol: sinkhorn_points(
                *clouds(5000), epsilon=eps, tol=tol, plan=False
            ),
            "anchor": lambda eps=eps, tol=tol: pot_to(5000, eps, tol),
            "anchor_name": f"{POT} cdist + sinkhorn_log to the same L1 error (checked every 10)",
            # POT ran for 1 (eps = 0.2) and 3.4 (eps = 0.1) minutes a call
            "repeat": 1,
        }
        for eps, tol in ((0.2, 1e-9), (0.1, 1e-6))
    ]
    + [
        {
            "name": f"points Sinkhorn n=m={n}, d=10, eps=0.5, tol 1e-6 (peak memory only)",
            "setup": lambda n=n: clouds(n),
            "ours": lambda n=n: sinkhorn_points(*clouds(n), epsilon=0.5, tol=1e-6),
            "anchor": anchor,
            "anchor_name": anchor_name,
            "timed": False,
            "peak_memory": True,
        }
        for n, anchor, anchor_name in (
            # POT's memory does not grow with its iterations: one is enough to measure it
            (
                10_000,
                lambda: pot(10_000, 0.5, numItermax=1, stopThr=0.0, warn=False),
                f"{POT} cdist + sinkhorn_log (1 iteration)",
            ),
            (20_000, None, "none: POT was killed for memory (24 GiB machine, 23 GiB resident)"),
        )
    ]
)


if __name__ == "__main__":
    import time

    for n, eps, tol in (
        (1000, 0.5, 1e-9),
        (5000, 0.5, 1e-9),
        (1000, 0.05, 1e-4),
        (5000, 0.05, 1e-4),
        (1000, 0.05, 1e-9),
    ):
        start = time.perf_counter()
        res = sinkhorn_points(*clouds(n), epsilon=eps, tol=tol, plan=False, maxiter=20_000)
        print(
            f"ours n={n} eps={eps} tol={tol:g}: {time.perf_counter() - start:.1f} s, "
            f"{res.n_iter} iterations, L1 marginal error {res.marginal_error:.2g}",
            flush=True,
        )
        if tol >= 1e-4 and n <= 1000:
            print(f"  POT needs {pot_iterations_to(n, eps, tol)} iterations", flush=True)
    for n in (1000, 5000):
        start = time.perf_counter()
        plan, log = pot(n, 0.05, numItermax=200, stopThr=0.0, warn=False, log=True)
        seconds = time.perf_counter() - start
        print(
            f"POT n={n} eps=0.05: {seconds / 200 * 1e3:.0f} ms per iteration, L1 marginal "
            f"error {pot_l1_error(plan, n):.2g} after 200 iterations",
            flush=True,
        )
