"""Gradient flow of CP tensor models: simulator, exact Taylor series, regime map, characteristics.

Yarotsky, Golikov and Gusev (2026) expand the loss of gradient flow (GF) on a rank-``H`` CP model
of an order-``nu`` tensor as a power series in time whose coefficients are sums over diagrams,
read the large-size limit of that series as a map of learning regimes, and sum it, where they can,
through a first-order PDE solved by characteristics. :class:`CPGradientFlow` holds one such
problem; its :meth:`~CPGradientFlow.simulate` runs the flow over many initialisations at once,
:meth:`~CPGradientFlow.taylor` gives the exact series coefficients of ``L(t)`` at 0,
:meth:`~CPGradientFlow.regime` places a scaling of the sizes on the regime map and
:meth:`~CPGradientFlow.characteristics` returns the loss curve a summed series predicts.
"""

from __future__ import annotations

import itertools
import math
import numbers
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import integrate, stats

from statcore.base import Estimator
from statcore.distributed import borrowed_backend
from statcore.results import IterationRecord, Results
from statcore.results.plotting import get_ax
from statcore.validation import (
    as_float_array,
    check_callable,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
    describe,
)

REFERENCE = (
    "Yarotsky, D., Golikov, E. and Gusev, Y. (2026). Gradient flow through diagram expansions: "
    "learning regimes and explicit solutions. arXiv:2602.04548."
)
TARGETS = ("identity", "modular")
REGIMES = (
    "free evolution",
    "NTK",
    "over-parameterised mean field",
    "under-parameterised mean field",
    "proportional mean field",
)
#: einsum letters: one per tensor mode, after "s" (seed) and "h" (rank); caps the order
_MODE_LETTERS = "abcdefgijklm"
_MAX_ORDER = len(_MODE_LETTERS)
#: the Taylor recursion sums over compositions of each order; beyond this it is slow and the
#: series of a polynomial flow is of no use anyway past its (finite) radius of convergence
_MAX_TAYLOR_ORDER = 40


# --------------------------------------------------------------------------- the vector field


def _einsum_specs(order: int):
    """einsum strings of the model output and of each factor's contraction with the residual."""
    modes = _MODE_LETTERS[:order]
    factors = ",".join(f"sh{m}" for m in modes)
    output = f"{factors}->s{modes}"
    grads = []
    for k in range(order):
        others = ",".join(f"sh{m}" for j, m in enumerate(modes) if j != k)
        grads.append(f"s{modes},{others}->sh{modes[k]}")
    return output, grads


class _Field:
    """``L``, ``W`` and ``-grad L`` of a batch of CP models (one per seed).

    Non-symmetric states have shape ``(S, nu, H, p)`` (factor ``k`` of component ``h``);
    symmetric ones ``(S, H, p)``. Every contraction is a batched matrix product with a
    Khatri-Rao product of the other factors (``(S, H, p^(nu-1))``), so BLAS does the work;
    a general einsum over the same indices is several times slower at these sizes.
    """

    def __init__(self, order, symmetric, alpha, target):
        self.order, self.symmetric, self.alpha = order, symmetric, alpha
        self.target = target
        self.out_spec, self.grad_specs = _einsum_specs(order)

    def factors(self, U):
        return [U] * self.order if self.symmetric else [U[:, k] for k in range(self.order)]

    @staticmethod
    def _khatri_rao(facs):
        out = facs[0]
        S, H = out.shape[:2]
        for f in facs[1:]:
            out = (out[..., :, None] * f[..., None, :]).reshape(S, H, -1)
        return out

    def output(self, U):
        facs = self.factors(U)
        S, p = U.shape[0], U.shape[-1]
        flat = np.matmul(facs[0].transpose(0, 2, 1), self._khatri_rao(facs[1:]))
        return self.alpha * flat.reshape((S,) + (p,) * self.order)

    def residual(self, U):
        return self.output(U) - self.target

    def gradient(self, U, R=None):
        """Gradient of ``L = ||W - T||^2 / 2``: ``alpha`` times the residual contracted with
        every factor but one (summed over the ``nu`` slots a symmetric factor fills)."""
        if R is None:
            R = self.residual(U)
        S, p = U.shape[0], U.shape[-1]

        def unfolded(k):  # mode k first, the others in order: (S, p^(nu-1), p)
            return np.moveaxis(R, 1 + k, -1).reshape(S, -1, p)

        facs = self.factors(U)
        if self.symmetric:
            modes = sum(unfolded(k) for k in range(self.order))
            return self.alpha * np.matmul(self._khatri_rao(facs[1:]), modes)
        parts = [
            np.matmul(self._khatri_rao([f for j, f in enumerate(facs) if j != k]), unfolded(k))
            for k in range(self.order)
        ]
        return self.alpha * np.stack(parts, axis=1)

    def loss(self, U):
        R = self.residual(U)
        return 0.5 * np.sum(R.reshape(len(R), -1) ** 2, axis=1)

    def component_norms(self, U):
        """``alpha * prod_k ||u_h^(k)||``: the Frobenius norm of each rank-one term."""
        norms = np.linalg.norm(U, axis=-1)
        if self.symmetric:
            return self.alpha * norms**self.order
        return self.alpha * np.prod(norms, axis=1)


