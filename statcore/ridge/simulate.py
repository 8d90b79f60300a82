"""The paper's synthetic designs: Gaussian features with AR(1), spiked or identity covariance and a
deterministic signal drawn once, aligned with the top (or bottom) eigendirections."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from statcore.compat import renamed_attribute, renamed_keywords
from statcore.ridge.asymptotics import asymptotic_risk
from statcore.validation import (
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
)

COVARIANCES = ("ar1", "spiked", "identity")
SIGNALS = ("top_aligned", "bottom_aligned", "isotropic")


@dataclass(frozen=True, eq=False)
class RidgeDesign:
    """A linear model ``y = X beta + eps`` with ``X`` rows ``N(0, covariance)``.

    Attributes
    ----------
    covariance : ndarray of shape (p, p)
    beta : ndarray of shape (p,)
    noise_variance : float
        Noise variance ``sigma^2`` (``sigma2``, its old name, warns ``FutureWarning``).
    eigenvalues, eigenvectors : ndarray
        ``covariance = V diag(eigenvalues) V'``.
    """

    covariance: np.ndarray
    beta: np.ndarray
    noise_variance: float
    eigenvalues: np.ndarray = field(repr=False)
    eigenvectors: np.ndarray = field(repr=False)

    sigma2 = renamed_attribute("sigma2", "noise_variance")

    @property
    def p(self) -> int:
        return len(self.beta)

    @property
    def signal(self) -> np.ndarray:
        """``V' beta``: the signal's coordinates in the covariance's eigenbasis."""
        return self.eigenvectors.T @ self.beta

    def sample(self, n: int, random_state=None) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``(X, y)`` with ``n`` rows."""
        n = check_positive_int(n, name="n")
        rng = check_random_state(random_state)
        root = self.eigenvectors * np.sqrt(self.eigenvalues)
        X = rng.standard_normal((n, self.p)) @ root.T
        y = X @ self.beta + np.sqrt(self.noise_variance) * rng.standard_normal(n)
        return X, y

    def asymptotic_risk(self, penalty, xi, n: int):
        """:func:`~statcore.ridge.asymptotic_risk` of this design at sample size ``n``."""
        return asymptotic_risk(
            penalty,
            xi,
            self.p / check_positive_int(n, name="n"),
            self.eigenvalues,
            self.signal,
            self.noise_variance,
        )


RidgeDesign.__init__ = renamed_keywords(sigma2="noise_variance")(RidgeDesign.__init__)


@renamed_keywords(sigma2="noise_variance")
def paper_design(
    p: int,
    *,
    covariance: str = "ar1",
    rho: float = 0.5,
    spike: float = 5.0,
    signal: str = "top_aligned",
    signal_strength: float = 1.0,
    spike_frac: float = 0.1,
    align_frac: float = 0.9,
    noise_variance: float = 1.0,
    random_state=None,
) -> RidgeDesign:
    """The synthetic designs of the paper's experiments.

    Parameters
    ----------
    p : int
        Number of features.
    covariance : {"ar1", "spiked", "identity"}
        ``rho^|i-j|``; ``I + spike v v'`` with a random unit ``v``; or the identity.
    signal : {"top_aligned", "bottom_aligned", "isotropic"}
        ``beta ~ N(0, signal_strength / p * Sigma_beta)`` drawn once, where ``Sigma_beta`` puts
        the share ``align_frac`` of the energy on the top (or bottom) ``spike_frac * p``
        eigendirections of the covariance, or is the identity.
    signal_strength : float
        ``alpha^2`` of the paper: ``E ||beta||^2``.
    noise_variance : float
        Noise variance ``sigma^2`` (its old spelling ``sigma2=`` warns ``FutureWarning``).

    Returns
    -------
    RidgeDesign

    References
    ----------
    Dang, H., Patil, P. and Rinaldo, A. (2026). Optimal unconstrained self-distillation in ridge
    regression: strict improvements, precise asymptotics, and one-shot tuning. arXiv:2602.17565.
    """
    p = check_positive_int(p, name="p", minimum=2)
    check_option(covariance, name="covariance", options=COVARIANCES)
    check_option(signal, name="signal", options=SIGNALS)
    rho = check_scalar(
        rho, name="rho", low=-1.0, high=1.0, low_inclusive=False, high_inclusive=False
    )
    spike = check_positive(spike, name="spike", strict=False)
    signal_strength = check_positive(signal_strength, name="signal_strength", strict=False)
    spike_frac = check_scalar(spike_frac, name="spike_frac", low=0.0, high=1.0, low_inclusive=False)
    align_frac = check_scalar(align_frac, name="align_frac", low=0.0, high=1.0)
    noise_variance = check_positive(noise_variance, name="noise_variance", strict=False)
    rng = check_random_state(random_state)
    if covariance == "ar1":
        idx = np.arange(p)
        cov = rho ** np.abs(idx[:, None] - idx[None, :])
    elif covariance == "spiked":
        v = rng.standard_normal(p)
        v /= np.linalg.norm(v)
        cov = np.eye(p) + spike * np.outer(v, v)
    else:
        cov = np.eye(p)
    eigenvalues, eigenvectors = np.linalg.eigh(cov)
    eigenvalues = np.clip(eigenvalues, 0.0, None)
    k = max(1, int(spike_frac * p))
    weights = np.ones(p)
    if signal != "isotropic" and k < p:
        # eigh sorts ascending: the top directions are the last k
        aligned = slice(p - k, p) if signal == "top_aligned" else slice(0, k)
        weights = np.full(p, (1.0 - align_frac) * p / (p - k))
        weights[aligned] = align_frac * p / k
    coords = np.sqrt(signal_strength / p * weights) * rng.standard_normal(p)
    beta = eigenvectors @ coords
    return RidgeDesign(cov, beta, noise_variance, eigenvalues, eigenvectors)
