"""``QuantizedRegression``: linear regression whose latent response is seen through a quantizer."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize

from statcore._validation import check_option, check_positive, check_positive_int
from statcore.base import Model
from statcore.formula import Design, capture_context, design_from_formula
from statcore.quantized import _ecm
from statcore.quantized.mixing import FAMILIES, MIXING_BOUNDS, MIXING_PARAMS, MIXING_START, SKEWED
from statcore.quantized.model import (
    SE_METHODS,
    QuantizedNVMMResults,
    check_cells,
    check_fix,
    fixed_note,
    free_vcov,
    is_log_scale,
)
from statcore.quantized.quantizer import midpoint_impute


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class QuantizedRegressionResults(QuantizedNVMMResults):
    """Results of :class:`QuantizedRegression`: ``params`` holds beta, sigma, gamma and the
    mixing parameters; ``predict`` gives the latent mean ``X beta`` (plus ``gamma E W`` for
    skewed errors, which the intercept otherwise absorbs)."""

    def _predict_exog(self, exog):
        return exog @ self.params.loc[list(self.design_spec.x_names)].to_numpy()


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
    CM steps (the notes' regression variant): with the E-step moments
    ``delta_i = E[1/W]``, ``eta_i = E[W]``, ``f_i = E[Z]``, ``e_i = E[Z/W]``, ``s_i = E[Z^2/W]``,
    ``(beta, gamma)`` solve ``[sum delta a a', sum a; sum a', sum eta] [beta; gamma] =
    [sum a e; sum f]`` and ``sigma^2 = n^-1 sum (s - 2 e a'beta + delta (a'beta)^2
    - 2 gamma (f - a'beta) + gamma^2 eta)``. The mixing parameters take an ECME step.
    Because a skewed error has mean ``gamma E W``, keep the intercept.

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
        if isinstance(endog, Design):
            design = endog
            codes = design.y
            cells = None
        elif isinstance(endog, tuple) and len(endog) == 2:
            cells = check_cells(*endog)
            codes = None
            design = None
        else:
            codes = np.asarray(endog)
            cells = None
            design = None
        if cells is None:
            if quantizer is None:
                raise ValueError(
                    "codes need the `quantizer` that produced them (or pass `(lower, upper)` cells)"
                )
            codes = quantizer.check_codes(codes if design is None else np.round(codes))
            cells = quantizer.cells(codes, dither)
        lower, upper = cells
        if lower.ndim != 1:
            raise ValueError("the quantized response must be one-dimensional")
        mids = midpoint_impute(lower, upper)
        if design is None:
            super().__init__(mids, exog, intercept=intercept, missing=missing)
        else:
            super().__init__(design)
        if len(lower) != self.nobs:
            raise ValueError(f"the response has {len(lower)} rows but the design {self.nobs}")
        self.lower, self.upper = lower, upper
        self._mids = mids
        self.quantizer = quantizer

    @classmethod
    def from_formula(cls, formula, data, *, missing="raise", **kwargs):
        """Formula whose left side is the column of codes, e.g. ``"code ~ x1 + x2"``."""
        design = design_from_formula(formula, data, missing=missing, context=capture_context(1))
        return cls(design, **kwargs)

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

    def fit(
        self,
        *,
        maxiter: int = 2000,
        tol: float = 1e-8,
        start=None,
        fix=None,
        se: str | None = "louis",
        accelerate: bool = True,
        progress: bool = False,
    ):
        """ECM fit; options as :meth:`QuantizedNVMM.fit` (``se`` in louis, hessian, None)."""
        maxiter = check_positive_int(maxiter, name="maxiter")
        tol = check_positive(tol, name="tol")
        if se is not None:
            check_option(se, name="se", options=SE_METHODS[:2])
        fam = self.family
        X = self.exog
        p = X.shape[1]
        lo, hi = self.lower, self.upper
        scalar_names = ["sigma"] + (["gamma"] if self._skew else []) + list(MIXING_PARAMS[fam])
        fix = check_fix(fix, scalar_names)
        free_scalar = [k for k in scalar_names if k not in fix]
        mix_free = [k for k in MIXING_PARAMS[fam] if k in free_scalar]
        edges = np.unique(np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)]]))
        if len(edges) < 2 and "sigma" in free_scalar:
            raise ValueError(
                "1-bit responses with one threshold and no dither identify only beta / sigma: "
                "fit with fix={'sigma': ...} or quantize with a known dither"
            )
        mids = self._mids
        beta0, *_ = np.linalg.lstsq(X, mids, rcond=None)
        resid = mids - X @ beta0
        theta = {"beta": beta0, "sigma": float(np.std(resid)) or 1.0, "gamma": 0.0}
        for k in MIXING_PARAMS[fam]:
            theta[k] = MIXING_START[k]
        if start:
            theta.update(
                {k: (np.asarray(v, float) if k == "beta" else float(v)) for k, v in start.items()}
            )
        theta.update(fix)

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

        def mix_of(th):
            return {k: th[k] for k in MIXING_PARAMS[fam]}

        def loglik_th(th):
            return _ecm.scalar_loglik(
                lo, hi, X @ th["beta"], th["sigma"], th.get("gamma", 0.0), fam, mix_of(th)
            )

        def step(x):
            th = unpack(x)
            loc = X @ th["beta"]
            gamma = th.get("gamma", 0.0) if self._skew else 0.0
            logp, out = _ecm.scalar_estep(lo, hi, loc, th["sigma"], gamma, fam, mix_of(th))
            llf = float(np.sum(logp))
            delta, eta, f, e, s = out[:, 0], out[:, 1], out[:, 3], out[:, 4], out[:, 5]
            n = len(lo)
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
                new["sigma"] = float(np.sqrt(max(s2.sum() / n, 1e-300)))
            if mix_free:
                new.update(self._mixing_step(new, mix_free, loglik_th))
            return pack(new), llf

        x, llf, history, converged, n_iter = _ecm.run_ecm(
            step,
            lambda x: loglik_th(unpack(x)),
            pack(theta),
            maxiter=maxiter,
            tol=tol,
            accelerate=accelerate,
            progress=progress,
            name="QuantizedRegression",
        )
        th = unpack(x)
        names = self.param_names
        values = dict(zip(self.exog_names, th["beta"], strict=True))
        values.update({k: th[k] for k in scalar_names})
        free = self.exog_names + free_scalar
        vcov = None
        cov_type = "none"
        if se is not None:
            if se == "louis":
                info = _ecm.louis_information(
                    lo,
                    hi,
                    X @ th["beta"],
                    X,
                    np.ones(len(lo)),
                    th["sigma"],
                    th.get("gamma", 0.0),
                    fam,
                    mix_of(th),
                    skew=self._skew,
                    mix_free=[k for k in MIXING_PARAMS[fam] if k in free_scalar],
                )
                order = (
                    self.exog_names
                    + ["sigma"]
                    + (["gamma"] if self._skew else [])
                    + [k for k in MIXING_PARAMS[fam] if k in free_scalar]
                )
                keep = [order.index(k) for k in free]
                info = info[np.ix_(keep, keep)]
                cov_type = "Louis observed information"
            else:

                def f(v):
                    trial = dict(th)
                    trial["beta"] = v[:p]
                    trial.update(dict(zip(free_scalar, v[p:], strict=True)))
                    return loglik_th(trial)

                info = -_ecm.numerical_hessian(f, np.array([values[k] for k in free]))
                cov_type = "numerical Hessian"
            vcov = free_vcov(np.linalg.pinv(info), names, free)
        fields = self._result_fields()
        notes = fields.pop("notes")
        if fix:
            notes += (fixed_note(fix),)
        estimates = {k: th[k] for k in scalar_names}
        estimates.update({"beta": th["beta"], "mu": None})
        estimates.setdefault("gamma", 0.0)
        return QuantizedRegressionResults(
            method=f"{self.method_name} ({fam} errors) by ECM",
            params=pd.Series([values[k] for k in names], index=names, name="estimate"),
            vcov=vcov,
            llf=float(llf),
            converged=bool(converged),
            n_iter=int(n_iter),
            cov_type=cov_type,
            df_model=len(free),
            df_resid=self.nobs - len(free),
            family=fam,
            history=history,
            estimates=estimates,
            fixed=tuple(fix),
            notes=notes,
            **fields,
        )

    def _mixing_step(self, th, mix_free, loglik_th):
        current = loglik_th(th)

        def negll(xs):
            trial = dict(th)
            for k, v in zip(mix_free, np.atleast_1d(xs), strict=True):
                trial[k] = float(np.exp(v)) if self._positive(k) else float(v)
            val = loglik_th(trial)
            return -val if np.isfinite(val) else np.inf

        def bound(k):
            lo, hi = MIXING_BOUNDS[k]
            if self.family == "vg" and k == "lam":
                lo = 1e-3
            if self.family == "skew_t" and k == "nu":
                lo = 2.05
            return (np.log(lo), np.log(hi)) if self._positive(k) else (lo, hi)

        if len(mix_free) == 1:
            res = optimize.minimize_scalar(
                negll, bounds=bound(mix_free[0]), method="bounded", options={"xatol": 1e-10}
            )
            best = np.atleast_1d(res.x)
        else:
            x0 = [np.log(th[k]) if self._positive(k) else th[k] for k in mix_free]
            best = optimize.minimize(
                negll, x0, method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12}
            ).x
        if -negll(best) >= current:
            return {
                k: float(np.exp(v)) if self._positive(k) else float(v)
                for k, v in zip(mix_free, best, strict=True)
            }
        return {k: th[k] for k in mix_free}
