"""First-order PDEs solved by characteristics, and the spectral continuity equation that sums the
loss series of the symmetric order-2 CP model (Yarotsky, Golikov and Gusev 2026).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import integrate

from statcore.results import Results
from statcore.theory.cp_field import _check_t_grid
from statcore.validation import as_float_array, check_callable, check_scalar, describe


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class CharacteristicsResults(Results):
    """Loss curve predicted by a first-order PDE solved along its characteristics.

    Attributes
    ----------
    t : ndarray of shape (n_t,)
    loss : ndarray of shape (n_t,)
        The predicted loss.
    solution : CharacteristicSolution
        The characteristics themselves: positions and the eigenvalue density carried along
        them (for ``initial="empirical"``, the ratio to the start, as points have no density).

    Vocabulary: as :class:`~statcore.theory.cp_simulator.CPFlowResults`.
    """

    t: np.ndarray
    loss: np.ndarray
    solution: CharacteristicSolution

    def tidy(self) -> pd.DataFrame:
        return pd.DataFrame({"t": self.t, "term": "loss", "estimate": self.loss})


# --------------------------------------------------------------------------- characteristics


@dataclass(frozen=True, eq=False)
class CharacteristicSolution:
    """Characteristics of ``F_t + a(x, F) F_x = b(x, F)`` from the points ``x0``.

    Attributes
    ----------
    t : ndarray of shape (n_t,)
    x0 : ndarray of shape (n,)
    x : ndarray of shape (n_t, n)
        Position of each characteristic at each time.
    F : ndarray of shape (n_t, n)
        The solution's value carried along it.
    """

    t: np.ndarray
    x0: np.ndarray
    x: np.ndarray
    F: np.ndarray

    def at(self, x, t_index: int) -> np.ndarray:
        """``F(x, t[t_index])`` by inverting ``x0 -> x(x0, t)`` (linear interpolation).

        Raises ValueError where the characteristics have crossed (the map is not monotone:
        a shock, beyond which the first-order PDE has no classical solution).
        """
        xs, Fs = self.x[t_index], self.F[t_index]
        steps = np.diff(xs)
        if not (np.all(steps > 0) or np.all(steps < 0)):
            raise ValueError(
                f"the characteristics have crossed by t = {self.t[t_index]:g}: x(x0, t) is not "
                "monotone in x0, so F(., t) is not single-valued"
            )
        order = np.argsort(xs)
        return np.interp(
            as_float_array(x, name="x", ndim=(0, 1)),
            xs[order],
            Fs[order],
            left=np.nan,
            right=np.nan,
        )


def solve_characteristics(
    speed: Callable,
    source: Callable,
    initial: Callable,
    x0,
    t_grid,
    *,
    tol: float = 1e-10,
) -> CharacteristicSolution:
    """Solve the quasi-linear first-order PDE ``F_t + a(x, F) F_x = b(x, F)`` by characteristics.

    Along ``dx/dt = a(x, F)`` the solution obeys ``dF/dt = b(x, F)``; every characteristic
    starts at a point of ``x0`` with ``F = initial(x0)``. All characteristics are integrated
    together (one adaptive DOP853 solve).

    Parameters
    ----------
    speed, source : callable
        ``a(x, F)`` and ``b(x, F)``, vectorised over arrays of positions and values.
    initial : callable
        ``F(x, 0)``, vectorised.
    x0 : array_like of shape (n,)
        Starting points.
    t_grid : array_like of shape (n_t,)
        Non-negative, increasing times at which to report.
    tol : float
        Relative tolerance of the ODE solver.

    Returns
    -------
    CharacteristicSolution
        Use its :meth:`~CharacteristicSolution.at` for ``F(x, t)`` on a grid of ``x``.

    Examples
    --------
    The flow map ``F(x, t) = w(t; w(0) = x)`` of ``w' = f(w)`` solves ``F_t - f(x) F_x = 0``
    with ``F(x, 0) = x``; for the logistic ``f(w) = 2 w (1 - w)``:

    >>> sol = solve_characteristics(lambda x, F: -2 * x * (1 - x), lambda x, F: 0 * x,
    ...                             lambda x: x, np.linspace(0.05, 0.95, 200), [0.0, 1.0])
    >>> w = 0.2 / (0.2 + 0.8 * np.exp(-2.0))
    >>> bool(abs(sol.at(0.2, 1) - w) < 1e-3)
    True

    References
    ----------
    Courant, R. and Hilbert, D. (1962). *Methods of Mathematical Physics*, vol. II, ch. II.
    Yarotsky, Golikov and Gusev (2026), arXiv:2602.04548 (the loss series summed into such a
    PDE).
    """
    for name, fn in (("speed", speed), ("source", source), ("initial", initial)):
        check_callable(fn, name=name)
    x0 = as_float_array(x0, name="x0", ndim=1, min_rows=1)
    t_grid = _check_t_grid(t_grid)
    tol = check_scalar(tol, name="tol", low=0, high=1e-2, low_inclusive=False)
    F0 = np.asarray(initial(x0), dtype=float)
    if F0.shape != x0.shape or not np.all(np.isfinite(F0)):
        raise ValueError(
            f"`initial(x0)` must return finite values of shape {x0.shape}; got {describe(F0)}"
        )
    n = len(x0)

    def rhs(_t, y):
        x, F = y[:n], y[n:]
        return np.concatenate([speed(x, F), source(x, F)])

    y0 = np.concatenate([x0, F0])
    sol = integrate.solve_ivp(
        rhs, (0.0, float(t_grid[-1])), y0, method="DOP853", t_eval=t_grid, rtol=tol, atol=tol * 1e-3
    )
    if sol.status != 0:
        raise RuntimeError(f"the characteristics could not be integrated: {sol.message}")
    return CharacteristicSolution(t=t_grid, x0=x0, x=sol.y[:n].T, F=sol.y[n:].T)


def marchenko_pastur_nodes(ratio: float, n_points: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Quadrature of the Marchenko-Pastur law of ratio ``ratio = p / H`` (scale 1).

    Returns nodes, weights of the continuous part (summing to ``min(1, 1 / ratio)``) and the
    mass of the atom at 0 (``1 - 1 / ratio`` when ``ratio > 1``). Gauss-Chebyshev nodes of the
    second kind absorb the square-root edges of the density.
    """
    lo, hi = (1 - math.sqrt(ratio)) ** 2, (1 + math.sqrt(ratio)) ** 2
    k = np.arange(1, n_points + 1)
    theta = k * np.pi / (n_points + 1)
    centre, half = (hi + lo) / 2, (hi - lo) / 2
    x = centre + half * np.cos(theta)
    # int sqrt((hi - x)(x - lo)) g(x) dx with Chebyshev-U weights, then the 1 / (2 pi ratio x)
    w = (np.pi / (n_points + 1)) * np.sin(theta) ** 2 * half**2
    w = w / (2 * np.pi * ratio * x)
    cont = min(1.0, 1.0 / ratio)
    w *= cont / w.sum()  # exact mass: the quadrature error of the 1/x factor is renormalised
    return x, w, max(0.0, 1.0 - 1.0 / ratio)


