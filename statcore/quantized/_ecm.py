"""The ECM driver (plain or SQUAREM-accelerated), its mixing CM step, scalar-cell E-steps,
Louis's information and the inference every quantized fit shares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from statcore.progress import progress as progress_bar
from statcore.quantized import _kernels
from statcore.quantized._common import free_vcov
from statcore.quantized.mixing import MIXING_PARAMS, mixing_cm_step, mixing_logpdf, mixing_nodes
from statcore.results import IterationRecord

# --- exact cell probabilities and E-step moments for scalar cells ------------------------------

#: cells x W nodes below which the E-step runs on one thread (about a millisecond of work)
SERIAL_WORK = 200_000


def log_ndtr_diff(a, b):
    """``log(Phi(b) - Phi(a))`` elementwise (numpy), mirrored into the lower tail."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    flip = a > 0
    a2 = np.where(flip, -b, a)
    b2 = np.where(flip, -a, b)
    la = special.log_ndtr(a2)
    lb = special.log_ndtr(b2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return lb + np.log1p(-np.exp(la - lb))


def t_log_cdf_diff(a, b, nu):
    """``log(T_nu(b) - T_nu(a))`` computed from the nearer tail."""
    flip = a > 0
    a2 = np.where(flip, -b, a)
    b2 = np.where(flip, -a, b)
    with np.errstate(divide="ignore"):
        return np.log(special.stdtr(nu, b2) - special.stdtr(nu, a2))


def t_estep(lower, upper, loc, sigma, nu):
    """Closed-form E-step for Student-t cells (gamma = 0, U = 1/W).

    Returns ``(logp, out)`` with the columns of :func:`scalar_estep` (``E[W]``, ``E[log W]``,
    ``E[X]`` and ``E[X^2]`` are NaN: the symmetric CM steps do not use them). Uses
    ``(nu + 1)/(nu + z^2) t_nu(z) = r t_{nu+2}(r z)`` with ``r = sqrt((nu + 2)/nu)``.
    """
    a = (lower - loc) / sigma
    b = (upper - loc) / sigma
    logp = t_log_cdf_diff(a, b, nu)
    k = nu + 2.0
    r = np.sqrt(k / nu)
    e0 = np.exp(t_log_cdf_diff(r * a, r * b, k) - logp)

    def F(s):
        with np.errstate(invalid="ignore", over="ignore"):
            val = (
                -(k / (k - 1.0))
                * (1.0 + s**2 / k)
                * np.exp(
                    special.gammaln((k + 1) / 2)
                    - special.gammaln(k / 2)
                    - 0.5 * np.log(k * np.pi)
                    - (k + 1) / 2 * np.log1p(s**2 / k)
                )
            )
        return np.where(np.isfinite(s), val, 0.0)

    e1 = (F(r * b) - F(r * a)) / (r * np.exp(logp))
    e2 = (nu + 1.0) - nu * e0
    out = np.full((len(a), 7), np.nan)
    out[:, 0] = e0
    out[:, 4] = loc * e0 + sigma * e1
    out[:, 5] = loc**2 * e0 + 2 * loc * sigma * e1 + sigma**2 * e2
    return logp, out


def scalar_estep(lower, upper, loc, sigma, gamma, family, mix, closed_form=True):
    """E-step moments for scalar cells (closed form for the t, quadrature over W otherwise).

    The t's closed form has no ``E[log W]``: a fit that updates ``nu`` passes
    ``closed_form=False``.
    """
    loc = np.ascontiguousarray(np.broadcast_to(loc, lower.shape), dtype=float)
    if family == "t" and closed_form and gamma == 0.0:
        return t_estep(lower, upper, loc, sigma, mix["nu"])
    w, logwt = mixing_nodes(family, mix)
    kernel = (
        _kernels.scalar_estep_serial
        if lower.shape[0] * len(w) < SERIAL_WORK
        else _kernels.scalar_estep
    )
    return kernel(lower, upper, loc, float(sigma), float(gamma), w, logwt)


def scalar_loglik(lower, upper, loc, sigma, gamma, family, mix, counts=None):
    """Exact observed log-likelihood ``sum_i n_i log P(cell_i)``."""
    if family == "gaussian":
        logp = log_ndtr_diff((lower - loc) / sigma, (upper - loc) / sigma)
    elif family == "t" and gamma == 0.0:
        logp = t_log_cdf_diff((lower - loc) / sigma, (upper - loc) / sigma, mix["nu"])
    else:
        logp, _ = scalar_estep(lower, upper, loc, sigma, gamma, family, mix)
    if counts is None:
        return float(np.sum(logp))
    return float(counts @ logp)


# --- Louis's observed information for scalar cells ---------------------------------------------


def _tn_moments_upto4(a, b):
    logp = log_ndtr_diff(a, b)

    def term(x, k):
        with np.errstate(over="ignore", invalid="ignore"):
            val = x**k * np.exp(-0.5 * x**2 - 0.5 * np.log(2 * np.pi) - logp)
        return np.where(np.isfinite(x), val, 0.0)

    m1 = term(a, 0) - term(b, 0)
    m2 = 1.0 + term(a, 1) - term(b, 1)
    m3 = 2.0 * m1 + term(a, 2) - term(b, 2)
    m4 = 3.0 * m2 + term(a, 3) - term(b, 3)
    return logp, m1, m2, m3, m4


def louis_information(
    lower, upper, loc, design, counts, sigma, gamma, family, mix, *, skew, mix_free, n_nodes=200
):
    """Observed information by Louis's identity, ``E[-H_c | y] - Var(S_c | y)`` summed over cells.

    Parameter order: location coefficients (``design`` columns), ``sigma``, ``gamma`` (when
    ``skew``), then the free mixing parameters ``mix_free`` on their natural scale. Expectations
    over the latent (X, W) use the quadrature nodes of W and closed-form truncated-normal
    moments up to order four given W.
    """
    if family == "gaussian":
        w, logwt = np.ones(1), np.zeros(1)
    else:
        w, logwt = mixing_nodes(family, mix, n_nodes)
    p = design.shape[1]
    n_mix = len(mix_free)
    k = p + 1 + int(skew) + n_mix
    sw = np.sqrt(w)[None, :]
    m = loc[:, None] + w[None, :] * gamma
    s = sigma * sw
    a = (lower[:, None] - m) / s
    b = (upper[:, None] - m) / s
    logp, m1, m2, m3, m4 = _tn_moments_upto4(a, b)
    lq = logwt[None, :] + logp
    post = np.exp(lq - special.logsumexp(lq, axis=1, keepdims=True))
    post = np.where(np.isfinite(post), post, 0.0)
    # mixing scores at the nodes by central differences of log g
    g1 = np.zeros((n_mix, len(w)))
    g2 = np.zeros((n_mix, n_mix, len(w)))
    if n_mix:
        base = mixing_logpdf(family, mix, w)
        steps = {name: 1e-4 * max(1.0, abs(mix[name])) for name in mix_free}

        def shifted(delta):
            new = dict(mix)
            for name, dv in delta.items():
                new[name] = mix[name] + dv
            return mixing_logpdf(family, new, w)

        for i, ni in enumerate(mix_free):
            hi = steps[ni]
            up, dn = shifted({ni: hi}), shifted({ni: -hi})
            g1[i] = (up - dn) / (2 * hi)
            g2[i, i] = (up - 2 * base + dn) / hi**2
            for j in range(i):
                nj = mix_free[j]
                hj = steps[nj]
                g2[i, j] = g2[j, i] = (
                    shifted({ni: hi, nj: hj})
                    - shifted({ni: hi, nj: -hj})
                    - shifted({ni: -hi, nj: hj})
                    + shifted({ni: -hi, nj: -hj})
                ) / (4 * hi * hj)
    W = w[None, :]
    s2 = sigma**2
    # conditional-on-w expectations of the "location-scale" score pieces (m, sigma, gamma)
    es = [m1 / (sigma * sw), (m2 - 1) / sigma]
    if skew:
        es.append(sw * m1 / sigma)
    n_ls = len(es)
    ess = np.empty((n_ls, n_ls) + m1.shape)
    ess[0, 0] = m2 / (s2 * W)
    ess[0, 1] = ess[1, 0] = (m3 - m1) / (s2 * sw)
    ess[1, 1] = (m4 - 2 * m2 + 1) / s2
    eh = np.empty_like(ess)
    eh[0, 0] = 1.0 / (s2 * W)
    eh[0, 1] = eh[1, 0] = 2 * m1 / (s2 * sw)
    eh[1, 1] = (3 * m2 - 1) / s2
    if skew:
        ess[0, 2] = ess[2, 0] = m2 / s2
        ess[1, 2] = ess[2, 1] = sw * (m3 - m1) / s2
        ess[2, 2] = W * m2 / s2
        eh[0, 2] = eh[2, 0] = 1.0 / s2 + 0 * W
        eh[1, 2] = eh[2, 1] = 2 * sw * m1 / s2
        eh[2, 2] = W / s2 + 0 * m1
    # full per-node vectors/matrices over (ls pieces, mixing)
    q = n_ls + n_mix
    E_s = np.zeros((q,) + m1.shape)
    E_ss = np.zeros((q, q) + m1.shape)
    E_h = np.zeros((q, q) + m1.shape)
    for i in range(n_ls):
        E_s[i] = es[i]
        for j in range(n_ls):
            E_ss[i, j] = ess[i, j]
            E_h[i, j] = eh[i, j]
    for i in range(n_mix):
        E_s[n_ls + i] = g1[i][None, :]
        for j in range(n_ls):
            E_ss[n_ls + i, j] = E_ss[j, n_ls + i] = g1[i][None, :] * es[j]
        for j in range(n_mix):
            E_ss[n_ls + i, n_ls + j] = (g1[i] * g1[j])[None, :]
            E_h[n_ls + i, n_ls + j] = -g2[i, j][None, :]
    # average over the posterior of W given each cell
    es_c = np.einsum("icq,iq->ic", E_s.transpose(1, 0, 2), post)  # (cells, q)
    ess_c = np.einsum("abiq,iq->iab", E_ss, post)
    eh_c = np.einsum("abiq,iq->iab", E_h, post)
    info_c = eh_c - ess_c + es_c[:, :, None] * es_c[:, None, :]  # (cells, q, q)
    # expand the location piece (index 0) through the design rows
    info = np.zeros((k, k))
    wts = counts
    info[:p, :p] = np.einsum("i,ij,ik->jk", wts * info_c[:, 0, 0], design, design)
    info[:p, p:] = np.einsum("i,ij,ik->jk", wts, design, info_c[:, 0, 1:])
    info[p:, :p] = info[:p, p:].T
    info[p:, p:] = np.einsum("i,ijk->jk", wts, info_c[:, 1:, 1:])
    return info


# --- numerical derivatives --------------------------------------------------------------------


def numerical_hessian(f, x, rel_step=None):
    """Four-point central-difference Hessian of ``f`` at ``x`` (step ~ eps^(1/4))."""
    x = np.asarray(x, dtype=float)
    k = len(x)
    steps = (np.finfo(float).eps ** 0.25 if rel_step is None else rel_step) * np.maximum(
        1.0, np.abs(x)
    )
    hess = np.empty((k, k))
    f0 = f(x)
    for i in range(k):
        ei = np.zeros(k)
        ei[i] = steps[i]
        hess[i, i] = (f(x + 2 * ei) - 2 * f0 + f(x - 2 * ei)) / (4 * steps[i] ** 2)
        for j in range(i):
            ej = np.zeros(k)
            ej[j] = steps[j]
            hess[i, j] = hess[j, i] = (
                f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)
            ) / (4 * steps[i] * steps[j])
    return hess


