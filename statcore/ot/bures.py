"""Optimal transport between Gaussians: the Bures-Wasserstein barycentre, maps and distance.

For Gaussians ``N(m, C)`` the 2-Wasserstein geometry is explicit: the distance is::

    W2^2 = |m1 - m2|^2 + tr(C1 + C2 - 2 (C1^{1/2} C2 C1^{1/2})^{1/2}),

the optimal map from ``N(m_s, C_s)`` to ``N(m_t, C_t)`` is the affine ``x -> A (x - m_s) + m_t``
with the symmetric positive definite
``A = C_s^{-1/2} (C_s^{1/2} C_t C_s^{1/2})^{1/2} C_s^{-1/2}``, and the weighted barycentre of
``N(m_k, C_k)`` is ``N(sum_k w_k m_k, S)`` with ``S`` the unique SPD solution of
``S = sum_k w_k (S^{1/2} C_k S^{1/2})^{1/2}`` (Agueh and Carlier, 2011).

Every matrix square root here comes from one symmetric eigendecomposition (``eigh``), batched
over the distributions.

References
----------
Agueh, M. and Carlier, G. (2011). Barycenters in the Wasserstein space. SIAM J. Math. Anal.
43(2), 904-924.
Alvarez-Esteban, P. C., del Barrio, E., Cuesta-Albertos, J. A. and Matran, C. (2016). A fixed-
point approach to barycenters in Wasserstein space. J. Math. Anal. Appl. 441(2), 744-762.
Knott, M. and Smith, C. S. (1984). On the optimal mapping of distributions. J. Optim. Theory
Appl. 43, 39-49.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.compat import renamed_names
from statcore.results import IterationRecord, Results
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import (
    as_float_array,
    check_bool,
    check_positive,
    check_positive_int,
    check_scalar,
    check_weights,
)

#: A covariance whose asymmetry exceeds this share of its largest entry is refused rather than
#: symmetrised: rounding in an estimator leaves ~1e-16 relative, a transposed or wrong matrix
#: leaves O(1).
_SYMMETRY_RTOL = 1e-8


def _sqrt_pair(mats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(M^{1/2}, M^{-1/2})`` of SPD matrices (one or a stack), from one ``eigh`` each."""
    vals, vecs = np.linalg.eigh(mats)
    root = np.sqrt(vals)
    vt = np.swapaxes(vecs, -1, -2)
    return (vecs * root[..., None, :]) @ vt, (vecs / root[..., None, :]) @ vt


def _sqrt_psd(mats: np.ndarray) -> np.ndarray:
    """``M^{1/2}`` of symmetric PSD matrices (one or a stack); rounding's tiny negative
    eigenvalues are clipped to zero."""
    vals, vecs = np.linalg.eigh(mats)
    root = np.sqrt(np.clip(vals, 0.0, None))
    return (vecs * root[..., None, :]) @ np.swapaxes(vecs, -1, -2)


def _symmetrise(mats: np.ndarray) -> np.ndarray:
    return 0.5 * (mats + np.swapaxes(mats, -1, -2))


def _check_covariances(covs, *, name: str, dim: int | None = None, stack: bool = True):
    """Float copies of SPD covariance matrices, symmetrised, and their eigendecompositions.

    Returns ``(covs, eigenvalues, eigenvectors)``; refuses NaN, non-square or mismatched
    shapes, clearly asymmetric matrices and matrices that are not positive definite, naming
    the argument (and the offending matrix of a stack).
    """
    arr = as_float_array(covs, name=name, ndim=3 if stack else 2, min_rows=1)
    mats = arr if stack else arr[None]
    if mats.shape[1] != mats.shape[2]:
        raise ValueError(f"`{name}` must hold square matrices; got shape {arr.shape}")
    if dim is not None and mats.shape[1] != dim:
        raise ValueError(
            f"`{name}` must be {dim} x {dim} to match the means' dimension; got "
            f"{mats.shape[1]} x {mats.shape[2]}"
        )

    def refuse(bad, problem):
        """Raise for the first matrix flagged in ``bad``, naming it within a stack."""
        if bad.size:
            k = int(bad[0])
            where = f"`{name}[{k}]`" if stack else f"`{name}`"
            raise ValueError(f"{where} must be {problem(k)}")

    scale = np.abs(mats).max(axis=(1, 2))
    asym = np.abs(mats - np.swapaxes(mats, 1, 2)).max(axis=(1, 2))
    refuse(
        np.flatnonzero(asym > _SYMMETRY_RTOL * np.maximum(scale, np.finfo(float).tiny)),
        lambda k: (
            f"symmetric; its largest asymmetry |C - C^T| is {asym[k]:.3g} against entries up "
            f"to {scale[k]:.3g}"
        ),
    )
    mats = _symmetrise(mats)
    vals, vecs = np.linalg.eigh(mats)
    # Positive definite with room for the square roots: the smallest eigenvalue above
    # rounding's reach (d * eps relative to the largest), where C^{-1/2} is still meaningful.
    floor = mats.shape[1] * np.finfo(float).eps * np.maximum(vals[:, -1], np.finfo(float).tiny)
    refuse(
        np.flatnonzero(vals[:, 0] <= floor),
        lambda k: (
            f"symmetric positive definite; its smallest eigenvalue is {vals[k, 0]:.3g} (largest "
            f"{vals[k, -1]:.3g}). Shrink the estimate (Ledoit-Wolf) or add a small ridge to the "
            "diagonal"
        ),
    )
    return (mats, vals, vecs) if stack else (mats[0], vals[0], vecs[0])


