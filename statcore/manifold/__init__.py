"""Manifold-valued data: manifolds, Fréchet means and the MMDD test of conditional mean
independence.

References
----------
Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
manifold-valued data. *ICML 2026* (the Manifold Martingale Difference Divergence, MMDD).
"""

from statcore.manifold import simulate
from statcore.manifold.constant_curvature import Euclidean, Hyperbolic, Sphere
from statcore.manifold.frechet import FrechetMeanResult, frechet_mean
from statcore.manifold.geomstats_adapter import GeomstatsManifold, from_geomstats
from statcore.manifold.interface import Manifold
from statcore.manifold.matrix_manifolds import SO3, SPD
from statcore.manifold.mmdd import MMDDTestResult, dcov_test, mmdd, mmdd_test

__all__ = [
    "SO3",
    "SPD",
    "Euclidean",
    "FrechetMeanResult",
    "GeomstatsManifold",
    "Hyperbolic",
    "MMDDTestResult",
    "Manifold",
    "Sphere",
    "dcov_test",
    "frechet_mean",
    "from_geomstats",
    "mmdd",
    "mmdd_test",
    "simulate",
]