# --- the driver --------------------------------------------------------------------------------


def run_ecm(
    step,
    loglik,
    x0,
    *,
    maxiter,
    tol,
    accelerate,
    progress=False,
    name="ECM",
    criterion_name="loglik",
    warn=True,
):
    """Iterate an ECM map to its fixed point.

    ``step(x) -> (x_new, llf(x))`` is one ECM iteration in unconstrained coordinates;
    ``loglik(x)`` the exact observed log-likelihood (or the penalised criterion, named
    ``criterion_name``). With ``accelerate`` a SQUAREM-1 extrapolation (Varadhan & Roland 2008)
    is tried after every two ECM steps and kept only when it does not lower the likelihood, so
    the recorded history stays monotone.

    Stops when the relative change of the log-likelihood is below ``tol`` and the largest change
    of a coordinate below ``tol ** 0.75``.

    Returns
    -------
    x, llf, history, record
        The last iterate, its criterion, the criterion per evaluation (an array) and the
        :class:`~statcore.results.IterationRecord` (``function`` is ``name``; it warns unless
        ``warn`` is False, for fits whose caller reports).
    """
    x = np.asarray(x0, dtype=float)
    history = []
    converged = False
    n_iter = 0
    dll = np.nan
    xtol = tol**0.75
    with progress_bar(maxiter, enabled=progress, desc=name) as bar:
        while n_iter < maxiter:
            x1, ll0 = step(x)
            if not history:
                history.append(ll0)
            n_iter += 1
            if accelerate and n_iter < maxiter:
                x2, ll1 = step(x1)
                n_iter += 1
                history.append(ll1)
                x_new, ll_new = _squarem(x, x1, x2, loglik)
            else:
                x_new = x1
                ll_new = loglik(x1)
            history.append(ll_new)
            dx = np.max(np.abs(x_new - x)) if len(x) else 0.0
            dll = abs(ll_new - ll0) / (abs(ll0) + 1e-300)
            x = x_new
            bar.update(2 if accelerate else 1)
            if dll <= tol and dx <= xtol:
                converged = True
                break
    history = np.asarray(history)
    record = IterationRecord.from_run(
        function=name,
        n_iter=n_iter,
        maxiter=maxiter,
        tol=tol,
        criterion=f"relative change in {criterion_name}, with parameter moves <= tol ** 0.75",
        last_value=dll,
        met=converged,
        history=pd.DataFrame({criterion_name: history}),
        remedy="raise `maxiter`, loosen `tol`, or start nearer the optimum (`start=`)",
        warn=warn,
    )
    return x, history[-1], history, record


