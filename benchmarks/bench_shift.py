"""DataShifts beside the authors' ``datashifts`` package (when installed: torch, geomloss, KeOps).

The anchor subsamples to N_max and runs a fixed annealing budget in float32; ours uses every
point and iterates each Sinkhorn problem to an L1 marginal error of 1e-5.
"""

from statcore.shift import DataShifts, simulate

sample = simulate.linear_shift(400, dim=5, mean_shift=1.0, random_state=0)
args = (sample["x_source"], sample["y_source"], sample["x_target"], sample["y_target"])


def ours():
    return DataShifts(*args, epsilon=0.05).fit(random_state=0)


try:
    import datashifts
except ImportError:  # the anchor is optional: no case without it
    CASES = []
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
    ]

if __name__ == "__main__":
    import time

    big = simulate.linear_shift(20_000, dim=5, mean_shift=1.0, random_state=1)
    start = time.perf_counter()
    res = DataShifts(
        big["x_source"], big["y_source"], big["x_target"], big["y_target"], epsilon=0.5
    ).fit(random_state=0)
    print(f"N=20,000 per domain, no subsampling: {time.perf_counter() - start:.0f} s")
    print(res.summary())
