"""InfoAtlas (the shipped checkpoint, 4-fold cross-fitted) beside KSG and a MINE trained to
convergence, at n = 5,000, on two designs: a Gaussian copula with d = 5 per side
(per-coordinate rho = 0.5, true MI 0.7192 nats) and y = x^2 + 0.5 e, d = 1 (true MI 0.8027
nats by quadrature), where a correlation-based critic sees nothing.

- ours: ``InfoAtlas.pretrained().estimate(x, y, n_resamples=0)``: copula transform, then for
  each of 4 folds the critic grids decoded from the other folds and the DV readout with 10
  permutations on the fold; the Gaussian head is off.
- anchors: statcore's KSG (k = 3, exact max-norm kNN on the shared search) and MINE
  (2 x 64 ReLU critic, batch 128, 2,000 Adam steps, read on a held-out half); the paper
  claims >= 100x over trained estimators.

The harness reports times only; ``python benchmarks/bench_mi.py`` prints time and absolute
error side by side from one run.
"""

import time

from mlcore.mi import InfoAtlas, critic_mutual_information
from statcore.geometry.mi_designs import (
    gaussian_copula_mi,
    gaussian_copula_sample,
    squared_noise_mi,
    squared_noise_sample,
)
from statcore.geometry.mutual_information import ksg_mutual_information

N, DIM, RHO, SIGMA = 5000, 5, 0.5, 0.5
MINE_STEPS = 2000
_data = {}


def setup():
    if not _data:
        _data["copula"] = gaussian_copula_sample(N, rho=RHO, dim=DIM, random_state=0)
        _data["squared"] = squared_noise_sample(N, sigma=SIGMA, random_state=0)
        _data["truth"] = {
            "copula": gaussian_copula_mi(RHO, DIM),
            "squared": squared_noise_mi(SIGMA),
        }
        _data["atlas"] = InfoAtlas.pretrained()


def _infoatlas(design):
    return _data["atlas"].estimate(*_data[design], n_resamples=0, random_state=0).estimate


def _ksg(design):
    return ksg_mutual_information(*_data[design], scale="rank").estimate


def _mine(design):
    return critic_mutual_information(
        *_data[design], method="mine", maxiter=MINE_STEPS, random_state=0
    ).estimate


CASES = [
    {
        "name": f"MI, InfoAtlas vs KSG (k=3), Gaussian copula n={N}, d={DIM}",
        "setup": setup,
        "ours": lambda: _infoatlas("copula"),
        "anchor": lambda: _ksg("copula"),
        "anchor_name": "statcore KSG (numba)",
    },
    {
        "name": f"MI, InfoAtlas vs MINE ({MINE_STEPS} steps), Gaussian copula n={N}, d={DIM}",
        "setup": setup,
        "ours": lambda: _infoatlas("copula"),
        "anchor": lambda: _mine("copula"),
        "anchor_name": "MINE (mlcore.mi, torch)",
        "repeat": 1,
    },
    {
        "name": f"MI, InfoAtlas vs KSG (k=3), y = x^2 + {SIGMA} e, n={N}",
        "setup": setup,
        "ours": lambda: _infoatlas("squared"),
        "anchor": lambda: _ksg("squared"),
        "anchor_name": "statcore KSG (numba)",
    },
]


if __name__ == "__main__":
    setup()
    _infoatlas("copula"), _ksg("copula")  # warm-up: numba and torch first calls are not timed
    for design in ("copula", "squared"):
        truth = _data["truth"][design]
        rows = []
        for name, fn, repeat in (
            ("InfoAtlas (4 folds)", _infoatlas, 5),
            ("KSG", _ksg, 3),
            ("MINE", _mine, 1),
        ):
            times = []
            for _ in range(repeat):  # best of `repeat`, as the harness does
                start = time.perf_counter()
                est = fn(design)
                times.append(time.perf_counter() - start)
            rows.append((name, min(times), est))
        base = rows[0][1]
        print(f"{design}: n={N}, true MI {truth:.4f} nats")
        for name, sec, est in rows:
            err = abs(est - truth)
            print(f"  {name:22s} {sec:8.3f} s  x{sec / base:8.1f}  estimate {est:.4f}  "
                  f"|error| {err:.4f}")  # fmt: skip
    print(f"(machine load: {open('/proc/loadavg').read().split()[:3]})")  # noqa: SIM115
