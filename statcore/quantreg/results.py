"""Results of quantile regression fits: ``QuantRegResults`` and ``FederatedQuantRegResults``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from statcore.quantreg._inference import refit_options
from statcore.quantreg.bands import QuantileProcessMixin, plot_band
from statcore.quantreg.generalization import FederatedProcessMixin
from statcore.results import EstimationResults, TestResult
from statcore.results.plotting import get_ax, plot_coefficients, term_axes
from statcore.validation import check_alpha, check_option


def plot_quantile_process(results, ax=None, alpha=0.05, terms=None, **kwargs):
    """One panel per term: the estimate against the quantile level with a ``1 - alpha`` band,
    like R's ``plot(summary(rq(...)))``. ``ax`` may be a sequence of Axes (one per term).

    Returns the Axes (an array when several panels are drawn).
    """
    if not results.is_multilevel:
        return plot_coefficients(results, ax=ax, alpha=alpha, **kwargs)
    frame = results.tidy(alpha=alpha)
    names = list(results.params.index) if terms is None else list(terms)
    axes = term_axes(len(names), ax)
    for panel, term in zip(axes, names, strict=True):
        rows = frame[frame["term"] == term]
        levels = rows["level"].to_numpy(dtype=float)
        panel.fill_between(levels, rows["conf_low"], rows["conf_high"], color="0.8")
        panel.plot(levels, rows["estimate"], "o-", color="k", ms=3, **kwargs)
        panel.axhline(0.0, color="grey", lw=0.6, ls=":")
        panel.set_title(str(term))
        panel.set_xlabel("quantile level")
    return axes if len(axes) > 1 else axes[0]


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class QuantRegResults(QuantileProcessMixin, EstimationResults):
    """Quantile regression estimates at one or several levels.

    Parameters
    ----------
    q : tuple of float
        The quantile levels, in the order of the columns of ``params`` (multi-level fits).
    objective : float or Series
        The check loss ``sum rho_q(y - X b)`` at the estimate (one per level).
    fit_method : str
        ``"fn"``, ``"conquer"`` or ``"highs"``.
    bandwidth : float or Series, optional
        Bandwidth in quantile units used by the iid, kernel and nid covariances.
    smoothing : float or Series, optional
        The conquer smoothing bandwidth (response units).
    unique : Series, optional
        Per level: whether the LP solution is unique (None where it was not checked).
    rank : tuple, optional
        Per level, the rank-inversion paths of ``cov_type="rank"``. Such a fit has intervals
        but no covariance: ``vcov`` is None and ``bse`` NaN (R's ``summary.rq(se="rank")``
        prints no standard errors either), :meth:`conf_int` interpolates the rank-test
        inversion at any ``alpha >= 0.001`` (R's default is ``alpha = 0.1``; ours 0.05, as
        everywhere in statcore), and ``tvalues`` / ``pvalues`` are the regression rank-score
        test of each coefficient being 0 against Student's t with ``df_resid``.

    References
    ----------
    Koenker, R. and Bassett, G. (1978). Regression quantiles. *Econometrica* 46, 33-50.
    Gutenbrunner, C., Jureckova, J., Koenker, R. and Portnoy, S. (1993). Tests of linear
    hypotheses based on regression rank scores. *Journal of Nonparametric Statistics* 2,
    307-331.
    Koenker, R. (1994). Confidence intervals for regression quantiles. In *Asymptotic
    Statistics* (Mandl and Huskova, eds.), 349-359. Physica.
    Portnoy, S. and Koenker, R. (1997). The Gaussian hare and the Laplacian tortoise.
    *Statistical Science* 12, 279-300.
    """

    q: tuple[float, ...]
    objective: float | pd.Series
    fit_method: str = "fn"
    bandwidth: float | pd.Series | None = None
    smoothing: float | pd.Series | None = None
    unique: pd.Series | None = field(default=None, repr=False)
    rank: tuple | None = field(default=None, repr=False)

    _plots: ClassVar[dict] = {
        "process": plot_quantile_process,
        "coef": plot_coefficients,
        "band": plot_band,
    }

    @property
    def has_inference(self) -> bool:
        return self.rank is not None or super().has_inference

    @property
    def _flat_statistic(self) -> np.ndarray:
        if self.rank is None:
            return super()._flat_statistic
        return np.concatenate([level.statistic for level in self.rank])

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """``1 - alpha`` intervals (columns ``lower``, ``upper``); for ``cov_type="rank"`` the
        rank-test inversion, interpolated as R's ``rq.fit.br(ci=TRUE)``."""
        if self.rank is None:
            return super().conf_int(alpha)
        alpha = check_alpha(alpha)
        bounds = [level.interval(alpha) for level in self.rank]
        return pd.DataFrame(
            {
                "lower": np.concatenate([lower for lower, _ in bounds]),
                "upper": np.concatenate([upper for _, upper in bounds]),
            },
            index=self._flat.index,
        )

    def predict(
        self,
        newdata=None,
        which: str = "mean",
        *,
        rearrange: bool = False,
        interval: str = "none",
        alpha=0.05,
    ):
        """Fitted quantiles, or predictions for ``newdata``; with ``interval="confidence"``
        their ``1 - alpha`` confidence intervals, as R's ``predict.rq(interval="confidence")``.

        Parameters
        ----------
        newdata : DataFrame or array_like, optional
            Data to predict for; the estimation data when None.
        which : {"mean", "linear"}
            Both give the linear predictor ``x' b(q)`` (quantile regression has no link).
        rearrange : bool
            Sort each row of a multi-level prediction over the levels, so that the quantile
            curves never cross (Chernozhukov, Fernandez-Val and Galichon 2010); not with
            intervals.
        interval : {"none", "confidence"}
            ``"confidence"``: a frame with columns ``fit``, ``lower`` and ``upper``,
            ``x' b -+ t_{1-alpha/2, n-p} sqrt(x' V x)`` with ``V`` the fit's covariance (a
            multi-level fit: one such group of columns per level). A ``cov_type="rank"`` fit
            has no covariance; its intervals use the ``"nid"`` covariance, as R's
            ``summary(cov=TRUE)`` does inside ``predict.rq``.
        alpha : float
            One minus the confidence level.
        """
        check_option(interval, name="interval", options=("none", "confidence"))
        fitted = super().predict(newdata, which, rearrange=rearrange)
        if interval == "none":
            return fitted
        if rearrange:
            raise ValueError(
                "predict(): `rearrange=True` sorts the fitted curves but not their intervals; "
                "use predict_band(..., rearrange=True) for bands of rearranged curves"
            )
        alpha = check_alpha(alpha)
        vcov = self.vcov
        if vcov is None:
            if self.model is None:
                raise ValueError(
                    "predict(interval='confidence') needs a covariance: this cov_type='rank' "
                    "fit has none and was stripped of its model; refit with cov_type='nid'"
                )
            vcov = self.model.fit(**refit_options(self.fit_options, "nid")).vcov
        if newdata is None:
            exog = self._model_design().X
        else:
            exog, _ = self._require_spec().exog(newdata)
        V = vcov.to_numpy()
        p = exog.shape[1]
        t = stats.t.ppf(1 - alpha / 2, self.df_resid)
        frames = {}
        for level, q in enumerate(self.q):
            block = V[level * p : (level + 1) * p, level * p : (level + 1) * p]
            se = np.sqrt(np.einsum("ij,jk,ik->i", exog, block, exog))
            fit = fitted[q] if self.is_multilevel else fitted
            frames[q] = pd.DataFrame(
                {"fit": fit, "lower": fit - t * se, "upper": fit + t * se}, index=fitted.index
            )
        if self.is_multilevel:
            return pd.concat(frames, axis=1, names=["level", None])
        return frames[self.q[0]]

    def wald_test(self, constraints):
        if self.rank is not None:
            return TestResult.not_applicable(
                "Wald test",
                "cov_type='rank' gives intervals, not a covariance; refit with "
                "cov_type='nid', 'kernel', 'iid' or 'bootstrap'",
            )
        return super().wald_test(constraints)

    wald_test.__doc__ = EstimationResults.wald_test.__doc__

    def glance(self) -> pd.DataFrame:
        """The base glance plus ``q`` (the level, or the levels as text) and ``objective``."""
        row = super().glance()
        row.insert(1, "q", self.q[0] if len(self.q) == 1 else ", ".join(f"{v:g}" for v in self.q))
        row["objective"] = float(np.sum(self.objective))
        return row

    def _repr_lines(self) -> list[str]:
        return [f"  q = {', '.join(f'{v:g}' for v in self.q)}", *super()._repr_lines()]


