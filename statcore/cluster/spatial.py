"""Old home of the shared neighbour search, kept for one release: use :mod:`statcore.neighbours`.

The kNN search, the pairwise distances, the landmarks and :func:`centred` moved to
:mod:`statcore.neighbours`, a shared module outside any one area; this module re-exports them
(and the cluster area's assignment, spanning-tree and silhouette kernels it used to list) and
warns ``FutureWarning`` when it is first imported. Importing :mod:`statcore.cluster` does not
import it.
"""

import warnings

from statcore.cluster._kernels import (
    assign_nearest,
    class_distance_sums,
    minimum_spanning_tree,
    silhouette_from_sums,
    silhouette_samples,
)
from statcore.neighbours import centred, farthest_points, knn, pairwise_distances

warnings.warn(
    "statcore.cluster.spatial is now statcore.neighbours (the neighbour search shared by the "
    "areas); the old module will be removed in the next release",
    FutureWarning,
    stacklevel=2,
)

__all__ = [
    "assign_nearest",
    "centred",
    "class_distance_sums",
    "farthest_points",
    "knn",
    "minimum_spanning_tree",
    "pairwise_distances",
    "silhouette_from_sums",
    "silhouette_samples",
]
