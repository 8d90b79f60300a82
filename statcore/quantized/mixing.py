"""Mixing laws of the NVMM families and their quadrature nodes.

The mixing variable W is generalized inverse Gaussian, GIG(lam, chi, psi), with density
``(psi/chi)^(lam/2) / (2 K_lam(sqrt(chi psi))) w^(lam-1) exp(-(chi/w + psi w)/2)`` (the
McNeil-Frey-Embrechts parameterisation of R ``ghyp``); ``psi = 0`` is the inverse gamma
(Student t), ``chi = 0`` the gamma (variance gamma). Bessel functions are used in log space
through the exponentially scaled ``scipy.special.kve``.

Expectations over W use Gauss-Legendre nodes in ``t = log w`` on the range where the density
of t is within ``exp(-DROP)`` of its mode; the weights are normalised to sum to one, so a cell
covering the whole line has probability exactly one.

Families and their free mixing parameters (``E W = 1`` normalises GH, NIG and VG, which makes
``sigma`` comparable across families, and removes the scale non-identifiability
``(chi, psi, sigma^2, gamma) -> (k chi, psi / k, sigma^2 / k, gamma / k)``):

========== ============================== ===================== =========
family      mixing law                    free mixing params    skew
========== ============================== ===================== =========
gaussian    W = 1                         none                  no
t           InvGamma(nu/2, nu/2)          nu                    no
skew_t      InvGamma(nu/2, nu/2)          nu                    gamma
nig         GIG(-1/2, chi, psi), E W = 1  alpha_bar             gamma
vg          Gamma(lam, lam), E W = 1      lam                   gamma
gh          GIG(lam, chi, psi), E W = 1   lam, alpha_bar        gamma
========== ============================== ===================== =========
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

FAMILIES = ("gaussian", "t", "skew_t", "nig", "vg", "gh")
SKEWED = ("skew_t", "nig", "vg", "gh")
MIXING_PARAMS = {
    "gaussian": (),
    "t": ("nu",),
    "skew_t": ("nu",),
    "nig": ("alpha_bar",),
    "vg": ("lam",),
    "gh": ("lam", "alpha_bar"),
}
#: starting values of the mixing parameters (ghyp starts the t at nu = 3.5; the notes at 5)
MIXING_START = {"nu": 5.0, "alpha_bar": 1.0, "lam": 1.0}
#: parameters that must stay positive (optimised on the log scale)
POSITIVE = {"nu", "alpha_bar", "sigma"}
#: lam of the VG must be positive; of the GH it is free
MIXING_BOUNDS = {"nu": (0.05, 1000.0), "alpha_bar": (1e-4, 500.0), "lam": (-50.0, 50.0)}

DROP = 46.0
N_NODES = 200


def log_besselk(lam, x):
    """``log K_lam(x)`` without overflow (``kve`` is ``K exp(x)``)."""
    return np.log(special.kve(lam, x)) - x


def gig_params(family: str, mix: dict) -> tuple[float, float, float]:
    """``(lam, chi, psi)`` of the family's mixing law; ``None`` for the Gaussian (W = 1)."""
    if family == "gaussian":
        return None
    if family in ("t", "skew_t"):
        nu = mix["nu"]
        return -nu / 2.0, nu, 0.0
    if family == "vg":
        lam = mix["lam"]
        return lam, 0.0, 2.0 * lam
    lam = -0.5 if family == "nig" else mix["lam"]
    abar = mix["alpha_bar"]
    # E W = 1: psi = abar K_{lam+1}(abar) / K_lam(abar), chi = abar^2 / psi
    psi = abar * np.exp(log_besselk(lam + 1.0, abar) - log_besselk(lam, abar))
    return lam, abar**2 / psi, psi


def gig_logpdf(w, lam, chi, psi):
    """Log density of GIG(lam, chi, psi) at ``w > 0`` (psi = 0: inverse gamma; chi = 0: gamma)."""
    w = np.asarray(w, dtype=float)
    logw = np.log(w)
    if psi == 0.0:
        shape, rate = -lam, chi / 2.0
        return shape * np.log(rate) - special.gammaln(shape) + (lam - 1) * logw - rate / w
    if chi == 0.0:
        shape, rate = lam, psi / 2.0
        return shape * np.log(rate) - special.gammaln(shape) + (lam - 1) * logw - rate * w
    omega = np.sqrt(chi * psi)
    const = 0.5 * lam * np.log(psi / chi) - np.log(2.0) - log_besselk(lam, omega)
    return const + (lam - 1) * logw - 0.5 * (chi / w + psi * w)


def gig_moment(alpha, lam, chi, psi):
    """``E W^alpha`` (NaN where it does not exist)."""
    if psi == 0.0:
        shape, rate = -lam, chi / 2.0
        if alpha >= shape:
            return np.inf
        return np.exp(
            special.gammaln(shape - alpha) - special.gammaln(shape) + alpha * np.log(rate)
        )
    if chi == 0.0:
        shape, rate = lam, psi / 2.0
        if alpha <= -shape:
            return np.inf
        return np.exp(
            special.gammaln(shape + alpha) - special.gammaln(shape) - alpha * np.log(rate)
        )
    omega = np.sqrt(chi * psi)
    return np.exp(
        0.5 * alpha * np.log(chi / psi) + log_besselk(lam + alpha, omega) - log_besselk(lam, omega)
    )


def _log_density_t(t, lam, chi, psi):
    """Unnormalised log density of ``T = log W``."""
    return lam * t - 0.5 * (chi * np.exp(-t) + psi * np.exp(t))


def gig_nodes(lam, chi, psi, n_nodes: int = N_NODES):
    """Quadrature nodes ``w`` and log-weights (normalised to sum to one) for a GIG law."""
    if psi == 0.0:
        if lam >= 0 or chi <= 0:
            raise ValueError(f"GIG with psi = 0 needs lam < 0 and chi > 0; got {lam}, {chi}")
        mode = np.log(chi / (-2.0 * lam))
    elif chi == 0.0:
        if lam <= 0:
            raise ValueError(f"GIG with chi = 0 needs lam > 0; got {lam}")
        mode = np.log(2.0 * lam / psi)
    else:
        mode = np.log((lam + np.sqrt(lam**2 + chi * psi)) / psi)
    top = _log_density_t(mode, lam, chi, psi)

    def gap(t):
        return _log_density_t(t, lam, chi, psi) - top + DROP

    ends = []
    for direction in (-1.0, 1.0):
        step = 1.0
        while gap(mode + direction * step) > 0 and step < 1e4:
            step *= 2.0
        ends.append(
            optimize.brentq(gap, mode, mode + direction * step, xtol=1e-6)
            if step < 1e4
            else mode + direction * step
        )
    lo, hi = ends
    x, wts = np.polynomial.legendre.leggauss(n_nodes)
    t = 0.5 * (hi - lo) * x + 0.5 * (hi + lo)
    logwt = np.log(wts) + _log_density_t(t, lam, chi, psi)
    logwt -= special.logsumexp(logwt)
    return np.ascontiguousarray(np.exp(t)), np.ascontiguousarray(logwt)


def mixing_nodes(family: str, mix: dict, n_nodes: int = N_NODES):
    """Nodes and log-weights of the family's W; a single node ``w = 1`` for the Gaussian."""
    gig = gig_params(family, mix)
    if gig is None:
        return np.ones(1), np.zeros(1)
    return gig_nodes(*gig, n_nodes=n_nodes)


def mixing_logpdf(family: str, mix: dict, w):
    """Log density of W at ``w`` (used by Louis's identity for the mixing scores)."""
    return gig_logpdf(w, *gig_params(family, mix))