def _squarem(x, x1, x2, loglik):
    """SQUAREM-1 extrapolation from ``x`` through two ECM steps; ``x2`` unless it is better."""
    r = x1 - x
    v = x2 - x1 - r
    nv = np.linalg.norm(v)
    if not (nv > 0 and np.all(np.isfinite(v))):
        return x2, loglik(x2)
    alpha = min(-np.linalg.norm(r) / nv, -1.0)
    x_ext = x - 2 * alpha * r + alpha**2 * v
    ll2 = loglik(x2)
    try:
        ll_ext = loglik(x_ext)
    except (ValueError, FloatingPointError, ZeroDivisionError):
        ll_ext = -np.inf
    if np.isfinite(ll_ext) and ll_ext >= ll2:
        return x_ext, ll_ext
    return x2, ll2


# --- the CM step for the mixing parameters -----------------------------------------------------


def mixing_update(new, mix_free, family, moments, *, expand):
    """Apply :func:`~statcore.quantized.mixing.mixing_cm_step` to the parameters ``new`` (a dict
    with ``sigma``, ``gamma`` and the mixing parameters) in place.

    ``moments`` are the E-step averages ``(delta, eta, xi)``. With ``expand`` the scale of W the
    step returns is folded into ``sigma`` and ``gamma``, which leaves the likelihood unchanged.
    """
    if not mix_free:
        return
    mix = {k: new[k] for k in MIXING_PARAMS[family]}
    update, c = mixing_cm_step(family, mix, mix_free, *moments, expand=expand)
    new.update(update)
    if expand:
        new["sigma"] = float(new["sigma"] * np.sqrt(c))
        new["gamma"] = float(new.get("gamma", 0.0) * c)


