"""Data-generating designs for the NVMM quantized-data ECM: univariate NVMM draws, multivariate t
draws and a linear regression with t errors, each from the caller's Generator.

References
----------
Inference from quantized data under the normal variance-mean mixture (NVMM) framework
(ICML 2026). The designs are a reconstruction of its simulation settings, not its code.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from statcore.quantized.mixing import FAMILIES, gig_params
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
)

#: the families ``rnvmm`` draws from
RNVMM_FAMILIES = FAMILIES


def rnvmm(
    n,
    *,
    mu=0.0,
    sigma=1.0,
    gamma=0.0,
    family="gaussian",
    nu=5.0,
    alpha_bar=1.0,
    lam=1.0,
    random_state=None,
):
    """Draws of a univariate NVMM ``mu + W gamma + sqrt(W) sigma Z``.

    ``family`` is any of ``statcore.quantized.mixing.FAMILIES``; W follows its mixing law
    (:mod:`statcore.quantized.mixing`: ``nu`` for the t and skew t, ``alpha_bar`` for the NIG,
    ``lam`` for the VG, both for the GH; ``E W = 1`` for the last three). ``gamma`` is ignored
    by the symmetric families.
    """
    rng = check_random_state(random_state)
    n = check_positive_int(n, name="n")
    mu = check_scalar(mu, name="mu")
    sigma = check_positive(sigma, name="sigma")
    gamma = check_scalar(gamma, name="gamma")
    check_option(family, name="family", options=RNVMM_FAMILIES)
    z = rng.standard_normal(n)
    if family == "gaussian":
        w = np.ones(n)
    elif family in ("t", "skew_t"):
        nu = check_positive(nu, name="nu")
        w = nu / rng.chisquare(nu, size=n)
    else:
        mix = {"alpha_bar": check_positive(alpha_bar, name="alpha_bar")}
        mix["lam"] = (
            check_positive(lam, name="lam") if family == "vg" else check_scalar(lam, name="lam")
        )
        lam_, chi, psi = gig_params(family, mix)
        if chi == 0.0:
            w = rng.gamma(lam_, 2.0 / psi, size=n)
        else:
            law = stats.geninvgauss(lam_, np.sqrt(chi * psi), scale=np.sqrt(chi / psi))
            w = law.rvs(n, random_state=rng)
    if family in ("gaussian", "t"):
        gamma = 0.0
    return mu + w * gamma + np.sqrt(w) * sigma * z


def rmvt(n, Sigma, *, nu=None, mean=None, random_state=None):
    """Multivariate normal (``nu=None``) or t draws with scatter ``Sigma``."""
    rng = check_random_state(random_state)
    n = check_positive_int(n, name="n")
    Sigma = as_float_array(Sigma, name="Sigma", ndim=2)
    d = Sigma.shape[0]
    if Sigma.shape != (d, d) or not np.allclose(Sigma, Sigma.T):
        raise ValueError(f"`Sigma` must be a symmetric square matrix; got shape {Sigma.shape}")
    try:
        chol = np.linalg.cholesky(Sigma)
    except np.linalg.LinAlgError:
        raise ValueError("`Sigma` must be positive definite") from None
    loc = np.zeros(d) if mean is None else as_float_array(mean, name="mean", ndim=(0, 1))
    if loc.ndim and loc.shape != (d,):
        raise ValueError(f"`mean` must have {d} entries (one per row of `Sigma`); got {len(loc)}")
    x = rng.standard_normal((n, d)) @ chol.T
    if nu is not None:
        nu = check_positive(nu, name="nu")
        x *= np.sqrt(nu / rng.chisquare(nu, size=n))[:, None]
    return x + loc


def regression_design(n=2000, p=5, *, nu=3.0, scale=1.0, random_state=None):
    """``z = A beta + eps``, ``eps ~ scale * t_nu``, A standard normal, ``beta`` evenly spaced
    from 1.25 to -0.75 (a reconstruction of the paper's regression setting)."""
    rng = check_random_state(random_state)
    n = check_positive_int(n, name="n")
    p = check_positive_int(p, name="p")
    nu = check_positive(nu, name="nu")
    scale = check_positive(scale, name="scale")
    A = rng.standard_normal((n, p))
    beta = np.linspace(1.0, -1.0, p) + 0.25
    eps = scale * rng.standard_t(nu, size=n)
    return A, beta, A @ beta + eps
