"""Exact proportional-asymptotics risk of the ridge teacher and the self-distilled student.

Setting: ``n, p -> inf`` with ``p / n -> gamma``; features ``x = Sigma^(1/2) z`` with i.i.d.
standardised ``z``; a deterministic signal ``beta``; noise variance ``sigma^2``
(``noise_variance``); a test covariance ``Sigma_0`` that shares ``Sigma``'s eigenvectors
(``Sigma_0 = Sigma`` in distribution).

Everything follows from the deterministic equivalent of the *cross-risk surface* of two ridge fits
on the same data at penalties ``lambda_1, lambda_2``,

    E(l1, l2) = k1 k2 b' G1 S0 G2 b
                + (k1 k2 b' S G1 G2 b + sigma^2) * g tr[S0 S G1 G2] / (1 - g tr[S^2 G1 G2]),

where ``k = kappa(lambda)`` solves ``lambda = kappa (1 - gamma tr[S (S + kappa)^-1] / p)``,
``G = (S + kappa)^-1`` and ``g tr[.]`` means ``gamma / p * tr[.]``. The student is a first-order
move along the ridge path, ``beta_xi = beta_lambda + xi lambda d beta_lambda / d lambda``, so its
risk is the quadratic ``E + 2 xi lambda E_1 + xi^2 lambda^2 E_12`` in the derivatives of ``E`` at
the diagonal: the fourth-order functionals of the paper come out of second mixed derivatives of
a second-order equivalent.

Fidelity: derived here, not from the paper's block linearisation (the PDF's body was not read);
teacher risk, pure-distilled risk and ``xi*`` agree with the authors' coded Eqs. 12-16
(``asymptotic_risk_and_estimation.py`` of ``hhd357/optimal_self_distillation_ridge``) to 1e-11
on AR(1), spiked and identity covariances at ``gamma`` 0.5 and 2, and with Monte Carlo.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from statcore.compat import renamed_keywords
from statcore.results import IterationRecord
from statcore.validation import (
    as_float_array,
    check_penalty,
    check_positive,
    check_positive_int,
)

#: relative tolerance of the fixed point ``lambda = kappa (1 - gamma tr[S G] / p)``
KAPPA_TOL = 1e-12


def solve_kappa(
    penalty,
    gamma,
    spectrum,
    *,
    tol: float = KAPPA_TOL,
    maxiter: int = 100,
    return_record: bool = False,
):
    """Solve the ridge fixed point ``lambda = kappa (1 - gamma mean(s / (s + kappa)))`` for kappa.

    ``phi(kappa) = kappa - gamma mean(s kappa / (s + kappa)) - lambda`` is convex and increasing
    through its only positive root, so Newton's method started to the right of the root (at
    ``lambda + gamma mean(s)``, where ``phi >= 0``) decreases monotonically onto it: no bracketing
    or damping is needed, and it stops when the residual is below ``tol * max(1, lambda)``.

    Parameters
    ----------
    penalty : float or array_like
        Ridge penalties ``lambda > 0``.
    gamma : float
        Aspect ratio ``p / n``.
    spectrum : array_like
        Eigenvalues of the feature covariance (equal weights).
    tol : float
        Tolerance on the residual relative to ``max(1, lambda)``, at every penalty.
    maxiter : int
        Newton steps allowed; stopping there short of ``tol`` warns ``ConvergenceWarning``.
    return_record : bool
        Also return the :class:`~statcore.results.IterationRecord` of the iteration (its
        ``history``: the largest relative residual before each step).

    Returns
    -------
    kappa : ndarray
        One root per penalty.
    residual : ndarray
        ``|lambda - kappa (1 - gamma mean(s / (s + kappa)))|`` at the returned roots.
    record : IterationRecord
        Only with ``return_record=True``.

    References
    ----------
    Dang, H., Patil, P. and Rinaldo, A. (2026). Optimal unconstrained self-distillation in ridge
    regression: strict improvements, precise asymptotics, and one-shot tuning. arXiv:2602.17565.
    """
    tol = check_positive(tol, name="tol")
    maxiter = check_positive_int(maxiter, name="maxiter")
    lam, gamma, s = _check_problem(penalty, gamma, spectrum)
    lam = np.atleast_1d(lam)
    scale = np.maximum(1.0, lam)
    kappa = lam + gamma * s.mean()
    worst = []
    for n_iter in range(maxiter + 1):
        ratio = s[None, :] / (s[None, :] + kappa[:, None])
        phi = kappa * (1.0 - gamma * ratio.mean(axis=1)) - lam
        worst.append(float(np.max(np.abs(phi) / scale)))
        met = bool(np.all(np.abs(phi) <= tol * scale))
        if met or n_iter == maxiter:
            break
        slope = 1.0 - gamma * (ratio**2).mean(axis=1)
        kappa = kappa - phi / slope
    record = IterationRecord.from_run(
        function="solve_kappa",
        n_iter=n_iter,
        maxiter=maxiter,
        tol=tol,
        criterion="largest |fixed-point residual| / max(1, lambda)",
        last_value=worst[-1],
        met=met,
        diverged=not np.all(np.isfinite(kappa)),
        history=pd.DataFrame({"iteration": np.arange(len(worst)), "residual": worst}),
        remedy="raise `maxiter`, or check that `spectrum` and `gamma` are finite",
    )
    if return_record:
        return kappa, np.abs(phi), record
    return kappa, np.abs(phi)


@dataclass(frozen=True)
class _Jet:
    """A function of (kappa_1, kappa_2), symmetric, at the diagonal: value, d/dk1, d2/dk1dk2."""

    f: np.ndarray
    f1: np.ndarray
    f12: np.ndarray

    def __add__(self, other):
        if not isinstance(other, _Jet):
            return _Jet(self.f + other, self.f1, self.f12)
        return _Jet(self.f + other.f, self.f1 + other.f1, self.f12 + other.f12)

    def __mul__(self, other):
        # d/dk2 of a symmetric function at the diagonal equals d/dk1
        return _Jet(
            self.f * other.f,
            self.f1 * other.f + self.f * other.f1,
            self.f12 * other.f + 2.0 * self.f1 * other.f1 + self.f * other.f12,
        )

    def reciprocal_of_one_minus(self):
        """The jet of ``1 / (1 - self)``."""
        h = 1.0 / (1.0 - self.f)
        return _Jet(h, self.f1 * h**2, self.f12 * h**2 + 2.0 * self.f1**2 * h**3)


def _resolvent_jet(weights, spectrum, kappa, scale=1.0):
    """Jet of ``scale * sum_i w_i / ((s_i + k1)(s_i + k2))`` at ``k1 = k2 = kappa``."""
    inv = 1.0 / (spectrum[None, :] + kappa[:, None])
    return _Jet(
        scale * (weights * inv**2).sum(axis=1),
        -scale * (weights * inv**3).sum(axis=1),
        scale * (weights * inv**4).sum(axis=1),
    )


@dataclass(frozen=True)
class AsymptoticRisk:
    """Deterministic-equivalent risks of the ridge teacher and the self-distilled student.

    All risks are excess prediction risks ``(beta_hat - beta)' Sigma_0 (beta_hat - beta)``
    (noise excluded). Arrays run over ``penalty``; they are floats for a scalar penalty.

    Attributes
    ----------
    penalty, xi : float or ndarray
        The penalties and the mixing weights the student risk is evaluated at.
    teacher : float or ndarray
        Ridge risk ``R(lambda)``.
    student : float or ndarray
        Risk of the student mixed with weight ``xi``.
    xi_star : float or ndarray
        Optimal mixing weight ``-lambda R'(lambda) / (2 D)``.
    optimal_student : float or ndarray
        Risk at ``xi_star``, ``R - lambda^2 R'^2 / (4 D)``.
    pure_distilled : float or ndarray
        Risk of the student at ``xi = 1``.
    teacher_derivative : float or ndarray
        ``R'(lambda)``.
    cross_derivative : float or ndarray
        ``||d beta_lambda / d lambda||^2_Sigma0``, so that ``D = lambda^2 cross_derivative``.
    kappa, fixed_point_residual : float or ndarray
        Root of the fixed point and its residual (below ``1e-12 max(1, lambda)``).
    iterations : IterationRecord, optional
        How the fixed point's Newton iteration (:func:`solve_kappa`) stopped.

    Vocabulary: as :class:`~statcore.ridge.SelfDistilledRidgeResults`.
    """

    penalty: float | np.ndarray
    xi: float | np.ndarray
    teacher: float | np.ndarray
    student: float | np.ndarray
    xi_star: float | np.ndarray
    optimal_student: float | np.ndarray
    pure_distilled: float | np.ndarray
    teacher_derivative: float | np.ndarray
    cross_derivative: float | np.ndarray
    kappa: float | np.ndarray
    fixed_point_residual: float | np.ndarray
    iterations: IterationRecord | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per penalty."""
        names = [
            "penalty",
            "xi",
            "teacher",
            "student",
            "xi_star",
            "optimal_student",
            "pure_distilled",
            "teacher_derivative",
            "cross_derivative",
            "kappa",
            "fixed_point_residual",
        ]
        return pd.DataFrame({name: np.atleast_1d(getattr(self, name)) for name in names})


