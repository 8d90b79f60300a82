"""DataShifts at its defaults beside POT's single Sinkhorn solve, and at N = 20,000 per domain.

The issue's case: N = 1,500 per domain, d = 10, a mean shift of 4 along a unit vector, labels
linear in x plus noise. Ours is the whole default fit (nine OT problems: the full coupling, four
half-sample self terms, four cross and same-law half pairs, epsilon="auto", tol="auto"); the
anchor is ``ot.sinkhorn2`` of POT solving only the single full-sample problem at the same
epsilon and tolerance (its cost matrix included), so a speed-up above 1 means the whole
estimator costs less than one plain solve; a second case takes POT's exact ``emd2`` of the full
problem (network simplex) as the anchor. POT's ``stopThr`` is the L2 error of the column
marginals, checked every 10 sweeps, ours the L1 error of the rows: at the same number POT's
stop is the looser one (10 sweeps here). When the authors' ``datashifts`` package is
installed (torch, geomloss, KeOps) it is timed too. The N = 20,000 case fits without
subsampling in O(N) memory (matrix-free kernels; no anchor could hold its 3.2 GB couplings).

``python benchmarks/bench_shift.py`` also checks the default estimates against a solve to
1e-7 (minutes: the same-law half pairs need tens of thousands of sweeps at that tolerance) and
prints the N = 20,000 fit.
"""

import numpy as np
import ot

from statcore.shift import DataShifts, simulate

sample = simulate.linear_shift(1500, dim=10, mean_shift=4.0, random_state=0)
args = (sample["x_source"], sample["y_source"], sample["x_target"], sample["y_target"])
MODEL = DataShifts(*args)


def ours():
    return MODEL.fit(random_state=0)


TOL = ours().tol


def pot_full_problem():
    cost = ot.dist(args[0], args[2], metric="euclidean")
    weights = np.full(len(args[0]), 1.0 / len(args[0]))
    return ot.sinkhorn2(weights, weights, cost, MODEL.epsilon, stopThr=TOL, numItermax=100_000)


def pot_exact_problem():
    """One exact OT of the full samples (network simplex): the issue's anchor."""
    cost = ot.dist(args[0], args[2], metric="euclidean")
    weights = np.full(len(args[0]), 1.0 / len(args[0]))
    return ot.emd2(weights, weights, cost, numItermax=10_000_000)


_big = {}


def big_setup(n):
    def setup():
        if n not in _big:
            _big[n] = simulate.linear_shift(n, dim=10, mean_shift=4.0, random_state=1)

    return setup


def ours_big(n):
    data = _big[n]
    return DataShifts(data["x_source"], data["y_source"], data["x_target"], data["y_target"]).fit(
        random_state=0
    )


CASES = [
    {
        "name": "DataShifts default fit N=1500 per domain, d=10 (nine OT problems)",
        "ours": ours,
        "anchor": pot_full_problem,
        "anchor_name": f"POT {ot.__version__} sinkhorn2, the full problem only, same eps and tol",
        "repeat": 3,
    },
    {
        "name": "DataShifts default fit N=1500 per domain, d=10, vs one exact OT",
        "ours": ours,
        "anchor": pot_exact_problem,
        "anchor_name": f"POT {ot.__version__} emd2, the full problem only",
        "repeat": 3,
    },
    {
        "name": "DataShifts default fit N=20000 per domain, d=10, no subsampling",
        "setup": big_setup(20_000),
        "ours": lambda: ours_big(20_000),
        "anchor": None,
        "anchor_name": "none (the dense couplings would take 3.2 GB each)",
        "timed": False,
        "peak_memory": True,
    },
]

try:
    import datashifts
except ImportError:  # the authors' package is an optional anchor
    pass
else:

    def authors():
        return datashifts.DataShifts(
            args[0], args[2], args[1], args[3], seed=0, device="cpu", verbose=False
        )

    CASES.append(
        {
            "name": "DataShifts N=1500 per domain, d=10, each package at its defaults",
            "ours": ours,
            "anchor": authors,
            "anchor_name": f"datashifts {datashifts.__version__}",
            "repeat": 3,
        }
    )

if __name__ == "__main__":
    import resource
    import time

    default = ours()
    tight = MODEL.fit(random_state=0, tol=1e-7, maxiter=100_000)
    gap = (default.params / tight.params - 1).abs()
    print(f"default vs tol=1e-7: relative differences {gap.round(6).to_dict()}")
    big_setup(20_000)()
    start = time.perf_counter()
    res = ours_big(20_000)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"N=20,000 per domain, no subsampling: {time.perf_counter() - start:.0f} s, "
        f"peak resident set {peak:.0f} MiB"
    )
    print(res.summary())