def spectral_loss_curve(
    x0: np.ndarray,
    mass: np.ndarray,
    atom: float,
    density: Callable,
    t_grid: np.ndarray,
    *,
    alpha: float,
    dim: int,
    tol: float,
) -> tuple[np.ndarray, CharacteristicSolution]:
    """Loss of the symmetric order-2 model with the identity target from its eigenvalue law.

    The eigenvalue density ``F`` of ``alpha U U^T`` is transported by the continuity equation
    ``F_t + v F_x = -v' F`` with ``v(x) = 4 alpha x (1 - x)``; the eigenvalues start at ``x0``
    with masses ``mass`` (``atom`` more at 0, which never moves) and ``density`` gives ``F`` at
    ``t = 0``. Returns the loss ``(dim / 2) int (x - 1)^2 F(x, t) dx`` on ``t_grid`` and the
    characteristics.
    """
    rate = 4.0 * alpha
    sol = solve_characteristics(
        lambda x, F: rate * x * (1 - x),
        lambda x, F: -rate * (1 - 2 * x) * F,
        density,
        x0,
        t_grid,
        tol=tol,
    )
    # Liouville: the mass between neighbouring characteristics is conserved, so the loss is
    # the initial masses moved to the characteristics' positions
    loss = 0.5 * dim * ((sol.x - 1.0) ** 2 @ mass + atom)
    return loss, sol


def _marchenko_pastur_density(x: np.ndarray, ratio: float) -> np.ndarray:
    """Density of the continuous part of the Marchenko-Pastur law (scale 1)."""
    lo, hi = (1 - math.sqrt(ratio)) ** 2, (1 + math.sqrt(ratio)) ** 2
    inside = np.clip((hi - x) * (x - lo), 0.0, None)
    return np.sqrt(inside) / (2 * np.pi * ratio * x)


def _logistic_loss(lam: np.ndarray, t: np.ndarray, alpha: float) -> np.ndarray:
    """``sum_i (Phi_t(l_i) - 1)^2 / 2`` for the logistic flow ``l' = 4 alpha l (1 - l)``."""
    decay = np.exp(-4.0 * alpha * t)[:, None]
    phi = lam[None, :] / (lam[None, :] + (1.0 - lam[None, :]) * decay)
    return 0.5 * np.sum((phi - 1.0) ** 2, axis=1)


__all__ = [
    "CharacteristicSolution",
    "CharacteristicsResults",
    "marchenko_pastur_nodes",
    "solve_characteristics",
    "spectral_loss_curve",
]
