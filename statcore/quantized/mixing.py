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

import functools

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
#: starting values of the mixing parameters (nu = 5 for the t and skew t; ghyp starts at 3.5)
MIXING_START = {"nu": 5.0, "alpha_bar": 1.0, "lam": 1.0}
#: parameters that must stay positive (optimised on the log scale; also ``lam`` of the VG)
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


def mixing_bounds(family, name):
    """Bounds of a mixing parameter on its natural scale, tightened where the family needs it."""
    lo, hi = MIXING_BOUNDS[name]
    if family == "vg" and name == "lam":
        lo = 1e-3
    if family == "skew_t" and name == "nu":
        lo = 2.05  # E[W | cell] must be finite for the skew update
    return lo, hi


def gig_log_const(lam, chi, psi):
    """Log normalising constant of GIG(lam, chi, psi) (psi = 0: inverse gamma; chi = 0: gamma)."""
    if psi == 0.0:
        shape, rate = -lam, chi / 2.0
        return shape * np.log(rate) - special.gammaln(shape)
    if chi == 0.0:
        shape, rate = lam, psi / 2.0
        return shape * np.log(rate) - special.gammaln(shape)
    return 0.5 * lam * np.log(psi / chi) - np.log(2.0) - log_besselk(lam, np.sqrt(chi * psi))


def gig_logpdf(w, lam, chi, psi):
    """Log density of GIG(lam, chi, psi) at ``w > 0`` (psi = 0: inverse gamma; chi = 0: gamma)."""
    w = np.asarray(w, dtype=float)
    return gig_log_const(lam, chi, psi) + (lam - 1) * np.log(w) - 0.5 * (chi / w + psi * w)


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


@functools.cache
def _legendre(n_nodes):
    """Gauss-Legendre nodes and weights on [-1, 1] (an eigenproblem: computed once per size)."""
    x, wts = np.polynomial.legendre.leggauss(n_nodes)
    x.setflags(write=False)
    wts.setflags(write=False)
    return x, wts


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
    x, wts = _legendre(n_nodes)
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


# --- the CM step of the mixing parameters -------------------------------------------------------
#
# The mixing part of the expected complete-data log-likelihood depends on the E-step only through
# the averages ``delta = mean E[1/W]``, ``eta = mean E[W]`` and ``xi = mean E[log W]`` (the GIG
# is an exponential family in ``(log W, 1/W, W)``):
#
#     Q(lam, chi, psi) = log c(lam, chi, psi) + (lam - 1) xi - chi delta / 2 - psi eta / 2.
#
# When the scale (sigma, and gamma unless it is zero) is free, the normalisation of W is a
# redundant scale of the complete-data model, so Q is maximised over the whole (unnormalised)
# sub-family and the result is mapped back by ``W -> W / c``, ``sigma -> sigma sqrt(c)``,
# ``gamma -> gamma c``: a parameter-expanded CM step (PX-EM, Liu, Rubin and Wu 1998), which
# leaves the observed likelihood unchanged and converges faster than the constrained step.


def mixing_q(family, mix, delta, eta, xi):
    """The mixing part of the expected complete-data log-likelihood per observation."""
    lam, chi, psi = gig_params(family, mix)
    return (
        gig_log_const(lam, chi, psi)
        + (lam - 1.0) * xi
        - 0.5 * (chi * delta if chi else 0.0)
        - 0.5 * (psi * eta if psi else 0.0)
    )


def _decreasing_root(f, lo, hi):
    """Root of a decreasing ``f`` on ``[lo, hi]``; the nearer bound where it has none (the
    concave objective whose derivative ``f`` is then rises towards that bound)."""
    if f(lo) <= 0.0:
        return lo
    if f(hi) >= 0.0:
        return hi
    return optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-14)


def _gh_profile(lam, omega, delta, eta, xi):
    """Q of the unnormalised GIG at ``(lam, omega = sqrt(chi psi))``, maximised in closed form
    over the free scale ``s = sqrt(chi / psi)``; returns ``(Q, chi, psi)``.

    The scale solves ``omega delta s^2 + 2 lam s - omega eta = 0``; each root form below is
    the one free of cancellation (``lam > 0`` reaches the VG boundary, ``lam < 0`` the t's).
    """
    root = np.sqrt(lam**2 + omega**2 * delta * eta)
    s = omega * eta / (lam + root) if lam > 0 else (root - lam) / (omega * delta)
    chi, psi = omega * s, omega / s
    q = gig_log_const(lam, chi, psi) + (lam - 1.0) * xi - 0.5 * chi * delta - 0.5 * psi * eta
    return q, chi, psi


def _maximise(f, x0, bounds, sweeps=2):
    """Maximise a cheap, smooth ``f`` (Q: Bessel functions only, no data) within ``bounds`` by
    bounded Brent searches, one coordinate at a time (each search raises ``f``, so any number
    of sweeps is a valid CM sequence); the start when they do not improve on it."""
    x = np.clip(np.asarray(x0, dtype=float), *np.transpose(bounds))
    for _ in range(sweeps if len(x) > 1 else 1):
        for j, bound in enumerate(bounds):

            def neg(v, j=j):
                trial = x.copy()
                trial[j] = v
                value = f(trial)
                return -value if np.isfinite(value) else np.inf

            res = optimize.minimize_scalar(
                neg, bounds=bound, method="bounded", options={"xatol": 1e-10}
            )
            if res.fun <= neg(x[j]):
                x[j] = res.x
    return x if f(x) >= f(np.asarray(x0, dtype=float)) else np.asarray(x0, dtype=float)


