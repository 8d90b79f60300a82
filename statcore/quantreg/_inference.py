"""Sparsity, density and covariance estimators of quantile regression (iid, kernel, nid).

Every estimator is written as a per-level matrix ``G_tau`` with ``sqrt(n)(b(tau) - beta(tau))``
having covariance ``(min(tau, tau') - tau tau') G_tau J G_tau'`` across levels, where
``J = X'X / n``: ``G = s(tau) J^-1`` under iid errors (Koenker and Bassett 1978) and
``G = H(tau)^-1`` with ``H = E[f(0 | x) x x']`` for the sandwich estimators (Powell 1991;
Hendricks and Koenker 1992).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from statcore.quantreg._kernels import weighted_gram

BANDWIDTHS = ("hall-sheather", "bofinger")


def bandwidth(tau: float, n: int, rule: str = "hall-sheather", alpha: float = 0.05) -> float:
    """Bandwidth in quantile units (quantreg's ``bandwidth.rq``), shrunk to fit inside (0, 1).

    Hall-Sheather: ``n^(-1/3) z^(2/3) [1.5 phi(x0)^2 / (2 x0^2 + 1)]^(1/3)``, ``z`` the normal
    ``1 - alpha/2`` quantile; Bofinger: ``n^(-1/5) [4.5 phi(x0)^4 / (2 x0^2 + 1)^2]^(1/5)``, with
    ``x0 = Phi^-1(tau)``.
    """
    x0 = special.ndtri(tau)
    f0 = stats.norm.pdf(x0)
    if rule == "hall-sheather":
        z = special.ndtri(1 - alpha / 2)
        h = n ** (-1 / 3) * z ** (2 / 3) * (1.5 * f0**2 / (2 * x0**2 + 1)) ** (1 / 3)
    else:
        h = n ** (-0.2) * (4.5 * f0**4 / (2 * x0**2 + 1) ** 2) ** 0.2
    while tau - h <= 0 or tau + h >= 1:
        h /= 2
    return float(h)


def zero_residuals(resid: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Residuals that are zero up to rounding (the basic observations of a vertex)."""
    return np.abs(resid) <= 1e-9 * (1.0 + np.max(np.abs(y)))


def siddiqui_sparsity(resid: np.ndarray, y: np.ndarray, tau: float, h: float) -> float:
    """Sparsity ``1 / f(F^-1(tau))`` by Siddiqui's difference quotient of residual quantiles.

    ``s = [Q(tau + h) - Q(tau - h)] / (2 h)`` with ``Q`` the empirical quantile function of the
    residuals other than the (structurally) zero ones of the basic observations.
    """
    kept = np.sort(resid[~zero_residuals(resid, y)])
    m = len(kept)
    upper = kept[min(m - 1, int(np.ceil(m * (tau + h))) - 1)]
    lower = kept[max(0, int(np.ceil(m * (tau - h))) - 1)]
    return float((upper - lower) / (2 * h))


def powell_density_weights(resid: np.ndarray, tau: float, h: float) -> np.ndarray:
    """Gaussian kernel weights ``phi(r / c) / c`` of Powell's sandwich (quantreg ``se="ker"``).

    The bandwidth in residual units is ``c = kappa [Phi^-1(tau + h) - Phi^-1(tau - h)]`` with
    ``kappa = min(sd(r), IQR(r) / 1.34)``.
    """
    q75, q25 = np.quantile(resid, [0.75, 0.25])
    kappa = min(np.std(resid, ddof=1), (q75 - q25) / 1.34)
    c = kappa * (special.ndtri(tau + h) - special.ndtri(tau - h))
    return stats.norm.pdf(resid / c) / c


def nid_density_weights(X: np.ndarray, beta_hi: np.ndarray, beta_lo: np.ndarray, h: float):
    """Hendricks-Koenker densities ``2h / (x'(b(tau+h) - b(tau-h)))``, clipped at 0.

    Returns the weights and the number of observations where the two quantile planes cross.
    """
    dyhat = X @ (beta_hi - beta_lo)
    eps = np.finfo(float).eps ** (2 / 3)
    return np.maximum(0.0, 2 * h / (dyhat - eps)), int((dyhat <= 0).sum())


def sandwich_bread(X: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``G = H^-1`` with ``H = X' diag(weights) X / n``."""
    n = X.shape[0]
    H = weighted_gram(np.ascontiguousarray(X), np.ascontiguousarray(weights)) / n
    return np.linalg.inv(H)


def joint_covariance(X: np.ndarray, taus, breads) -> np.ndarray:
    """Covariance of the stacked (level, term) estimates: blocks ``(min - tt') G J G' / n``."""
    n, p = X.shape
    J = X.T @ X / n
    L = len(taus)
    cov = np.empty((L * p, L * p))
    for a in range(L):
        for b in range(a, L):
            weight = min(taus[a], taus[b]) - taus[a] * taus[b]
            block = weight * breads[a] @ J @ breads[b].T / n
            cov[a * p : (a + 1) * p, b * p : (b + 1) * p] = block
            cov[b * p : (b + 1) * p, a * p : (a + 1) * p] = block.T
    return cov
