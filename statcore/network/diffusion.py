"""Tree-based generative models of a numeric table: SyNGLER's SyNG-D generator over node parameters.

Two variants from Jolicoeur-Martineau, Fatras and Kachman (2024), sharing the tree regressors,
the scaling and the noise copies: :class:`ForestDiffusion`, the variance-preserving (VP-SDE)
score-based diffusion that the SyNGLER authors run as SyNG-D, and :class:`ForestFlow`, its
flow-matching variant.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.base import Estimator
from statcore.compat import import_optional, renamed_attribute
from statcore.progress import progress as progress_bar
from statcore.results import Results
from statcore.validation import (
    as_float_array,
    check_bool,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
)

SCALINGS = ("minmax", "standard")
SOLVERS = ("heun", "euler")
# rows per noise level on which the fitted regression's R^2 is reported (a diagnostic only)
_R2_ROWS = 2000


def _require_sklearn():
    """scikit-learn's regressor and threadpoolctl (a scikit-learn dependency): the network extra."""
    ensemble = import_optional("sklearn.ensemble", "network")
    threadpoolctl = import_optional("threadpoolctl", "network")
    return ensemble.HistGradientBoostingRegressor, threadpoolctl.threadpool_limits


def _optional_positive_int(value, *, name: str):
    return None if value is None else check_positive_int(value, name=name)


def _time_grid(n_t: int, solver: str) -> np.ndarray:
    """Noise levels of the flow's regressors: both ends for Heun (it evaluates at t and t + h),
    the left ends of n_t equal steps for Euler (each step evaluates at its start only)."""
    if solver == "heun":
        return np.linspace(0.0, 1.0, n_t)
    return np.arange(n_t) / n_t


def vp_marginal(t, beta_min: float, beta_max: float):
    """Mean factor m(t) and sd s(t) of the VP-SDE's marginal: x_t = m(t) x_data + s(t) noise.

    For ``dx = -beta(t) x / 2 dt + sqrt(beta(t)) dW`` with ``beta(t) = beta_min + t (beta_max -
    beta_min)``: ``log m(t) = -t^2 (beta_max - beta_min) / 4 - t beta_min / 2`` and
    ``s(t)^2 = 1 - m(t)^2`` (Song et al. 2021; ForestDiffusion's ``VPSDE.marginal_prob``).
    """
    log_mean = -0.25 * t**2 * (beta_max - beta_min) - 0.5 * t * beta_min
    return np.exp(log_mean), np.sqrt(-np.expm1(2.0 * log_mean))


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


def _tree_options(
    n_estimators,
    learning_rate,
    max_depth,
    max_leaf_nodes,
    min_samples_leaf,
    l2_regularization,
    max_bins,
) -> dict:
    """Checked options of ``HistGradientBoostingRegressor`` (``n_estimators`` is its max_iter)."""
    return {
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
        "max_bins": check_scalar(max_bins, name="max_bins", kind=numbers.Integral, low=2, high=255),
    }


