"""``EstimationResults`` and ``LikelihoodResults``: labelled estimates and the inference on them."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from statcore.results._format import format_level, format_number
from statcore.results.base import Results
from statcore.results.plotting import plot_coefficients
from statcore.results.resampling import CI_METHODS, ResamplingResult
from statcore.results.summary import Summary
from statcore.results.testing import TestResult
from statcore.validation import check_alpha, check_option

INFERENCE = ("normal", "t", "bootstrap")
#: ``predict(which=...)``: the response scale (statsmodels' "mean") or the linear predictor.
PREDICT_WHICH = ("mean", "linear")
#: The term name of the constant, which ``df_model`` does not count (statsmodels' convention).
INTERCEPT = "Intercept"


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class EstimationResults(Results):
    """Estimated parameters with standard errors, tests and intervals.

    Parameters
    ----------
    params : Series or DataFrame
        Estimates by term; a DataFrame with one column per level (quantile, ...) for multi-level
        fits.
    vcov : DataFrame, optional
        Covariance of the estimates. For multi-level fits it is indexed by the stacked
        ``(level, term)`` pairs, so that cross-level contrasts can be tested. Without it (and
        without ``resampling``) the fit has no inference: ``tidy()`` and the summary show no
        ``std_error``, ``statistic``, ``p_value`` or interval columns, and :meth:`conf_int`
        raises.
    df_resid : float, optional
        Residual degrees of freedom (needed for ``inference="t"``).
    inference : {"normal", "t", "bootstrap"}
        Reference for p-values and intervals: normal, Student t with ``df_resid``, or the
        replicates in ``resampling``.
    cov_type : str
        How ``vcov`` was obtained, in words ("nonrobust", "kernel", "bootstrap").
    resampling : ResamplingResult, optional
        Bootstrap replicates of the stacked estimates (needed for ``inference="bootstrap"``).
    null_value : float or None
        Value each estimate is tested against (0). ``None`` for quantities without a null
        (risks, bounds): no statistic or p-value columns then.
    ci_method : str
        Bootstrap interval method when ``inference="bootstrap"``.
    k_params : int, optional
        Number of free parameters, the ``k`` of AIC and BIC (defaults to the number of
        estimates).
    df_model : int, optional
        Model degrees of freedom as statsmodels counts them: ``k_params`` less the intercept(s)
        (terms named ``Intercept``), i.e. the slopes. Computed when not given. Passing
        ``df_model`` without ``k_params`` is read, for one release and with a ``FutureWarning``,
        as the old meaning (the number of free parameters).
    scale : float, optional
        Residual variance, for standardised residuals in :meth:`augment`.
    inverse_link : callable, optional
        Maps the linear predictor to the response scale for ``predict(which="mean")``
        (identity when None).
    """

    params: pd.Series | pd.DataFrame
    vcov: pd.DataFrame | None = None
    df_resid: float | None = None
    inference: str = "normal"
    cov_type: str = "nonrobust"
    resampling: ResamplingResult | None = None
    null_value: float | None = 0.0
    ci_method: str = "percentile"
    k_params: int | None = None
    df_model: int | None = None
    scale: float | None = None
    inverse_link: Callable | None = field(default=None, repr=False)

    _plots: ClassVar[dict] = {"coef": plot_coefficients}
    #: name of the per-term table in :meth:`summary` ("metrics" for evaluation results)
    _table_name: ClassVar[str] = "coefficients"

    def __post_init__(self):
        super().__post_init__()
        check_option(self.inference, name="inference", options=INFERENCE)
        check_option(self.ci_method, name="ci_method", options=CI_METHODS)
        if not isinstance(self.params, pd.Series | pd.DataFrame):
            raise TypeError(
                f"`params` must be a pandas Series or DataFrame; got {type(self.params)}"
            )
        flat_index = self._flat.index
        if self.vcov is not None and not (
            self.vcov.index.equals(flat_index) and self.vcov.columns.equals(flat_index)
        ):
            raise ValueError("`vcov` must be indexed (rows and columns) like the stacked `params`")
        if self.inference == "t" and self.df_resid is None:
            raise ValueError("`inference='t'` needs `df_resid`")
        if self.inference == "bootstrap":
            if self.resampling is None:
                raise ValueError("`inference='bootstrap'` needs `resampling` replicates")
            if not self.resampling.estimate.index.equals(flat_index):
                raise ValueError("`resampling.estimate` must be indexed like the stacked `params`")
        self._set_model_df()

    def _set_model_df(self):
        """Fill ``k_params`` and ``df_model`` so that the attribute, ``glance()`` and the summary
        show one number."""
        if self.df_model is not None and self.k_params is None:
            warnings.warn(
                f"{type(self).__name__}(df_model=...) without `k_params`: read as the number of "
                "free parameters (the k of AIC/BIC) for this release; pass `k_params=` instead. "
                "`df_model` now counts the parameters other than the intercept, as statsmodels "
                "does.",
                FutureWarning,
                stacklevel=4,
            )
            object.__setattr__(self, "k_params", self.df_model)
            object.__setattr__(self, "df_model", None)
        if self.k_params is None:
            object.__setattr__(self, "k_params", len(self._flat))
        if self.df_model is None:
            terms = self._flat.index
            if self.is_multilevel:
                terms = terms.get_level_values("term")
            spec = self.design_spec
            intercept = (spec.intercept_term if spec is not None else None) or INTERCEPT
            intercepts = int(sum(str(t) == intercept for t in terms))
            object.__setattr__(self, "df_model", self.k_params - intercepts)

    # --- shape helpers -------------------------------------------------------------------------

    @property
    def is_multilevel(self) -> bool:
        """Whether ``params`` has one column per level."""
        return isinstance(self.params, pd.DataFrame)

    @cached_property
    def _flat(self) -> pd.Series:
        """Estimates as one vector: by term, or by ``(level, term)`` for multi-level fits."""
        if self.is_multilevel:
            flat = self.params.unstack()
            flat.index.names = ["level", "term"]
            return flat.astype(float)
        return self.params.astype(float)

    def _shape_like_params(self, values, name: str):
        flat = pd.Series(np.asarray(values, dtype=float), index=self._flat.index, name=name)
        if not self.is_multilevel:
            return flat
        return flat.unstack(level="level").reindex(
            index=self.params.index, columns=self.params.columns
        )

    @cached_property
    def _flat_bse(self) -> np.ndarray:
        if self.inference == "bootstrap":
            return self.resampling.bse.to_numpy()
        if self.vcov is None:
            return np.full(len(self._flat), np.nan)
        variances = np.diag(self.vcov.to_numpy())
        # a negative variance (an indefinite Hessian away from the optimum) has no standard error
        return np.sqrt(np.where(variances >= 0, variances, np.nan))

    @property
    def has_inference(self) -> bool:
        """Whether the fit carries standard errors (a ``vcov`` or bootstrap replicates)."""
        return self.inference == "bootstrap" or self.vcov is not None

    def _require_inference(self, what: str):
        if self.has_inference:
            return
        options = self.fit_options or {}
        remedies = [f"`{name}=`" for name in ("cov_type", "n_resamples") if name in options]
        how = (
            "refit with " + " or ".join(remedies)
            if remedies
            else "this method gives point estimates only"
        )
        raise ValueError(f"`{what}` needs standard errors; this fit has none: {how}")

    @property
    def _reference(self):
        if self.inference == "t":
            return stats.t(self.df_resid)
        return stats.norm()

    @property
    def _vcov_for_tests(self) -> np.ndarray | None:
        if self.inference == "bootstrap":
            return self.resampling.vcov.to_numpy()
        return None if self.vcov is None else self.vcov.to_numpy()

    # --- inference -----------------------------------------------------------------------------

    @property
    def bse(self):
        """Standard errors, shaped like ``params``."""
        return self._shape_like_params(self._flat_bse, "std_error")

    @property
    def tvalues(self):
        """``(params - null_value) / bse``; None when there is no null."""
        if self.null_value is None:
            return None
        return self._shape_like_params(self._flat_statistic, "statistic")

    @property
    def _flat_statistic(self) -> np.ndarray:
        return (self._flat.to_numpy() - self.null_value) / self._flat_bse

    @property
    def pvalues(self):
        """Two-sided p-values against ``null_value``; None when there is no null.

        Normal or t reference as ``inference`` says; with the bootstrap reference the share of
        centred replicates at least as far from the estimate as the estimate is from the null,
        ``(1 + #{|θ*_b - θ̂| >= |θ̂ - θ0|}) / (B + 1)``.
        """
        if self.null_value is None:
            return None
        return self._shape_like_params(self._flat_pvalues, "p_value")

    @property
    def _flat_pvalues(self) -> np.ndarray:
        if self.inference == "bootstrap":
            est = self._flat.to_numpy()
            centred = np.abs(self.resampling.replicates.to_numpy() - est)
            exceed = (centred >= np.abs(est - self.null_value)).sum(axis=0)
            return (1.0 + exceed) / (len(centred) + 1.0)
        return 2.0 * self._reference.sf(np.abs(self._flat_statistic))

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """``1 - alpha`` intervals: columns ``lower``, ``upper``; rows terms (``(level, term)``).

        Raises
        ------
        ValueError
            When the fit has no standard errors (no ``vcov``, no resampling), naming the fit
            option that gives them.
        """
        alpha = check_alpha(alpha)
        self._require_inference("conf_int")
        if self.inference == "bootstrap":
            ci = self.resampling.conf_int(alpha, method=self.ci_method)
            return ci.set_axis(self._flat.index, axis=0)
        crit = self._reference.ppf(1 - alpha / 2)
        est = self._flat.to_numpy()
        return pd.DataFrame(
            {"lower": est - crit * self._flat_bse, "upper": est + crit * self._flat_bse},
            index=self._flat.index,
        )

    def _reference_text(self) -> str:
        if self.inference == "t":
            return f"t({format_number(self.df_resid)}) reference"
        if self.inference == "bootstrap":
            return (
                f"bootstrap reference ({self.resampling.n_resamples} replicates, {self.ci_method})"
            )
        return "normal reference"

    def wald_test(self, constraints) -> TestResult:
        """Wald test of linear restrictions ``R θ = q``.

        Parameters
        ----------
        constraints : str or (array, array)
            A formulaic constraint string such as ``"x1 = x2, x3 = 0"`` (quote names with
            backticks where they contain brackets or spaces); for multi-level fits terms are
            named ``term[level]``, e.g. ``"`income[0.25]` = `income[0.75]`"``. Or a pair
            ``(R, q)``.

        Returns
        -------
        TestResult
            chi-square(r) statistic, or F(r, df_resid) = W / r with the t reference.
        """
        from statcore.formula import linear_constraints

        names = (
            [f"{t}[{lvl}]" for lvl, t in self._flat.index]
            if self.is_multilevel
            else list(map(str, self._flat.index))
        )
        R, q, text = linear_constraints(constraints, names)
        vcov = self._vcov_for_tests
        method = "Wald test"
        if vcov is None:
            return TestResult.not_applicable(method, "no covariance of the estimates is available")
        diff = R @ self._flat.to_numpy() - q
        middle = R @ vcov @ R.T
        if not np.all(np.isfinite(middle)):
            return TestResult.not_applicable(
                method, "the covariance needed by these restrictions is not available"
            )
        wald = float(diff @ np.linalg.solve(middle, diff))
        r = R.shape[0]
        if self.inference == "t":
            reference = stats.f(r, self.df_resid)
            statistic, df, dist = (
                wald / r,
                (r, self.df_resid),
                f"F({r}, {format_number(self.df_resid)})",
            )
        else:
            reference = stats.chi2(r)
            statistic, df, dist = wald, r, f"chi2({r})"
        return TestResult(
            method=method,
            nobs=self.nobs,
            statistic=statistic,
            pvalue=float(reference.sf(statistic)),
            alternative="greater",
            df=df,
            distribution=dist,
            null_hypothesis=text,
            reference=reference,
        )

    # --- prediction ----------------------------------------------------------------------------

    def _linear_params(self):
        names = list(self.design_spec.x_names)
        return self.params.loc[names]

    def _predict_exog(self, exog: np.ndarray):
        """The linear predictor of a design matrix; nonlinear models override it."""
        return exog @ self._linear_params().to_numpy()

    def predict(self, newdata=None, which: str = "mean"):
        """Fitted values on the estimation data, or predictions for ``newdata``.

        ``newdata`` goes through the fitted design specification: the same formula, categorical
        levels and stateful transforms (for array-built models: the exog columns without the
        intercept, which is added back).

        Parameters
        ----------
        newdata : DataFrame or array_like, optional
            Data to predict for; the estimation data when None.
        which : {"mean", "linear"}
            ``"mean"``: the response scale (a probability for a logit model), the
            ``inverse_link`` of the linear predictor; ``"linear"``: the linear predictor
            (statsmodels' convention and names). They agree for an identity link.
        """
        check_option(which, name="which", options=PREDICT_WHICH)
        spec = self._require_spec()
        if newdata is None:
            exog, index = self._model_design().X, self._model_design().row_labels
        else:
            exog, index = spec.exog(newdata)
        fitted = self._predict_exog(exog)
        if which == "mean":
            fitted = self._to_response(fitted)
        if self.is_multilevel:
            return pd.DataFrame(fitted, index=index, columns=self.params.columns)
        return pd.Series(fitted, index=index, name="fitted")

    def _to_response(self, linear):
        return linear if self.inverse_link is None else self.inverse_link(linear)

    @property
    def fittedvalues(self):
        """Fitted values on the response scale, ``predict()`` on the estimation data (a
        DataFrame with a column per level for multi-level fits)."""
        return self.predict()

    @property
    def resid(self):
        """Response residuals ``y - fittedvalues`` on the estimation data."""
        design = self._model_design()
        if design.y is None:
            raise ValueError(
                f"{type(self).__name__}: the model has no response to take residuals of"
            )
        fitted = self.fittedvalues
        if self.is_multilevel:
            return fitted.rsub(design.y, axis=0)
        return (design.y - fitted).rename("resid")

    def augment(self, data=None) -> pd.DataFrame:
        """The data (a copy) with ``.fitted``, ``.resid`` and ``.std_resid`` columns.

        Without ``data`` the estimation sample is used. Multi-level fits get one
        ``.fitted[level]`` and ``.resid[level]`` column per level.
        """
        spec = self._require_spec()
        if data is None:
            design = self._model_design()
            frame = design.frame()
            endog = design.y
        else:
            frame = pd.DataFrame(data).copy()
            endog = spec.endog(frame)
        fitted = self.predict(None if data is None else frame)
        if self.is_multilevel:
            for level in self.params.columns:
                frame[f".fitted[{level}]"] = fitted[level].to_numpy()
                if endog is not None:
                    frame[f".resid[{level}]"] = endog - fitted[level].to_numpy()
            return frame
        frame[".fitted"] = fitted.to_numpy()
        if endog is not None:
            resid = endog - fitted.to_numpy()
            frame[".resid"] = resid
            frame[".std_resid"] = resid / np.sqrt(self._residual_scale())
        return frame

    def _residual_scale(self) -> float:
        if self.scale is not None:
            return self.scale
        design = self._model_design()
        resid = design.y - self._to_response(self._predict_exog(design.X))
        dof = self.df_resid if self.df_resid else len(resid)
        return float(resid @ resid / dof)

    def _require_spec(self):
        if self.design_spec is None:
            raise ValueError(f"{type(self).__name__} has no design specification to predict with")
        return self.design_spec

    def _model_design(self):
        if self.model is None:
            raise ValueError(
                "this result was stripped of its model and data; pass `newdata` / `data`"
            )
        return self.model.design

    # --- reporting -----------------------------------------------------------------------------

    def _likelihood_facts(self) -> dict:
        return {"loglik": np.nan, "aic": np.nan, "bic": np.nan}

    def glance(self) -> pd.DataFrame:
        """``method, nobs, df_model, df_resid, loglik, aic, bic, converged, n_iter, cov_type``."""
        row = {
            "method": self.method,
            "nobs": self.nobs,
            "df_model": self.df_model,
            "df_resid": np.nan if self.df_resid is None else self.df_resid,
            **self._likelihood_facts(),
            "converged": self.converged,
            "n_iter": self.n_iter,
            # a default "nonrobust" on a fit without a covariance would claim one
            "cov_type": self.cov_type if self.has_inference else "none",
        }
        return pd.DataFrame([row])

    def tidy(self, conf_int: bool = True, alpha: float = 0.05) -> pd.DataFrame:
        """``term, [level,] estimate, std_error, statistic, p_value, conf_low, conf_high``.

        ``statistic`` and ``p_value`` are left out when ``null_value`` is None; everything after
        ``estimate`` when the fit has no standard errors (see :attr:`has_inference`).
        """
        flat = self._flat
        frame = pd.DataFrame({"estimate": flat.to_numpy()})
        if self.is_multilevel:
            frame.insert(0, "level", flat.index.get_level_values("level"))
            frame.insert(0, "term", flat.index.get_level_values("term").astype(str))
        else:
            frame.insert(0, "term", flat.index.astype(str))
        if not self.has_inference:
            return frame
        frame["std_error"] = self._flat_bse
        if self.null_value is not None:
            frame["statistic"] = self._flat_statistic
            frame["p_value"] = self._flat_pvalues
        if conf_int:
            ci = self.conf_int(alpha)
            frame["conf_low"] = ci["lower"].to_numpy()
            frame["conf_high"] = ci["upper"].to_numpy()
        return frame

    def summary(self, alpha: float = 0.05) -> Summary:
        """Header from :meth:`glance`, one coefficient table (one per level), and notes."""
        table = self.tidy(alpha=alpha)
        if self.is_multilevel:
            tables = {
                f"{self._table_name} (level = {format_level(level)})": rows.drop(
                    columns="level"
                ).set_index("term")
                for level, rows in table.groupby("level", sort=False)
            }
        else:
            tables = {self._table_name: table.set_index("term")}
        if self.has_inference:
            notes = (
                f"{100 * (1 - alpha):g}% intervals; {self._reference_text()}; "
                f"covariance: {self.cov_type}.",
            )
        else:
            notes = ("Point estimates only: this fit has no standard errors.",)
        return Summary(
            title=self._title(),
            info=self._info(),
            tables=tables,
            notes=self.notes + notes + self._convergence_notes(),
        )

    def _repr_lines(self) -> list[str]:
        return ["", "Coefficients:", self.params.to_string(float_format=lambda v: f"{v:.4g}")]


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class LikelihoodResults(EstimationResults):
    """Estimation results of a likelihood fit: adds ``llf``, ``aic``, ``bic`` and ``lr_test``.

    Parameters
    ----------
    llf : float
        Maximised log-likelihood.
    """

    llf: float

    @property
    def aic(self) -> float:
        """``-2 llf + 2 k`` with k = ``k_params`` (intercept included)."""
        return -2.0 * self.llf + 2.0 * self.k_params

    @property
    def bic(self) -> float:
        """``-2 llf + k log(nobs)`` with k = ``k_params``."""
        return -2.0 * self.llf + self.k_params * np.log(self.nobs)

    def _likelihood_facts(self) -> dict:
        return {"loglik": self.llf, "aic": self.aic, "bic": self.bic}

    def lr_test(self, restricted: LikelihoodResults) -> TestResult:
        """Likelihood-ratio test of this fit against a nested, ``restricted`` one.

        ``2 (llf - llf_restricted)`` against chi-square with the difference in ``k_params``.
        """
        if not isinstance(restricted, LikelihoodResults):
            raise TypeError(
                f"`restricted` must be a LikelihoodResults; got {type(restricted).__name__}"
            )
        df = self.k_params - restricted.k_params
        if df <= 0:
            raise ValueError(
                "`restricted` must have fewer parameters than this fit; got "
                f"k_params {restricted.k_params} vs {self.k_params}"
            )
        if restricted.nobs != self.nobs:
            raise ValueError(
                f"both fits must use the same observations; got nobs {self.nobs} and "
                f"{restricted.nobs}"
            )
        statistic = 2.0 * (self.llf - restricted.llf)
        reference = stats.chi2(df)
        return TestResult(
            method="Likelihood-ratio test",
            nobs=self.nobs,
            statistic=statistic,
            pvalue=float(reference.sf(statistic)),
            alternative="greater",
            df=df,
            distribution=f"chi2({df})",
            null_hypothesis=f"the restricted model ({restricted.method}) holds",
            reference=reference,
        )