def _check_mean(mean, *, name: str, dim: int) -> np.ndarray:
    m = as_float_array(mean, name=name, ndim=1, min_rows=1)
    if len(m) != dim:
        raise ValueError(f"`{name}` must have length {dim} to match its covariance; got {len(m)}")
    return m


@dataclass(frozen=True, eq=False)
class GaussianMap:
    """The affine map ``x -> matrix @ x + bias``, with McCann interpolation towards it.

    Parameters
    ----------
    matrix : ndarray of shape (d, d)
        The linear part ``A`` (symmetric positive definite for an optimal Gaussian map).
    bias : ndarray of shape (d,)
        The offset ``b = m_t - A m_s``.

    Notes
    -----
    ``partial(tau)`` is ``x -> ((1 - tau) I + tau A) x + tau b``, which pushes the source
    Gaussian to the point at fraction ``tau`` of the W2 geodesic towards the target (McCann's
    displacement interpolation; McCann, 1997, Adv. Math. 128, 153-179).
    """

    matrix: np.ndarray
    bias: np.ndarray

    @property
    def dim(self) -> int:
        """The dimension ``d``."""
        return len(self.bias)

    def partial(self, tau: float) -> GaussianMap:
        """The map a fraction ``tau`` in [0, 1] of the way along the geodesic."""
        tau = check_scalar(tau, name="tau", low=0.0, high=1.0)
        eye = np.eye(self.dim)
        return GaussianMap((1.0 - tau) * eye + tau * self.matrix, tau * self.bias)

    def __call__(self, X, tau: float = 1.0) -> np.ndarray:
        """Apply the (partial) map to the rows of ``X`` (n, d), or to one point (d,).

        ``tau = 0`` returns an unchanged copy of ``X``.
        """
        tau = check_scalar(tau, name="tau", low=0.0, high=1.0)
        x = as_float_array(X, name="X", ndim=(1, 2))
        if x.shape[-1] != self.dim:
            raise ValueError(
                f"`X` must have {self.dim} columns (the map's dimension); got {x.shape}"
            )
        if tau == 0.0:
            return x
        return (1.0 - tau) * x + tau * (x @ self.matrix.T + self.bias)

    def push(self, mean, cov) -> tuple[np.ndarray, np.ndarray]:
        """The image ``(A m + b, A C A^T)`` of the Gaussian ``N(mean, cov)``."""
        m = _check_mean(mean, name="mean", dim=self.dim)
        c = as_float_array(cov, name="cov", ndim=2)
        return self.matrix @ m + self.bias, _symmetrise(self.matrix @ c @ self.matrix.T)


def _map_from_roots(source_root, source_inv_root, cov_target) -> np.ndarray:
    middle = _sqrt_psd(_symmetrise(source_root @ cov_target @ source_root))
    return _symmetrise(source_inv_root @ middle @ source_inv_root)


def bures_wasserstein_map(mean_source, cov_source, mean_target, cov_target) -> GaussianMap:
    """The optimal transport map between two Gaussians (Knott and Smith, 1984).

    Parameters
    ----------
    mean_source, cov_source : array_like of shape (d,), (d, d)
        The source Gaussian; ``cov_source`` must be symmetric positive definite.
    mean_target, cov_target : array_like of shape (d,), (d, d)
        The target Gaussian; ``cov_target`` symmetric positive definite.

    Returns
    -------
    GaussianMap
        ``x -> A (x - m_s) + m_t`` with
        ``A = C_s^{-1/2} (C_s^{1/2} C_t C_s^{1/2})^{1/2} C_s^{-1/2}`` (symmetric PD), so that
        ``A C_s A = C_t``.

    References
    ----------
    Knott, M. and Smith, C. S. (1984). On the optimal mapping of distributions. J. Optim.
    Theory Appl. 43, 39-49.
    """
    cs, vals, vecs = _check_covariances(cov_source, name="cov_source", stack=False)
    d = cs.shape[0]
    ct = _check_covariances(cov_target, name="cov_target", dim=d, stack=False)[0]
    ms = _check_mean(mean_source, name="mean_source", dim=d)
    mt = _check_mean(mean_target, name="mean_target", dim=d)
    root = np.sqrt(vals)
    A = _map_from_roots((vecs * root) @ vecs.T, (vecs / root) @ vecs.T, ct)
    return GaussianMap(A, mt - A @ ms)


