"""Shared helpers of the statcore.manifold tests: numpy twins and sample generators."""

import numpy as np

from statcore.manifold import SO3, SPD, Euclidean, Hyperbolic, Sphere


def brute_u_centre(M):
    """U-centring of a square matrix with its diagonal zeroed (Székely and Rizzo 2014)."""
    n = len(M)
    M = M.copy()
    np.fill_diagonal(M, 0.0)
    r = M.sum(axis=1)
    C = M - r[:, None] / (n - 2) - r[None, :] / (n - 2) + M.sum() / ((n - 1) * (n - 2))
    np.fill_diagonal(C, 0.0)
    return C


def brute_double_centre(M):
    return M - M.mean(axis=0) - M.mean(axis=1)[:, None] + M.mean()


def brute_mmdd(V, X, statistic="u"):
    """MMDD^2 by explicit n x n matrices: the O(n^2)-memory numpy twin of the kernels."""
    X = X.reshape(len(X), -1)
    n = len(X)
    a = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    b = -(V @ V.T)
    if statistic == "u":
        return float((brute_u_centre(a) * brute_u_centre(b)).sum() / (n * (n - 3)))
    return float((brute_double_centre(a) * brute_double_centre(b)).sum() / n**2)


MANIFOLDS = {
    "euclidean": Euclidean(3),
    "sphere": Sphere(2),
    "sphere4": Sphere(4),
    "spd_affine": SPD(3),
    "spd_log_euclidean": SPD(3, metric="log_euclidean"),
    "hyperbolic": Hyperbolic(2),
    "so3": SO3(),
}


def concentrated_sample(manifold, n, rng, scale=0.4):
    """Points within a geodesic ball around a random centre (an open hemisphere on spheres)."""
    centre = manifold.random_point(1, rng)[0]
    coords = scale * rng.standard_normal((n, manifold.dim))
    return manifold.exp(centre, manifold.from_tangent_coords(centre, coords)), centre
