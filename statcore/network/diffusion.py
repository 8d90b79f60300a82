"""Tree-based flow matching (ForestFlow): SyNGLER's SyNG-D generator over node parameters."""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from statcore._compat import import_optional, renamed_attribute
from statcore._progress import progress as progress_bar
from statcore._validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
    describe,
)
from statcore.base import Estimator
from statcore.results import Results

SCALINGS = ("minmax", "standard")
SOLVERS = ("heun", "euler")
# rows per noise level on which the fitted velocity's R^2 is reported (a diagnostic only)
_R2_ROWS = 2000


def _require_sklearn():
    """scikit-learn's regressor and threadpoolctl (a scikit-learn dependency): the network extra."""
    ensemble = import_optional("sklearn.ensemble", "network")
    threadpoolctl = import_optional("threadpoolctl", "network")
    return ensemble.HistGradientBoostingRegressor, threadpoolctl.threadpool_limits


def _optional_positive_int(value, *, name: str):
    return None if value is None else check_positive_int(value, name=name)


def _time_grid(n_t: int, solver: str) -> np.ndarray:
    """Noise levels of the regressors: both ends for Heun (it evaluates at t and t + h), the
    left ends of n_t equal steps for Euler (each step evaluates at its start only)."""
    if solver == "heun":
        return np.linspace(0.0, 1.0, n_t)
    return np.arange(n_t) / n_t


def _column_scaling(X, scaling):
    """Column ranges and the (centre, spread) that map each column to the scaled space.

    Constant columns get centre = their value and spread 1: they are reproduced, not modelled.
    """
    lower, upper = X.min(axis=0), X.max(axis=0)
    constant = upper == lower
    if scaling == "minmax":
        centre, spread = (upper + lower) / 2.0, (upper - lower) / 2.0
    else:
        centre, spread = X.mean(axis=0), X.std(axis=0)
    centre[constant] = lower[constant]
    spread[constant] = 1.0
    return lower, upper, centre, spread


