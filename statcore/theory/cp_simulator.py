"""Gradient flow of CP tensor models: the simulator, and the model whose methods give the exact
Taylor series, the regime map and the loss curve of the characteristics.

Yarotsky, Golikov and Gusev (2026) expand the loss of gradient flow (GF) on a rank-``H`` CP model
of an order-``nu`` tensor as a power series in time whose coefficients are sums over diagrams,
read the large-size limit of that series as a map of learning regimes, and sum it, where they can,
through a first-order PDE solved by characteristics. :class:`CPGradientFlow` holds one such
problem; its :meth:`~CPGradientFlow.simulate` runs the flow over many initialisations at once,
:meth:`~CPGradientFlow.taylor` gives the exact series coefficients of ``L(t)`` at 0
(:mod:`statcore.theory.cp_taylor`), :meth:`~CPGradientFlow.regime` places a scaling of the sizes
on the regime map (:mod:`statcore.theory.cp_regimes`) and :meth:`~CPGradientFlow.characteristics`
returns the loss curve a summed series predicts (:mod:`statcore.theory.cp_characteristics`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.base import Estimator
from statcore.compat import renamed_attribute
from statcore.distributed import borrowed_backend
from statcore.results import IterationRecord, Results
from statcore.results.plotting import get_ax
from statcore.theory.cp_characteristics import (
    CharacteristicsResults,
    _logistic_loss,
    _marchenko_pastur_density,
    marchenko_pastur_nodes,
    spectral_loss_curve,
)
from statcore.theory.cp_field import (
    _MAX_ORDER,
    TARGETS,
    _check_t_grid,
    _Field,
    _seed_band,
    _solve_chunk,
    named_target,
)
from statcore.theory.cp_regimes import regime_map
from statcore.theory.cp_taylor import MAX_TAYLOR_ORDER, CPTaylorResults, taylor_coefficients
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
    describe,
)


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
    ax.set_title(f"{results.method}\ntheory: {results.theory_name}")
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
    theory_name : str
        Which theory curve ``prediction`` is (``"NTK"``, ``"spectral (exact)"``) or
        ``"none"``; the regime of a scaling is :meth:`CPGradientFlow.regime`'s business. Its
        old name ``theory`` warns ``FutureWarning`` (elsewhere in :mod:`statcore.theory`,
        ``theory`` is the theory's curve itself).
    n_seeds : int
    wall_time_s : float

    Vocabulary
    ----------
    One name per quantity across the CP tools of :mod:`statcore.theory`: ``order`` is the tensor
    order ``nu`` of the model (on :class:`CPTaylorResults`, the highest power of ``t`` kept),
    ``dim`` the mode size ``p``, ``rank`` the number ``H`` of rank-one terms, ``init_scale``
    ``sigma``, ``output_scale`` ``alpha``; ``n_seeds`` counts independent initialisations, ``t``
    the report times, ``loss`` is ``L(t)``, ``prediction`` the theory's loss curve on ``t`` and
    ``theory_name`` which theory it is; ``wall_time_s`` the seconds a run took.
    """

    t: np.ndarray
    loss: np.ndarray
    movement: np.ndarray
    weight_norm: np.ndarray
    component_norms: np.ndarray
    prediction: np.ndarray | None = None
    prediction_label: str = ""
    theory_name: str = "none"
    n_seeds: int = 1
    wall_time_s: float = math.nan

    theory = renamed_attribute("theory", "theory_name")

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
            theory=self.theory_name,
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
            f"{self.loss[:, 0].mean():.4g} -> {self.loss[:, -1].mean():.4g}; "
            f"theory: {self.theory_name}"
        ]


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
    _recorded_methods = ("taylor", "characteristics")

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
            self.target = named_target(self.target_name, self.dim, self.order)
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
            theory_name=label.split(":")[0] if label else "none",
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
        The recursion of :func:`statcore.theory.cp_taylor.taylor_coefficients`, exact up to
        rounding; the series converges only within a finite radius (the flow's complex
        singularities). The paper's diagrams are the seed averages of these coefficients
        grouped by their index contractions; here they are summed numerically, seed by seed.
        """
        order = check_positive_int(order, name="order")
        if order > MAX_TAYLOR_ORDER:
            raise ValueError(f"`order` must be at most {MAX_TAYLOR_ORDER}; got {order}")
        U0 = self.initial_state(n_seeds, random_state=random_state)
        S = len(U0)
        grad0 = self._field.gradient(U0)
        return CPTaylorResults(
            method=f"Taylor series of L(t) at 0 ({self._repr_spec()})",
            coefficients=taylor_coefficients(self._field, U0, order),
            grad_norm2=np.sum(grad0.reshape(S, -1) ** 2, axis=1),
            order=order,
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

        loss, sol = spectral_loss_curve(
            x0,
            mass,
            atom,
            density,
            t_grid,
            alpha=self.output_scale,
            dim=p,
            tol=tol,
        )
        return CharacteristicsResults(
            method=f"Characteristics of the spectral continuity equation ({initial})",
            t=t_grid,
            loss=loss,
            solution=sol,
            **self._result_fields(),
        )

    def regime(self, scaling: Mapping) -> pd.Series:
        """Place a scaling of the sizes on the regime map.

        :func:`~statcore.theory.cp_regimes.regime_map` with this model's order, symmetry and
        target (``scaling`` and the Series returned are described there)."""
        return regime_map(
            scaling, order=self.order, symmetric=self.symmetric, target_name=self.target_name
        )


__all__ = ["CPFlowResults", "CPGradientFlow"]
