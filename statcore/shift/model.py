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

import numpy as np
import pandas as pd

from statcore._validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    check_weights,
)
from statcore.base import Estimator
from statcore.distributed import borrowed_backend
from statcore.formula import INTERCEPT, capture_context, design_from_formula
from statcore.ot import METRICS
from statcore.ot.solver import (
    as_points,
    check_solver_options,
    dual_value,
    plan_statistics,
    point_cost,
    solve_potentials,
    solve_self,
)
from statcore.results import IterationRecord, ResamplingResult
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
        return point_cost(x, y, self.model.x_metric)

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
            value = dual_value(cost, a, b, f, g, eps)
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
        labels = point_cost(model.y_source, model.y_target, model.y_metric)
        stats = plan_statistics(cost, w_source, w_target, f, g, eps, aux=labels)
        concept = stats["aux"] / stats["rows"].sum()
        records.append(("OT(source,target)", stats["transport_cost"], error, n_iter, converged))
        for key, value in divergence.items():
            records.append((f"S({key[:2]},{key[2:]})", value, np.nan, 0, True))
        table = pd.DataFrame(
            records, columns=["term", "value", "marginal_error", "n_iter", "converged"]
        ).set_index("term")
        return np.array([covariate, concept]), table, potentials


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


def _same_columns(source: np.ndarray, target: np.ndarray, what: str, names: str) -> None:
    if source.shape[1] != target.shape[1]:
        raise ValueError(
            f"{names} must have the same number of {what}; got {source.shape[1]} and "
            f"{target.shape[1]}"
        )


