"""The CHB hardness fingerprint of n = 100,000 points beside the pieces a user would glue together.

Data: five Gaussian classes in d = 10 with per-class scales 0.5 to 2.5 and sizes in ratio
1 : 2 : 3 : 4 : 5. Ours is the whole default fit: twelve coordinates, the pairwise ones on a
class-stratified subsample of 10,000 points (silhouette, margins, kNN purity and density, the
H0 spanning trees), Davies-Bouldin and the radii on every point, 300 greedy-permutation
landmarks over all points for H1, and 200 within-class bootstrap replicates. The anchor does
less: scikit-learn's ``silhouette_score`` on a 10,000-point sample and ``davies_bouldin_score``,
plus ripser's H1 with ``n_perm=300`` (its own greedy permutation over all points). A speed-up
above 1 means the full fingerprint costs less than those three calls.

``python benchmarks/bench_cluster_hardness.py`` prints one fit's time and its coordinates.
"""

import time

import numpy as np
from ripser import ripser
from sklearn.metrics import davies_bouldin_score, silhouette_score

from statcore.cluster.hardness import HardnessFingerprint

N, D, CLASSES = 100_000, 10, 5
DATA = {}


def setup():
    if DATA:
        return
    gen = np.random.default_rng(0)
    sizes = np.arange(1, CLASSES + 1) * N // (CLASSES * (CLASSES + 1) // 2)
    sizes[-1] += N - sizes.sum()
    y = np.repeat(np.arange(CLASSES), sizes)
    centres = gen.normal(scale=4.0, size=(CLASSES, D))
    scales = np.linspace(0.5, 2.5, CLASSES)[y]
    DATA["X"] = centres[y] + scales[:, None] * gen.normal(size=(N, D))
    DATA["y"] = y


def ours():
    return HardnessFingerprint(DATA["X"], DATA["y"]).fit(random_state=0)


def anchor():
    X, y = DATA["X"], DATA["y"]
    silhouette = silhouette_score(X, y, sample_size=10_000, random_state=0)
    davies_bouldin = davies_bouldin_score(X, y)
    diagram = ripser(X, maxdim=1, n_perm=300)["dgms"][1]
    return silhouette, davies_bouldin, diagram


CASES = [
    {
        "name": f"hardness fingerprint, n={N:,}, d={D}, K={CLASSES} (300 landmarks, 200 resamples)",
        "setup": setup,
        "ours": ours,
        "anchor": anchor,
        "anchor_name": "sklearn silhouette_score(sample_size=10k) + davies_bouldin + ripser n_perm",
        "peak_memory": True,
        "repeat": 2,
    },
]


if __name__ == "__main__":
    setup()
    ours()  # compile the kernels
    start = time.perf_counter()
    res = ours()
    print(f"fingerprint of {N:,} points: {time.perf_counter() - start:.1f} s")
    print(res.tidy().round(4).to_string())