def _solve_chunk(task):
    """Integrate the flow of one batch of seeds (module level: process backends pickle it)."""
    field, U0, t_grid, tol = task
    shape = U0.shape

    def rhs(_t, y):
        return -field.gradient(y.reshape(shape)).ravel()

    sol = integrate.solve_ivp(
        rhs,
        (0.0, float(t_grid[-1])),
        U0.ravel(),
        method="DOP853",
        t_eval=t_grid,
        rtol=tol,
        atol=tol * 1e-3 * max(1.0, float(np.abs(U0).max())),
    )
    states = sol.y.T.reshape((len(sol.t), *shape)) if sol.status == 0 else None
    return states, sol.nfev, sol.status, sol.message


# --------------------------------------------------------------------------- results


def _seed_band(values: np.ndarray, alpha: float) -> dict:
    """Across-seed mean with its Monte Carlo interval, and the central seed quantile band."""
    n = values.shape[0]
    mean = values.mean(axis=0)
    se = values.std(axis=0, ddof=1) / math.sqrt(n) if n > 1 else np.full_like(mean, np.nan)
    z = stats.norm.ppf(1 - alpha / 2)
    return {
        "mean": mean,
        "std_error": se,
        "conf_low": mean - z * se,
        "conf_high": mean + z * se,
        "seed_low": np.quantile(values, alpha / 2, axis=0),
        "seed_high": np.quantile(values, 1 - alpha / 2, axis=0),
    }


def _plot_quantity(results, quantity, ax, log, **kwargs):
    ax = get_ax(ax)
    band = _seed_band(getattr(results, quantity), 0.05)
    t = results.t
    ax.fill_between(
        t,
        band["seed_low"],
        band["seed_high"],
        color="C0",
        alpha=0.2,
        lw=0,
        label="seeds, 95 % band",
    )
    ax.plot(t, band["mean"], color="C0", label=f"simulation (mean of {results.n_seeds})", **kwargs)
    if quantity == "loss" and results.prediction is not None:
        ax.plot(t, results.prediction, "k--", label=results.prediction_label)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("t")
    ax.set_ylabel(quantity.replace("_", " "))
    ax.set_title(f"{results.method}\ntheory: {results.theory}")
    ax.legend(frameon=False)
    return ax


def _plot_loss(results, ax=None, **kwargs):
    """Loss against time: seed band, mean and the theory curve."""
    return _plot_quantity(results, "loss", ax, True, **kwargs)


def _plot_movement(results, ax=None, **kwargs):
    """Relative parameter movement ``||u(t) - u(0)|| / ||u(0)||`` against time."""
    return _plot_quantity(results, "movement", ax, False, **kwargs)