class DataShifts(Estimator):
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

    method_name = "DataShifts (entropic OT)"
    #: The formula the samples were built from (:meth:`from_formula`), else None.
    formula: str | None = None

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
        self.x_source = as_points(x_source, name="x_source")
        self.x_target = as_points(x_target, name="x_target")
        for name, x in (("x_source", self.x_source), ("x_target", self.x_target)):
            if len(x) < 4:
                raise ValueError(f"`{name}` needs at least 4 rows (two per half); got {len(x)}")
        _same_columns(self.x_source, self.x_target, "columns", "`x_source` and `x_target`")
        self.y_source = _labels(y_source, len(self.x_source), "y_source")
        self.y_target = _labels(y_target, len(self.x_target), "y_target")
        _same_columns(self.y_source, self.y_target, "label columns", "`y_source` and `y_target`")
        self.weights_source = check_weights(
            weights_source, len(self.x_source), name="weights_source"
        )
        self.weights_target = check_weights(
            weights_target, len(self.x_target), name="weights_target"
        )
        self.x_metric = _metric(x_metric, "x_metric", METRICS)
        self.y_metric = _metric(y_metric, "y_metric", Y_METRICS)
        self.epsilon = check_positive(epsilon, name="epsilon")

    @classmethod
    def from_formula(
        cls,
        formula: str,
        source,
        target,
        *,
        missing: str = "raise",
        weights_source=None,
        weights_target=None,
        **kwargs,
    ):
        """Build both samples from one formula ``"y ~ x1 + x2"`` and two data frames.

        The terms are set up on ``source`` (categorical levels, stateful transforms such as
        ``center(x)``) and applied unchanged to ``target``, so that both samples have the same
        covariate columns. The response is the label. The intercept is left out: a constant
        column moves no distance (and would dilute the ``"hamming"`` share).

        Parameters
        ----------
        formula : str
            ``"response ~ terms"`` in formulaic syntax; names that are not columns are looked
            up in the caller's namespace.
        source, target : DataFrame or dict of columns
            The two domains.
        missing : {"raise", "drop"}
            Rows of either frame with missing values are refused, or dropped (with their
            weights).
        weights_source, weights_target : array_like, optional
            Sample weights, one per row of ``source`` and ``target``.
        **kwargs
            ``x_metric``, ``y_metric``, ``epsilon``: as in the constructor.

        Returns
        -------
        DataShifts
        """
        check_option(missing, name="missing", options=("raise", "drop"))
        spec = design_from_formula(formula, source, missing="drop", context=capture_context(1)).spec
        columns = [i for i, name in enumerate(spec.x_names) if name != INTERCEPT]
        if not columns:
            raise ValueError(f"`formula` {formula!r} has no covariate terms")
        samples = []
        for name, data, weights in (
            ("source", source, weights_source),
            ("target", target, weights_target),
        ):
            frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
            x = spec.exog(frame, name=name)[0][:, columns]
            y = spec.endog(frame)
            if y is None:
                raise ValueError(
                    f"`{name}` lacks the response {spec.y_name!r} of the formula {formula!r}"
                )
            keep = ~(np.isnan(x).any(axis=1) | np.isnan(y))
            if not keep.all():
                if missing == "raise":
                    raise ValueError(
                        f"`{name}` has missing values in {int((~keep).sum())} row(s); pass "
                        "missing='drop' to drop them"
                    )
                if weights is not None:
                    weights = check_weights(weights, len(keep), name=f"weights_{name}")[keep]
                x, y = x[keep], y[keep]
            samples.append((x, y, weights))
        (x_s, y_s, w_s), (x_t, y_t, w_t) = samples
        model = cls(x_s, y_s, x_t, y_t, w_s, w_t, **kwargs)
        model.formula = formula
        return model

    @property
    def nobs(self) -> int:
        """Points in both samples together."""
        return len(self.x_source) + len(self.x_target)

    def _repr_spec(self) -> str:
        formula = f"formula={self.formula!r}, " if self.formula else ""
        return (
            f"{formula}n_source={len(self.x_source)}, n_target={len(self.x_target)}, "
            f"x_metric={_metric_name(self.x_metric)!r}, y_metric={_metric_name(self.y_metric)!r}, "
            f"epsilon={self.epsilon:g}"
        )

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
            ``iterations`` reports the OT problems of the estimate together (``n_iter``: the
            most any of them took; each one's count and error are in ``components``).

        Warns
        -----
        ConvergenceWarning
            Once, when an OT problem of the estimate misses the tolerance.
        """
        n_resamples = check_positive_int(n_resamples, name="n_resamples", minimum=0)
        if n_resamples == 1:
            raise ValueError("`n_resamples` must be 0 or at least 2; got 1")
        rng = check_random_state(random_state)
        options = check_solver_options(maxiter=maxiter, tol=tol, epsilon_scaling=epsilon_scaling)
        problem = _Problem(self, rng, options)
        values, table, warm = problem.estimate(self.weights_source, self.weights_target)
        estimate = pd.Series(values, index=TERMS)
        resampling = None
        if n_resamples:
            seeds = rng.integers(0, 2**63 - 1, size=n_resamples)
            replicate = _Replicate(problem, self.weights_source, self.weights_target, warm)
            with borrowed_backend(backend) as runner:
                draws = runner.map(replicate, seeds, progress=progress, desc="DataShifts bootstrap")
            resampling = ResamplingResult(
                method="Bayesian bootstrap of the shifts",
                estimate=estimate,
                replicates=pd.DataFrame(np.vstack(draws), columns=TERMS),
                scheme="Bayesian (Dirichlet weights), fixed half split",
            )
        ot_rows = table[table.index.str.startswith("OT")]
        marginal_error = float(ot_rows["marginal_error"].max())
        record = IterationRecord.combine(
            [
                IterationRecord.from_run(
                    function=f"DataShifts.fit {name}",
                    n_iter=row.n_iter,
                    maxiter=options["maxiter"],
                    tol=options["tol"],
                    criterion="L1 marginal error",
                    last_value=row.marginal_error,
                    met=bool(row.converged),
                    warn=False,
                )
                for name, row in ot_rows.iterrows()
            ],
            function="DataShifts.fit",
            labels=list(ot_rows.index),
            label="OT problem",
            remedy="raise `maxiter` or `tol`, or build the model with a larger `epsilon`",
        )
        return DataShiftsResults(
            method=self.method_name,
            params=estimate,
            inference="bootstrap" if resampling is not None else "normal",
            cov_type="Bayesian bootstrap" if resampling is not None else "none",
            resampling=resampling,
            null_value=None,
            iterations=record,
            components=table,
            epsilon=self.epsilon,
            x_metric=_metric_name(self.x_metric),
            y_metric=_metric_name(self.y_metric),
            n_source=len(self.x_source),
            n_target=len(self.x_target),
            marginal_error=marginal_error,
            **self._result_fields(),
        )


def _metric_name(metric) -> str:
    return metric if isinstance(metric, str) else getattr(metric, "__name__", "custom")
