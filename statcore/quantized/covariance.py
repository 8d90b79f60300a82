"""Multivariate boxes: ``QuantizedCovariance`` and the box ECM behind ``QuantizedNVMM``.

The E-step needs, for every distinct box, ``P(box)``, ``E[U | box]``, ``E[U X | box]``,
``E[U X X' | box]`` and ``E[log U | box]`` (U = 1/W; U = 1 for the Gaussian). They come from
:func:`statcore.quantized._kernels.box_estep`: for fixed w the box probability and truncated
moments of N(mu, w Sigma) are integrals over the sequential conditionals of the Cholesky factor,
taken by Gauss-Legendre quadrature on the quantile scale of each conditioning coordinate, with
the innermost coordinate in closed form; an outer quadrature over W gives the t.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import optimize, special

from statcore._validation import check_positive_int, check_random_state
from statcore.quantized import _ecm, _kernels
from statcore.quantized.mixing import MIXING_BOUNDS
from statcore.quantized.model import (
    BOX_NODES,
    BOX_W_NODES,
    QuantizedNVMM,
    QuantizedNVMMResults,
    check_fix,
    fixed_note,
    free_vcov,
)
from statcore.quantized.quantizer import midpoint_impute


def _gl(d):
    x, w = np.polynomial.legendre.leggauss(BOX_NODES[d])
    return np.ascontiguousarray(0.5 * (x + 1)), np.ascontiguousarray(0.5 * w)


def _w_nodes(family, nu, n_nodes=None):
    """W nodes on the quantile scale of InvGamma(nu/2, nu/2) (Gauss-Legendre in u = G(w))."""
    if family == "gaussian":
        return np.ones(1), np.zeros(1)
    x, wts = np.polynomial.legendre.leggauss(n_nodes or BOX_W_NODES)
    u = 0.5 * (x + 1)
    w = (nu / 2.0) / special.gammainccinv(nu / 2.0, u)
    return np.ascontiguousarray(w), np.ascontiguousarray(np.log(0.5 * wts))


def box_estep(lo, hi, mu, Sigma, family, nu):
    chol = np.ascontiguousarray(np.linalg.cholesky(Sigma))
    w, logwt = _w_nodes(family, nu)
    glx, glw = _gl(lo.shape[1])
    return _kernels.box_estep(
        lo, hi, np.ascontiguousarray(mu, dtype=float), chol, w, logwt, glx, glw
    )


def box_loglik(lo, hi, counts, mu, Sigma, family, nu):
    try:
        logp = box_estep(lo, hi, mu, Sigma, family, nu)[0]
    except np.linalg.LinAlgError:
        return -np.inf
    return float(counts @ logp)


def _unpack_matrix(model, params):
    d = model.n_dims
    mu = np.array([params[f"mu[{j}]"] for j in range(d)])
    S = np.zeros((d, d))
    for j in range(d):
        for k in range(j + 1):
            S[j, k] = S[k, j] = params[f"Sigma[{j},{k}]"]
    return mu, S


def box_loglik_params(model, params):
    mu, S = _unpack_matrix(model, params)
    return box_loglik(
        model._lower_u, model._upper_u, model._counts_u, mu, S, model.family, params.get("nu")
    )


def fit_boxes(
    model, *, maxiter, tol, start, fix, se, accelerate, progress, n_resamples, random_state
):
    """ECM for Gaussian / t boxes (``QuantizedNVMM.fit`` with d > 1)."""
    d = model.n_dims
    fam = model.family
    fix = check_fix(fix, ["mu", "nu"])
    lo, hi, counts = model._lower_u, model._upper_u, model._counts_u
    n = counts.sum()
    mids = midpoint_impute(model.lower, model.upper)
    mu0 = mids.mean(axis=0)
    S0 = np.cov(mids, rowvar=False) + 1e-6 * np.eye(d)
    nu0 = 5.0
    if start:
        mu0 = np.asarray(start.get("mu", mu0), dtype=float)
        S0 = np.asarray(start.get("Sigma", S0), dtype=float)
        nu0 = float(start.get("nu", nu0))
    fix_mu = "mu" in fix
    if fix_mu:
        mu0 = np.broadcast_to(np.asarray(fix["mu"], dtype=float), (d,)).copy()
    fix_nu = "nu" in fix or fam == "gaussian"
    if "nu" in fix:
        nu0 = float(fix["nu"])
    if model._n_edges < 2:
        raise ValueError(
            "1-bit boxes with a single threshold per coordinate identify only the correlation "
            "matrix (arcsine law): use more levels, non-zero thresholds or a known dither"
        )
    tri = np.tril_indices(d)
    recent = {}

    def estep(mu, S, nu):
        # SQUAREM asks for the likelihood of the point the next ECM step starts from: keep the
        # last E-steps so that point's boxes are integrated once, not twice
        key = (mu.tobytes(), S.tobytes(), nu)
        if key not in recent:
            if len(recent) >= 3:
                recent.pop(next(iter(recent)))
            recent[key] = box_estep(lo, hi, mu, S, fam, nu)
        return recent[key]

    def pack(mu, S, nu):
        L = np.linalg.cholesky(S)
        L[np.diag_indices(d)] = np.log(np.diag(L))
        parts = [L[tri]]
        if not fix_mu:
            parts.insert(0, mu)
        if not fix_nu:
            parts.append([np.log(nu)])
        return np.concatenate(parts)

    def unpack(x):
        i = 0
        mu = mu0
        if not fix_mu:
            mu, i = x[:d], d
        m = len(tri[0])
        L = np.zeros((d, d))
        L[tri] = x[i : i + m]
        L[np.diag_indices(d)] = np.exp(np.diag(L))
        nu = nu0 if fix_nu else float(np.exp(x[i + m]))
        return mu, L @ L.T, nu

    def step(x):
        mu, S, nu = unpack(x)
        logp, scal, ex_w, exx_w, _ = estep(mu, S, nu)
        llf = float(counts @ logp)
        delta = counts @ scal[:, 0] / n
        xi = counts @ scal[:, 1] / n
        b = counts @ ex_w / n
        SS = np.einsum("i,ijk->jk", counts, exx_w) / n
        if not fix_mu:
            mu = b / delta
        S_new = SS - np.outer(b, mu) - np.outer(mu, b) + delta * np.outer(mu, mu)
        S_new = 0.5 * (S_new + S_new.T)
        if not fix_nu:
            # CM step: log(nu/2) + 1 - digamma(nu/2) + mean(E log U - E U) = 0, E log U = -E log W
            c = -xi - delta

            def root(v):
                return np.log(v / 2) + 1 - special.digamma(v / 2) + c

            lo_b, hi_b = MIXING_BOUNDS["nu"]
            if root(lo_b) * root(hi_b) < 0:
                nu = optimize.brentq(root, lo_b, hi_b, xtol=1e-12)
            else:
                nu = hi_b if root(hi_b) > 0 else lo_b
        return pack(mu, S_new, nu), llf

    def loglik(x):
        mu, S, nu = unpack(x)
        try:
            return float(counts @ estep(mu, S, nu)[0])
        except np.linalg.LinAlgError:
            return -np.inf

    x, llf, history, converged, n_iter = _ecm.run_ecm(
        step,
        loglik,
        pack(mu0, S0, nu0),
        maxiter=maxiter,
        tol=tol,
        accelerate=accelerate,
        progress=progress,
        name=type(model).__name__,
    )
    mu, S, nu = unpack(x)
    names = model.param_names
    values = {f"mu[{j}]": mu[j] for j in range(d)}
    values.update({f"Sigma[{j},{k}]": S[j, k] for j in range(d) for k in range(j + 1)})
    if fam == "t":
        values["nu"] = nu
    free = [p for p in names if not (fix_mu and p.startswith("mu[")) and not (p == "nu" and fix_nu)]
    params = pd.Series([values[p] for p in names], index=names, name="estimate")
    vcov = None
    cov_type = "none"
    notes = []
    if se in ("louis", "hessian"):

        def f(v):
            trial = dict(values)
            trial.update(dict(zip(free, v, strict=True)))
            try:
                return box_loglik_params(model, trial)
            except np.linalg.LinAlgError:
                return -np.inf

        info = -_ecm.numerical_hessian(f, np.array([values[p] for p in free]), rel_step=1e-3)
        sub = np.linalg.pinv(info)
        cov_type = "numerical Hessian"
        if se == "louis":
            notes.append(
                "Louis's identity is implemented for scalar cells; boxes use the "
                "numerical Hessian of the exact log-likelihood."
            )
    elif se == "bootstrap":
        rng = check_random_state(random_state)
        reps = []
        for _ in range(check_positive_int(n_resamples, name="n_resamples")):
            draw = rng.multinomial(int(n), counts / n)
            keep = draw > 0
            sub_model = type(model).__new__(type(model))
            sub_model.__dict__.update(model.__dict__)
            sub_model._lower_u, sub_model._upper_u = lo[keep], hi[keep]
            sub_model._counts_u = draw[keep].astype(float)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = fit_boxes(
                    sub_model,
                    maxiter=maxiter,
                    tol=1e-7,
                    start={"mu": mu, "Sigma": S, "nu": nu},
                    fix=fix,
                    se=None,
                    accelerate=True,
                    progress=False,
                    n_resamples=0,
                    random_state=None,
                )
            reps.append([r.params[p] for p in free])
        sub = np.cov(np.asarray(reps), rowvar=False)
        cov_type = f"bootstrap ({len(reps)} resamples)"
    if se is not None:
        vcov = free_vcov(sub, names, free)
    if fix:
        notes.append(fixed_note(fix))
    estimates = {"mu": mu, "Sigma": S, "gamma": np.zeros(d)}
    if fam == "t":
        estimates["nu"] = nu
    return QuantizedNVMMResults(
        method=f"{getattr(model, 'method_name', 'Quantized NVMM')} ({fam}, d = {d}) by ECM",
        nobs=model.nobs,
        model=model,
        params=params,
        vcov=vcov,
        llf=float(llf),
        converged=bool(converged),
        n_iter=int(n_iter),
        cov_type=cov_type,
        df_model=len(free),
        notes=tuple(notes),
        family=fam,
        history=history,
        estimates=estimates,
        fixed=tuple(fix),
    )


class QuantizedCovariance(QuantizedNVMM):
    """Scatter matrix (and t degrees of freedom) of zero-mean elliptical data seen through a
    coordinate-wise quantizer: ``x_i ~ N_d(0, Sigma)`` or ``t_d(0, Sigma, nu)``, ``y_i = Q(x_i)``.

    The ECM's scatter update is ``Sigma = n^-1 sum_i E[U X X' | box_i]``. Distinct boxes are
    computed once (at b bits there are at most ``2^(b d)``).

    Parameters
    ----------
    codes : array_like of int, shape (n, d)
        Codes of :class:`Quantizer` ``quantizer``.
    quantizer : Quantizer
    family : {"gaussian", "t"}
    dither : array_like, optional
        Known dither added before quantization.
    mean : {"zero", "free"}
        Hold the location at zero (the covariance task) or estimate it too.

    References
    ----------
    Inference from quantized data under the normal variance-mean mixture (NVMM) framework
    (ICML 2026).
    """

    method_name = "Quantized covariance"

    def __init__(
        self, codes, quantizer, *, family: str = "gaussian", dither=None, mean: str = "zero"
    ):
        lower, upper = quantizer.cells(codes, dither)
        if np.ndim(lower) != 2 or np.shape(lower)[1] < 2:
            raise ValueError("`codes` must be an (n, d) array with d >= 2")
        super().__init__(lower, upper, family=family, _dithered=dither is not None)
        if mean not in ("zero", "free"):
            raise ValueError(f"`mean` must be 'zero' or 'free'; got {mean!r}")
        self.mean = mean

    def fit(self, **options):
        """As :meth:`QuantizedNVMM.fit`; the location is held at zero unless ``mean="free"``."""
        fix = dict(options.pop("fix", None) or {})
        if self.mean == "zero":
            fix.setdefault("mu", np.zeros(self.n_dims))
        return super().fit(fix=fix, **options)