def mixing_cm_step(family, mix, free, delta, eta, xi, *, expand):
    """CM step of the mixing parameters from the E-step averages ``delta = mean E[1/W]``,
    ``eta = mean E[W]`` and ``xi = mean E[log W]``.

    Parameters
    ----------
    family : str
        The NVMM member.
    mix : dict
        Current mixing parameters (all of the family's, free and fixed).
    free : sequence of str
        The mixing parameters to update.
    delta, eta, xi : float
        The E-step averages (``eta`` is unused by the t and skew t).
    expand : bool
        Whether the scale of W may be absorbed by ``sigma`` and ``gamma`` (both free, or
        ``gamma`` zero): then the step maximises Q over the unnormalised sub-family.

    Returns
    -------
    new : dict
        The updated free mixing parameters.
    c : float
        The scale to fold into the location-scale part: ``sigma -> sigma sqrt(c)``,
        ``gamma -> gamma c`` (1 unless ``expand``).

    Notes
    -----
    ============= ============================================ ================================
    family        expanded (``expand=True``)                   normalised
    ============= ============================================ ================================
    t, skew_t     ``a = nu / 2``: ``log a - digamma(a) =       ``log(nu/2) + 1 - digamma(nu/2)
                  log delta + xi``; ``c = 1 / delta``          = xi + delta``
    nig           ``alpha_bar = 1 / (eta delta - 1)``;         ``alpha_bar = 1 / (delta + eta
                  ``c = eta`` (closed form)                    - 2)`` (closed form)
    vg            ``log lam - digamma(lam) = log eta - xi``;   ``log lam + 1 - digamma(lam) =
                  ``c = eta``                                  eta - xi``
    gh            Q maximised over ``(lam, alpha_bar)``, the   Q maximised over the normalised
                  scale profiled out; ``c = E W``              ``(lam, alpha_bar)``
    ============= ============================================ ================================

    The one-dimensional equations have a decreasing left-hand side (``log x - digamma(x)``
    falls from infinity to zero), so each has one root, found by ``brentq`` to 1e-13: the
    exact CM step, the standard treatment of the t's degrees of freedom (Liu and Rubin 1995).
    The GH has no closed form (its index enters through Bessel functions): Q, which involves no
    data, is maximised by bounded Brent searches (``minimize_scalar``), one parameter at a
    time when both are free (as ghyp's MCECM maximises Q numerically), each kept only when it
    raises Q, so the iteration stays a (generalised) ECM and the likelihood never decreases.
    Jensen's inequality gives ``eta delta >= 1``, ``log delta + xi >= 0`` and
    ``log eta - xi >= 0``, so the roots exist. A value beyond a parameter's bounds is clipped.

    References
    ----------
    Liu, C. and Rubin, D. B. (1995), ML estimation of the t distribution using EM and its
    extensions, ECM and ECME, Statistica Sinica 5. Liu, C., Rubin, D. B. and Wu, Y. N. (1998),
    Parameter expansion to accelerate EM: the PX-EM algorithm, Biometrika 85. McNeil, A. J.,
    Frey, R. and Embrechts, P. (2005), Quantitative Risk Management, section 3.2.4 (the MCECM
    of the GH family).
    """
    free = list(free)
    if not free:
        return {}, 1.0
    if family in ("t", "skew_t"):
        lo, hi = mixing_bounds(family, "nu")
        if expand:
            r = np.log(delta) + xi
            a = _decreasing_root(lambda a: np.log(a) - special.digamma(a) - r, lo / 2, hi / 2)
            return {"nu": 2.0 * a}, 1.0 / delta
        nu = _decreasing_root(
            lambda v: np.log(v / 2) + 1.0 - special.digamma(v / 2) - xi - delta, lo, hi
        )
        return {"nu": nu}, 1.0
    if family == "vg":
        lo, hi = mixing_bounds(family, "lam")
        if expand:
            r = np.log(eta) - xi
            lam = _decreasing_root(lambda k: np.log(k) - special.digamma(k) - r, lo, hi)
            return {"lam": lam}, eta
        lam = _decreasing_root(lambda k: np.log(k) + 1.0 - special.digamma(k) + xi - eta, lo, hi)
        return {"lam": lam}, 1.0
    lo, hi = mixing_bounds(family, "alpha_bar")
    if family == "nig":
        if expand:
            return {"alpha_bar": float(np.clip(1.0 / (eta * delta - 1.0), lo, hi))}, eta
        return {"alpha_bar": float(np.clip(1.0 / (delta + eta - 2.0), lo, hi))}, 1.0
    # the GH: no closed form (Bessel functions of the index); Q is maximised numerically over
    # (lam, log alpha_bar), with the scale profiled out in closed form when it is free
    names = [p for p in ("lam", "alpha_bar") if p in free]
    bounds = [
        mixing_bounds(family, p) if p == "lam" else tuple(np.log(mixing_bounds(family, p)))
        for p in names
    ]

    def unpack(x):
        new = dict(mix)
        new.update(
            {p: float(np.exp(v) if p == "alpha_bar" else v) for p, v in zip(names, x, strict=True)}
        )
        return new

    x0 = [np.log(mix[p]) if p == "alpha_bar" else mix[p] for p in names]
    if expand:

        def profile(x):
            trial = unpack(x)
            return _gh_profile(trial["lam"], trial["alpha_bar"], delta, eta, xi)

        best = unpack(_maximise(lambda x: profile(x)[0], x0, bounds))
        _, chi, psi = _gh_profile(best["lam"], best["alpha_bar"], delta, eta, xi)
        return {p: best[p] for p in names}, float(gig_moment(1.0, best["lam"], chi, psi))
    best = unpack(_maximise(lambda x: mixing_q(family, unpack(x), delta, eta, xi), x0, bounds))
    return {p: best[p] for p in names}, 1.0
