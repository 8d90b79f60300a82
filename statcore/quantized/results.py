"""Results of the quantized-data fits: one base, and the NVMM / covariance and regression kinds.

Every quantized fit maximises an exact cell likelihood under a normal variance-mean mixture by
ECM, so every results object (:class:`QuantizedResults`) holds the family, the ECM history, the
estimates by name and the parameters held known. The matrix-completion and compressed-sensing
results, which add their own structure, live beside their models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import special

from statcore.quantized import _ecm
from statcore.quantized._common import fixed_note
from statcore.quantized.mixing import MIXING_PARAMS, gig_params, mixing_nodes
from statcore.quantized.quantizer import midpoint_impute
from statcore.results import LikelihoodResults
from statcore.results.plotting import get_ax, label_axes, plot_coefficients


def plot_history(results, ax=None, **kwargs):
    """The criterion (log-likelihood, or the penalised one) per ECM iteration."""
    ax = get_ax(ax)
    ax.plot(np.arange(len(results.history)), results.history, marker=".", **kwargs)
    return label_axes(ax, "iteration", "log-likelihood", "ECM history")


def plot_density(results, ax=None, bins=None, **kwargs):
    """Fitted density over the histogram of the cells (univariate fits)."""
    model = results.model
    if model is None or results.Sigma is not None:
        raise ValueError("the density plot needs a univariate fit that still holds its model")
    ax = get_ax(ax)
    lo, hi, counts = model._lower_u, model._upper_u, model._counts_u
    n = counts.sum()
    finite = np.isfinite(lo) & np.isfinite(hi)
    if model._dithered:
        mids = midpoint_impute(model.lower, model.upper)
        ax.hist(mids, bins=bins or 40, density=True, color="0.8", label="midpoints")
    else:
        ax.bar(
            lo[finite],
            counts[finite] / (n * (hi[finite] - lo[finite])),
            width=(hi - lo)[finite],
            align="edge",
            color="0.8",
            edgecolor="0.5",
            label="cell histogram",
        )
    span = np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)]])
    scale = results.sigma
    left = min(span.min(), results.mu - 4 * scale) if span.size else results.mu - 4 * scale
    right = max(span.max(), results.mu + 4 * scale) if span.size else results.mu + 4 * scale
    grid = np.linspace(left, right, 400)
    ax.plot(grid, results.pdf(grid), color="C0", label=f"fitted {results.family}", **kwargs)
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    ax.legend(frameon=False)
    ax.set_title(f"{results.method}")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class QuantizedResults(LikelihoodResults):
    """Base of the quantized-data results: a likelihood fit of an NVMM law by ECM.

    Beyond :class:`~statcore.results.LikelihoodResults`: ``family``, ``history`` (the ECM's
    criterion per iteration, non-decreasing: the exact observed log-likelihood, or the
    penalised one), ``estimates`` (the estimates by name, also as attributes ``sigma``,
    ``gamma``, ``nu`` and the mixing law's ``lam, chi, psi``) and ``fixed`` (the parameters
    held known). ``iterations`` records how the ECM stopped.
    """

    family: str = "gaussian"
    history: np.ndarray = field(default_factory=lambda: np.zeros(0))
    estimates: dict = field(default_factory=dict)
    fixed: tuple = ()

    _plots: ClassVar[dict] = {"coef": plot_coefficients, "history": plot_history}

    @classmethod
    def from_fit(cls, fit, *, names, family, cov_type, fields, bootstrap=None, **extra):
        """Results of an ``EcmFit`` with inference by
        ``cov_type`` (``bootstrap()`` draws the replicates); ``fields`` are the model's
        ``_result_fields()``, ``extra`` the kind's own fields."""
        vcov, label, notes, resampling = _ecm.inference(fit, names, cov_type, bootstrap)
        if fit.fix:
            notes += (fixed_note(fit.fix),)
        return cls(
            params=pd.Series([fit.values[p] for p in names], index=names, name="estimate"),
            vcov=vcov,
            llf=fit.llf,
            iterations=fit.record,
            cov_type=label,
            resampling=resampling,
            k_params=len(fit.free),
            family=family,
            history=fit.history,
            estimates=fit.estimates,
            fixed=tuple(fit.fix),
            **{**fields, "notes": fields.get("notes", ()) + notes},
            **extra,
        )

    @property
    def sigma(self):
        """Scale of the (univariate) law, a standard deviation; None for multivariate fits."""
        return self.estimates.get("sigma")

    @property
    def gamma(self):
        return self.estimates.get("gamma", 0.0)

    @property
    def nu(self):
        return self.estimates.get("nu")

    @property
    def lam(self):
        gig = self._gig
        return None if gig is None else gig[0]

    @property
    def chi(self):
        gig = self._gig
        return None if gig is None else gig[1]

    @property
    def psi(self):
        gig = self._gig
        return None if gig is None else gig[2]

    @property
    def _mixing(self) -> dict:
        return {k: self.estimates[k] for k in MIXING_PARAMS[self.family]}

    @property
    def _gig(self):
        return gig_params(self.family, self._mixing)

    def _repr_lines(self):
        return ["", f"family: {self.family}", *super()._repr_lines()[1:]]


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class QuantizedNVMMResults(QuantizedResults):
    """Results of :class:`~statcore.quantized.QuantizedNVMM` (and ``QuantizedCovariance``).

    The location ``mu`` and, for univariate fits, ``sigma`` and the fitted density ``pdf``;
    for multivariate (box) fits the scatter matrix ``Sigma``.
    """

    _plots: ClassVar[dict] = {
        "density": plot_density,
        "coef": plot_coefficients,
        "history": plot_history,
    }

    @property
    def mu(self):
        return self.estimates.get("mu")

    @property
    def Sigma(self):
        """Scatter matrix of a multivariate fit; None for univariate fits."""
        return self.estimates.get("Sigma")

    def pdf(self, x):
        """Fitted density of the latent (unquantized) variable (univariate fits)."""
        x = np.asarray(x, dtype=float)
        w, logwt = mixing_nodes(self.family, self._mixing)
        m = self.mu + w * self.gamma
        s = self.sigma * np.sqrt(w)
        z = (x[..., None] - m) / s
        logf = logwt - 0.5 * z**2 - np.log(s) - 0.5 * np.log(2 * np.pi)
        return np.exp(special.logsumexp(logf, axis=-1))


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class QuantizedRegressionResults(QuantizedResults):
    """Results of :class:`~statcore.quantized.QuantizedRegression`: ``params`` holds beta,
    sigma, gamma and the mixing parameters (``beta`` also in ``estimates``); ``predict`` gives
    the latent mean ``X beta`` (plus ``gamma E W`` for skewed errors, which the intercept
    otherwise absorbs)."""

    @property
    def beta(self):
        return self.estimates.get("beta")

    def _predict_exog(self, exog):
        return exog @ self.params.loc[list(self.design_spec.x_names)].to_numpy()


__all__ = [
    "QuantizedNVMMResults",
    "QuantizedRegressionResults",
    "QuantizedResults",
    "plot_density",
    "plot_history",
]