def _check_problem(penalty, gamma, spectrum):
    """Penalties, aspect ratio and spectrum of the fixed point, checked."""
    lam = check_penalty(penalty)
    gamma = check_positive(gamma, name="gamma")
    s = as_float_array(spectrum, name="spectrum", ndim=1)
    if len(s) == 0:
        raise ValueError("`spectrum` must hold at least one eigenvalue; got an empty array")
    if np.any(s < 0):
        raise ValueError("`spectrum` holds the eigenvalues of a covariance: they must be >= 0")
    if not np.any(s > 0):
        raise ValueError("`spectrum` must have at least one positive eigenvalue")
    return lam, gamma, s


def _check_inputs(penalty, gamma, spectrum, signal, noise_variance, test_spectrum):
    lam, gamma, s = _check_problem(penalty, gamma, spectrum)
    w = as_float_array(signal, name="signal", ndim=1)
    if len(w) != len(s):
        raise ValueError(
            f"`signal` must have one coordinate per eigenvalue of `spectrum` ({len(s)}); "
            f"got {len(w)}"
        )
    noise_variance = check_positive(noise_variance, name="noise_variance", strict=False)
    if test_spectrum is None:
        s0 = s
    else:
        s0 = as_float_array(test_spectrum, name="test_spectrum", ndim=1)
        if len(s0) != len(s) or np.any(s0 < 0):
            raise ValueError(
                f"`test_spectrum` must hold {len(s)} eigenvalues >= 0 (in `spectrum`'s "
                f"eigenbasis); got {len(s0)} values"
            )
    return lam, gamma, s, w, noise_variance, s0


