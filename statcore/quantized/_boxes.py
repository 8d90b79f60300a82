"""Multivariate boxes: the box E-step and the ECM for Gaussian / t boxes behind ``QuantizedNVMM``.

The E-step needs, for every distinct box, ``P(box)``, ``E[U | box]``, ``E[U X | box]``,
``E[U X X' | box]`` and ``E[log U | box]`` (U = 1/W; U = 1 for the Gaussian). They come from
:func:`statcore.quantized._kernels.box_estep`: for fixed w the box probability and truncated
moments of N(mu, w Sigma) are integrals over the sequential conditionals of the Cholesky factor,
taken by Gauss-Legendre quadrature on the quantile scale of each conditioning coordinate, with
the innermost coordinate in closed form; an outer quadrature over W gives the t.

The fit runs in four steps: starting values (:func:`box_start`), coordinates the ECM moves in
(:class:`BoxCoordinates`: mu, the log-Cholesky factor of Sigma, log nu), one ECM iteration
(:func:`box_cm_step` on the E-step moments) and the information for standard errors
(:func:`box_information`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from statcore.quantized import _ecm, _kernels
from statcore.quantized.mixing import mixing_cm_step
from statcore.quantized.quantizer import midpoint_impute

#: Gauss-Legendre nodes per conditioning level of a d-dimensional box, and W nodes for boxes
BOX_NODES = {2: 32, 3: 12, 4: 6}
BOX_W_NODES = 20
#: starting degrees of freedom of a t fit
NU_START = 5.0
#: E-steps kept: SQUAREM asks for the likelihood of the point the next ECM step starts from
ESTEP_CACHE = 3


# --- the box E-step and likelihood --------------------------------------------------------------


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
    """``(logp, scal, ex_w, exx_w, _)`` per box from :func:`_kernels.box_estep`."""
    chol = np.ascontiguousarray(np.linalg.cholesky(Sigma))
    w, logwt = _w_nodes(family, nu)
    glx, glw = _gl(lo.shape[1])
    return _kernels.box_estep(
        lo, hi, np.ascontiguousarray(mu, dtype=float), chol, w, logwt, glx, glw
    )


def box_loglik(lo, hi, counts, mu, Sigma, family, nu):
    """Exact observed log-likelihood of the boxes (``-inf`` unless Sigma is positive definite)."""
    try:
        logp = box_estep(lo, hi, mu, Sigma, family, nu)[0]
    except np.linalg.LinAlgError:
        return -np.inf
    return float(counts @ logp)


def box_param_names(labels, family):
    """``mu[a]``, ``Sigma[a,b]`` (lower triangle) over the coordinate labels, then ``nu``."""
    d = len(labels)
    names = [f"mu[{labels[j]}]" for j in range(d)]
    names += [f"Sigma[{labels[j]},{labels[k]}]" for j in range(d) for k in range(j + 1)]
    return names + (["nu"] if family == "t" else [])


def box_values(mu, S, nu, family):
    """The estimates in ``box_param_names`` order."""
    d = len(mu)
    values = [*mu] + [S[j, k] for j in range(d) for k in range(j + 1)]
    return values + ([nu] if family == "t" else [])


def box_loglik_params(model, params):
    """The log-likelihood at ``params`` given by name (``model.param_names``)."""
    d = model.n_dims
    vector = [params[name] for name in model.param_names]
    mu = np.array(vector[:d])
    S = np.zeros((d, d))
    S[np.tril_indices(d)] = vector[d : d + d * (d + 1) // 2]
    S = S + np.tril(S, -1).T
    nu = params.get("nu")
    return box_loglik(model._lower_u, model._upper_u, model._counts_u, mu, S, model.family, nu)


# --- the fit, step by step ----------------------------------------------------------------------


def box_start(model, start, fix):
    """Starting ``(mu, Sigma, nu)``: moments of the midpoints, ``nu = 5``, ``start`` and ``fix``."""
    d = model.n_dims
    mids = midpoint_impute(model.lower, model.upper)
    mu0 = mids.mean(axis=0)
    S0 = np.cov(mids, rowvar=False) + 1e-6 * np.eye(d)
    nu0 = NU_START
    mu0 = fix.get("mu", start.get("mu", mu0))
    S0 = start.get("Sigma", S0)
    nu0 = fix.get("nu", start.get("nu", nu0))
    return mu0, S0, nu0


@dataclass(frozen=True)
class BoxCoordinates:
    """The unconstrained coordinates of the ECM: free ``mu``, log-Cholesky ``Sigma``, ``log nu``."""

    mu0: np.ndarray
    nu0: float
    fix_mu: bool
    fix_nu: bool

    @property
    def d(self):
        return len(self.mu0)

    def pack(self, mu, S, nu):
        d = self.d
        tri = np.tril_indices(d)
        L = np.linalg.cholesky(S)
        L[np.diag_indices(d)] = np.log(np.diag(L))
        parts = [L[tri]]
        if not self.fix_mu:
            parts.insert(0, mu)
        if not self.fix_nu:
            parts.append([np.log(nu)])
        return np.concatenate(parts)

    def unpack(self, x):
        d = self.d
        tri = np.tril_indices(d)
        i = 0
        mu = self.mu0
        if not self.fix_mu:
            mu, i = x[:d], d
        m = len(tri[0])
        L = np.zeros((d, d))
        L[tri] = x[i : i + m]
        L[np.diag_indices(d)] = np.exp(np.diag(L))
        nu = self.nu0 if self.fix_nu else float(np.exp(x[i + m]))
        return mu, L @ L.T, nu


def box_cm_step(moments, counts, mu, fix_mu, fix_nu, nu):
    """CM steps for ``(mu, Sigma, nu)`` from the E-step ``moments`` of the distinct boxes (``nu``
    by :func:`statcore.quantized.mixing.mixing_cm_step`)."""
    _, scal, ex_w, exx_w, _ = moments
    n = counts.sum()
    delta = counts @ scal[:, 0] / n
    xi = counts @ scal[:, 1] / n
    b = counts @ ex_w / n
    SS = np.einsum("i,ijk->jk", counts, exx_w) / n
    if not fix_mu:
        mu = b / delta
    S = SS - np.outer(b, mu) - np.outer(mu, b) + delta * np.outer(mu, mu)
    S = 0.5 * (S + S.T)
    if not fix_nu:
        # Sigma is always free here, so the scale of W folds into it (the PX-EM step)
        update, c = mixing_cm_step("t", {"nu": nu}, ["nu"], delta, np.nan, xi, expand=True)
        nu, S = update["nu"], c * S
    return mu, S, nu


def fit_boxes(model, *, start, fix, **options):
    """ECM for Gaussian / t boxes (``QuantizedNVMM.fit`` with d > 1); returns an ``EcmFit``."""
    fam = model.family
    if model._n_edges < 2:
        raise ValueError(
            "1-bit boxes with a single threshold per coordinate identify only the correlation "
            "matrix (arcsine law): use more levels, non-zero thresholds or a known dither"
        )
    lo, hi, counts = model._lower_u, model._upper_u, model._counts_u
    mu0, S0, nu0 = box_start(model, start, fix)
    coords = BoxCoordinates(mu0, nu0, "mu" in fix, "nu" in fix or fam == "gaussian")
    recent = {}

    def estep(mu, S, nu):
        # SQUAREM asks for the likelihood of the point the next ECM step starts from: keep the
        # last E-steps so that point's boxes are integrated once, not twice
        key = (mu.tobytes(), S.tobytes(), nu)
        if key not in recent:
            if len(recent) >= ESTEP_CACHE:
                recent.pop(next(iter(recent)))
            recent[key] = box_estep(lo, hi, mu, S, fam, nu)
        return recent[key]

    def step(x):
        mu, S, nu = coords.unpack(x)
        moments = estep(mu, S, nu)
        new = box_cm_step(moments, counts, mu, coords.fix_mu, coords.fix_nu, nu)
        return coords.pack(*new), float(counts @ moments[0])

    def loglik(x):
        try:
            return float(counts @ estep(*coords.unpack(x))[0])
        except np.linalg.LinAlgError:
            return -np.inf

    def finish(x):
        mu, S, nu = coords.unpack(x)
        names = model.param_names
        values = dict(zip(names, box_values(mu, S, nu, fam), strict=True))
        d = model.n_dims
        free = [
            p
            for p in names
            if not (coords.fix_mu and p in names[:d]) and not (p == "nu" and coords.fix_nu)
        ]
        estimates = {"mu": mu, "Sigma": S, "gamma": np.zeros(d)}
        if fam == "t":
            estimates["nu"] = nu
        return {
            "values": values,
            "free": free,
            "estimates": estimates,
            "restart": {"mu": mu, "Sigma": S, "nu": nu},
            "information": lambda cov_type: box_information(model, values, free, cov_type),
        }

    return _ecm.ecm_fit(
        step,
        loglik,
        coords.pack(mu0, S0, nu0),
        finish,
        name=f"{type(model).__name__}.fit",
        fix=fix,
        **options,
    )


def box_information(model, values, free, cov_type):
    """Numerical Hessian of the exact box log-likelihood over ``free`` (Louis's identity is
    implemented for scalar cells only, as a note says)."""

    def f(v):
        trial = dict(values)
        trial.update(dict(zip(free, v, strict=True)))
        try:
            return box_loglik_params(model, trial)
        except np.linalg.LinAlgError:
            return -np.inf

    info = -_ecm.numerical_hessian(f, np.array([values[p] for p in free]), rel_step=1e-3)
    notes = ()
    if cov_type == "louis":
        notes = (
            "Louis's identity is implemented for scalar cells; boxes use the numerical Hessian "
            "of the exact log-likelihood.",
        )
    return info, "numerical Hessian", notes
