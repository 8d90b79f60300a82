"""Ground-truth designs for mutual-information estimators: samplers with their exact MI (nats).

Gaussian copula with non-Gaussian marginals, correlated Bernoulli and shared-component Poisson,
the synthetic checks of the InfoAtlas evaluation (``evaluations/evaluate_sync.py`` and
``evaluate_sync_discrete.py`` of the authors' code): MI is invariant to strictly monotone marginal
maps, so a Gaussian copula keeps the Gaussian value whatever its marginals.

References
----------
Hu, Chen, ..., Yang (2026). InfoAtlas: amortised mutual information estimation in one forward
pass. arXiv:2606.00241.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from statcore.validation import (
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
)

MARGINALS = ("gaussian", "beta", "gamma")


def gaussian_copula_mi(rho, dim: int = 1) -> float:
    """Exact MI of :func:`gaussian_copula_sample`: ``-(dim / 2) log(1 - rho^2)``.

    Parameters
    ----------
    rho : float
        Correlation of each pair ``(x_j, y_j)`` on the Gaussian scale, in (-1, 1).
    dim : int
        Number of independent pairs.
    """
    rho = check_scalar(
        rho, name="rho", low=-1.0, high=1.0, low_inclusive=False, high_inclusive=False
    )
    dim = check_positive_int(dim, name="dim")
    return float(-0.5 * dim * np.log1p(-rho * rho))


def gaussian_copula_sample(
    n: int, *, rho=0.5, dim: int = 1, marginals: str = "beta", random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` pairs ``(x, y)`` in ``R^dim x R^dim`` whose Gaussian scores have per-coordinate
    correlation ``rho`` (coordinates independent), then map the marginals.

    Parameters
    ----------
    n : int
        Sample size.
    rho, dim
        As in :func:`gaussian_copula_mi` (which gives the exact MI).
    marginals : {"beta", "gamma", "gaussian"}
        ``"beta"``: ``x`` Beta(2, 5), ``y`` Gamma(2); ``"gamma"``: both Gamma(2) (heavy right
        tail); ``"gaussian"``: standard normal (the plain bivariate Gaussian).
    random_state : None, int or Generator

    Returns
    -------
    x, y : ndarray of shape (n, dim)
    """
    n = check_positive_int(n, name="n", minimum=2)
    gaussian_copula_mi(rho, dim)  # validates rho and dim
    marginals = check_option(marginals, name="marginals", options=MARGINALS)
    rng = check_random_state(random_state)
    zx = rng.standard_normal((n, dim))
    zy = rho * zx + np.sqrt(1.0 - rho * rho) * rng.standard_normal((n, dim))
    if marginals == "gaussian":
        return zx, zy
    ux, uy = special.ndtr(zx), special.ndtr(zy)
    if marginals == "beta":
        return stats.beta(2.0, 5.0).ppf(ux), stats.gamma(2.0).ppf(uy)
    return stats.gamma(2.0).ppf(ux), stats.gamma(2.0).ppf(uy)


def correlated_bernoulli_mi(q) -> float:
    """Exact MI of :func:`correlated_bernoulli_sample`: ``q log 2q + (1 - q) log 2(1 - q)``.

    Parameters
    ----------
    q : float
        Probability that ``y`` equals ``x``, in [0, 1].
    """
    q = check_scalar(q, name="q", low=0.0, high=1.0)
    return float(special.xlogy(q, 2.0 * q) + special.xlogy(1.0 - q, 2.0 * (1.0 - q)))


def correlated_bernoulli_sample(n: int, *, q=0.75, random_state=None):
    """``x ~ Bernoulli(1/2)``; ``y = x`` with probability ``q``, else ``1 - x``.

    Returns
    -------
    x, y : ndarray of shape (n, 1), values 0.0 / 1.0
    """
    n = check_positive_int(n, name="n", minimum=2)
    q = check_scalar(q, name="q", low=0.0, high=1.0)
    rng = check_random_state(random_state)
    x = rng.integers(0, 2, n)
    y = np.where(rng.random(n) < q, x, 1 - x)
    return x.astype(float)[:, None], y.astype(float)[:, None]


def shared_poisson_mi(lam0, lam=2.0, *, tol: float = 1e-14) -> float:
    """Exact MI of :func:`shared_poisson_sample`, by summing the joint pmf.

    ``x = z0 + z1``, ``y = z0 + z2`` with ``z0 ~ Poisson(lam0)``, ``z1, z2 ~ Poisson(lam)``;
    the sum runs over all ``(x, y)`` up to the ``1 - tol`` quantile of ``Poisson(lam0 + lam)``,
    so the truncation error is of order ``tol``.

    Parameters
    ----------
    lam0 : float
        Rate of the shared component (> 0).
    lam : float
        Rate of each private component (> 0).
    tol : float
        Tail mass left out of the sum.
    """
    lam0 = check_positive(lam0, name="lam0")
    lam = check_positive(lam, name="lam")
    top = int(stats.poisson(lam0 + lam).isf(tol)) + 1
    v = np.arange(top + 1)
    p0 = stats.poisson(lam0).pmf(v)
    p1 = stats.poisson(lam).pmf(v)
    # joint[x, y] = sum_z p0(z) p1(x - z) p1(y - z), for z <= min(x, y)
    shifted = np.zeros((top + 1, top + 1))  # shifted[z, x] = p1(x - z)
    for z in range(top + 1):
        shifted[z, z:] = p1[: top + 1 - z]
    joint = (shifted * p0[:, None]).T @ shifted
    px = joint.sum(axis=1)
    mask = joint > 0
    outer = np.outer(px, px)
    return float(np.sum(joint[mask] * np.log(joint[mask] / outer[mask])))


def shared_poisson_sample(n: int, *, lam0=2.0, lam=2.0, random_state=None):
    """``x = z0 + z1``, ``y = z0 + z2``; ``z0 ~ Poisson(lam0)``, ``z1, z2 ~ Poisson(lam)``.

    Returns
    -------
    x, y : ndarray of shape (n, 1), non-negative integer values as floats
    """
    n = check_positive_int(n, name="n", minimum=2)
    lam0 = check_positive(lam0, name="lam0")
    lam = check_positive(lam, name="lam")
    rng = check_random_state(random_state)
    z0 = rng.poisson(lam0, n)
    x = z0 + rng.poisson(lam, n)
    y = z0 + rng.poisson(lam, n)
    return x.astype(float)[:, None], y.astype(float)[:, None]
