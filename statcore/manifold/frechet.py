"""The Fréchet (Karcher) mean of manifold-valued data."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from statcore.manifold.interface import Manifold
from statcore.results import IterationRecord, Results
from statcore.validation import check_positive, check_positive_int, describe

__all__ = ["FrechetMeanResult", "frechet_mean"]


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class FrechetMeanResult(Results):
    """The Fréchet mean of a sample of points on a manifold.

    Parameters
    ----------
    mean : ndarray
        The mean, a point of shape ``manifold.point_shape``.
    grad_norm : float
        Norm of the Riemannian gradient of ``f(q) = mean d^2(q, Y_i) / 2`` at ``mean``, that is
        ``|n^-1 sum Log_mean Y_i|``; zero at a critical point.
    variance : float
        ``mean d^2(mean, Y_i)``, the Fréchet variance.
    manifold : Manifold

    Vocabulary
    ----------
    As :class:`~statcore.manifold.interface.Manifold` states it: ``base_point`` is the point
    whose tangent space is used, ``Y`` the points, ``X`` the Euclidean covariate, ``mean`` the
    Fréchet mean, ``n_resamples`` the bootstrap draws, ``random_state`` the seed.
    """

    mean: np.ndarray = field(repr=False)
    grad_norm: float
    variance: float
    manifold: Manifold = field(repr=False)

    def glance(self) -> pd.DataFrame:
        row = super().glance().iloc[0].to_dict()
        row.update(grad_norm=self.grad_norm, variance=self.variance, manifold=repr(self.manifold))
        return pd.DataFrame([row])

    def _repr_lines(self) -> list[str]:
        return [
            f"  mean on {self.manifold!r}: {np.array2string(self.mean, precision=6)}",
            f"  grad_norm = {self.grad_norm:.3g}, variance = {self.variance:.6g}",
        ]


def _check_manifold(manifold) -> Manifold:
    if not isinstance(manifold, Manifold):
        raise TypeError(
            "`manifold` must be a statcore.manifold manifold (Euclidean, Sphere, SPD, Hyperbolic, "
            f"SO3, or from_geomstats(space)); got {describe(manifold)}"
        )
    return manifold


#: Most halvings of the Karcher step before the iteration takes the smallest one anyway.
_HALVINGS = 40


def _karcher(Y, manifold: Manifold, init, maxiter: int, tol: float):
    """Karcher flow with step halving.

    Returns ``(mean, grad_norm, variance, n_iter, stalled, history)``; ``stalled``: the last
    step found no decrease of the cost in ``_HALVINGS`` halvings.
    """
    mu = init
    coords = manifold.log_coords(mu, Y, check=False)
    grad = coords.mean(axis=0)
    cost = 0.5 * np.mean(np.sum(coords**2, axis=1))
    grad_norm = float(np.linalg.norm(grad))
    n_iter, stalled, history = 0, False, []
    while grad_norm >= tol and n_iter < maxiter:
        n_iter += 1
        step = 2.0
        # a unit step is exact in flat spaces and contracts on Hadamard manifolds; halving
        # guards the positively curved ones (sphere, SO(3)) against overshooting
        for _ in range(_HALVINGS):
            step /= 2
            tangent = manifold.from_tangent_coords(mu, step * grad, check=False)[0]
            candidate = manifold.exp(mu, tangent, check=False)
            new_coords = manifold.log_coords(candidate, Y, check=False)
            new_cost = 0.5 * np.mean(np.sum(new_coords**2, axis=1))
            stalled = new_cost > cost + 1e-15 * max(cost, 1.0)
            if not stalled:
                break
        mu, coords, cost = candidate, new_coords, new_cost
        grad = coords.mean(axis=0)
        grad_norm = float(np.linalg.norm(grad))
        history.append((n_iter, step, grad_norm, 2.0 * cost))
    history = pd.DataFrame(history, columns=["iteration", "step", "grad_norm", "variance"])
    return mu, grad_norm, 2.0 * cost, n_iter, stalled, history


def frechet_mean(
    Y, manifold: Manifold, *, maxiter: int = 100, tol: float = 1e-10, init=None
) -> FrechetMeanResult:
    """Fréchet mean ``argmin_q sum_i d^2(q, Y_i)`` by the Karcher flow.

    Iterates ``q <- Exp_q(n^-1 sum_i Log_q Y_i)`` (with step halving when the cost rises) from
    the extrinsic mean put on the manifold, until the gradient norm
    ``|n^-1 sum_i Log_q Y_i|`` falls below ``tol``.

    Parameters
    ----------
    Y : array_like, shape ``(n, *manifold.point_shape)``
        Points on the manifold.
    manifold : Manifold
    maxiter : int
        Most iterations; when reached without convergence a ``ConvergenceWarning`` is issued and
        ``converged=False`` recorded.
    tol : float
        Tolerance on the gradient norm.
    init : array_like, optional
        Starting point (default: :meth:`Manifold.initial_mean`).

    Returns
    -------
    FrechetMeanResult
        ``mean``, ``grad_norm``, ``variance`` and the iteration record ``iterations``
        (``converged``, ``n_iter``, a history of step, gradient norm and variance per iteration).

    Raises
    ------
    ValueError
        Points off the manifold; on the sphere, data not in an open hemisphere (the mean is not
        unique there).

    References
    ----------
    Karcher, H. (1977). Riemannian center of mass and mollifier smoothing. *Communications on
    Pure and Applied Mathematics* 30(5), 509-541.

    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026* (the base point of the MMDD statistic).
    """
    manifold = _check_manifold(manifold)
    Y = manifold.check_points(Y, name="Y", min_rows=1)
    maxiter = check_positive_int(maxiter, name="maxiter")
    tol = check_positive(tol, name="tol")
    manifold.check_mean_domain(Y)
    start = manifold.initial_mean(Y) if init is None else manifold.check_point(init, name="init")
    mean, grad_norm, variance, n_iter, stalled, history = _karcher(Y, manifold, start, maxiter, tol)
    record = IterationRecord.from_run(
        function="frechet_mean",
        n_iter=n_iter,
        maxiter=maxiter,
        tol=tol,
        criterion="norm of the Riemannian gradient",
        last_value=grad_norm,
        met=grad_norm < tol,
        stalled=stalled,
        history=history,
        remedy="raise `maxiter`, loosen `tol` or start from a closer `init`",
    )
    return FrechetMeanResult(
        method=f"Fréchet mean on {manifold!r}",
        nobs=len(Y),
        iterations=record,
        mean=mean,
        grad_norm=grad_norm,
        variance=variance,
        manifold=manifold,
    )
