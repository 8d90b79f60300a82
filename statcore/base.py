"""The specification side: ``Estimator`` (every model), ``Model`` (a design matrix) and
``LikelihoodModel``.

A model holds its specification and never changes; ``fit()`` takes keyword-only options (how to
estimate) and returns a new results object each time, which records those options.
"""

from __future__ import annotations

import functools
import inspect
from types import MappingProxyType
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import optimize

from statcore.formula import Design, capture_context, design_from_arrays, design_from_formula
from statcore.results import IterationRecord, LikelihoodResults, Results
from statcore.validation import as_float_array, check_positive, check_positive_int

#: the methods whose call options every results object records as ``fit_options``
_RECORDED_METHODS = ("fit", "simulate")


class Estimator:
    """The thin base of every statcore model.

    What is estimated (data, formula, levels, family, agents, graph) goes to the constructor and
    is stored there; how (method, tol, maxiter, cov_type, random_state) goes to the keyword-only
    options of :meth:`fit`, which returns a new results object and leaves the model unchanged.

    Subclasses define ``fit`` (keyword-only options) and ``nobs``, and describe their
    specification for ``repr`` in ``_repr_spec``. Every ``fit`` (and, for the predict-and-simulate
    tools of :mod:`statcore.theory`, every ``simulate``, and the methods a subclass names in
    ``_recorded_methods``) a subclass defines is wrapped so that the options it was called with,
    defaults filled in, land on the results as ``fit_options``. Models with tabular data also
    define ``from_formula``.
    """

    #: Human-readable name of the procedure, used as the results' ``method``.
    method_name: ClassVar[str] = ""

    #: Further methods of a subclass that return results and record their options too.
    _recorded_methods: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in (*_RECORDED_METHODS, *cls._recorded_methods):
            if name in cls.__dict__:
                setattr(cls, name, _recording_fit_options(cls.__dict__[name]))

    @property
    def nobs(self) -> int:
        """Number of observations (units, nodes, entries) the model holds."""
        raise NotImplementedError(f"{type(self).__name__} does not define nobs")

    def fit(self, **options):
        """Estimate the model; returns a new results object. Subclasses define the options."""
        raise NotImplementedError(f"{type(self).__name__} does not define fit()")

    @classmethod
    def from_formula(cls, formula: str, data, **kwargs):
        """Build the model from a formula and a data frame (models with tabular data)."""
        raise NotImplementedError(f"{cls.__name__} has no formula interface")

    def _result_fields(self) -> dict:
        """Fields every results object of this model shares."""
        return {"nobs": self.nobs, "model": self}

    def _repr_spec(self) -> str:
        """The specification in a few words, for ``repr``."""
        return ""

    def __repr__(self) -> str:
        spec = self._repr_spec()
        return f"{type(self).__name__}({spec + ', ' if spec else ''}nobs={self.nobs})"


def _recording_fit_options(fit):
    """Wrap ``fit`` so that the results it returns record the options it was called with."""
    signature = inspect.signature(fit)
    renamed = getattr(fit, "_renamed_keywords", {})

    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())

    @functools.wraps(fit)
    def recorded_fit(self, *args, **kwargs):
        if not takes_any:
            _refuse_unknown_options(self, fit, signature, renamed, kwargs)
        result = fit(self, *args, **kwargs)
        if isinstance(result, Results):
            named = {renamed.get(key, key): value for key, value in kwargs.items()}
            bound = signature.bind(self, *args, **named)
            bound.apply_defaults()
            options = {}
            for name, value in list(bound.arguments.items())[1:]:
                kind = signature.parameters[name].kind
                if kind is inspect.Parameter.VAR_KEYWORD:
                    options.update(value)
                elif kind is not inspect.Parameter.VAR_POSITIONAL:
                    options[name] = value
            object.__setattr__(result, "fit_options", MappingProxyType(options))
        return result

    return recorded_fit


