"""The penalised log-likelihood of the latent space model, its per-node derivatives, the
identifiability constraints and the calibration of rho."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from statcore.network import _kernels


def _centre_and_rotate(Z, alpha, rho, degree_heterogeneity):
    """Impose the identifiability constraints without changing any logit Theta_ij.

    Centring Z by c adds c'z_i to alpha_i and |c|^2 to rho; centring alpha moves twice its mean
    into rho; a rotation to principal axes leaves Z Z' unchanged. Without node intercepts a
    translation of Z cannot be absorbed, so Z is only rotated then.
    """
    if degree_heterogeneity:
        c = Z.mean(axis=0)
        Z = Z - c
        alpha = alpha + Z @ c
        shift = alpha.mean()
        alpha = alpha - shift
        rho = rho + c @ c + 2.0 * shift
    _, _, vt = np.linalg.svd(Z, full_matrices=False)
    Z = Z @ vt.T
    signs = np.where(Z[0] < 0, -1.0, 1.0)
    return np.ascontiguousarray(Z * signs), np.ascontiguousarray(alpha), float(rho)


@dataclass(frozen=True)
class _State:
    """Parameters and the pair sums at them."""

    Z: np.ndarray
    alpha: np.ndarray
    rho: float
    llf: float
    objective: float
    grad_z: np.ndarray
    grad_alpha: np.ndarray
    info: float
    hess: np.ndarray


class _Objective:
    """Penalised (exact or case-control) log-likelihood with its per-node derivatives."""

    def __init__(self, model, penalty, bound, sample):
        n, r = model.n_nodes, model.dim
        A = model.adjacency
        self.indptr = A.indptr.astype(np.int64)
        self.indices = A.indices.astype(np.int64)
        self.sample = sample
        self.penalty = penalty
        self.bound = bound
        self.ridge_alpha = penalty if model.degree_heterogeneity else 0.0
        self.bound_alpha = model.degree_heterogeneity
        self.buffers = (
            np.empty((n, r)),
            np.empty(n),
            np.empty(n),
            np.empty(n),
            np.empty((n, r + 1, r + 1)),
        )

    def __call__(self, Z, alpha, rho, exact=None):
        exact = self.sample is None if exact is None else exact
        grad_z, grad_alpha, row_llf, row_info, hess = self.buffers
        if exact:
            _kernels.pair_sums(
                Z,
                alpha,
                rho,
                self.indptr,
                self.indices,
                grad_z,
                grad_alpha,
                row_llf,
                row_info,
                hess,
            )
        else:
            s = self.sample
            _kernels.sampled_pair_sums(
                Z,
                alpha,
                rho,
                self.indptr,
                self.indices,
                s.ptr,
                s.idx,
                s.in_ptr,
                s.in_idx,
                s.weights,
                grad_z,
                grad_alpha,
                row_llf,
                row_info,
                hess,
            )
        r = Z.shape[1]
        # ordered pairs count every unordered pair twice
        llf = 0.5 * row_llf.sum()
        lam = self.penalty
        hess = hess.copy()
        hess[:, 0, 0] += self.ridge_alpha
        hess[:, 1:, 1:] += lam * np.eye(r)
        g_z = grad_z - lam * Z
        g_alpha = grad_alpha - self.ridge_alpha * alpha
        penalised = llf - 0.5 * lam * ((Z * Z).sum() + (alpha * alpha).sum())
        if self.bound is not None:
            norms = np.einsum("ij,ij->i", Z, Z)
            over_z = np.clip(norms - self.bound, 0.0, None)
            penalised -= 0.5 * (over_z * over_z).sum()
            g_z = g_z - 2.0 * over_z[:, None] * Z
            outside = over_z > 0
            hess[:, 1:, 1:] += 2.0 * over_z[:, None, None] * np.eye(r)
            hess[outside, 1:, 1:] += 4.0 * np.einsum("ij,ik->ijk", Z[outside], Z[outside])
            if self.bound_alpha:
                over_a = np.clip(np.abs(alpha) - self.bound, 0.0, None)
                penalised -= 0.5 * (over_a * over_a).sum()
                g_alpha = g_alpha - over_a * np.sign(alpha)
                hess[:, 0, 0] += over_a > 0
        return _State(Z, alpha, rho, llf, penalised, g_z, g_alpha, 0.5 * row_info.sum(), hess)


def calibrate_rho(model, Z, alpha, rho, sample=None) -> float:
    """The rho at which the expected edge count equals the observed one.

    Newton on log E(rho) = log m (E increasing, d log E / d rho in (0, 1]), kept inside a
    bracket that every step narrows; E is exact (one O(n^2 r) pass per step) or, with a
    ``sample``, its case-control estimate.
    """
    A = model.adjacency
    indptr, indices = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    target = np.log(model.n_edges)

    def moments(value):
        if sample is None:
            return _kernels.pair_moments(Z, alpha, value)
        return _kernels.sampled_moments(
            Z, alpha, value, indptr, indices, sample.ptr, sample.idx, sample.weights
        )

    low, high = -np.inf, np.inf
    for _ in range(200):
        first, second = moments(rho)
        gap = np.log(first) - target
        if abs(gap) < 1e-13:
            break
        if gap > 0:
            high = min(high, rho)
        else:
            low = max(low, rho)
        proposal = rho - gap * first / max(second, 1e-300)
        if not low < proposal < high:
            if np.isfinite(low) and np.isfinite(high):
                proposal = 0.5 * (low + high)
            else:
                proposal = rho - np.sign(gap) * 5.0
        if proposal == rho:
            break
        rho = proposal
    return float(rho)
