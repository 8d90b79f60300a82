"""The shared clustering kernels beside scikit-learn and scipy at n = 20,000 points, d = 50.

- Silhouette of given labels (10 classes): ours is one blocked pass over the pairs i < j (a
  BLAS product per 256 x 256 block, distances added into per-class sums, O(nK) memory);
  scikit-learn's ``silhouette_score`` computes every pair twice in row chunks.
- Euclidean minimum spanning tree (= the 0-dimensional persistence): our dense Prim works from
  the coordinates in O(n) extra memory; the anchor builds the dense distance matrix (3.2 GB at
  n = 20,000) and hands it to scipy's ``minimum_spanning_tree``.
- Exact 10 nearest neighbours: scikit-learn's brute-force ``NearestNeighbors``.

Both sides run with the same BLAS threads (``make bench`` leaves them at the machine's
default). Peak memory is measured for the silhouette and the tree.
"""

import numpy as np
import scipy
import sklearn
from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst
from scipy.spatial.distance import cdist
from sklearn.metrics import silhouette_score
from sklearn.neighbors import NearestNeighbors

from statcore.cluster import _kernels as K

N, D, CLASSES = 20_000, 50, 10
_data = {}


def setup():
    if not _data:
        rng = np.random.default_rng(0)
        labels = rng.integers(0, CLASSES, size=N)
        centres = rng.normal(scale=2.0, size=(CLASSES, D))
        _data["X"] = centres[labels] + rng.normal(size=(N, D))
        _data["labels"] = labels


def ours_silhouette():
    return K.silhouette_samples(_data["X"], _data["labels"]).mean()


def sklearn_silhouette():
    return silhouette_score(_data["X"], _data["labels"])


def ours_mst():
    return K.minimum_spanning_tree(_data["X"])[1].sum()


def scipy_dense_mst():
    return scipy_mst(cdist(_data["X"], _data["X"])).data.sum()


def ours_knn():
    return K.knn(_data["X"], 10)


def sklearn_knn():
    model = NearestNeighbors(n_neighbors=10, algorithm="brute").fit(_data["X"])
    return model.kneighbors(return_distance=True)


SKLEARN = f"scikit-learn {sklearn.__version__}"
CASES = [
    {
        "name": f"silhouette of true labels, n={N}, d={D}, K={CLASSES}",
        "setup": setup,
        "ours": ours_silhouette,
        "anchor": sklearn_silhouette,
        "anchor_name": f"{SKLEARN} silhouette_score",
        "peak_memory": True,
    },
    {
        "name": f"Euclidean MST (H0 persistence), n={N}, d={D}",
        "setup": setup,
        "ours": ours_mst,
        "anchor": scipy_dense_mst,
        "anchor_name": f"scipy {scipy.__version__} minimum_spanning_tree(cdist)",
        "peak_memory": True,
    },
    {
        "name": f"exact 10-NN graph, n={N}, d={D}",
        "setup": setup,
        "ours": ours_knn,
        "anchor": sklearn_knn,
        "anchor_name": f"{SKLEARN} NearestNeighbors(brute)",
    },
]