def _refuse_unknown_options(model, fit, signature, renamed, kwargs) -> None:
    """A keyword ``fit`` does not take gets a TypeError that says where it goes instead: what is
    estimated belongs to the constructor (statsmodels' ``QuantReg.fit(q=...)`` habit)."""
    unknown = [key for key in kwargs if key not in signature.parameters and key not in renamed]
    if not unknown:
        return
    cls = type(model)
    where = f"{cls.__name__}.{fit.__name__}()"
    constructor = inspect.signature(cls.__init__).parameters
    for key in unknown:
        if key in constructor:
            raise TypeError(
                f"`{key}` is not an option of {where}: it is part of the model's specification, "
                f"so it goes to the constructor, {cls.__name__}(..., {key}=...).{fit.__name__}()"
            )
    options = list(signature.parameters)[1:]
    raise TypeError(f"{where} got unexpected option(s) {unknown}; its options are {options}")


class Model(Estimator):
    """Data and specification of a statistical model with a design matrix.

    Parameters
    ----------
    endog : array_like of shape (n,), or a prepared ``Design``
        The response. A ``Design`` (as built by :meth:`from_formula`) is taken as it is.
    exog : array_like of shape (n,) or (n, k), optional
        Regressors. Pandas labels become term names.
    intercept : bool
        Add an ``Intercept`` column to array input (the R convention). Input that already has
        a constant column is refused with a pointer to ``intercept=False``.
    missing : {"raise", "drop"}
        What to do with rows holding NaN; dropped rows are counted in ``design.n_dropped``.
    """

    def __init__(self, endog, exog=None, *, intercept: bool = True, missing: str = "raise"):
        if isinstance(endog, Design):
            if exog is not None:
                raise ValueError("`exog` must be None when `endog` is a prepared Design")
            design = endog
        else:
            design = design_from_arrays(endog, exog, intercept=intercept, missing=missing)
        for array in (design.y, design.X):
            if array is not None:
                array.setflags(write=False)
        self.design = design

    @classmethod
    def from_formula(cls, formula: str, data, *, missing: str = "raise", **kwargs):
        """Build the model from an R-style formula (formulaic syntax) and a data frame.

        Names used in the formula that are not columns are looked up in the caller's namespace.
        Remaining keyword arguments go to the model's constructor.
        """
        design = design_from_formula(formula, data, missing=missing, context=capture_context(1))
        return cls(design, **kwargs)

    @property
    def nobs(self) -> int:
        return self.design.nobs

    @property
    def endog(self) -> np.ndarray | None:
        """The response (read-only)."""
        return self.design.y

    @property
    def exog(self) -> np.ndarray:
        """The design matrix (read-only)."""
        return self.design.X

    @property
    def exog_names(self) -> list[str]:
        return list(self.design.x_names)

    @property
    def endog_name(self) -> str | None:
        return self.design.y_name

    @property
    def formula(self) -> str | None:
        return self.design.formula

    def _result_fields(self) -> dict:
        """Fields every results object of this model shares."""
        notes = ()
        if self.design.n_dropped:
            notes = (f"{self.design.n_dropped} row(s) with missing values were dropped.",)
        return {**super()._result_fields(), "design_spec": self.design.spec, "notes": notes}

    def _repr_spec(self) -> str:
        return f"formula={self.formula!r}" if self.formula else f"terms={self.exog_names}"


