"""The clustering area's geometry kernels, public for the areas built on them.

Selection (:mod:`statcore.select`) and intrinsic dimension and alignment
(:mod:`statcore.geometry`) reuse the exact kNN search, the distances and the landmarks written
once in the cluster area; this module is the door they use. Every function takes float arrays
and checks nothing: callers validate their inputs first.
"""

from statcore.cluster._kernels import (
    assign_nearest,
    centred,
    class_distance_sums,
    farthest_points,
    knn,
    minimum_spanning_tree,
    pairwise_distances,
    silhouette_from_sums,
    silhouette_samples,
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