def _plot_components(results, ax=None, **kwargs):
    """Histogram of the rank-one terms' norms at the start and at the last time."""
    ax = get_ax(ax)
    kwargs.setdefault("bins", 40)
    first, last = results.component_norms[:, 0].ravel(), results.component_norms[:, -1].ravel()
    ax.hist(first, alpha=0.5, label="t = 0", **kwargs)
    ax.hist(last, alpha=0.5, label=f"t = {results.t[-1]:g}", **kwargs)
    ax.set_xlabel("component norm")
    ax.set_ylabel("components (all seeds)")
    ax.legend(frameon=False)
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class CPFlowResults(Results):
    """Gradient-flow trajectories of a CP model over seeds, beside the theory curve.

    Attributes
    ----------
    t : ndarray of shape (n_t,)
    loss : ndarray of shape (n_seeds, n_t)
        ``L(t) = ||W(t) - T||^2 / 2`` per seed.
    movement : ndarray of shape (n_seeds, n_t)
        Relative parameter movement ``||u(t) - u(0)|| / ||u(0)||``.
    weight_norm : ndarray of shape (n_seeds, n_t)
        ``||W(t)||``.
    component_norms : ndarray of shape (n_seeds, n_t, H)
        Norm of each rank-one term ``alpha * prod_k ||u_h^(k)(t)||``.
    prediction : ndarray of shape (n_t,) or None
        The theory's loss curve for this configuration (see :meth:`CPGradientFlow.predict`).
    prediction_label : str
    theory : str
        Which theory curve ``prediction`` is (``"NTK"``, ``"spectral (exact)"``) or
        ``"none"``; the regime of a scaling is :meth:`CPGradientFlow.regime`'s business.
    n_seeds : int
    wall_time_s : float
    """

    t: np.ndarray
    loss: np.ndarray
    movement: np.ndarray
    weight_norm: np.ndarray
    component_norms: np.ndarray
    prediction: np.ndarray | None = None
    prediction_label: str = ""
    theory: str = "none"
    n_seeds: int = 1
    wall_time_s: float = math.nan

    _plots: ClassVar[dict] = {
        "loss": _plot_loss,
        "movement": _plot_movement,
        "components": _plot_components,
    }

    def band(self, quantity: str = "loss", alpha: float = 0.05) -> pd.DataFrame:
        """Per time: across-seed mean, its Monte Carlo interval and the seed quantile band.

        Parameters
        ----------
        quantity : {"loss", "movement", "weight_norm"}
        alpha : float
            ``conf_low``/``conf_high`` are the normal ``1 - alpha`` interval of the mean over
            seeds; ``seed_low``/``seed_high`` the ``alpha / 2`` and ``1 - alpha / 2`` quantiles
            of the seeds themselves.
        """
        quantity = check_option(
            quantity, name="quantity", options=("loss", "movement", "weight_norm")
        )
        alpha = check_scalar(
            alpha, name="alpha", low=0, high=1, low_inclusive=False, high_inclusive=False
        )
        frame = pd.DataFrame({"t": self.t, **_seed_band(getattr(self, quantity), alpha)})
        if quantity == "loss" and self.prediction is not None:
            frame["prediction"] = self.prediction
        return frame

    def relative_error(self) -> np.ndarray:
        """``|mean L(t) - prediction(t)| / prediction(t)`` per time (needs a prediction)."""
        if self.prediction is None:
            raise ValueError("this configuration has no theory curve to compare with")
        return np.abs(self.loss.mean(axis=0) - self.prediction) / self.prediction

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """Long table: ``t, term, estimate, std_error, conf_low, conf_high, prediction``."""
        frames = []
        for quantity in ("loss", "movement", "weight_norm"):
            band = self.band(quantity, alpha)
            frames.append(
                pd.DataFrame(
                    {
                        "t": band["t"],
                        "term": quantity,
                        "estimate": band["mean"],
                        "std_error": band["std_error"],
                        "conf_low": band["conf_low"],
                        "conf_high": band["conf_high"],
                        "prediction": band["prediction"] if "prediction" in band else np.nan,
                    }
                )
            )
        return pd.concat(frames, ignore_index=True)

    def glance(self) -> pd.DataFrame:
        row = super().glance().iloc[0].to_dict()
        row.update(
            n_seeds=self.n_seeds,
            theory=self.theory,
            final_loss=float(self.loss[:, -1].mean()),
            final_movement=float(self.movement[:, -1].mean()),
            max_relative_error=float(self.relative_error().max())
            if self.prediction is not None
            else np.nan,
            wall_time_s=self.wall_time_s,
        )
        return pd.DataFrame([row])

    def _repr_lines(self) -> list[str]:
        return [
            f"  {self.n_seeds} seeds, t in [{self.t[0]:g}, {self.t[-1]:g}]: mean loss "
            f"{self.loss[:, 0].mean():.4g} -> {self.loss[:, -1].mean():.4g}; theory: {self.theory}"
        ]


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class CPTaylorResults(Results):
    """Exact power-series coefficients of ``L(t)`` at ``t = 0``, per seed.

    Attributes
    ----------
    coefficients : ndarray of shape (n_seeds, order + 1)
        ``c_s`` with ``L(t) = sum_s c_s t^s``; ``c_s * s!`` is the derivative ``L^(s)(0)``.
    grad_norm2 : ndarray of shape (n_seeds,)
        ``||grad L(u_0)||^2`` (equals ``-c_1``).
    order : int
    """

    coefficients: np.ndarray
    grad_norm2: np.ndarray
    order: int = 1

    @property
    def derivatives(self) -> np.ndarray:
        """``L^(s)(0)`` per seed and order."""
        return self.coefficients * np.array([math.factorial(s) for s in range(self.order + 1)])

    def evaluate(self, t) -> np.ndarray:
        """The truncated series at times ``t``: array of shape (n_seeds, len(t))."""
        t = as_float_array(t, name="t", ndim=1)
        powers = t[None, :] ** np.arange(self.order + 1)[:, None]
        return self.coefficients @ powers

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per order: the mean derivative ``L^(s)(0)`` over seeds with its interval."""
        band = _seed_band(self.derivatives, alpha)
        return pd.DataFrame(
            {
                "term": [f"L^({s})(0)" for s in range(self.order + 1)],
                "estimate": band["mean"],
                "std_error": band["std_error"],
                "conf_low": band["conf_low"],
                "conf_high": band["conf_high"],
            }
        )


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


def _check_t_grid(t_grid) -> np.ndarray:
    t = as_float_array(t_grid, name="t_grid", ndim=1, min_rows=1)
    if t[0] < 0 or np.any(np.diff(t) <= 0):
        raise ValueError("`t_grid` must be non-negative and strictly increasing")
    if t[-1] == 0:
        raise ValueError("`t_grid` must reach beyond t = 0")
    return t


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


# --------------------------------------------------------------------------- the model


class CPGradientFlow(Estimator):
    """Gradient flow on a rank-``H`` CP model of an order-``nu`` tensor.

    The model is ``W(u) = alpha sum_h u_h^(1) (x) ... (x) u_h^(nu)`` (non-symmetric) or
    ``W(u) = alpha sum_h u_h^(x)nu`` (symmetric), the loss ``L = ||W - T||_F^2 / 2``, the flow
    ``du/dt = -grad L(u)`` from i.i.d. ``N(0, sigma^2)`` entries.

    Parameters
    ----------
    order : int
        ``nu >= 2``, the tensor order (at most 12).
    dim : int
        ``p``, the size of every mode.
    rank : int
        ``H``, the number of rank-one terms.
    symmetric : bool
        Share one factor across the ``nu`` modes.
    init_scale : float
        ``sigma``, the standard deviation of the initial entries.
    output_scale : float or {"ntk", "mean_field"}
        ``alpha``; ``"ntk"`` is ``H^(-1/2)``, ``"mean_field"`` is ``1 / H``.
    target : {"identity", "modular"} or array_like of shape (p,) * nu
        ``"identity"``: the diagonal tensor ``T_{i...i} = 1``; ``"modular"``: modular addition
        ``T_{a_1 ... a_nu} = 1[a_1 + ... + a_{nu-1} = a_nu mod p]`` (for ``nu = 3``, the
        multiplication table of Z_p); or any real tensor. Nothing passed is modified.

    Notes
    -----
    Simulation integrates the flow of all seeds as one ODE system (adaptive DOP853 of
    ``scipy.integrate.solve_ivp``), the gradient being one einsum per factor: the model output
    ``W`` is formed once per evaluation, then contracted with the other factors. The loss is a
    polynomial in ``u`` and so is the vector field (degree ``2 nu - 1``), so
    :meth:`taylor` gets the exact series of ``u(t)`` by the recursive power-series method
    (``(s + 1) a_{s+1} = [-grad L(u(t))]_s``, each coefficient a Cauchy product of lower ones)
    and the series of ``L`` from it.

    Theory curves (:meth:`predict`, derived for this implementation and checked by its tests):

    - non-symmetric model, any target: the mean tangent kernel at initialisation is
      ``kappa I`` with ``kappa = alpha^2 H nu sigma^(2(nu - 1))``, so in the lazy (NTK) limit
      ``L(t) = L(0) exp(-2 kappa t)``; with ``alpha = H^(-1/2)``, ``sigma = 1`` this is
      ``L(0) e^(-2 nu t)``;
    - symmetric ``nu = 2`` model with the identity target: ``M = alpha U U^T`` obeys
      ``dM/dt = -4 alpha (M^2 - M)``, so every eigenvalue of ``M`` follows the logistic
      flow ``l' = 4 alpha l (1 - l)`` and ``L(t) = sum_i (Phi_t(l_i) - 1)^2 / 2``, exactly at
      every size.
      At large ``p, H`` the initial eigenvalues follow the Marchenko-Pastur law of ratio
      ``p / H`` scaled by ``alpha sigma^2 H``, and their density is transported by the
      continuity equation ``F_t + v F_x = -v' F``, ``v(x) = 4 alpha x (1 - x)``: a first-order PDE
      that :meth:`characteristics` solves. ``p > H`` leaves ``p - H`` zero eigenvalues that
      never move: the loss floor ``(p - H) / 2`` of the under-parameterised regime.

    Fidelity: reconstruction. Only the paper's abstract and first page, and third-party
    summaries, could be read. From the paper: the model, loss, flow, Gaussian initialisation,
    the power-series view of ``L(t)``, the four regime names, the dependence on scaling,
    order and symmetry, the reduction to a first-order PDE solved by characteristics, and the
    identity and modular-arithmetic targets. Ours: the exact Taylor recursion (a standard
    method for polynomial ODEs; it computes the same coefficients the paper's diagrams sum,
    without the diagrams), the NTK constant ``kappa``, the spectral PDE of the symmetric
    ``nu = 2`` case, the order-``nu`` modular tensor, and the regime map of :meth:`regime`
    (the paper's "Pareto polygon" and its boundaries were not available).

    References
    ----------
    Yarotsky, D., Golikov, E. and Gusev, Y. (2026). Gradient flow through diagram expansions:
    learning regimes and explicit solutions. arXiv:2602.04548.

    Jacot, A., Gabriel, F. and Hongler, C. (2018). Neural tangent kernel. *NeurIPS 31*.

    Examples
    --------
    >>> flow = CPGradientFlow(3, 4, 256, output_scale="ntk")
    >>> res = flow.simulate(np.linspace(0, 0.5, 6), n_seeds=4, random_state=0)
    >>> bool(res.relative_error().max() < 0.5)
    True
    """

    method_name = "CP gradient flow"

    def __init__(
        self,
        order: int,
        dim: int,
        rank: int,
        *,
        symmetric: bool = False,
        init_scale: float = 1.0,
        output_scale="ntk",
        target="identity",
    ):
        self.order = check_positive_int(order, name="order", minimum=2)
        if self.order > _MAX_ORDER:
            raise ValueError(f"`order` must be at most {_MAX_ORDER}; got {order}")
        self.dim = check_positive_int(dim, name="dim")
        self.rank = check_positive_int(rank, name="rank")
        if not isinstance(symmetric, bool | np.bool_):
            raise TypeError(f"`symmetric` must be a bool; got {describe(symmetric)}")
        self.symmetric = bool(symmetric)
        self.init_scale = check_positive(init_scale, name="init_scale")
        if isinstance(output_scale, str):
            output_scale = check_option(
                output_scale, name="output_scale", options=("ntk", "mean_field")
            )
            self.output_scale = self.rank**-0.5 if output_scale == "ntk" else 1.0 / self.rank
        else:
            self.output_scale = check_positive(output_scale, name="output_scale")
        n_entries = self.dim**self.order
        if n_entries > 50_000_000:
            raise ValueError(
                f"the target has dim**order = {n_entries} entries; at most 5e7 are supported"
            )
        if isinstance(target, str):
            self.target_name = check_option(target, name="target", options=TARGETS)
            self.target = self._named_target(self.target_name)
        else:
            self.target_name = "custom"
            shape = (self.dim,) * self.order
            self.target = as_float_array(target, name="target")
            if self.target.shape != shape:
                raise ValueError(
                    f"`target` must have shape {shape} (dim, order times); got {self.target.shape}"
                )
        self.target.setflags(write=False)
        self._field = _Field(self.order, self.symmetric, self.output_scale, self.target)

    def _named_target(self, name: str) -> np.ndarray:
        p, nu = self.dim, self.order
        T = np.zeros((p,) * nu)
        if name == "identity":
            T[(np.arange(p),) * nu] = 1.0
        else:
            heads = np.indices((p,) * (nu - 1)).reshape(nu - 1, -1)
            T[(*heads, heads.sum(axis=0) % p)] = 1.0
        return T

    @property
    def nobs(self) -> int:
        """Entries of the target tensor."""
        return self.dim**self.order

    @property
    def kernel_rate(self) -> float:
        """``kappa = alpha^2 H nu sigma^(2(nu-1))``: the mean tangent kernel of the
        non-symmetric model, the loss decaying as ``exp(-2 kappa t)`` in the NTK limit."""
        return (
            self.output_scale**2
            * self.rank
            * self.order
            * self.init_scale ** (2 * (self.order - 1))
        )

    def _repr_spec(self) -> str:
        kind = "symmetric" if self.symmetric else "non-symmetric"
        return (
            f"order={self.order}, dim={self.dim}, rank={self.rank}, {kind}, "
            f"sigma={self.init_scale:g}, alpha={self.output_scale:g}, target={self.target_name}"
        )

    def initial_state(self, n_seeds: int = 1, *, random_state=None) -> np.ndarray:
        """The i.i.d. ``N(0, sigma^2)`` initial parameters of ``n_seeds`` runs.

        Shape ``(n_seeds, nu, H, p)``, or ``(n_seeds, H, p)`` when symmetric. The same
        ``random_state`` gives the same draws in :meth:`simulate`, :meth:`taylor` and
        :meth:`characteristics`.
        """
        n_seeds = check_positive_int(n_seeds, name="n_seeds")
        rng = check_random_state(random_state)
        shape = (self.rank, self.dim) if self.symmetric else (self.order, self.rank, self.dim)
        return self.init_scale * rng.standard_normal((n_seeds, *shape))

    def loss(self, state) -> np.ndarray:
        """``L(u)`` of each run of a batch of parameters (see :meth:`initial_state`)."""
        return self._field.loss(self._check_state(state))

    def gradient(self, state) -> np.ndarray:
        """``grad L(u)`` of each run of a batch of parameters."""
        return self._field.gradient(self._check_state(state))

    def _check_state(self, state) -> np.ndarray:
        state = as_float_array(state, name="state")
        shape = (self.rank, self.dim) if self.symmetric else (self.order, self.rank, self.dim)
        if state.shape[1:] != shape or state.ndim != len(shape) + 1:
            raise ValueError(
                f"`state` must have shape (n_seeds, {', '.join(map(str, shape))}); "
                f"got {state.shape}"
            )
        return state

    # ----------------------------------------------------------------------- simulate

    def simulate(
        self,
        t_grid,
        *,
        n_seeds: int = 8,
        backend=None,
        n_chunks: int | None = None,
        tol: float = 1e-8,
        random_state=None,
    ) -> CPFlowResults:
        """Integrate the gradient flow from ``n_seeds`` initialisations.

        Parameters
        ----------
        t_grid : array_like of shape (n_t,)
            Non-negative, increasing report times (the flow starts at 0).
        n_seeds : int
            Independent initialisations.
        backend : None, str, Backend or dask Client
            Where the batches of seeds run (:func:`statcore.distributed.get_backend`). The
            default integrates all seeds as one batched ODE system in this process.
        n_chunks : int, optional
            Batches the seeds are split into; default 1 on the serial backend and
            ``min(n_seeds, workers)`` otherwise. Each batch shares its adaptive steps, so the
            trajectories of different chunkings agree to the solver tolerance, not bitwise.
        tol : float
            Relative tolerance of the adaptive solver (absolute: ``1e-3 tol`` times the
            largest initial entry).
        random_state : None, int, SeedSequence or Generator
            Seeds the initialisations (as :meth:`initial_state`).

        Returns
        -------
        CPFlowResults
            With :meth:`predict`'s curve where this configuration has one. Its
            ``iterations`` record counts vector-field evaluations; a failed or non-finite
            integration warns (the flow of a polynomial field can blow up in finite time
            when a run is pushed the wrong way, e.g. with a huge step tolerance).
        """
        t_grid = _check_t_grid(t_grid)
        tol = check_scalar(tol, name="tol", low=0, high=1e-2, low_inclusive=False)
        U0 = self.initial_state(n_seeds, random_state=random_state)
        n_seeds = len(U0)
        start = time.perf_counter()
        with borrowed_backend(backend) as pool:
            if n_chunks is None:
                n_chunks = min(n_seeds, pool.n_workers)
            n_chunks = check_positive_int(n_chunks, name="n_chunks")
            if n_chunks > n_seeds:
                raise ValueError(f"`n_chunks` must not exceed n_seeds={n_seeds}; got {n_chunks}")
            chunks = np.array_split(np.arange(n_seeds), n_chunks)
            outputs = pool.map(
                _solve_chunk, [(self._field, U0[idx], t_grid, tol) for idx in chunks]
            )
        wall = time.perf_counter() - start
        nfev = int(sum(out[1] for out in outputs))
        failed = [out[3] for out in outputs if out[0] is None]
        states = None if failed else np.concatenate([out[0] for out in outputs], axis=1)
        diverged = bool(failed) or not np.all(np.isfinite(states))
        record = IterationRecord.from_run(
            function="CPGradientFlow.simulate",
            n_iter=nfev,
            maxiter=None,
            tol=tol,
            criterion="local error of the adaptive solver (relative)",
            met=not diverged,
            diverged=diverged,
            remedy="shorten t_grid or lower tol" + (f" ({failed[0]})" if failed else ""),
        )
        if diverged:
            raise RuntimeError(
                "the gradient flow could not be integrated over t_grid"
                + (f": {failed[0]}" if failed else " (non-finite state)")
            )
        n_t = len(t_grid)
        flat = states.reshape(n_t * n_seeds, *U0.shape[1:])
        loss = self._field.loss(flat).reshape(n_t, n_seeds).T
        W = self._field.output(flat).reshape(n_t, n_seeds, -1)
        weight_norm = np.linalg.norm(W, axis=-1).T
        comp = self._field.component_norms(flat).reshape(n_t, n_seeds, -1).transpose(1, 0, 2)
        move = states - U0[None]
        movement = (
            np.sqrt(np.sum(move.reshape(n_t, n_seeds, -1) ** 2, axis=-1))
            / np.sqrt(np.sum(U0.reshape(n_seeds, -1) ** 2, axis=-1))[None]
        ).T
        prediction, label = self._prediction(t_grid, U0)
        return CPFlowResults(
            method=f"{self.method_name} ({self._repr_spec()})",
            t=t_grid,
            loss=loss,
            movement=movement,
            weight_norm=weight_norm,
            component_norms=comp,
            prediction=prediction,
            prediction_label=label,
            theory=label.split(":")[0] if label else "none",
            n_seeds=n_seeds,
            wall_time_s=wall,
            iterations=record,
            **self._result_fields(),
        )

    # ----------------------------------------------------------------------- theory

    def _has_spectral_theory(self) -> bool:
        return self.symmetric and self.order == 2 and self.target_name == "identity"

    def _prediction(self, t, U0):
        if self._has_spectral_theory():
            eig = self._spectra(U0)
            curve = np.mean([_logistic_loss(lam, t, self.output_scale) for lam in eig], axis=0)
            return (
                curve,
                "spectral (exact): eigenvalues of alpha U U^T follow l' = 4 alpha l (1 - l)",
            )
        if not self.symmetric:
            L0 = self._field.loss(U0).mean()
            return L0 * np.exp(-2 * self.kernel_rate * t), (
                f"NTK: L(0) exp(-2 kappa t), kappa = {self.kernel_rate:.4g}"
            )
        return None, ""

    def _spectra(self, U0) -> list[np.ndarray]:
        return [np.linalg.eigvalsh(self.output_scale * u.T @ u) for u in U0]

    def predict(self, t_grid) -> np.ndarray:
        """The large-size theory curve of the expected loss at ``t_grid``.

        Non-symmetric models: the NTK curve ``E L(0) exp(-2 kappa t)`` with
        ``E L(0) = (||T||^2 + alpha^2 H sigma^(2 nu) p^nu) / 2``. Symmetric ``nu = 2`` models
        with the identity target: the Marchenko-Pastur characteristics of
        :meth:`characteristics`. Other configurations have no derived curve (ValueError).
        """
        t_grid = _check_t_grid(t_grid)
        if self._has_spectral_theory():
            return self.characteristics(t_grid).loss
        if self.symmetric:
            raise ValueError(
                "no theory curve is derived for symmetric models other than order 2 with the "
                "identity target"
            )
        a, s, H, p, nu = self.output_scale, self.init_scale, self.rank, self.dim, self.order
        L0 = 0.5 * (np.sum(self.target**2) + a**2 * H * s ** (2 * nu) * p**nu)
        return L0 * np.exp(-2 * self.kernel_rate * t_grid)

    def taylor(self, order: int, *, n_seeds: int = 1, random_state=None) -> CPTaylorResults:
        """Exact power-series coefficients of ``L(t)`` at ``t = 0``.

        Parameters
        ----------
        order : int
            Highest power of ``t`` kept (at most 40).
        n_seeds, random_state
            The initialisations, as in :meth:`initial_state` (the same seed gives the same
            runs as :meth:`simulate`).

        Returns
        -------
        CPTaylorResults
            ``coefficients[:, s]`` is ``L^(s)(0) / s!``; ``-coefficients[:, 1]`` equals
            ``||grad L(u_0)||^2``.

        Notes
        -----
        With ``u(t) = sum_s a_s t^s``, the flow gives ``(s + 1) a_{s+1} = -[grad L(u)]_s``,
        and the ``s``-th coefficient of the multilinear gradient is the sum, over the ways of
        writing ``s`` as a sum of one order per argument, of the gradient evaluated on those
        coefficients (a Cauchy product). The residual's series ``R_s`` comes the same way
        from the output's, and ``L_s = sum_{i + j = s} <R_i, R_j> / 2``. Exact up to rounding;
        the series converges only within a finite radius (the flow's complex singularities).
        The paper's diagrams are the seed averages of these coefficients grouped by their
        index contractions; here they are summed numerically, seed by seed.
        """
        order = check_positive_int(order, name="order")
        if order > _MAX_TAYLOR_ORDER:
            raise ValueError(f"`order` must be at most {_MAX_TAYLOR_ORDER}; got {order}")
        U0 = self.initial_state(n_seeds, random_state=random_state)
        f = self._field
        nu = self.order
        a = [U0]  # series coefficients of u
        R = []  # series coefficients of the residual

        def factor_series(s, k):
            return a[s] if self.symmetric else a[s][:, k]

        def output_coef(s):
            total = 0.0
            for comp in _compositions(s, nu):
                total = total + np.einsum(
                    f.out_spec,
                    *(factor_series(c, k) for k, c in enumerate(comp)),
                    optimize=True,
                )
            return f.alpha * total

        for s in range(order):
            R.append(output_coef(s) - (self.target if s == 0 else 0.0))
            parts = []
            for k, spec in enumerate(f.grad_specs):
                total = 0.0
                for comp in _compositions(s, nu):
                    # comp[0] is the residual's order; the rest go to the other factors
                    others = [j for j in range(nu) if j != k]
                    total = total + np.einsum(
                        spec,
                        R[comp[0]],
                        *(factor_series(c, j) for j, c in zip(others, comp[1:], strict=True)),
                        optimize=True,
                    )
                parts.append(f.alpha * total)
            grad = sum(parts) if self.symmetric else np.stack(parts, axis=1)
            a.append(-grad / (s + 1))
        R.append(output_coef(order))
        S = len(U0)
        flat = [r.reshape(S, -1) for r in R]
        coef = np.zeros((S, order + 1))
        for s in range(order + 1):
            coef[:, s] = 0.5 * sum(
                np.einsum("si,si->s", flat[i], flat[s - i]) for i in range(s + 1)
            )
        grad0 = f.gradient(U0)
        return CPTaylorResults(
            method=f"Taylor series of L(t) at 0 ({self._repr_spec()})",
            coefficients=coef,
            grad_norm2=np.sum(grad0.reshape(S, -1) ** 2, axis=1),
            order=order,
            fit_options=MappingProxyType(
                {"order": order, "n_seeds": S, "random_state": random_state}
            ),
            **self._result_fields(),
        )

    def characteristics(
        self,
        t_grid,
        *,
        initial: str = "limit",
        n_points: int = 400,
        random_state=None,
        tol: float = 1e-10,
    ) -> CharacteristicsResults:
        """Loss curve from the first-order PDE of the summed series, by characteristics.

        Derived for the symmetric ``nu = 2`` model with the identity target (class Notes):
        the eigenvalue density ``F(x, t)`` of ``alpha U U^T`` solves
        ``F_t + v(x) F_x = -v'(x) F`` with ``v(x) = 4 alpha x (1 - x)``, and
        ``L(t) = (p / 2) int (x - 1)^2 F(x, t) dx``.

        Parameters
        ----------
        t_grid : array_like
            Report times.
        initial : {"limit", "empirical"}
            ``"limit"``: the large-size law at ``t = 0``, Marchenko-Pastur of ratio ``p / H``
            scaled by ``alpha sigma^2 H`` (with its atom at 0 when ``p > H``), integrated on
            ``n_points`` Chebyshev nodes; ``"empirical"``: the ``p`` eigenvalues of one drawn
            initialisation (``random_state``), which makes the prediction exact at this size.
        n_points : int
            Characteristics started in the continuous part (``"limit"``).
        random_state
            The draw for ``"empirical"``.
        tol : float
            Relative tolerance of the characteristic ODEs.

        Returns
        -------
        CharacteristicsResults
            ``loss`` is the expected loss (``"limit"``) or that run's loss (``"empirical"``).
        """
        initial = check_option(initial, name="initial", options=("limit", "empirical"))
        if not self._has_spectral_theory():
            raise ValueError(
                "characteristics are derived for the symmetric order-2 model with the "
                "identity target only; this model has "
                f"order={self.order}, symmetric={self.symmetric}, target={self.target_name!r}"
            )
        n_points = check_positive_int(n_points, name="n_points", minimum=2)
        t_grid = _check_t_grid(t_grid)
        p, H = self.dim, self.rank
        if initial == "limit":
            nodes, weights, atom = marchenko_pastur_nodes(p / H, n_points)
            scale = self.output_scale * self.init_scale**2 * H
            x0, mass = scale * nodes, weights

            def density(x):
                return _marchenko_pastur_density(x / scale, p / H) / scale

        else:
            x0 = self._spectra(self.initial_state(1, random_state=random_state))[0]
            mass, atom = np.full(p, 1.0 / p), 0.0

            def density(x):  # point masses have no density: carry the ratio F / F(x0, 0)
                return np.ones_like(x)

        rate = 4.0 * self.output_scale
        # characteristics of the density: dx/dt = v(x), dF/dt = -v'(x) F
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
        loss = 0.5 * p * ((sol.x - 1.0) ** 2 @ mass + atom)
        return CharacteristicsResults(
            method=f"Characteristics of the spectral continuity equation ({initial})",
            t=t_grid,
            loss=loss,
            solution=sol,
            fit_options=MappingProxyType(
                {"initial": initial, "n_points": n_points, "random_state": random_state, "tol": tol}
            ),
            **self._result_fields(),
        )

    def regime(self, scaling: Mapping) -> pd.Series:
        """Place a scaling of the sizes on the regime map.

        Parameters
        ----------
        scaling : mapping
            Exponents of a large parameter ``N``: ``{"dim": a_p, "rank": a_H, "init": a_sigma,
            "output": a_alpha}`` for ``p ~ N^a_p``, ``H ~ N^a_H``, ``sigma ~ N^a_sigma``,
            ``alpha ~ N^a_alpha`` (missing keys are 0). This model's order, symmetry and
            target set the rest.

        Returns
        -------
        Series
            ``regime`` (one of :data:`REGIMES`) and the exponents it is read from:
            ``output`` of ``||W(0)||``, ``target`` of ``||T||``, ``kernel`` of the tangent
            kernel rate ``kappa``, ``movement`` of the relative parameter movement
            ``||Delta u|| / ||u(0)||`` a linearised fit needs, and ``kernel_fluctuation``
            (``(nu - 1) a_p - a_H``; negative when the random tangent kernel concentrates).

        Notes
        -----
        Fidelity: reconstruction (ours; the paper's regime polygon was not available). With
        ``R_0`` the initial residual, a linearised flow must move the parameters by about
        ``||R_0|| / sqrt(kappa)``, against their size ``sigma sqrt(nu H p)``:

        - ``movement < 0`` (lazy): ``"NTK"`` when the target is at least as large as the
          initial output, ``"free evolution"`` when the initial output dominates (the flow
          only relaxes ``W(0)``; the target is invisible at leading order);
        - ``movement >= 0`` (rich, mean field): over-parameterised when ``a_H > a_p`` (more
          terms than the rank ``p`` of the identity), under-parameterised when ``a_H < a_p``,
          proportional when equal.

        ``||W(0)||`` is ``alpha sqrt(H) sigma^nu p^(nu/2)`` for the centred terms; a symmetric
        model of even order adds its mean ``alpha H sigma^nu p^(nu/4)`` (the pairings of
        ``E u^(x)nu``), one place where symmetry changes the map. ``||T||`` is ``p^(1/2)``
        for the identity, ``p^((nu-1)/2)`` for the modular tensor and is read from two sizes
        for a custom target (``p`` fixed: exponent 0).
        """
        if not isinstance(scaling, Mapping):
            raise TypeError(f"`scaling` must be a mapping of exponents; got {describe(scaling)}")
        known = ("dim", "rank", "init", "output")
        unknown = sorted(set(scaling) - set(known))
        if unknown:
            raise ValueError(f"`scaling` has unknown keys {unknown}; use {list(known)}")
        e = {}
        for key in known:
            value = scaling.get(key, 0.0)
            e[key] = check_scalar(value, name=f"scaling[{key!r}]", kind=numbers.Real)
        nu = self.order
        a_p, a_H, a_s, a_a = e["dim"], e["rank"], e["init"], e["output"]
        output = a_a + a_H / 2 + nu * a_s + nu * a_p / 2
        if self.symmetric and nu % 2 == 0:
            output = max(output, a_a + a_H + nu * a_s + nu * a_p / 4)
        if self.target_name == "identity":
            target = a_p / 2
        elif self.target_name == "modular":
            target = (nu - 1) * a_p / 2
        else:
            target = 0.0
        kernel = 2 * a_a + a_H + 2 * (nu - 1) * a_s
        residual = max(output, target)
        movement = residual - (a_a + a_H + nu * a_s + a_p / 2)
        fluct = (nu - 1) * a_p - a_H
        tiny = 1e-12  # exponents are exact rationals in practice; ties are ties
        if movement < -tiny:
            label = "free evolution" if output > target + tiny else "NTK"
        elif a_H > a_p + tiny:
            label = "over-parameterised mean field"
        elif a_H < a_p - tiny:
            label = "under-parameterised mean field"
        else:
            label = "proportional mean field"
        return pd.Series(
            {
                "regime": label,
                "output": output,
                "target": target,
                "kernel": kernel,
                "movement": movement,
                "kernel_fluctuation": fluct,
            },
            name="regime",
        )


def _compositions(s: int, parts: int):
    """All tuples of ``parts`` non-negative integers summing to ``s``."""
    for cuts in itertools.combinations(range(s + parts - 1), parts - 1):
        bounds = (-1, *cuts, s + parts - 1)
        yield tuple(bounds[i + 1] - bounds[i] - 1 for i in range(parts))


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
    "REGIMES",
    "TARGETS",
    "CPFlowResults",
    "CPGradientFlow",
    "CPTaylorResults",
    "CharacteristicSolution",
    "CharacteristicsResults",
    "marchenko_pastur_nodes",
    "solve_characteristics",
]
