"""The data-generating designs of the MMDD simulations, on the sphere, SPD and hyperbolic space.

Every design draws ``X ~ U(-1, 1)`` and ``eps ~ N(0, I_m)`` in orthonormal coordinates of the
tangent space at a centre ``mu0`` (the north pole of S^2, the identity of SPD(2), the origin of
H^2), and sets ``Y = Exp_mu0(xi)`` with

- ``"iid"`` (null): ``xi = sigma eps``;
- ``"heteroscedastic"`` (null): ``xi = (0.1 + 0.5 |X|) eps``: the spread of ``Y`` depends on
  ``X``, its conditional Fréchet mean does not (``eps`` is symmetric and the geodesic symmetry at
  ``mu0`` is an isometry), so conditional mean independence holds while independence fails;
- ``"mean_shift"`` (alternative): ``xi = beta X e_1 + sigma eps``.

:func:`replicate` runs one test on one draw, the function a
:class:`~statcore.distributed.MonteCarloStudy` maps.

References
----------
Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
manifold-valued data. *ICML 2026* (the designs' names; the paper's exact settings were not
available, so these follow the project's research notes).
"""

from __future__ import annotations

import numpy as np

from statcore.manifold.constant_curvature import Hyperbolic, Sphere
from statcore.manifold.interface import Manifold
from statcore.manifold.matrix_manifolds import SPD
from statcore.manifold.mmdd import dcov_test, mmdd_test
from statcore.validation import (
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
)

__all__ = ["DESIGNS", "MANIFOLDS", "centre", "draw", "make_manifold", "replicate"]

MANIFOLDS = ("sphere", "spd", "hyperbolic")
DESIGNS = ("iid", "heteroscedastic", "mean_shift")
TESTS = ("mmdd", "dcov")


def make_manifold(manifold: str) -> Manifold:
    """``Sphere(2)``, ``SPD(2)`` (affine-invariant) or ``Hyperbolic(2)`` by name."""
    name = check_option(manifold, name="manifold", options=MANIFOLDS)
    return {"sphere": Sphere(2), "spd": SPD(2), "hyperbolic": Hyperbolic(2)}[name]


def centre(manifold: str) -> np.ndarray:
    """The design's centre ``mu0``: north pole, identity matrix, or hyperboloid origin."""
    name = check_option(manifold, name="manifold", options=MANIFOLDS)
    return {"sphere": np.array([0.0, 0.0, 1.0]), "spd": np.eye(2), "hyperbolic": np.eye(3)[0]}[name]


def draw(
    manifold: str = "sphere",
    design: str = "iid",
    n: int = 100,
    *,
    beta: float = 0.3,
    sigma: float = 0.3,
    random_state=None,
):
    """One data set ``(Y, X)`` of a design.

    Parameters
    ----------
    manifold : {"sphere", "spd", "hyperbolic"}
    design : {"iid", "heteroscedastic", "mean_shift"}
    n : int
    beta : float
        Mean shift per unit of ``X`` (``"mean_shift"`` only).
    sigma : float
        Noise scale of ``"iid"`` and ``"mean_shift"``.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    Y : ndarray, shape ``(n, *point_shape)``
    X : ndarray, shape (n,)

    References
    ----------
    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026*.
    """
    space = make_manifold(manifold)
    design = check_option(design, name="design", options=DESIGNS)
    n = check_positive_int(n, name="n")
    beta = check_positive(beta, name="beta", strict=False)
    sigma = check_positive(sigma, name="sigma")
    rng = check_random_state(random_state)
    X = rng.uniform(-1.0, 1.0, n)
    xi = _tangent(design, X, rng.standard_normal((n, space.dim)), beta, sigma)
    if manifold == "sphere":
        # redraw the points at |xi| >= pi/2 (a sign-symmetric truncation, so the nulls still
        # hold): the sample then lies in the open hemisphere around mu0, where the Fréchet mean
        # is unique
        far = np.linalg.norm(xi, axis=1) >= np.pi / 2
        while far.any():
            fresh = rng.standard_normal((int(far.sum()), space.dim))
            xi[far] = _tangent(design, X[far], fresh, beta, sigma)
            far = np.linalg.norm(xi, axis=1) >= np.pi / 2
    mu0 = centre(manifold)
    xi = space.from_tangent_coords(mu0, xi, check=False)
    return space.exp(mu0, xi, check=False), X


def _tangent(design, X, eps, beta, sigma):
    """The design's tangent coordinates ``xi`` at ``mu0``."""
    if design == "heteroscedastic":
        return (0.1 + 0.5 * np.abs(X))[:, None] * eps
    xi = sigma * eps
    if design == "mean_shift":
        xi[:, 0] += beta * X
    return xi


def replicate(
    random_state,
    manifold: str = "sphere",
    design: str = "iid",
    n: int = 100,
    test: str = "mmdd",
    n_resamples: int = 199,
    beta: float = 0.3,
    sigma: float = 0.3,
    multiplier: str = "rademacher",
) -> dict:
    """One Monte Carlo replicate: draw a data set, run ``mmdd_test`` or ``dcov_test``.

    Returns ``{"statistic": ..., "pvalue": ...}``, the outputs
    :meth:`~statcore.distributed.MonteCarloResult.rejection_rate` reads.

    References
    ----------
    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026*.
    """
    test = check_option(test, name="test", options=TESTS)
    rng = check_random_state(random_state)
    Y, X = draw(manifold, design, n, beta=beta, sigma=sigma, random_state=rng)
    space = make_manifold(manifold)
    if test == "mmdd":
        res = mmdd_test(
            Y, X, space, n_resamples=n_resamples, multiplier=multiplier, random_state=rng
        )
    else:
        res = dcov_test(Y, X, space, n_resamples=n_resamples, random_state=rng)
    return {"statistic": res.statistic, "pvalue": res.pvalue}
