"""``QuantizedRegression``: linear regression whose latent response is seen through a quantizer."""

from __future__ import annotations

import numpy as np
import pandas as pd

from statcore.base import Model
from statcore.compat import renamed_keywords
from statcore.formula import Design
from statcore.quantized import _ecm
from statcore.quantized._common import (
    COV_TYPES,
    check_cells,
    check_cov_type,
    check_fix,
    check_start,
    is_log_scale,
)
from statcore.quantized.mixing import FAMILIES, MIXING_PARAMS, MIXING_START, SKEWED
from statcore.quantized.quantizer import check_quantizer, midpoint_impute
from statcore.quantized.results import QuantizedRegressionResults
from statcore.validation import check_design, check_option, check_positive, check_positive_int


class QuantizedRegression(Model):
    """``y_i = Q(a_i' beta + eps_i)`` with NVMM errors ``eps ~ NVMM_1(0, sigma^2, gamma, W)``.

    Parameters
    ----------
    endog : array_like of int codes, or a pair ``(lower, upper)`` of cell edges
        The quantized response. Codes need ``quantizer``.
    exog : array_like, optional
        Regressors; an ``Intercept`` column is added unless ``intercept=False``.
    quantizer : Quantizer, optional
        Maps codes to cells.
    family : {"gaussian", "t", "skew_t", "nig", "vg", "gh"}
        Error law; the t is fitted with closed-form E-step moments, the others with a
        quadrature over W.
    dither : array_like, optional
        Known dither added before quantization.

    Notes
    -----
    CM steps (the regression variant of the ECM, a reconstruction): with the E-step moments
    ``delta_i = E[1/W]``, ``eta_i = E[W]``, ``f_i = E[Z]``, ``e_i = E[Z/W]``, ``s_i = E[Z^2/W]``,
    ``(beta, gamma)`` solve ``[sum delta a a', sum a; sum a', sum eta] [beta; gamma] =
    [sum a e; sum f]`` and ``sigma^2 = n^-1 sum (s - 2 e a'beta + delta (a'beta)^2
    - 2 gamma (f - a'beta) + gamma^2 eta)``. The mixing parameters take the CM step of
    :func:`statcore.quantized.mixing.mixing_cm_step` from the averages of ``E[1/W]``,
    ``E[W]`` and ``E[log W]`` (closed form for the NIG, one monotone scalar equation for the
    t, skew t and VG, a concave Newton solve for the GH; no search over the observed
    likelihood). Because a skewed error has mean ``gamma E W``, keep the intercept.

    References
    ----------
    Inference from quantized data under the normal variance-mean mixture (NVMM) framework
    (ICML 2026). Garay, Lachos et al., R package ``SMNCensReg`` (censored SMN regression).
    """

    method_name = "Quantized regression"

    def __init__(
        self,
        endog,
        exog=None,
        *,
        quantizer=None,
        family: str = "gaussian",
        dither=None,
        intercept: bool = True,
        missing: str = "raise",
    ):
        self.family = check_option(family, name="family", options=FAMILIES)
        labels = None  # a Series response keeps its index and name, to align with `exog`
        if isinstance(endog, tuple) and len(endog) == 2:
            lower, upper = check_cells(*endog)
            if isinstance(endog[0], pd.Series):
                labels = endog[0]
        else:
            if quantizer is None:
                raise ValueError(
                    "codes need the `quantizer` that produced them (or pass `(lower, upper)` cells)"
                )
            quantizer = check_quantizer(quantizer, n_dims=1)
            # one check of the codes for array and formula input: a non-integer code is refused
            codes = quantizer.check_codes(endog.y if isinstance(endog, Design) else endog)
            lower, upper = quantizer.cells(codes, dither)
            if isinstance(endog, pd.Series):
                labels = endog
        if lower.ndim != 1:
            raise ValueError("the quantized response must be one-dimensional")
        mids = midpoint_impute(lower, upper)
        if isinstance(endog, Design):
            super().__init__(endog)
        else:
            y = mids if labels is None else pd.Series(mids, index=labels.index, name=labels.name)
            super().__init__(y, exog, intercept=intercept, missing=missing)
            kept = self.design.kept
            lower, upper, mids = lower[kept], upper[kept], mids[kept]
        check_design(self.exog, self.exog_names)
        self.lower, self.upper = lower, upper
        self._mids = mids
        self.quantizer = quantizer

    @property
    def _skew(self):
        return self.family in SKEWED

    @property
    def param_names(self):
        return (
            self.exog_names
            + ["sigma"]
            + (["gamma"] if self._skew else [])
            + list(MIXING_PARAMS[self.family])
        )

    def _positive(self, name):
        return is_log_scale(self.family, name)

    @renamed_keywords(se="cov_type")
    def fit(
        self,
        *,
        maxiter: int = 2000,
        tol: float = 1e-8,
        start=None,
        fix=None,
        cov_type: str | None = "louis",
        accelerate: bool = True,
        progress: bool = False,
    ) -> QuantizedRegressionResults:
        """ECM fit; options as :meth:`QuantizedNVMM.fit` (``cov_type`` in louis, hessian, None;
        formerly ``se=``, still accepted with a ``FutureWarning``)."""
        maxiter = check_positive_int(maxiter, name="maxiter")
        tol = check_positive(tol, name="tol")
        cov_type = check_cov_type(cov_type, COV_TYPES[:2])
        p = self.exog.shape[1]
        fit = self._fit_ecm(
            maxiter=maxiter,
            tol=tol,
            start=check_start(
                start, ["beta", *self._scalar_names], family=self.family, shapes={"beta": (p,)}
            ),
            fix=check_fix(fix, self._scalar_names, family=self.family),
            accelerate=accelerate,
            progress=progress,
        )
        return QuantizedRegressionResults.from_fit(
            fit,
            names=self.param_names,
            family=self.family,
            cov_type=cov_type,
            fields=self._result_fields(),
            method=f"{self.method_name} ({self.family} errors) by ECM",
            df_resid=self.nobs - len(fit.free),
        )

    @property
    def _scalar_names(self):
        return ["sigma"] + (["gamma"] if self._skew else []) + list(MIXING_PARAMS[self.family])

    def _start(self, start, fix):
        beta0, *_ = np.linalg.lstsq(self.exog, self._mids, rcond=None)
        resid = self._mids - self.exog @ beta0
        theta = {"beta": beta0, "sigma": float(np.std(resid)) or 1.0, "gamma": 0.0}
        for k in MIXING_PARAMS[self.family]:
            theta[k] = MIXING_START[k]
        theta.update(start)
        theta.update(fix)
        return theta

    def _check_identified(self, free_scalar):
        lo, hi = self.lower, self.upper
        edges = np.unique(np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)]]))
        if len(edges) < 2 and "sigma" in free_scalar:
            raise ValueError(
                "1-bit responses with one threshold and no dither identify only beta / sigma: "
                "fit with fix={'sigma': ...} or quantize with a known dither"
            )

    def _cm_step(self, th, fix, mix_free, loglik_th):
        """One ECM iteration: E-step moments, CM steps for (beta, gamma), sigma and mixing."""
        X, lo, hi, fam = self.exog, self.lower, self.upper, self.family
        p = X.shape[1]
        loc = X @ th["beta"]
        gamma = th.get("gamma", 0.0) if self._skew else 0.0
        mix = {k: th[k] for k in MIXING_PARAMS[fam]}
        logp, out = _ecm.scalar_estep(
            lo, hi, loc, th["sigma"], gamma, fam, mix, closed_form=not mix_free
        )
        delta, eta, f, e, s = out[:, 0], out[:, 1], out[:, 3], out[:, 4], out[:, 5]
        new = dict(th)
        if self._skew and "gamma" not in fix:
            A = np.zeros((p + 1, p + 1))
            A[:p, :p] = (X * delta[:, None]).T @ X
            A[:p, p] = A[p, :p] = X.sum(axis=0)
            A[p, p] = eta.sum()
            rhs = np.concatenate([X.T @ e, [f.sum()]])
            sol = np.linalg.solve(A, rhs)
            beta, gamma = sol[:p], float(sol[p])
        else:
            rhs = X.T @ (e - gamma * 1.0) if self._skew else X.T @ e
            beta = np.linalg.solve((X * delta[:, None]).T @ X, rhs)
        lin = X @ beta
        new["beta"], new["gamma"] = beta, gamma
        if "sigma" not in fix:
            s2 = s - 2 * e * lin + delta * lin**2
            if self._skew:
                s2 = s2 - 2 * gamma * (f - lin) + gamma**2 * eta
            new["sigma"] = float(np.sqrt(max(s2.sum() / len(lo), 1e-300)))
        expand = "sigma" not in fix and ("gamma" not in fix or new["gamma"] == 0.0)
        moments = (delta.mean(), eta.mean(), out[:, 2].mean())
        _ecm.mixing_update(new, mix_free, fam, moments, expand=expand)
        # the t's quadrature E-step (for E[log W]) would report a likelihood a hair off the
        # closed form that SQUAREM and the stopping rule compare it with
        llf = loglik_th(th) if fam == "t" and mix_free else float(np.sum(logp))
        return new, llf

    def _fit_ecm(self, *, start, fix, **options) -> _ecm.EcmFit:
        """The ECM in unconstrained coordinates (beta, then log scales and free mixing)."""
        fam = self.family
        X = self.exog
        p = X.shape[1]
        lo, hi = self.lower, self.upper
        free_scalar = [k for k in self._scalar_names if k not in fix]
        mix_free = [k for k in MIXING_PARAMS[fam] if k in free_scalar]
        self._check_identified(free_scalar)
        theta = self._start(start, fix)

        def pack(th):
            vals = list(th["beta"])
            vals += [np.log(th[k]) if self._positive(k) else th[k] for k in free_scalar]
            return np.array(vals, dtype=float)

        def unpack(x):
            th = dict(theta)
            th["beta"] = np.asarray(x[:p])
            for k, v in zip(free_scalar, x[p:], strict=True):
                th[k] = float(np.exp(v)) if self._positive(k) else float(v)
            th.update(fix)
            return th

        def loglik_th(th):
            mix = {k: th[k] for k in MIXING_PARAMS[fam]}
            return _ecm.scalar_loglik(
                lo, hi, X @ th["beta"], th["sigma"], th.get("gamma", 0.0), fam, mix
            )

        def step(x):
            new, llf = self._cm_step(unpack(x), fix, mix_free, loglik_th)
            return pack(new), llf

        def finish(x):
            th = unpack(x)
            values = dict(zip(self.exog_names, th["beta"], strict=True))
            values.update({k: th[k] for k in self._scalar_names})
            estimates = {k: th[k] for k in self._scalar_names}
            estimates.update({"beta": th["beta"]})
            estimates.setdefault("gamma", 0.0)
            return {
                "values": values,
                "free": self.exog_names + free_scalar,
                "estimates": estimates,
                "restart": {"beta": th["beta"], **{k: th[k] for k in free_scalar}},
                "information": lambda cov_type: self._information(
                    th, free_scalar, cov_type, loglik_th
                ),
            }

        return _ecm.ecm_fit(
            step,
            lambda x: loglik_th(unpack(x)),
            pack(theta),
            finish,
            name="QuantizedRegression.fit",
            fix=fix,
            **options,
        )

    def _information(self, th, free_scalar, cov_type, loglik_th):
        """Observed information over beta and the free scalars: Louis's identity or the
        numerical Hessian."""
        X, fam = self.exog, self.family
        p = X.shape[1]
        free = self.exog_names + free_scalar
        if cov_type == "hessian":

            def f(v):
                trial = dict(th)
                trial["beta"] = v[:p]
                trial.update(dict(zip(free_scalar, v[p:], strict=True)))
                return loglik_th(trial)

            start = np.r_[th["beta"], [th[k] for k in free_scalar]]
            return -_ecm.numerical_hessian(f, start), "numerical Hessian", ()
        mix_free = [k for k in MIXING_PARAMS[fam] if k in free_scalar]
        info = _ecm.louis_information(
            self.lower,
            self.upper,
            X @ th["beta"],
            X,
            np.ones(len(self.lower)),
            th["sigma"],
            th.get("gamma", 0.0),
            fam,
            {k: th[k] for k in MIXING_PARAMS[fam]},
            skew=self._skew,
            mix_free=mix_free,
        )
        order = self.exog_names + ["sigma"] + (["gamma"] if self._skew else []) + mix_free
        keep = [order.index(k) for k in free]
        return info[np.ix_(keep, keep)], "Louis observed information", ()