def _fit_velocities(x1, x0, times, seeds, check_rows, hyper, *, n_threads, bar):
    """One regressor per (noise level, column) of the velocity x1 - x0 on x_t; their R^2."""
    Regressor, threadpool_limits = _require_sklearn()
    target = x1 - x0
    n_columns = x1.shape[1]
    regressors, r2 = [], np.full((len(times), n_columns), np.nan)
    with threadpool_limits(limits=n_threads, user_api="openmp"):
        for level, t in enumerate(times):
            xt = t * x1 + (1.0 - t) * x0
            fitted = []
            for k in range(n_columns):
                reg = Regressor(
                    loss="squared_error",
                    early_stopping=False,
                    random_state=int(seeds[level, k]),
                    **hyper,
                ).fit(xt, target[:, k])
                y = target[check_rows, k]
                resid = y - reg.predict(xt[check_rows])
                r2[level, k] = 1.0 - resid.var() / y.var()
                fitted.append(reg)
                bar.update(1)
            regressors.append(tuple(fitted))
    return regressors, r2


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ForestFlowResults(Results):
    """A fitted tree-based flow-matching generator; :meth:`sample` draws new rows.

    Attributes
    ----------
    columns : tuple of str
        Column names of the training table.
    times : ndarray
        The noise levels t at which a velocity regressor was fitted.
    n_t, duplicate_K : int
        Number of noise levels and of noise copies of each training row.
    solver : {"heun", "euler"}
        ODE integrator used by :meth:`sample`.
    scaling : {"minmax", "standard"}
        Column scaling applied before fitting and inverted after sampling.
    clip : bool
        Whether samples are clipped to the observed range of each column.
    constant_columns : tuple of int
        Columns that did not vary in the data: reproduced exactly, not modelled.
    hyperparameters : dict
        Options of the gradient-boosted tree regressors.
    wall_time_s : float
        Wall time of the fit in seconds (``fit_seconds`` before; that name warns
        ``FutureWarning`` and goes in the next release).
    """

    columns: tuple[str, ...]
    times: np.ndarray
    n_t: int
    duplicate_K: int
    solver: str
    scaling: str
    clip: bool
    constant_columns: tuple[int, ...]
    hyperparameters: dict
    wall_time_s: float
    n_threads: int | None
    _regressors: tuple = field(repr=False)
    _centre: np.ndarray = field(repr=False)
    _spread: np.ndarray = field(repr=False)
    _lower: np.ndarray = field(repr=False)
    _upper: np.ndarray = field(repr=False)
    _r2: np.ndarray = field(repr=False)

    fit_seconds = renamed_attribute("fit_seconds", "wall_time_s")

    def sample(self, n: int, random_state=None) -> np.ndarray:
        """Draw ``n`` new rows by integrating the fitted velocity field from Gaussian noise.

        Parameters
        ----------
        n : int
            Number of rows.
        random_state : None, int or Generator
            Source of the starting noise; the integration itself is deterministic.

        Returns
        -------
        ndarray of shape (n, n_columns)
        """
        n = check_positive_int(n, name="n")
        rng = check_random_state(random_state)
        p = len(self.columns)
        active = np.setdiff1d(np.arange(p), self.constant_columns)
        x = rng.standard_normal((n, len(active)))
        if len(active):
            _, threadpool_limits = _require_sklearn()
            with threadpool_limits(limits=self.n_threads, user_api="openmp"):
                x = self._integrate(x)
        out = np.empty((n, p))
        out[:, active] = x * self._spread[active] + self._centre[active]
        out[:, list(self.constant_columns)] = self._centre[list(self.constant_columns)]
        if self.clip:
            np.clip(out, self._lower, self._upper, out=out)
        return out

    def _velocity(self, level: int, x: np.ndarray) -> np.ndarray:
        return np.column_stack([reg.predict(x) for reg in self._regressors[level]])

    def _integrate(self, x: np.ndarray) -> np.ndarray:
        if self.solver == "euler":
            h = 1.0 / self.n_t
            for level in range(self.n_t):
                x = x + h * self._velocity(level, x)
            return x
        h = 1.0 / (self.n_t - 1)
        for level in range(self.n_t - 1):
            v = self._velocity(level, x)
            v_next = self._velocity(level + 1, x + h * v)
            x = x + 0.5 * h * (v + v_next)
        return x

    def tidy(self) -> pd.DataFrame:
        """One row per (noise level, modelled column): the training R^2 of the fitted velocity.

        Columns ``noise_level`` (the level's index), ``t``, ``column``, ``velocity_r2``.

        R^2 is computed on up to 2,000 training rows per level. It is near 1 close to the noise
        (t = 0, where the target is almost a linear function of x_t) and falls with t, as the
        velocity becomes noise that x_t cannot predict; it is a diagnostic, not a fit criterion.
        """
        active = [c for c in range(len(self.columns)) if c not in self.constant_columns]
        rows = [
            {
                "noise_level": level,
                "t": float(t),
                "column": self.columns[col],
                "velocity_r2": float(self._r2[level, k]),
            }
            for level, t in enumerate(self.times)
            for k, col in enumerate(active)
        ]
        return pd.DataFrame(rows, columns=["noise_level", "t", "column", "velocity_r2"])

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["columns"] = len(self.columns)
        row["n_t"] = self.n_t
        row["duplicate_K"] = self.duplicate_K
        row["solver"] = self.solver
        row["scaling"] = self.scaling
        row["regressors"] = sum(len(level) for level in self._regressors)
        row["wall_time_s"] = self.wall_time_s
        return row


