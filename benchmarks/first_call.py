"""First call of each numba area in a fresh process against the warm call, after ``make install``.

    python benchmarks/first_call.py

``make install`` runs :func:`statcore.warmup`, which fills numba's on-disk cache; each area's
first call in a new process then only loads its kernels. For each area a fresh interpreter
imports the area, times one call (the first), then the same call again (warm), and prints both
and their difference (goal: within 1 s). Not a timed test: a report, like ``make bench``.
"""

import subprocess
import sys

CALLS = {
    "quantreg": (
        "from statcore.quantreg import QuantReg; import numpy as np; r = np.random.default_rng(0);"
        " X = r.normal(size=(2000, 3)); y = X @ [1, -1, 0.5] + r.normal(size=2000)",
        "QuantReg(y, X, q=0.5).fit(cov_type='nid')",
    ),
    "manifold": (
        "from statcore.manifold import Sphere, mmdd_test, simulate;"
        " Y, X = simulate.draw('sphere', 'mean_shift', 300, random_state=0)",
        "mmdd_test(Y, X, Sphere(2), n_resamples=99, random_state=0)",
    ),
    "ot": (
        "from statcore.ot import sinkhorn_divergence; import numpy as np;"
        " r = np.random.default_rng(0); x, y = r.normal(size=(500, 2)), r.normal(size=(400, 2))",
        "sinkhorn_divergence(x, y, epsilon=0.5)",
    ),
    "cluster": (
        "from statcore.cluster import Coreset; from statcore.cluster.simulate import"
        " imbalanced_blobs; X = imbalanced_blobs(20000, 5, 5, random_state=0)[0]",
        "Coreset(X, 5).fit(size=1000, random_state=0).solve(random_state=0)",
    ),
    "geometry": (
        "from statcore.geometry import LocalID, ksg_mutual_information; import numpy as np;"
        " r = np.random.default_rng(0); X = r.normal(size=(5000, 3))",
        "LocalID(X).fit(k=10); ksg_mutual_information(X[:, :1], X[:, 1:])",
    ),
    "theory": (
        "from statcore.theory import pareto_frontier; import numpy as np;"
        " R = np.random.default_rng(0).uniform(size=(20000, 3))",
        "pareto_frontier(R)",
    ),
}

SCRIPT = """
import time, warnings
warnings.simplefilter("ignore")
{setup}
t = time.perf_counter(); {call}; first = time.perf_counter() - t
t = time.perf_counter(); {call}; warm = time.perf_counter() - t
print(first, warm)
"""


def main():
    print("| area | first call (s) | warm call (s) | first - warm (s) |")
    print("|:---|---:|---:|---:|")
    for area, (setup, call) in CALLS.items():
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT.format(setup=setup, call=call)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        first, warm = float(out[-2]), float(out[-1])
        print(f"| {area} | {first:.3f} | {warm:.3f} | {first - warm:.3f} |")


if __name__ == "__main__":
    main()