def _cross_risk_derivatives(lam, gamma, s, w, noise_variance, s0):
    """E, dE/dl1 and d2E/dl1dl2 at l1 = l2 = lambda, with kappa, its residual and the record
    of the fixed point's iteration."""
    kappa, residual, record = solve_kappa(lam, gamma, s, return_record=True)
    energy = w**2
    p = len(s)
    kk = _Jet(kappa**2, kappa, np.ones_like(kappa))
    bias_test = kk * _resolvent_jet(energy * s0, s, kappa)
    bias_train = kk * _resolvent_jet(energy * s, s, kappa)
    variance_test = _resolvent_jet(s0 * s, s, kappa, gamma / p)
    inflation = _resolvent_jet(s**2, s, kappa, gamma / p).reciprocal_of_one_minus()
    cross = bias_test + (bias_train + noise_variance) * variance_test * inflation
    dkappa = 1.0 / (1.0 - gamma * ((s[None, :] / (s[None, :] + kappa[:, None])) ** 2).mean(axis=1))
    return cross.f, cross.f1 * dkappa, cross.f12 * dkappa**2, kappa, residual, record


@renamed_keywords(sigma2="noise_variance")
def cross_risk(penalty_1, penalty_2, gamma, spectrum, signal, noise_variance, test_spectrum=None):
    """Deterministic equivalent of ``(beta_l1 - beta)' Sigma_0 (beta_l2 - beta)`` for two ridge
    fits on the same data (the surface whose derivatives give the student's risk).

    Parameters are as in :func:`asymptotic_risk`, with scalar penalties ``penalty_1`` and
    ``penalty_2``.

    References
    ----------
    Dang, H., Patil, P. and Rinaldo, A. (2026). Optimal unconstrained self-distillation in ridge
    regression: strict improvements, precise asymptotics, and one-shot tuning. arXiv:2602.17565.
    """
    lam, gamma, s, w, noise_variance, s0 = _check_inputs(
        [penalty_1, penalty_2], gamma, spectrum, signal, noise_variance, test_spectrum
    )
    (k1, k2), _ = solve_kappa(lam, gamma, s)
    g12 = 1.0 / ((s + k1) * (s + k2))
    energy = w**2
    inflation = 1.0 / (1.0 - gamma * np.mean(s**2 * g12))
    variance = gamma * np.mean(s0 * s * g12)
    bias_train = k1 * k2 * np.sum(energy * s * g12)
    return float(
        k1 * k2 * np.sum(energy * s0 * g12) + (bias_train + noise_variance) * variance * inflation
    )


