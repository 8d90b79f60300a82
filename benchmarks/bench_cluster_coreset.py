"""Sensitivity coreset + solve against scikit-learn KMeans on the full data.

n = 10^6 points, d = 20, k = 20 (the notes' imbalanced Gaussian blobs, scaled up). Ours: the
sensitivity coreset (D^2 seeding, one assignment pass, O(n) extra memory: distances, labels
and probabilities) of 20,000 draws, then greedy k-means++ and weighted Lloyd on it (3 starts).
The anchor: ``KMeans(n_clusters=20, n_init=1)`` on all 10^6 points. The cost of both solutions
on the full data is printed when the case is set up (target: ours / anchor <= 1.05). Peak
memory shows the growth over the call: ours holds O(n) vectors beside the data, scikit-learn
copies the data (``copy_x``) and keeps O(n) labels and distances.
"""

import sklearn
from sklearn.cluster import KMeans

from statcore.cluster.coreset import Coreset
from statcore.cluster.simulate import imbalanced_blobs

N, D, K, SIZE = 1_000_000, 20, 20, 20_000
_data = {}


def setup():
    if "X" not in _data:
        _data["X"] = imbalanced_blobs(N, D, K, random_state=0)[0]


def ours():
    res = Coreset(_data["X"], K).fit(size=SIZE, random_state=1)
    return res, res.solve(random_state=2, tol=1e-4).centres


def anchor():
    return KMeans(n_clusters=K, n_init=1, random_state=2).fit(_data["X"]).cluster_centers_


def report_cost_ratio():
    """Print cost_P(ours) / cost_P(KMeans on the full data)."""
    setup()
    res, centres = ours()
    mine, theirs = res.cost(centres), res.cost(anchor())
    print(f"coreset cost / full-data KMeans cost = {mine / theirs:.4f} (target <= 1.05)")
    return mine / theirs


CASES = [
    {
        "name": f"sensitivity coreset (m={SIZE}) + solve vs KMeans, n={N}, d={D}, k={K}",
        "setup": setup,
        "ours": ours,
        "anchor": anchor,
        "anchor_name": f"scikit-learn {sklearn.__version__} KMeans(n_init=1)",
        "peak_memory": True,
    },
]

if __name__ == "__main__":
    import time

    setup()
    report_cost_ratio()
    for name, fn in (("ours", ours), ("anchor", anchor)):
        start = time.perf_counter()
        fn()
        print(f"{name}: {time.perf_counter() - start:.2f} s")