class ForestFlow(Estimator):
    """Tree-based flow matching for a numeric table (ForestFlow; SyNGLER's SyNG-D).

    Conditional flow matching with the straight path ``x_t = t x_1 + (1 - t) x_0`` from Gaussian
    noise ``x_0 ~ N(0, I)`` (t = 0) to the scaled data ``x_1`` (t = 1): its velocity field
    ``v(x, t) = E[x_1 - x_0 | x_t = x]`` transports the noise distribution onto the data
    distribution along the ODE ``dx/dt = v(x, t)``. As in ForestFlow, the velocity is learnt by
    regression on a grid of ``n_t`` noise levels, with one gradient-boosted tree ensemble per
    level and per column fitted on ``duplicate_K`` noise copies of every row; sampling
    integrates the ODE from fresh noise and undoes the scaling.

    Parameters
    ----------
    data : array_like of shape (n, p) or DataFrame
        Numeric table, n >= 2, finite. Columns that do not vary are reproduced as constants.

    Notes
    -----
    The authors of SyNGLER run ForestDiffusion's variance-preserving diffusion with XGBoost;
    this is its flow-matching variant (ForestFlow, from the same paper) with scikit-learn's
    histogram gradient boosting in place of XGBoost. Defaults follow the authors' SyNG-D
    settings (50 noise levels, 100 noise copies, 100 trees of depth 7, learning rate 0.3, no
    penalty), which cost ``n_t * p`` tree ensembles on ``n * duplicate_K`` rows each; far smaller
    settings (say ``n_t=10, duplicate_K=10``) already reproduce smooth low-dimensional
    distributions. The default Heun (second-order) integrator removes most of the variance
    shrinkage that ForestFlow's Euler integrator shows at small ``n_t``.

    References
    ----------
    Jiang, F. et al. (2026). SyNGLER: Synthetic network generation via latent embedding
    reconstruction. ICML 2026 (SyNG-D).

    Jolicoeur-Martineau, A., Fatras, K. and Kachman, T. (2024). Generating and imputing tabular
    data via diffusion and flow-based gradient-boosted trees. AISTATS 2024 (ForestDiffusion,
    ForestFlow).

    Lipman, Y. et al. (2023). Flow matching for generative modeling. ICLR 2023.
    """

    def __init__(self, data):
        self.columns = (
            tuple(str(c) for c in data.columns) if isinstance(data, pd.DataFrame) else None
        )
        self.data = as_float_array(data, name="data", ndim=2, min_rows=2)
        if self.data.shape[1] == 0:
            raise ValueError(f"`data` needs at least one column; got shape {self.data.shape}")
        if self.columns is None:
            self.columns = tuple(f"x{j}" for j in range(self.data.shape[1]))

    @property
    def nobs(self) -> int:
        """Number of rows of the table."""
        return self.data.shape[0]

    def _repr_spec(self) -> str:
        return f"columns={list(self.columns)}"

    def fit(
        self,
        *,
        n_t: int = 50,
        duplicate_K: int = 100,
        n_estimators: int = 100,
        learning_rate: float = 0.3,
        max_depth: int | None = 7,
        max_leaf_nodes: int | None = None,
        min_samples_leaf: int = 20,
        l2_regularization: float = 0.0,
        max_bins: int = 255,
        scaling: str = "minmax",
        solver: str = "heun",
        clip: bool = True,
        n_threads: int | None = 1,
        random_state=None,
        progress: bool = False,
    ) -> ForestFlowResults:
        """Fit one velocity regressor per noise level and column.

        Parameters
        ----------
        n_t : int
            Number of noise levels (>= 2). With ``solver="heun"`` the levels are
            ``t = 0, 1/(n_t-1), ..., 1`` and sampling takes ``n_t - 1`` steps; with
            ``"euler"`` they are ``0, 1/n_t, ..., (n_t-1)/n_t`` and sampling takes ``n_t``.
        duplicate_K : int
            Noise copies of each row in the training set of every level.
        n_estimators, learning_rate, max_depth, max_leaf_nodes, min_samples_leaf, \
l2_regularization, max_bins
            Options of each ``sklearn.ensemble.HistGradientBoostingRegressor`` (squared loss,
            no early stopping); ``n_estimators`` is its ``max_iter``.
        scaling : {"minmax", "standard"}
            Map each column to [-1, 1] (ForestFlow's choice) or to mean 0 and sd 1.
        solver : {"heun", "euler"}
            Integrator of the sampling ODE: Heun's second-order method (two velocity
            evaluations per step) or ForestFlow's Euler steps.
        clip : bool
            Clip samples to the observed range of each column, as ForestFlow does.
        n_threads : int or None
            OpenMP threads for the tree fits and predictions. Each regression is small, so
            thread start-up dominates: 1 (default) is fastest on a busy or small machine;
            None uses scikit-learn's default (all cores).
        random_state : None, int or Generator
            Draws the training noise (and seeds the regressors).
        progress : bool
            Show a progress bar over the ``n_t`` x (modelled columns) regressors being fitted.

        Returns
        -------
        ForestFlowResults
        """
        # over 80 lines only through its docstring; the regressions run in _fit_velocities
        n_t = check_positive_int(n_t, name="n_t", minimum=2)
        duplicate_K = check_positive_int(duplicate_K, name="duplicate_K")
        hyper = {
            "max_iter": check_positive_int(n_estimators, name="n_estimators"),
            "learning_rate": check_positive(learning_rate, name="learning_rate"),
            "max_depth": _optional_positive_int(max_depth, name="max_depth"),
            "max_leaf_nodes": None
            if max_leaf_nodes is None
            else check_positive_int(max_leaf_nodes, name="max_leaf_nodes", minimum=2),
            "min_samples_leaf": check_positive_int(min_samples_leaf, name="min_samples_leaf"),
            "l2_regularization": check_positive(
                l2_regularization, name="l2_regularization", strict=False
            ),
            "max_bins": check_scalar(
                max_bins, name="max_bins", kind=numbers.Integral, low=2, high=255
            ),
        }
        check_option(scaling, name="scaling", options=SCALINGS)
        check_option(solver, name="solver", options=SOLVERS)
        if not isinstance(clip, bool | np.bool_):
            raise TypeError(f"`clip` must be True or False; got {describe(clip)}")
        n_threads = _optional_positive_int(n_threads, name="n_threads")
        rng = check_random_state(random_state)
        _require_sklearn()  # a missing extra fails here, before any work

        start = time.perf_counter()
        X = self.data
        lower, upper, centre, spread = _column_scaling(X, scaling)
        constant = np.flatnonzero(upper == lower)
        active = np.flatnonzero(upper > lower)

        times = _time_grid(n_t, solver)
        x1 = np.tile((X[:, active] - centre[active]) / spread[active], (duplicate_K, 1))
        x0 = rng.standard_normal(x1.shape)
        seeds = rng.integers(0, 2**31 - 1, size=(n_t, len(active)))
        check_rows = rng.choice(len(x1), size=min(len(x1), _R2_ROWS), replace=False)
        with progress_bar(n_t * len(active), enabled=progress, desc="ForestFlow.fit") as bar:
            regressors, r2 = _fit_velocities(
                x1, x0, times, seeds, check_rows, hyper, n_threads=n_threads, bar=bar
            )
        elapsed = time.perf_counter() - start

        hyper_out = dict(hyper)
        hyper_out["n_estimators"] = hyper_out.pop("max_iter")
        return ForestFlowResults(
            **self._result_fields(),
            method=f"ForestFlow (tree-based flow matching, {solver})",
            columns=self.columns,
            times=times,
            n_t=n_t,
            duplicate_K=duplicate_K,
            solver=solver,
            scaling=scaling,
            clip=bool(clip),
            constant_columns=tuple(int(c) for c in constant),
            hyperparameters=hyper_out,
            wall_time_s=elapsed,
            n_threads=n_threads,
            _regressors=tuple(regressors),
            _centre=centre,
            _spread=spread,
            _lower=lower,
            _upper=upper,
            _r2=r2,
        )