@renamed_keywords(sigma2="noise_variance")
def asymptotic_risk(penalty, xi, gamma, spectrum, signal, noise_variance, test_spectrum=None):
    """Exact proportional-asymptotics risk of the ridge teacher and the self-distilled student.

    The teacher is ridge, ``beta_lambda = (X'X/n + lambda I)^-1 X'y/n``; the student is ridge at
    the same ``lambda`` fitted to ``(1 - xi) y + xi X beta_lambda``. The deterministic
    equivalents hold for an anisotropic covariance and a deterministic signal; the fixed point
    is solved to ``1e-12``.

    Parameters
    ----------
    penalty : float or array_like
        Ridge penalties ``lambda > 0`` (mean-squared-error scale).
    xi : float or array_like, or "optimal"
        Mixing weight(s) of the student (broadcast against ``penalty``); ``"optimal"`` uses
        ``xi_star``. ``xi = 0`` is the teacher.
    gamma : float
        Aspect ratio ``p / n``.
    spectrum : array_like of shape (p,)
        Eigenvalues of the feature covariance ``Sigma`` (equal weights).
    signal : array_like of shape (p,)
        Coordinates of ``beta`` in ``Sigma``'s eigenbasis, ``V' beta``.
    noise_variance : float
        Noise variance ``sigma^2`` (its old spelling ``sigma2=`` warns ``FutureWarning``).
    test_spectrum : array_like of shape (p,), optional
        Eigenvalues of the test covariance in the same eigenbasis (out-of-distribution risk);
        default ``spectrum``.

    Returns
    -------
    AsymptoticRisk
        ``teacher``, ``student``, ``xi_star``, ``optimal_student``, ``pure_distilled``, the
        derivatives ``teacher_derivative`` (``R'``) and ``cross_derivative``, and ``kappa``.

    References
    ----------
    Dang, H., Patil, P. and Rinaldo, A. (2026). Optimal unconstrained self-distillation in ridge
    regression: strict improvements, precise asymptotics, and one-shot tuning. arXiv:2602.17565.
    """
    lam, gamma, s, w, noise_variance, s0 = _check_inputs(
        penalty, gamma, spectrum, signal, noise_variance, test_spectrum
    )
    scalar = lam.ndim == 0
    lam = np.atleast_1d(lam)
    risk, d1, d12, kappa, residual, record = _cross_risk_derivatives(
        lam, gamma, s, w, noise_variance, s0
    )
    xi_star = -d1 / (lam * d12)
    if isinstance(xi, str):
        if xi != "optimal":
            raise ValueError(f"`xi` must be a number, an array or 'optimal'; got {xi!r}")
        mix = xi_star
    else:
        mix = np.broadcast_to(as_float_array(xi, name="xi", ndim=(0, 1)), lam.shape)

    def student(weight):
        return risk + 2.0 * weight * lam * d1 + weight**2 * lam**2 * d12

    values = {
        "penalty": lam,
        "xi": np.array(mix, dtype=float),
        "teacher": risk,
        "student": student(mix),
        "xi_star": xi_star,
        "optimal_student": risk - d1**2 / d12,
        "pure_distilled": student(1.0),
        "teacher_derivative": 2.0 * d1,
        "cross_derivative": d12,
        "kappa": kappa,
        "fixed_point_residual": residual,
    }
    if scalar:
        values = {key: float(value[0]) for key, value in values.items()}
    return AsymptoticRisk(**values, iterations=record)


@renamed_keywords(sigma2="noise_variance")
def optimal_xi(penalty, gamma, spectrum, signal, noise_variance, test_spectrum=None):
    """Asymptotically optimal mixing weight ``xi* = -lambda R'(lambda) / (2 D(lambda))``.

    ``D = lambda^2 ||d beta_lambda / d lambda||^2`` is the squared distance between the teacher
    and the pure-distilled student, so ``sign(xi*) = -sign(R'(lambda))``: positive when the
    teacher is under-regularised, negative when it is over-regularised.

    Parameters
    ----------
    penalty, gamma, spectrum, signal, noise_variance, test_spectrum
        As in :func:`asymptotic_risk`.

    Returns
    -------
    float or ndarray
        ``xi*`` per penalty.

    References
    ----------
    Dang, H., Patil, P. and Rinaldo, A. (2026). Optimal unconstrained self-distillation in ridge
    regression: strict improvements, precise asymptotics, and one-shot tuning. arXiv:2602.17565.
    """
    return asymptotic_risk(
        penalty, 0.0, gamma, spectrum, signal, noise_variance, test_spectrum=test_spectrum
    ).xi_star
