"""DataShifts beside the authors' ``datashifts`` package (when installed: torch, geomloss, KeOps).

The anchor subsamples to N_max and runs a fixed annealing budget in float32; ours uses every
point and iterates each Sinkhorn problem to an L1 marginal error of 1e-5. A peak-memory case
fits N = 20,000 per domain without subsampling (ours only; the table gives its time too), and
``python benchmarks/bench_shift.py`` runs that fit once and prints its summary.
"""

from statcore.shift import DataShifts, simulate

sample = simulate.linear_shift(400, dim=5, mean_shift=1.0, random_state=0)
args = (sample["x_source"], sample["y_source"], sample["x_target"], sample["y_target"])


def ours():
    return DataShifts(*args, epsilon=0.05).fit(random_state=0)


_big = {}


def big_setup(n):
    def setup():
        if n not in _big:
            _big[n] = simulate.linear_shift(n, dim=5, mean_shift=1.0, random_state=1)

    return setup


def ours_big(n):
    data = _big[n]
    return DataShifts(
        data["x_source"], data["y_source"], data["x_target"], data["y_target"], epsilon=0.5
    ).fit(random_state=0)


MEMORY = [
    {
        "name": "DataShifts N=20000 per domain, d=5, eps=0.5, no subsampling (peak memory only)",
        "setup": big_setup(20_000),
        "ours": lambda: ours_big(20_000),
        "anchor": None,
        "anchor_name": "none (the dense couplings would take 3.2 GB each)",
        "timed": False,
        "peak_memory": True,
    }
]

try:
    import datashifts
except ImportError:  # the anchor is optional: no timed case without it
    CASES = MEMORY
else:

    def anchor():
        return datashifts.DataShifts(
            args[0], args[2], args[1], args[3], eps=0.05, seed=0, device="cpu", verbose=False
        )

    CASES = [
        {
            "name": "DataShifts N=400 per domain, d=5, eps=0.05",
            "ours": ours,
            "anchor": anchor,
            "anchor_name": f"datashifts {datashifts.__version__}",
        }
    ] + MEMORY

if __name__ == "__main__":
    import resource
    import time

    big_setup(20_000)()
    start = time.perf_counter()
    res = ours_big(20_000)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"N=20,000 per domain, no subsampling: {time.perf_counter() - start:.0f} s, "
        f"peak resident set {peak:.0f} MiB"
    )
    print(res.summary())
