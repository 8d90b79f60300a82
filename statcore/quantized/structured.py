"""Pieces shared by the structured quantized fits (matrix completion, compressed sensing).

Both models have cells with distinct locations (one per entry or measurement), so they cannot
group observations into unique cells as :class:`~statcore.quantized.QuantizedNVMM` does: the
E-step runs per cell, and the ECME step for ``nu`` is a cheap safeguarded Newton step instead
of a full 1-D maximisation.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import svds

from statcore.quantized import _ecm, _kernels
from statcore.quantized.mixing import MIXING_BOUNDS
from statcore.quantized.quantizer import check_quantizer

#: families of the structured (matrix completion, compressed sensing) fits: symmetric errors
STRUCTURED_FAMILIES = ("gaussian", "t")
#: above this smaller dimension the rank-r projection uses ARPACK (``svds``), not a full SVD
SVDS_MIN_DIM = 400
#: finite-difference half-width (in log nu) of the Newton step of the ECME update of nu
NU_STEP_H = 1e-3
#: largest move of log nu in one ECME step
NU_TRUST = 1.0


def check_scalar_quantizer(quantizer):
    return check_quantizer(quantizer, n_dims=1)


def structured_estep(lower, upper, loc, sigma, family, nu):
    """``(logp, delta, b, s)`` per cell: log P(cell), E[1/W], E[X/W], E[X^2/W] given the cell."""
    loc = np.ascontiguousarray(loc, dtype=float)
    if family == "gaussian":
        logp, ex, ex2 = _kernels.gaussian_cell_moments(lower, upper, loc, float(sigma))
        return logp, np.ones_like(ex), ex, ex2
    logp, out = _ecm.t_estep(lower, upper, loc, sigma, nu)
    return logp, out[:, 0], out[:, 4], out[:, 5]


def structured_loglik(lower, upper, loc, sigma, family, nu):
    """Exact observed log-likelihood ``sum log P(cell)`` of cells with locations ``loc``."""
    mix = {"nu": nu} if family == "t" else {}
    return _ecm.scalar_loglik(lower, upper, loc, sigma, 0.0, family, mix)


def nu_step(log_nu, f0, loglik_of_log_nu):
    """ECME update of ``log nu``: a safeguarded Newton step on the observed log-likelihood.

    The gradient and curvature come from central differences of half-width ``NU_STEP_H``; the
    step is clipped to ``NU_TRUST`` (a fixed uphill move where the curvature is not negative),
    halved twice if it does not help, and the best point tried is returned, so the
    log-likelihood never decreases. The cells have distinct locations and cannot be grouped,
    so a full 1-D maximisation per iteration (as ``QuantizedNVMM`` does) would cost tens of
    likelihood evaluations; three to five suffice here, and the outer iterations refine it.
    """
    lo, hi = np.log(MIXING_BOUNDS["nu"])
    h = NU_STEP_H
    tried = {log_nu: f0}
    for t in (log_nu - h, log_nu + h):
        if lo <= t <= hi:
            tried[t] = loglik_of_log_nu(t)
    fm = tried.get(log_nu - h, -np.inf)
    fp = tried.get(log_nu + h, -np.inf)
    if np.isfinite(fm) and np.isfinite(fp):
        g = (fp - fm) / (2 * h)
        c = (fp - 2 * f0 + fm) / h**2
        step = -g / c if c < 0 else np.sign(g) * NU_TRUST
        step = float(np.clip(step, -NU_TRUST, NU_TRUST))
        for _ in range(3):
            t = float(np.clip(log_nu + step, lo, hi))
            if abs(t - log_nu) <= h:
                break
            ft = loglik_of_log_nu(t)
            tried[t] = ft
            if ft > f0:
                break
            step /= 2.0
    best = max(tried, key=lambda t: tried[t] if np.isfinite(tried[t]) else -np.inf)
    return best, tried[best]


def spectral_svd(Z, rank, rng):
    """Rank-``rank`` truncated SVD ``(U, s, Vt)``; ARPACK with a seeded start for big matrices."""
    small = min(Z.shape)
    if small < SVDS_MIN_DIM or rank >= small // 2:
        U, s, Vt = np.linalg.svd(Z, full_matrices=False)
        return U[:, :rank], s[:rank], Vt[:rank]
    U, s, Vt = svds(Z, k=rank, v0=rng.standard_normal(small), tol=0)
    order = np.argsort(s)[::-1]
    return U[:, order], s[order], Vt[order]
