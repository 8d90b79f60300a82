"""MMDD's wild-bootstrap test beside a plain numpy implementation and dcor's permutation test.

The numpy baseline is the textbook route: the n x n U-centred matrices, their Schur product K,
and ``diag(E' K E)`` by one GEMM over all 999 multiplier vectors (O(n^2) memory). dcor's
distance covariance permutation test does the comparable resampling job on the same (X, Y)
(flat tangent coordinates) at the same replicate count.
"""

import dcor
import numpy as np
from scipy.spatial.distance import cdist

from statcore.manifold import Sphere, frechet_mean, mmdd_test, simulate

B = 999
SPHERE = Sphere(2)
_data = {}


def _setup(n):
    def setup():
        if n not in _data:
            Y, X = simulate.draw("sphere", "mean_shift", n, beta=0.05, random_state=n)
            V = SPHERE.log_coords(frechet_mean(Y, SPHERE).mean, Y)
            _data[n] = (Y, X, V)

    return setup


def _u_centre(M):
    n = len(M)
    np.fill_diagonal(M, 0.0)
    r = M.sum(axis=1)
    C = M - r[:, None] / (n - 2) - r[None, :] / (n - 2) + M.sum() / ((n - 1) * (n - 2))
    np.fill_diagonal(C, 0.0)
    return C


def numpy_mmdd_test(n):
    Y, X, _ = _data[n]
    V = SPHERE.log_coords(frechet_mean(Y, SPHERE).mean, Y)
    K = _u_centre(cdist(X[:, None], X[:, None])) * _u_centre(-(V @ V.T))
    T = K.sum() / (n - 3)
    E = 2.0 * np.random.default_rng(0).integers(0, 2, (n, B)) - 1.0
    draws = np.einsum("kb,kb->b", E, K @ E) / (n - 3)
    return (1 + np.sum(draws >= T)) / (B + 1)


CASES = [
    {
        "name": f"mmdd_test sphere n={n}, {B} wild bootstraps",
        "setup": _setup(n),
        "ours": lambda n=n: mmdd_test(_data[n][0], _data[n][1], SPHERE, n_resamples=B,
                                      random_state=0),
        "anchor": lambda n=n: numpy_mmdd_test(n),
        "anchor_name": f"numpy {np.__version__} dense U-centred K + GEMM",
    }
    for n in (2000, 10_000)
] + [
    {
        "name": f"mmdd_test sphere n={n} vs dCov permutation test, {B} resamples",
        "setup": _setup(n),
        "ours": lambda n=n: mmdd_test(_data[n][0], _data[n][1], SPHERE, n_resamples=B,
                                      random_state=0),
        "anchor": lambda n=n: dcor.independence.distance_covariance_test(
            _data[n][1], _data[n][2], num_resamples=B, random_state=0
        ),
        "anchor_name": f"dcor {dcor.__version__} distance_covariance_test",
    }
    for n in (1000, 2000)
]
