"""``EstimationResults`` and ``LikelihoodResults``: labelled estimates and the inference on them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from statcore._validation import check_alpha, check_option
from statcore.results._format import format_number
from statcore.results._plotting import plot_coefficients
from statcore.results.base import Results
from statcore.results.resampling import CI_METHODS, ResamplingResult
from statcore.results.summary import Summary
from statcore.results.testing import TestResult

INFERENCE = ("normal", "t", "bootstrap")


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
        ``(level, term)`` pairs, so that cross-level contrasts can be tested.
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
    df_model : int, optional
        Number of free parameters (defaults to the number of estimates).
    scale : float, optional
        Residual variance, for standardised residuals in :meth:`augment`.
    """

    params: pd.Series | pd.DataFrame
    vcov: pd.DataFrame | None = None
    df_resid: float | None = None
    inference: str = "normal"
    cov_type: str = "nonrobust"
    resampling: ResamplingResult | None = None
    null_value: float | None = 0.0
    ci_method: str = "percentile"
    df_model: int | None = None
    scale: float | None = None

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
        """``1 - alpha`` intervals: columns ``lower``, ``upper``; rows terms (``(level, term)``)."""
        alpha = check_alpha(alpha)
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
        method = "Wald test of linear restrictions"
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
        """Prediction from a design matrix (linear predictor); nonlinear models override it."""
        return exog @ self._linear_params().to_numpy()

    def predict(self, newdata=None):
        """Fitted values on the estimation data, or predictions for ``newdata``.

        ``newdata`` goes through the fitted design specification: the same formula, categorical
        levels and stateful transforms (for array-built models: the exog columns without the
        intercept, which is added back).
        """
        spec = self._require_spec()
        if newdata is None:
            exog, index = self._model_design().X, self._model_design().row_labels
        else:
            exog, index = spec.exog(newdata)
        fitted = self._predict_exog(exog)
        if self.is_multilevel:
            return pd.DataFrame(fitted, index=index, columns=self.params.columns)
        return pd.Series(fitted, index=index, name="fitted")

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
        resid = design.y - self._predict_exog(design.X)
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

    @property
    def _n_params(self) -> int:
        return self.df_model if self.df_model is not None else len(self._flat)

    def _likelihood_facts(self) -> dict:
        return {"loglik": np.nan, "aic": np.nan, "bic": np.nan}

    def glance(self) -> pd.DataFrame:
        """``method, nobs, df_model, df_resid, loglik, aic, bic, converged, n_iter, cov_type``."""
        row = {
            "method": self.method,
            "nobs": self.nobs,
            "df_model": self._n_params,
            "df_resid": np.nan if self.df_resid is None else self.df_resid,
            **self._likelihood_facts(),
            "converged": self.converged,
            "n_iter": self.n_iter,
            "cov_type": self.cov_type,
        }
        return pd.DataFrame([row])

    def tidy(self, conf_int: bool = True, alpha: float = 0.05) -> pd.DataFrame:
        """``term, [level,] estimate, std_error, statistic, p_value, conf_low, conf_high``.

        ``statistic`` and ``p_value`` are left out when ``null_value`` is None.
        """
        flat = self._flat
        frame = pd.DataFrame({"estimate": flat.to_numpy(), "std_error": self._flat_bse})
        if self.is_multilevel:
            frame.insert(0, "level", flat.index.get_level_values("level"))
            frame.insert(0, "term", flat.index.get_level_values("term").astype(str))
        else:
            frame.insert(0, "term", flat.index.astype(str))
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
                f"{self._table_name} (level = {level})": rows.drop(columns="level").set_index(
                    "term"
                )
                for level, rows in table.groupby("level", sort=False)
            }
        else:
            tables = {self._table_name: table.set_index("term")}
        notes = (
            f"{100 * (1 - alpha):g}% intervals; {self._reference_text()}; "
            f"covariance: {self.cov_type}.",
        )
        return Summary(
            title=self.method,
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
        """``-2 llf + 2 k`` with k = ``df_model``."""
        return -2.0 * self.llf + 2.0 * self._n_params

    @property
    def bic(self) -> float:
        """``-2 llf + k log(nobs)``."""
        return -2.0 * self.llf + self._n_params * np.log(self.nobs)

    def _likelihood_facts(self) -> dict:
        return {"loglik": self.llf, "aic": self.aic, "bic": self.bic}

    def lr_test(self, restricted: LikelihoodResults) -> TestResult:
        """Likelihood-ratio test of this fit against a nested, ``restricted`` one.

        ``2 (llf - llf_restricted)`` against chi-square with the difference in ``df_model``.
        """
        if not isinstance(restricted, LikelihoodResults):
            raise TypeError(
                f"`restricted` must be a LikelihoodResults; got {type(restricted).__name__}"
            )
        df = self._n_params - restricted._n_params
        if df <= 0:
            raise ValueError(
                "`restricted` must have fewer parameters than this fit; got "
                f"df_model {restricted._n_params} vs {self._n_params}"
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