def _plot_federated(results, ax=None, alpha=0.05, **kwargs):
    """Ensemble estimate and interval beside each agent's local estimate and interval."""
    ax = get_ax(ax)
    flat = results.tidy(alpha=alpha)
    level = flat["level"].iloc[0] if "level" in flat.columns else None
    if level is not None:
        flat = flat[flat["level"] == level]
    terms = list(flat["term"])
    offsets = np.linspace(-0.3, 0.3, len(results.local) + 1)
    for k, (name, local) in enumerate(results.local.items()):
        tidy = local.tidy(alpha=alpha)
        if "level" in tidy.columns:
            tidy = tidy[tidy["level"] == level]
        tidy = tidy.set_index("term")
        y, est, low, high = [], [], [], []
        for j, term in enumerate(terms):
            if term in tidy.index:
                y.append(j + offsets[k])
                est.append(tidy.loc[term, "estimate"])
                low.append(tidy.loc[term, "conf_low"])
                high.append(tidy.loc[term, "conf_high"])
        est = np.asarray(est)
        ax.errorbar(
            est,
            y,
            xerr=[est - low, np.asarray(high) - est],
            fmt="o",
            ms=3,
            capsize=2,
            alpha=0.7,
            label=str(name),
        )
    y = np.arange(len(terms)) + offsets[-1]
    est = flat["estimate"].to_numpy()
    ax.errorbar(
        est,
        y,
        xerr=[est - flat["conf_low"], flat["conf_high"] - est],
        fmt="D",
        color="k",
        capsize=3,
        label="ensemble",
        **kwargs,
    )
    ax.set_yticks(np.arange(len(terms)), terms)
    ax.legend(frameon=False, fontsize="small")
    suffix = "" if level is None else f" (q = {level:g})"
    ax.set_title(f"Local and ensemble estimates{suffix}, {100 * (1 - alpha):g}% intervals")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class FederatedQuantRegResults(FederatedProcessMixin, EstimationResults):
    """The one-shot weighted-ensemble estimate of federated quantile regression.

    Parameters
    ----------
    q : tuple of float
        Quantile levels.
    weights : DataFrame
        Agent x coefficient: the weight each agent's own estimate of a coefficient gets (the
        diagonal of its weight matrix ``W_k``; columns ``(level, term)`` for several levels).
    weight_matrices : dict
        ``{level: {agent: W_k}}``, each ``W_k`` of shape (p, p_k): the ensemble is
        ``sum_k W_k theta_k``.
    local : dict
        Agent name -> that agent's ``QuantRegResults`` (stripped of its data).
    communication : DataFrame
        Per agent: the numbers of floats sent (slopes, covariance entries, sample size).
    agent_intercepts : DataFrame
        Agent x level: the local intercepts (agent-specific nuisance parameters).
    scheme : str
        The weighting scheme.

    References
    ----------
    One-shot weighted ensemble estimation for federated quantile regression: optimal
    statistical guarantees under heterogeneous structured data (ICML 2026; ICLR 2026
    submission 14410, https://openreview.net/forum?id=8dWiSr6G4q).
    """

    q: tuple[float, ...]
    weights: pd.DataFrame
    weight_matrices: dict = field(repr=False)
    local: dict = field(repr=False)
    communication: pd.DataFrame
    agent_intercepts: pd.DataFrame
    scheme: str = "optimal"
    _messages: tuple = field(default=(), repr=False)
    _combine: object = field(default=None, repr=False)

    _plots: ClassVar[dict] = {
        "agents": _plot_federated,
        "coef": plot_coefficients,
        "band": plot_band,
    }

    def stability(self) -> pd.DataFrame:
        """The perturbation analysis: each agent's influence on the ensemble.

        Columns: ``agent``, ``level``, ``n``, ``share`` (``n_k / N``), ``influence`` (spectral
        norm of ``W_k``: a perturbation ``delta`` of the agent's estimate moves the ensemble by
        exactly ``W_k delta``), ``loo_change`` (Euclidean norm of the change when the agent is
        left out; NaN when some coefficient is then seen by no agent) and ``loo_change_se``
        (the same change over the ensemble's standard errors, largest coordinate).
        """
        total = sum(m.n for m in self._messages)
        rows = []
        for level in self.q:
            full = self._level_params(level)
            se = self._level_bse(level)
            for k, message in enumerate(self._messages):
                W = self.weight_matrices[level][message.name]
                others = self._messages[:k] + self._messages[k + 1 :]
                try:
                    left_out = self._combine(others, self.scheme)[0][level]
                    change = left_out - full
                    loo, loo_se = float(np.linalg.norm(change)), float(np.max(np.abs(change / se)))
                except ValueError:
                    loo, loo_se = np.nan, np.nan
                rows.append(
                    {
                        "agent": message.name,
                        "level": level,
                        "n": message.n,
                        "share": message.n / total,
                        "influence": float(np.linalg.norm(W, 2)),
                        "loo_change": loo,
                        "loo_change_se": loo_se,
                    }
                )
        return pd.DataFrame(rows)

    def _level_params(self, level) -> np.ndarray:
        col = self.params[level] if self.is_multilevel else self.params
        return col.to_numpy(dtype=float)

    def _level_bse(self, level) -> np.ndarray:
        col = self.bse[level] if self.is_multilevel else self.bse
        return col.to_numpy(dtype=float)

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row.insert(1, "n_agents", len(self.local))
        row.insert(2, "q", self.q[0] if len(self.q) == 1 else ", ".join(f"{v:g}" for v in self.q))
        row["floats_sent"] = int(self.communication["total"].sum())
        row["scheme"] = self.scheme
        return row

    def summary(self, alpha: float = 0.05):
        base = super().summary(alpha)
        agents = self.communication[["n", "p"]].copy()
        for level in self.q:
            label = "weight_norm" if len(self.q) == 1 else f"weight_norm[{level:g}]"
            agents[label] = [
                np.linalg.norm(self.weight_matrices[level][name], 2) for name in agents.index
            ]
        tables = {**base.tables, "agents": agents}
        return type(base)(title=base.title, info=base.info, tables=tables, notes=base.notes)