def gaussian_w2(mean1, cov1, mean2, cov2, *, squared: bool = False) -> float:
    """The 2-Wasserstein distance between ``N(mean1, cov1)`` and ``N(mean2, cov2)``.

    ``W2^2 = |m1 - m2|^2 + tr(C1) + tr(C2) - 2 tr((C1^{1/2} C2 C1^{1/2})^{1/2})``; the
    covariances may be singular (positive semi-definite).

    Parameters
    ----------
    mean1, cov1, mean2, cov2 : array_like of shapes (d,), (d, d), (d,), (d, d)
    squared : bool
        Return ``W2^2`` instead of ``W2``.

    Returns
    -------
    float

    References
    ----------
    Dowson, D. C. and Landau, B. V. (1982). The Frechet distance between multivariate normal
    distributions. J. Multivariate Anal. 12(3), 450-455.
    """
    squared = check_bool(squared, name="squared")
    c1 = as_float_array(cov1, name="cov1", ndim=2)
    d = c1.shape[0]
    c2 = as_float_array(cov2, name="cov2", ndim=2)
    for name, c in (("cov1", c1), ("cov2", c2)):
        if c.shape != (d, d):
            raise ValueError(f"`{name}` must be {d} x {d}; got shape {c.shape}")
    m1 = _check_mean(mean1, name="mean1", dim=d)
    m2 = _check_mean(mean2, name="mean2", dim=d)
    root1 = _sqrt_psd(_symmetrise(c1))
    cross = np.linalg.eigvalsh(_symmetrise(root1 @ c2 @ root1))
    value = float(
        np.sum((m1 - m2) ** 2)
        + np.trace(c1)
        + np.trace(c2)
        - 2.0 * np.sum(np.sqrt(np.clip(cross, 0.0, None)))
    )
    value = max(value, 0.0)  # rounding can leave -1e-16 for identical Gaussians
    return value if squared else float(np.sqrt(value))


