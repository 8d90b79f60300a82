"""Data-generating designs of the notes' reference runs (draws from the caller's Generator)."""

from __future__ import annotations

import numpy as np

from statcore._validation import check_random_state


def rnvmm(n, *, mu=0.0, sigma=1.0, gamma=0.0, family="gaussian", nu=5.0, random_state=None):
    """Draws of a univariate NVMM ``mu + W gamma + sqrt(W) sigma Z`` (gaussian, t, skew_t)."""
    rng = check_random_state(random_state)
    z = rng.standard_normal(n)
    if family == "gaussian":
        w = np.ones(n)
    elif family in ("t", "skew_t"):
        w = nu / rng.chisquare(nu, size=n)
    else:
        raise ValueError(f"`family` must be 'gaussian', 't' or 'skew_t'; got {family!r}")
    return mu + w * gamma + np.sqrt(w) * sigma * z


def rmvt(n, Sigma, *, nu=None, mean=None, random_state=None):
    """Multivariate normal (``nu=None``) or t draws with scatter ``Sigma``."""
    rng = check_random_state(random_state)
    Sigma = np.asarray(Sigma, dtype=float)
    d = Sigma.shape[0]
    x = rng.standard_normal((n, d)) @ np.linalg.cholesky(Sigma).T
    if nu is not None:
        x *= np.sqrt(nu / rng.chisquare(nu, size=n))[:, None]
    return x + (0.0 if mean is None else np.asarray(mean, dtype=float))


def regression_design(n=2000, p=5, *, nu=3.0, scale=1.0, random_state=None):
    """``z = A beta + eps``, ``eps ~ scale * t_nu``, A standard normal, beta fixed (notes, A7.9)."""
    rng = check_random_state(random_state)
    A = rng.standard_normal((n, p))
    beta = np.linspace(1.0, -1.0, p) + 0.25
    eps = scale * rng.standard_t(nu, size=n)
    return A, beta, A @ beta + eps