# --- what an ECM fit hands to the results -------------------------------------------------------


@dataclass(frozen=True)
class EcmFit:
    """An ECM fit before inference: what the results of every quantized model are built from.

    ``values`` holds every parameter by name (``params`` order), ``free`` those estimated,
    ``restart`` a ``start=`` for refits from the estimate (bootstrap), and
    ``information(cov_type)`` the observed information over ``free`` with a label and notes.
    """

    values: dict
    free: list
    fix: dict
    llf: float
    history: np.ndarray
    record: IterationRecord
    estimates: dict
    restart: dict
    information: Callable[[str], tuple[np.ndarray, str, tuple[str, ...]]]


def ecm_fit(step, loglik, x0, finish, *, name, fix, **options) -> EcmFit:
    """Run :func:`run_ecm` and assemble the :class:`EcmFit` of a quantized model.

    Parameters
    ----------
    step, loglik, x0
        The ECM iteration, the exact criterion and the start, as for :func:`run_ecm`.
    finish : callable
        ``finish(x)`` maps the last iterate to the model's own fields of the fit: a dict of
        ``values``, ``free``, ``estimates``, ``restart`` and ``information``.
    name : str
        The fitting method, named on the progress bar and in the iteration record.
    fix : dict
        The parameters held known.
    **options
        ``maxiter``, ``tol``, ``accelerate`` and ``progress`` of :func:`run_ecm`.

    Returns
    -------
    EcmFit
    """
    x, llf, history, record = run_ecm(step, loglik, x0, name=name, **options)
    return EcmFit(fix=fix, llf=float(llf), history=history, record=record, **finish(x))


def inference(fit, names, cov_type, bootstrap=None):
    """``(vcov, cov_type label, notes, resampling)`` of a fit under ``cov_type``.

    ``bootstrap()`` (for ``cov_type="bootstrap"``) returns a
    :class:`~statcore.results.ResamplingResult` over ``fit.free``.
    """
    notes = ()
    resampling = None
    if cov_type is None:
        return None, "none", notes, resampling
    if cov_type == "bootstrap":
        resampling = bootstrap()
        sub = np.cov(resampling.replicates.to_numpy(), rowvar=False)
        label = f"bootstrap ({resampling.n_resamples} resamples)"
        notes = resampling.notes
    else:
        info, label, notes = fit.information(cov_type)
        sub = np.linalg.pinv(info)
        if np.linalg.eigvalsh(info).min() <= 0:
            notes += (
                "The observed information is not positive definite: standard errors are "
                "unreliable.",
            )
    k = len(fit.free)
    return free_vcov(sub.reshape(k, k), names, fit.free), label, notes, resampling


__all__ = [
    "EcmFit",
    "inference",
    "louis_information",
    "mixing_update",
    "numerical_hessian",
    "run_ecm",
    "scalar_estep",
    "scalar_loglik",
]