def _plot_convergence(results, ax=None, **kwargs):
    """Fixed-point residual by iteration (log scale), with the tolerance."""
    ax = get_ax(ax)
    hist = results.iterations.history
    ax.semilogy(hist["iteration"], hist["residual"], marker="o", **kwargs)
    if results.iterations.tol is not None:
        ax.axhline(results.iterations.tol, color="grey", linestyle="--", label="tol")
        ax.legend()
    return label_axes(
        ax, "iteration", "relative fixed-point residual", "Bures-Wasserstein barycentre"
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class BuresBarycentreResult(Results):
    """The Bures-Wasserstein barycentre ``N(mean, covariance)`` of weighted Gaussians.

    Parameters
    ----------
    mean : ndarray of shape (d,)
        ``sum_k w_k m_k``.
    covariance : ndarray of shape (d, d)
        The barycentric covariance ``S``.
    weights : ndarray of shape (K,)
        The normalised weights.
    residual : float
        ``|S - sum_k w_k (S^{1/2} C_k S^{1/2})^{1/2}|_F / |S|_F`` at the returned ``S``.
    wall_time_s : float
        Seconds the fixed point took.
    """

    mean: np.ndarray
    covariance: np.ndarray
    weights: np.ndarray
    residual: float
    wall_time_s: float = float("nan")

    _plots: ClassVar[dict] = {"convergence": _plot_convergence}

    def tidy(self) -> pd.DataFrame:
        """``term, estimate``: the residual, the barycentre's trace and log-determinant."""
        _, logdet = np.linalg.slogdet(self.covariance)
        return pd.DataFrame(
            {
                "term": ["residual", "trace", "logdet"],
                "estimate": [self.residual, float(np.trace(self.covariance)), float(logdet)],
            }
        )

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["n_distributions"] = len(self.weights)
        row["dim"] = len(self.mean)
        row["residual"] = self.residual
        row["wall_time_s"] = self.wall_time_s
        return row

    def _repr_lines(self) -> list[str]:
        return [
            f"K={len(self.weights)}, d={len(self.mean)}, residual={self.residual:.3g}, "
            f"n_iter={self.n_iter}"
        ]


def bures_wasserstein_barycentre(
    means,
    covs,
    weights=None,
    *,
    init=None,
    maxiter: int = 200,
    tol: float = 1e-10,
) -> BuresBarycentreResult:
    """The 2-Wasserstein barycentre of Gaussians ``N(means[k], covs[k])`` with weights ``w``.

    The mean is ``sum_k w_k m_k``; the covariance ``S`` solves
    ``S = sum_k w_k (S^{1/2} C_k S^{1/2})^{1/2}`` and is found by the fixed point of
    Alvarez-Esteban et al. (2016, Theorem 4.2),

        S <- S^{-1/2} (sum_k w_k (S^{1/2} C_k S^{1/2})^{1/2})^2 S^{-1/2},

    which converges from any SPD start and in far fewer iterations than iterating the
    characterisation itself (the scheme POT's ``bures_wasserstein_barycenter`` uses). Each
    iteration costs one ``eigh`` per distribution (batched) plus one for ``S``.

    Parameters
    ----------
    means : array_like of shape (K, d)
    covs : array_like of shape (K, d, d)
        Symmetric positive definite covariances.
    weights : array_like of shape (K,), optional
        Non-negative weights (normalised here); default uniform.
    init : array_like of shape (d, d), optional
        The starting covariance (warm start, e.g. the barycentre of a previous round). Default
        ``(sum_k w_k C_k^{1/2})^2``, which is the exact answer when the covariances commute and
        a close start otherwise.
    maxiter : int
        Iteration limit.
    tol : float
        Tolerance on the relative fixed-point residual
        ``|S - sum_k w_k (S^{1/2} C_k S^{1/2})^{1/2}|_F / |S|_F``, checked at the iterate that
        is returned (so the residual reported is the returned matrix's own).

    Returns
    -------
    BuresBarycentreResult
        ``mean``, ``covariance``, ``weights``, ``residual`` and the iteration record
        (``converged``, ``n_iter``, ``iterations.history`` with the residual per iteration).
        Non-convergence warns :class:`~statcore.exceptions.ConvergenceWarning`.

    Raises
    ------
    ValueError
        For NaN, mismatched dimensions, covariances that are not symmetric positive definite
        (naming ``covs[k]``), or bad weights.

    References
    ----------
    Agueh, M. and Carlier, G. (2011). Barycenters in the Wasserstein space. SIAM J. Math.
    Anal. 43(2), 904-924.
    Alvarez-Esteban, P. C., del Barrio, E., Cuesta-Albertos, J. A. and Matran, C. (2016). A
    fixed-point approach to barycenters in Wasserstein space. J. Math. Anal. Appl. 441(2),
    744-762.
    """
    start = time.perf_counter()
    m = as_float_array(means, name="means", ndim=2, min_rows=1)
    K, d = m.shape
    C, vals, vecs = _check_covariances(covs, name="covs", dim=d)
    if len(C) != K:
        raise ValueError(f"`covs` must hold one matrix per row of `means` ({K}); got {len(C)}")
    w = check_weights(weights, K, name="weights")
    maxiter = check_positive_int(maxiter, name="maxiter")
    tol = check_positive(tol, name="tol")
    if init is None:
        roots = (vecs * np.sqrt(vals)[:, None, :]) @ np.swapaxes(vecs, 1, 2)
        R = np.einsum("k,kij->ij", w, roots)
        S = _symmetrise(R @ R)
    else:
        S = _check_covariances(init, name="init", dim=d, stack=False)[0]

    residuals = []
    residual = np.inf
    for _ in range(maxiter):
        S_root, S_inv_root = _sqrt_pair(S)
        M = np.einsum("k,kij->ij", w, _sqrt_psd(_symmetrise(S_root @ C @ S_root)))
        residual = float(np.linalg.norm(M - S) / np.linalg.norm(S))
        residuals.append(residual)
        if not np.isfinite(residual) or residual <= tol:
            break
        S = _symmetrise(S_inv_root @ (M @ M) @ S_inv_root)
    n_iter = len(residuals)
    record = IterationRecord.from_run(
        function="bures_wasserstein_barycentre",
        n_iter=n_iter,
        maxiter=maxiter,
        tol=tol,
        criterion="relative fixed-point residual",
        last_value=residual,
        diverged=not np.isfinite(residual),
        history=pd.DataFrame({"iteration": np.arange(1, n_iter + 1), "residual": residuals}),
    )
    return BuresBarycentreResult(
        method="Bures-Wasserstein barycentre (fixed point)",
        nobs=K,
        mean=w @ m,
        covariance=S,
        weights=w,
        residual=residual,
        iterations=record,
        wall_time_s=time.perf_counter() - start,
    )


#: the names before the one spelling "centre" (one release, with a FutureWarning)
RENAMED = {
    "bures_wasserstein_barycenter": "bures_wasserstein_barycentre",
    "BuresBarycenterResult": "BuresBarycentreResult",
}
__getattr__ = renamed_names(__name__, RENAMED)
