"""``DataShifts``: covariate shift and gamma*-concept shift between a source and a target sample.

Covariate shift is the paper's debiased entropic estimate of the W1 distance between the
covariate laws: each sample is split once into random halves, and with ``S`` the Sinkhorn
divergence,

    S_cov = | S(s1,t1)^2 / 2 + S(s2,t2)^2 / 2 - S(s1,s2)^2 / 2 - S(t1,t2)^2 / 2 |^(1/2),

the same-law half pairs removing the sampling noise from the cross pairs. The gamma*-concept
shift is the label distance averaged over the entropic coupling of the full covariate samples,
``S_cpt = sum_ij P_ij rho_Y(y_i, y'_j)``. Every Sinkhorn problem is solved matrix-free to a
marginal tolerance (no subsampling). Bootstrap intervals reweight the points with Dirichlet
(Bayesian bootstrap) weights, keeping the half split, so that resampled duplicates never fall
in both halves.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from statcore._validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
)
from statcore.distributed import get_backend
from statcore.exceptions import ConvergenceWarning
from statcore.ot import _costs
from statcore.ot.solver import _weights, plan_statistics, solve_potentials, solve_self
from statcore.results import ResamplingResult
from statcore.shift.results import DataShiftsResults

Y_METRICS = ("euclidean", "sqeuclidean", "cityblock", "chebyshev", "hamming")
TERMS = ["covariate_shift", "concept_shift"]


def _labels(y, n: int, name: str) -> np.ndarray:
    arr = as_float_array(y, name=name, ndim=(1, 2))
    if len(arr) != n:
        raise ValueError(f"`{name}` must have one label per covariate row ({n}); got {len(arr)}")
    return arr[:, None] if arr.ndim == 1 else arr


def _metric(metric, name: str, options):
    if callable(metric) and not isinstance(metric, str):
        return metric
    return check_option(metric, name=name, options=options)


class _Problem:
    """The data, the fixed half split and the solver options of one DataShifts fit."""

    def __init__(self, model, split_rng, options):
        self.model, self.options = model, options
        self.halves = []
        for n in (len(model.x_source), len(model.x_target)):
            order = split_rng.permutation(n)
            self.halves.append((np.sort(order[: n // 2]), np.sort(order[n // 2 :])))

    def _cost(self, x, y):
        return _costs.point_cost(x, y, self.model.x_metric)

    def estimate(self, w_source, w_target, warm=None):
        """Both shifts, the OT terms behind them, and the potentials (warm starts)."""
        model, options = self.model, self.options
        eps = model.epsilon
        (s1, s2), (t1, t2) = self.halves
        parts = {
            "s1": (model.x_source[s1], w_source[s1]),
            "s2": (model.x_source[s2], w_source[s2]),
            "t1": (model.x_target[t1], w_target[t1]),
            "t2": (model.x_target[t2], w_target[t2]),
        }
        parts = {k: (x, w / w.sum()) for k, (x, w) in parts.items()}
        warm = warm or {}
        potentials, records, self_ot = {}, [], {}
        for key, (x, w) in parts.items():
            f, value, error, n_iter, converged = solve_self(
                self._cost(x, x), w, eps, init=warm.get(key), **options
            )
            potentials[key] = f
            self_ot[key] = value
            records.append((f"OT({key},{key})", value, error, n_iter, converged))
        divergence = {}
        for left, right in (("s1", "t1"), ("s2", "t2"), ("s1", "s2"), ("t1", "t2")):
            (x, a), (y, b) = parts[left], parts[right]
            cost = self._cost(x, y)
            key = f"{left}{right}"
            f, g, error, n_iter, converged = solve_potentials(
                cost, a, b, eps, init=warm.get(key), **options
            )
            potentials[key] = (f, g)
            value = _dual_value(cost, a, b, f, g, eps)
            divergence[key] = value - 0.5 * (self_ot[left] + self_ot[right])
            records.append((f"OT({left},{right})", value, error, n_iter, converged))
        squared = 0.5 * (
            divergence["s1t1"] ** 2
            + divergence["s2t2"] ** 2
            - divergence["s1s2"] ** 2
            - divergence["t1t2"] ** 2
        )
        covariate = float(np.sqrt(abs(squared)))
        cost = self._cost(model.x_source, model.x_target)
        f, g, error, n_iter, converged = solve_potentials(
            cost, w_source, w_target, eps, init=warm.get("full"), **options
        )
        potentials["full"] = (f, g)
        labels = _costs.point_cost(model.y_source, model.y_target, model.y_metric)
        stats = plan_statistics(cost, w_source, w_target, f, g, eps, aux=labels)
        concept = stats["aux"] / stats["rows"].sum()
        records.append(("OT(source,target)", stats["transport_cost"], error, n_iter, converged))
        for key, value in divergence.items():
            records.append((f"S({key[:2]},{key[2:]})", value, np.nan, 0, True))
        table = pd.DataFrame(
            records, columns=["term", "value", "marginal_error", "n_iter", "converged"]
        ).set_index("term")
        return np.array([covariate, concept]), table, potentials


def _dual_value(cost, a, b, f, g, eps):
    """``OT_eps`` of potentials whose columns are exact: ``<f, rows> + <g, b> - eps (mass-1)``."""
    log_b = np.log(b, where=b > 0, out=np.full(len(b), -np.inf))
    f_next = cost.softmin_rows(g + eps * log_b, eps)
    rows = a * np.exp((f - f_next) / eps)
    return float(f @ rows + g @ b - eps * (rows.sum() - 1.0))


class _Replicate:
    """One Bayesian-bootstrap replicate: Dirichlet weights on each sample, warm started."""

    def __init__(self, problem, w_source, w_target, warm):
        self.problem, self.w_source, self.w_target, self.warm = problem, w_source, w_target, warm

    def __call__(self, seed):
        rng = np.random.default_rng(seed)
        ws = self.w_source * rng.exponential(size=len(self.w_source))
        wt = self.w_target * rng.exponential(size=len(self.w_target))
        values, _, _ = self.problem.estimate(ws / ws.sum(), wt / wt.sum(), self.warm)
        return values


class DataShifts:
    """Covariate shift and gamma*-concept shift between a source and a target domain.

    Parameters
    ----------
    x_source, x_target : array_like, shape (n, d) and (m, d)
        Covariates (or learned representations) of the two domains.
    y_source, y_target : array_like, shape (n,) / (n, k) and (m,) / (m, k)
        Labels: values, probability or one-hot vectors, or integer classes (with
        ``y_metric="hamming"``: the 0-1 distance).
    weights_source, weights_target : array_like, optional
        Non-negative sample weights (normalised); uniform by default.
    x_metric : {"euclidean", "cityblock", "chebyshev", "sqeuclidean", "hamming"} or callable
        The covariate metric rho_X (the bound needs a metric; the paper's is Euclidean). A
        callable gets two point arrays ``A``, ``B`` and returns the ``(len(A), len(B))``
        distances.
    y_metric : {"euclidean", "hamming", "cityblock", "chebyshev", "sqeuclidean"} or callable
        The label metric rho_Y.
    epsilon : float
        Entropic regularisation, in the units of ``x_metric`` (standardise the covariates
        first; 0.01 is the paper's default).

    References
    ----------
    Chen, H. and Xia, L. C. (2025). General and estimable learning bound unifying covariate and
    concept shifts. arXiv:2506.12829.
    """

    def __init__(
        self,
        x_source,
        y_source,
        x_target,
        y_target,
        weights_source=None,
        weights_target=None,
        *,
        x_metric="euclidean",
        y_metric="euclidean",
        epsilon: float = 0.01,
    ):
        self.x_source = _costs.as_points(x_source, name="x_source")
        self.x_target = _costs.as_points(x_target, name="x_target")
        for name, x in (("x_source", self.x_source), ("x_target", self.x_target)):
            if len(x) < 4:
                raise ValueError(f"`{name}` needs at least 4 rows (two per half); got {len(x)}")
        if self.x_source.shape[1] != self.x_target.shape[1]:
            raise ValueError(
                "`x_source` and `x_target` must have the same number of columns; got "
                f"{self.x_source.shape[1]} and {self.x_target.shape[1]}"
            )
        self.y_source = _labels(y_source, len(self.x_source), "y_source")
        self.y_target = _labels(y_target, len(self.x_target), "y_target")
        if self.y_source.shape[1] != self.y_target.shape[1]:
            raise ValueError(
                "`y_source` and `y_target` must have the same number of label columns; got "
                f"{self.y_source.shape[1]} and {self.y_target.shape[1]}"
            )
        self.weights_source = _weights(weights_source, len(self.x_source), "weights_source")
        self.weights_target = _weights(weights_target, len(self.x_target), "weights_target")
        self.x_metric = _metric(x_metric, "x_metric", _costs.METRICS)
        self.y_metric = _metric(y_metric, "y_metric", Y_METRICS)
        self.epsilon = check_positive(epsilon, name="epsilon")

    def fit(
        self,
        *,
        n_resamples: int = 0,
        random_state=None,
        backend=None,
        progress: bool = False,
        maxiter: int = 10_000,
        tol: float = 1e-5,
        epsilon_scaling: float | None = 0.5,
    ) -> DataShiftsResults:
        """Estimate both shifts (and their bootstrap distribution).

        Parameters
        ----------
        n_resamples : int
            Bayesian-bootstrap replicates (0: none; intervals then need them).
        random_state : None, int, SeedSequence or Generator
            Seeds the half split and the bootstrap weights.
        backend : None, str, Backend or dask Client
            Where the replicates run (see :func:`statcore.distributed.get_backend`).
        progress : bool
            Progress bar over the replicates.
        maxiter, tol, epsilon_scaling
            Sinkhorn options of every OT problem (``tol``: L1 marginal error).

        Returns
        -------
        DataShiftsResults
        """
        n_resamples = check_positive_int(n_resamples, name="n_resamples", minimum=0)
        if n_resamples == 1:
            raise ValueError("`n_resamples` must be 0 or at least 2; got 1")
        rng = check_random_state(random_state)
        options = {
            "maxiter": check_positive_int(maxiter, name="maxiter"),
            "tol": check_positive(tol, name="tol"),
            "epsilon_scaling": epsilon_scaling,
        }
        problem = _Problem(self, rng, options)
        values, table, warm = problem.estimate(self.weights_source, self.weights_target)
        estimate = pd.Series(values, index=TERMS)
        resampling = None
        if n_resamples:
            seeds = rng.integers(0, 2**63 - 1, size=n_resamples)
            replicate = _Replicate(problem, self.weights_source, self.weights_target, warm)
            runner = get_backend(backend)
            try:
                draws = runner.map(replicate, seeds, progress=progress, desc="DataShifts bootstrap")
            finally:
                if runner is not backend:
                    runner.close()
            resampling = ResamplingResult(
                method="Bayesian bootstrap of the shifts",
                estimate=estimate,
                replicates=pd.DataFrame(np.vstack(draws), columns=TERMS),
                scheme="Bayesian (Dirichlet weights), fixed half split",
            )
        ot_rows = table[table.index.str.startswith("OT")]
        converged = bool(ot_rows["converged"].all())
        if not converged:
            warnings.warn(
                "some Sinkhorn problems did not reach the marginal tolerance (largest error "
                f"{ot_rows['marginal_error'].max():.3g}); raise `maxiter` or `epsilon`",
                ConvergenceWarning,
                stacklevel=2,
            )
        return DataShiftsResults(
            method="DataShifts (entropic OT)",
            nobs=len(self.x_source) + len(self.x_target),
            model=self,
            params=estimate,
            inference="bootstrap" if resampling is not None else "normal",
            cov_type="Bayesian bootstrap" if resampling is not None else "none",
            resampling=resampling,
            null_value=None,
            converged=converged,
            n_iter=int(ot_rows["n_iter"].sum()),
            components=table,
            epsilon=self.epsilon,
            x_metric=_metric_name(self.x_metric),
            y_metric=_metric_name(self.y_metric),
            n_source=len(self.x_source),
            n_target=len(self.x_target),
            marginal_error=float(ot_rows["marginal_error"].max()),
        )


def _metric_name(metric) -> str:
    return metric if isinstance(metric, str) else getattr(metric, "__name__", "custom")