def _fit_levels(x1, x0, mix, target, seeds, check_rows, hyper, *, n_threads, bar):
    """One regressor per (noise level, column) of ``target`` on ``x_t = a x1 + b x0``, with
    ``(a, b) = mix[level]``; the regressors and their training R^2."""
    Regressor, threadpool_limits = _require_sklearn()
    n_columns = x1.shape[1]
    regressors, r2 = [], np.full((len(mix), n_columns), np.nan)
    with threadpool_limits(limits=n_threads, user_api="openmp"):
        for level, (a, b) in enumerate(mix):
            xt = a * x1 + b * x0
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
class _TreeGeneratorResults(Results):
    """What the flow and the diffusion share: scaling, regressors, clipping, sampling frame."""

    columns: tuple[str, ...]
    times: np.ndarray
    n_t: int
    duplicate_K: int
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

    # name of the tidy() column with the R^2 of each level's regression
    _r2_name: ClassVar[str] = "r2"

    def sample(self, n: int, random_state=None) -> np.ndarray:
        """Draw ``n`` new rows: fresh Gaussian noise carried to the data by the fitted model.

        Parameters
        ----------
        n : int
            Number of rows.
        random_state : None, int or Generator
            Source of the starting noise (and, for the diffusion, of the sampler's noise).

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
                x = self._transport(x, rng)
        out = np.empty((n, p))
        out[:, active] = x * self._spread[active] + self._centre[active]
        out[:, list(self.constant_columns)] = self._centre[list(self.constant_columns)]
        if self.clip:
            np.clip(out, self._lower, self._upper, out=out)
        return out

    def _predict(self, level: int, x: np.ndarray) -> np.ndarray:
        return np.column_stack([reg.predict(x) for reg in self._regressors[level]])

    def _transport(self, x: np.ndarray, rng) -> np.ndarray:
        raise NotImplementedError

    def tidy(self) -> pd.DataFrame:
        """One row per (noise level, modelled column): the training R^2 of its regression.

        Columns ``noise_level`` (the level's index), ``t``, ``column`` and the R^2, computed on
        up to 2,000 training rows per level: a diagnostic, not a fit criterion.
        """
        active = [c for c in range(len(self.columns)) if c not in self.constant_columns]
        rows = [
            {
                "noise_level": level,
                "t": float(t),
                "column": self.columns[col],
                self._r2_name: float(self._r2[level, k]),
            }
            for level, t in enumerate(self.times)
            for k, col in enumerate(active)
        ]
        return pd.DataFrame(rows, columns=["noise_level", "t", "column", self._r2_name])

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["columns"] = len(self.columns)
        row["n_t"] = self.n_t
        row["duplicate_K"] = self.duplicate_K
        row["scaling"] = self.scaling
        row["regressors"] = sum(len(level) for level in self._regressors)
        row["wall_time_s"] = self.wall_time_s
        return row


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ForestFlowResults(_TreeGeneratorResults):
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

    Notes
    -----
    :meth:`sample` integrates the fitted velocity field from Gaussian noise; given the starting
    noise the integration is deterministic. ``tidy``'s ``velocity_r2`` is near 1 close to
    the noise (t = 0, where the target is almost a linear function of x_t) and falls with t, as
    the velocity becomes noise that x_t cannot predict.
    """

    solver: str

    _r2_name: ClassVar[str] = "velocity_r2"
    fit_seconds = renamed_attribute("fit_seconds", "wall_time_s")

    def _transport(self, x: np.ndarray, rng) -> np.ndarray:
        if self.solver == "euler":
            h = 1.0 / self.n_t
            for level in range(self.n_t):
                x = x + h * self._predict(level, x)
            return x
        h = 1.0 / (self.n_t - 1)
        for level in range(self.n_t - 1):
            v = self._predict(level, x)
            v_next = self._predict(level + 1, x + h * v)
            x = x + 0.5 * h * (v + v_next)
        return x

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["solver"] = self.solver
        return row


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ForestDiffusionResults(_TreeGeneratorResults):
    """A fitted tree-based VP diffusion; :meth:`sample` draws new rows.

    Attributes
    ----------
    columns : tuple of str
        Column names of the training table.
    times : ndarray
        The diffusion times t (``linspace(eps, 1, n_t)``) at which a noise regressor was fitted.
    n_t, duplicate_K : int
        Number of noise levels and of noise copies of each training row.
    beta_min, beta_max : float
        The VP-SDE's linear schedule ``beta(t) = beta_min + t (beta_max - beta_min)``.
    eps : float
        Smallest diffusion time (where the sampler stops and denoises).
    scaling : {"minmax", "standard"}
        Column scaling applied before fitting and inverted after sampling.
    clip : bool
        Whether samples are clipped to the observed range of each column.
    constant_columns : tuple of int
        Columns that did not vary in the data: reproduced exactly, not modelled.
    hyperparameters : dict
        Options of the gradient-boosted tree regressors.
    wall_time_s : float
        Wall time of the fit in seconds.

    Notes
    -----
    :meth:`sample` runs ForestDiffusion's sampler: Euler-Maruyama steps of the reverse-time SDE
    ``dx = [-beta(t) x / 2 - beta(t) score(x, t)] dt + sqrt(beta(t)) dW`` from t = 1 down the
    fitted levels to t = eps, with ``score = -eps_hat(x, t) / s(t)``, then one Tweedie
    denoising step ``x + s(eps)^2 score(x, eps)``. The sampler is stochastic: each step adds
    fresh noise. ``tidy``'s ``noise_r2`` is near 1 at t = 1 (x_t is almost the noise) and
    falls towards t = eps, where x_t is almost the data and the noise cannot be recovered.
    """

    beta_min: float
    beta_max: float
    eps: float

    _r2_name: ClassVar[str] = "noise_r2"

    def _transport(self, x: np.ndarray, rng) -> np.ndarray:
        times = self.times
        for level in range(self.n_t - 1, 0, -1):
            t = times[level]
            h = t - times[level - 1]
            beta = self.beta_min + t * (self.beta_max - self.beta_min)
            _, sd = vp_marginal(t, self.beta_min, self.beta_max)
            score = -self._predict(level, x) / sd
            drift = -0.5 * beta * x - beta * score
            x = x - h * drift + np.sqrt(beta * h) * rng.standard_normal(x.shape)
        _, sd = vp_marginal(times[0], self.beta_min, self.beta_max)
        return x - sd * self._predict(0, x)

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["beta_min"] = self.beta_min
        row["beta_max"] = self.beta_max
        return row


class _TreeGenerator(Estimator):
    """The table both tree-based generators learn from, and their shared fitting steps."""

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

    def _fit_trees(
        self,
        mix_fn,
        target_fn,
        *,
        n_t,
        duplicate_K,
        hyper,
        scaling,
        clip,
        n_threads,
        random_state,
        progress,
        desc,
    ):
        """Scale, draw the noise copies, fit the regressors; the fields of the results.

        ``mix_fn(n_t)`` gives each level's time and the weights ``(a, b)`` of ``x_t = a x1 + b
        x0``; ``target_fn(x1, x0)`` the regression target.
        """
        check_option(scaling, name="scaling", options=SCALINGS)
        clip = check_bool(clip, name="clip")
        n_threads = _optional_positive_int(n_threads, name="n_threads")
        rng = check_random_state(random_state)
        _require_sklearn()  # a missing extra fails here, before any work

        start = time.perf_counter()
        X = self.data
        lower, upper, centre, spread = _column_scaling(X, scaling)
        constant = np.flatnonzero(upper == lower)
        active = np.flatnonzero(upper > lower)
        times, mix = mix_fn(n_t)
        x1 = np.tile((X[:, active] - centre[active]) / spread[active], (duplicate_K, 1))
        x0 = rng.standard_normal(x1.shape)
        seeds = rng.integers(0, 2**31 - 1, size=(n_t, len(active)))
        check_rows = rng.choice(len(x1), size=min(len(x1), _R2_ROWS), replace=False)
        with progress_bar(n_t * len(active), enabled=progress, desc=desc) as bar:
            regressors, r2 = _fit_levels(
                x1,
                x0,
                mix,
                target_fn(x1, x0),
                seeds,
                check_rows,
                hyper,
                n_threads=n_threads,
                bar=bar,
            )
        hyper_out = dict(hyper)
        hyper_out["n_estimators"] = hyper_out.pop("max_iter")
        return {
            **self._result_fields(),
            "columns": self.columns,
            "times": times,
            "n_t": n_t,
            "duplicate_K": duplicate_K,
            "scaling": scaling,
            "clip": clip,
            "constant_columns": tuple(int(c) for c in constant),
            "hyperparameters": hyper_out,
            "wall_time_s": time.perf_counter() - start,
            "n_threads": n_threads,
            "_regressors": tuple(regressors),
            "_centre": centre,
            "_spread": spread,
            "_lower": lower,
            "_upper": upper,
            "_r2": r2,
        }


class ForestFlow(_TreeGenerator):
    """Tree-based flow matching for a numeric table (ForestFlow).

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
    The SyNGLER authors' SyNG-D is the VP diffusion of the same paper
    (:class:`ForestDiffusion`, ``SyNGLER(generator="diffusion")``); this flow-matching variant
    (``SyNGLER(generator="flow")``) is the one ForestDiffusion's authors found better for
    generation. scikit-learn's histogram gradient boosting stands in for XGBoost. Defaults follow
    the authors' SyNG-D settings (50 noise levels, 100 noise copies, 100 trees of depth 7,
    learning rate 0.3, no penalty), which cost ``n_t * p`` tree ensembles on ``n * duplicate_K``
    rows each; far smaller settings (say ``n_t=10, duplicate_K=10``) already reproduce smooth
    low-dimensional distributions. The default Heun (second-order) integrator removes most of
    the variance shrinkage that ForestFlow's Euler integrator shows at small ``n_t``.

    References
    ----------
    Jolicoeur-Martineau, A., Fatras, K. and Kachman, T. (2024). Generating and imputing tabular
    data via diffusion and flow-based gradient-boosted trees. AISTATS 2024 (ForestDiffusion,
    ForestFlow).

    Lipman, Y. et al. (2023). Flow matching for generative modeling. ICLR 2023.
    """

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
        n_t = check_positive_int(n_t, name="n_t", minimum=2)
        duplicate_K = check_positive_int(duplicate_K, name="duplicate_K")
        hyper = _tree_options(
            n_estimators,
            learning_rate,
            max_depth,
            max_leaf_nodes,
            min_samples_leaf,
            l2_regularization,
            max_bins,
        )
        check_option(solver, name="solver", options=SOLVERS)

        def mix(n_levels):
            times = _time_grid(n_levels, solver)
            return times, np.column_stack([times, 1.0 - times])

        fields = self._fit_trees(
            mix,
            lambda x1, x0: x1 - x0,
            n_t=n_t,
            duplicate_K=duplicate_K,
            hyper=hyper,
            scaling=scaling,
            clip=clip,
            n_threads=n_threads,
            random_state=random_state,
            progress=progress,
            desc="ForestFlow.fit",
        )
        return ForestFlowResults(
            **fields, method=f"ForestFlow (tree-based flow matching, {solver})", solver=solver
        )


class ForestDiffusion(_TreeGenerator):
    """Tree-based score diffusion (VP-SDE) for a numeric table: ForestDiffusion, SyNGLER's SyNG-D.

    The variance-preserving SDE ``dx = -beta(t) x / 2 dt + sqrt(beta(t)) dW`` with the linear
    schedule ``beta(t) = beta_min + t (beta_max - beta_min)`` carries the scaled data ``x_d`` at
    t = 0 to nearly standard Gaussian noise at t = 1; its marginal is ``x_t = m(t) x_d + s(t) z``
    (:func:`vp_marginal`). As in ForestDiffusion, the noise ``z`` is learnt by regression on
    ``x_t`` (epsilon prediction, the denoising score-matching target: ``score(x, t) = -E[z | x_t
    = x] / s(t)``) at ``n_t`` times ``t = linspace(eps, 1, n_t)``, with one gradient-boosted tree
    ensemble per time and per column fitted on ``duplicate_K`` noise copies of every row.
    Sampling runs the reverse-time SDE from fresh noise by Euler-Maruyama over the same times,
    denoises once (Tweedie) at t = eps, undoes the scaling and clips to the observed range.

    Parameters
    ----------
    data : array_like of shape (n, p) or DataFrame
        Numeric table, n >= 2, finite. Columns that do not vary are reproduced as constants.

    Notes
    -----
    Mapping to the authors' code (ForestDiffusion's ``ForestDiffusionModel(diffusion_type="vp")``
    as called by SyNGLER's ``syngler/diff/forest.py``), read for this implementation:

    - schedule ``VPSDE(beta_min=0.1, beta_max=8)``, ``eps=1e-3``, levels
      ``linspace(eps, 1, n_t)``, ``n_t=50``, ``duplicate_K=100``: the defaults here;
    - training pairs ``x_t = m(t) x_d + s(t) z``, target ``z`` (``build_data_xt``), columns
      min-max scaled to [-1, 1]: the same;
    - sampler ``get_pc_sampler``: ``n_t - 1`` reverse Euler-Maruyama steps from t = 1 down the
      training times, then Tweedie ``x + s(eps)^2 score(x, eps)``, then unscaling and clipping:
      the same;
    - XGBoost (depth 7, 100 trees, eta 0.3, ``hist``, no L1/L2, one multi-output model per
      level whose trees fit one output each) is replaced by scikit-learn's
      ``HistGradientBoostingRegressor`` per (level, column) with the same depth, trees, learning
      rate, no penalty and no early stopping; XGBoost's leaves may hold a single row
      (``min_child_weight=1`` with the squared loss's unit hessian), these hold at least
      ``min_samples_leaf=20`` of the ``n * duplicate_K`` rows. ``min_samples_leaf=1`` matches
      XGBoost's rule but fits about 1.5 times slower and, on SyNGLER's YouTube node parameters,
      moved the mean synthetic edge count by less than its spread over graphs (5 graphs,
      sd 5-6% per graph: +8.0% vs +8.4% of the observed count at ``duplicate_K=5``, 20 trees;
      +4.4% vs +4.0% at 10 copies, 50 trees; +2.8% vs +3.6% at 20 copies, 100 trees; -1.1%
      vs -1.7% at the defaults).

    The noise copies are drawn once and shared by all levels (ForestDiffusion's in-memory
    path; its default data iterator redraws them per level, which changes nothing in
    distribution). Defaults cost ``n_t * p`` tree ensembles on ``n * duplicate_K`` rows each.
    Keep the 50 levels: the sampler's Euler-Maruyama steps widen the distribution at fewer
    (measured on a 2-d curved cloud: margins' sd 13-20% too large at 20 levels, 40-80% at 10,
    2-4% at 50); fewer copies and trees (``duplicate_K=5, n_estimators=20``) already reproduce
    smooth low-dimensional distributions.

    References
    ----------
    Jolicoeur-Martineau, A., Fatras, K. and Kachman, T. (2024). Generating and imputing tabular
    data via diffusion and flow-based gradient-boosted trees. AISTATS 2024 (ForestDiffusion).

    Song, Y. et al. (2021). Score-based generative modeling through stochastic differential
    equations. ICLR 2021 (the VP-SDE and its reverse-time sampler).

    Jiang, F. et al. (2026). SyNGLER: Synthetic network generation via latent embedding
    reconstruction. ICML 2026 (SyNG-D).
    """

    def fit(
        self,
        *,
        n_t: int = 50,
        duplicate_K: int = 100,
        beta_min: float = 0.1,
        beta_max: float = 8.0,
        eps: float = 1e-3,
        n_estimators: int = 100,
        learning_rate: float = 0.3,
        max_depth: int | None = 7,
        max_leaf_nodes: int | None = None,
        min_samples_leaf: int = 20,
        l2_regularization: float = 0.0,
        max_bins: int = 255,
        scaling: str = "minmax",
        clip: bool = True,
        n_threads: int | None = 1,
        random_state=None,
        progress: bool = False,
    ) -> ForestDiffusionResults:
        """Fit one noise regressor per diffusion time and column.

        Parameters
        ----------
        n_t : int
            Number of diffusion times ``linspace(eps, 1, n_t)`` (>= 2); sampling takes
            ``n_t - 1`` reverse steps and one denoising step.
        duplicate_K : int
            Noise copies of each row in the training set of every level.
        beta_min, beta_max : float
            The linear schedule of beta(t), 0 < beta_min < beta_max (ForestDiffusion: 0.1, 8).
        eps : float
            Smallest diffusion time, in (0, 1) (ForestDiffusion: 1e-3).
        n_estimators, learning_rate, max_depth, max_leaf_nodes, min_samples_leaf, \
l2_regularization, max_bins
            Options of each ``sklearn.ensemble.HistGradientBoostingRegressor`` (squared loss,
            no early stopping); ``n_estimators`` is its ``max_iter``.
        scaling : {"minmax", "standard"}
            Map each column to [-1, 1] (ForestDiffusion's choice) or to mean 0 and sd 1.
        clip : bool
            Clip samples to the observed range of each column, as ForestDiffusion does.
        n_threads : int or None
            OpenMP threads for the tree fits and predictions: 1 (default) is fastest on a
            busy or small machine; None uses scikit-learn's default (all cores).
        random_state : None, int or Generator
            Draws the training noise (and seeds the regressors).
        progress : bool
            Show a progress bar over the ``n_t`` x (modelled columns) regressors being fitted.

        Returns
        -------
        ForestDiffusionResults
        """
        n_t = check_positive_int(n_t, name="n_t", minimum=2)
        duplicate_K = check_positive_int(duplicate_K, name="duplicate_K")
        beta_min = check_positive(beta_min, name="beta_min")
        beta_max = check_scalar(beta_max, name="beta_max", low=beta_min, low_inclusive=False)
        eps = check_scalar(
            eps, name="eps", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
        )
        hyper = _tree_options(
            n_estimators,
            learning_rate,
            max_depth,
            max_leaf_nodes,
            min_samples_leaf,
            l2_regularization,
            max_bins,
        )

        def mix(n_levels):
            times = np.linspace(eps, 1.0, n_levels)
            return times, np.column_stack(vp_marginal(times, beta_min, beta_max))

        fields = self._fit_trees(
            mix,
            lambda x1, x0: x0,
            n_t=n_t,
            duplicate_K=duplicate_K,
            hyper=hyper,
            scaling=scaling,
            clip=clip,
            n_threads=n_threads,
            random_state=random_state,
            progress=progress,
            desc="ForestDiffusion.fit",
        )
        return ForestDiffusionResults(
            **fields,
            method="ForestDiffusion (tree-based VP diffusion)",
            beta_min=beta_min,
            beta_max=beta_max,
            eps=eps,
        )