class LikelihoodModel(Model):
    """A model estimated by maximum likelihood (statsmodels' ``GenericLikelihoodModel`` role).

    Subclasses provide ``loglike(params)`` (the total log-likelihood) and may provide ``score``,
    ``hessian``, ``start_params``, ``param_names`` and ``inverse_link``; the base supplies
    numerical derivatives, the optimiser, the inverse observed-information covariance and
    ``LikelihoodResults``.
    """

    method_name = "Maximum likelihood"

    @staticmethod
    def inverse_link(linear):
        """The mean of the response given the linear predictor ``X beta`` (identity here).

        A model with a nonlinear link overrides it as a ``staticmethod`` of the linear
        predictor alone (``scipy.special.expit`` for a logit), so that ``predict()`` returns the
        response scale, and it travels with a stripped result.
        """
        return linear

    @property
    def param_names(self) -> list[str]:
        return self.exog_names

    def start_params(self) -> np.ndarray:
        return np.zeros(len(self.param_names))

    def loglike(self, params: np.ndarray) -> float:
        raise NotImplementedError(f"{type(self).__name__} does not define loglike()")

    def score(self, params: np.ndarray) -> np.ndarray:
        """Gradient of ``loglike`` by central differences (step ~ eps^(1/3), the optimal order)."""
        params = np.asarray(params, dtype=float)
        steps = np.finfo(float).eps ** (1 / 3) * np.maximum(1.0, np.abs(params))
        grad = np.empty_like(params)
        for i, h in enumerate(steps):
            e = np.zeros_like(params)
            e[i] = h
            grad[i] = (self.loglike(params + e) - self.loglike(params - e)) / (2 * h)
        return grad

    def hessian(self, params: np.ndarray) -> np.ndarray:
        """Hessian of ``loglike`` by four-point central differences (step ~ eps^(1/4))."""
        params = np.asarray(params, dtype=float)
        k = len(params)
        steps = np.finfo(float).eps ** (1 / 4) * np.maximum(1.0, np.abs(params))
        hess = np.empty((k, k))
        for i in range(k):
            for j in range(i, k):
                ei = np.zeros(k)
                ej = np.zeros(k)
                ei[i], ej[j] = steps[i], steps[j]
                value = (
                    self.loglike(params + ei + ej)
                    - self.loglike(params + ei - ej)
                    - self.loglike(params - ei + ej)
                    + self.loglike(params - ei - ej)
                ) / (4 * steps[i] * steps[j])
                hess[i, j] = hess[j, i] = value
        return hess

    def fit(
        self,
        *,
        start_params=None,
        method: str = "BFGS",
        maxiter: int = 1000,
        tol: float = 1e-6,
    ) -> LikelihoodResults:
        """Maximise ``loglike`` with ``scipy.optimize.minimize``.

        Parameters
        ----------
        start_params : array_like, optional
            Starting values (default ``start_params()``).
        method : str
            A ``scipy.optimize.minimize`` method.
        maxiter : int
            Iteration limit; stopping at it warns with ``ConvergenceWarning``.
        tol : float
            Gradient-norm tolerance (statsmodels' default order: a finite-difference score is
            accurate to about eps^(2/3) times the log-likelihood, so much tighter values can
            stall on rounding).

        Returns
        -------
        LikelihoodResults
            Covariance = inverse of the observed information (minus the Hessian) at the optimum.
        """
        maxiter = check_positive_int(maxiter, name="maxiter")
        tol = check_positive(tol, name="tol")
        names = self.param_names
        x0 = self.start_params() if start_params is None else start_params
        x0 = as_float_array(x0, name="start_params", ndim=1)
        if len(x0) != len(names):
            raise ValueError(f"`start_params` must have {len(names)} entries; got {len(x0)}")
        opt = optimize.minimize(
            lambda p: -self.loglike(p),
            x0,
            jac=lambda p: -self.score(p),
            method=method,
            tol=tol,
            options={"maxiter": maxiter},
        )
        information = -self.hessian(opt.x)
        vcov = np.linalg.pinv(information)
        converged = bool(opt.success)
        if not converged and opt.status == 2:
            # BFGS reports "precision loss" once a finite-difference score sits at its noise
            # floor; the fit is done when a Newton step would still gain less than tol^2 in
            # log-likelihood (a scale-free test, unlike the gradient norm)
            grad = self.score(opt.x)
            converged = bool(0.5 * grad @ vcov @ grad <= tol**2)
        record = IterationRecord.from_run(
            function=f"{type(self).__name__}.fit",
            n_iter=opt.nit,
            maxiter=maxiter,
            tol=tol,
            criterion=f"{method} stopping rule ({opt.message})",
            met=converged,
            stalled=opt.status == 2,
            remedy="try another `method`, better `start_params`, or a larger `maxiter`",
        )
        fields = self._result_fields()
        if np.linalg.eigvalsh(information).min() <= 0:
            fields["notes"] += (
                "The observed information is not positive definite: standard errors are "
                "unreliable.",
            )
        if type(self).inverse_link is not LikelihoodModel.inverse_link:
            fields["inverse_link"] = self.inverse_link
        return LikelihoodResults(
            method=self.method_name,
            params=pd.Series(opt.x, index=names, name="estimate"),
            vcov=pd.DataFrame(vcov, index=names, columns=names),
            llf=float(-opt.fun),
            iterations=record,
            cov_type="observed information",
            **fields,
        )
