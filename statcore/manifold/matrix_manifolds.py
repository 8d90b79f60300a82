"""Matrix manifolds: symmetric positive-definite matrices (affine-invariant and log-Euclidean
metrics) and the rotation group SO(3).

References
----------
Pennec, X., Fillard, P. and Ayache, N. (2006). A Riemannian framework for tensor computing.
*International Journal of Computer Vision* 66(1), 41-66 (the affine-invariant SPD metric).

Arsigny, V., Fillard, P., Pennec, X. and Ayache, N. (2007). Geometric means in a novel vector
space structure on symmetric positive-definite matrices. *SIAM J. Matrix Anal. Appl.* 29(1),
328-347 (the log-Euclidean metric).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from statcore.compat import renamed_keywords
from statcore.manifold.interface import Manifold, _batched, _unbatch
from statcore.validation import check_option, check_positive_int, check_random_state

_SQRT2 = np.sqrt(2.0)


def _sym_fun(S, fun):
    """``fun`` applied to the eigenvalues of a batch of symmetric matrices."""
    w, Q = np.linalg.eigh(S)
    return (Q * fun(w)[..., None, :]) @ np.swapaxes(Q, -1, -2)


def _vech(S):
    """Orthonormal coordinates of symmetric matrices: the diagonal, then sqrt(2) x the upper
    triangle, so that dot products equal Frobenius inner products."""
    k = S.shape[-1]
    iu = np.triu_indices(k, 1)
    return np.concatenate(
        [np.diagonal(S, axis1=-2, axis2=-1), _SQRT2 * S[..., iu[0], iu[1]]], axis=-1
    )


def _unvech(c, k):
    iu = np.triu_indices(k, 1)
    S = np.zeros(c.shape[:-1] + (k, k))
    idx = np.arange(k)
    S[..., idx, idx] = c[..., :k]
    S[..., iu[0], iu[1]] = c[..., k:] / _SQRT2
    S[..., iu[1], iu[0]] = c[..., k:] / _SQRT2
    return S


def _divided_differences(w, fun, dfun):
    """First divided differences ``(f(wi) - f(wj)) / (wi - wj)``, ``f'(wi)`` on ties
    (the Daleckii-Krein matrix of the Fréchet derivative of a matrix function)."""
    fw = fun(w)
    dw = w[..., :, None] - w[..., None, :]
    df = fw[..., :, None] - fw[..., None, :]
    tie = np.abs(dw) <= 1e-12 * np.maximum(1.0, np.abs(w[..., :, None]))
    mean = 0.5 * (w[..., :, None] + w[..., None, :])
    return np.where(tie, dfun(mean), df / np.where(tie, 1.0, dw))


class SPD(Manifold):
    """Symmetric positive-definite ``k x k`` matrices.

    ``metric="affine"``: the affine-invariant metric, ``<U, V>_P = tr(P^-1 U P^-1 V)``,
    ``Log_P(Y) = P^1/2 logm(P^-1/2 Y P^-1/2) P^1/2``; ``metric="log_euclidean"``: the flat metric
    pulled back by ``logm``, ``dist(A, B) = |logm A - logm B|_F``. Tangent coordinates are the
    vech of the whitened tangent matrix with sqrt(2) weights off the diagonal.

    Parameters
    ----------
    k : int
        Matrix size (intrinsic dimension ``k (k + 1) / 2``).
    metric : {"affine", "log_euclidean"}

    References
    ----------
    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026*.

    Pennec, X., Fillard, P. and Ayache, N. (2006). *IJCV* 66(1), 41-66.

    Arsigny, V., Fillard, P., Pennec, X. and Ayache, N. (2007). *SIAM J. Matrix Anal. Appl.*
    29(1), 328-347.
    """

    name = "SPD"

    def __init__(self, k: int, metric: str = "affine"):
        self.k = check_positive_int(k, name="k")
        self.metric = check_option(metric, name="metric", options=("affine", "log_euclidean"))
        self.dim = self.k * (self.k + 1) // 2
        self.point_shape = (self.k, self.k)

    def __repr__(self) -> str:
        return f"SPD({self.k}, metric={self.metric!r})"

    # whitening by P^-1/2 (affine) or the derivative of logm at P (log-Euclidean)
    def _sqrt_and_isqrt(self, P):
        w, Q = np.linalg.eigh(P)
        return (Q * np.sqrt(w)) @ Q.T, (Q / np.sqrt(w)) @ Q.T

    def _dlog(self, P, V):
        """Fréchet derivative of logm at P applied to V (batched over V)."""
        w, Q = np.linalg.eigh(P)
        G = _divided_differences(w, np.log, lambda x: 1.0 / x)
        return Q @ (G * (Q.T @ V @ Q)) @ Q.T

    def _dexp(self, S, H):
        """Fréchet derivative of expm at symmetric S applied to H (batched over H)."""
        w, Q = np.linalg.eigh(S)
        F = _divided_differences(w, np.exp, np.exp)
        return Q @ (F * (Q.T @ H @ Q)) @ Q.T

    def _exp(self, base, v):
        P = np.asarray(base, float)
        v, single = _batched(v, 2)
        if self.metric == "affine":
            s, si = self._sqrt_and_isqrt(P)
            out = s @ _sym_fun(_symmetrize(si @ v @ si), np.exp) @ s
        else:
            out = _sym_fun(_sym_fun(P, np.log) + _symmetrize(self._dlog(P, v)), np.exp)
        return _unbatch(_symmetrize(out), single)

    def _log(self, base, y):
        P = np.asarray(base, float)
        y, single = _batched(y, 2)
        if self.metric == "affine":
            s, si = self._sqrt_and_isqrt(P)
            out = s @ _sym_fun(_symmetrize(si @ y @ si), np.log) @ s
        else:
            logP = _sym_fun(P, np.log)
            out = self._dexp(logP, _sym_fun(y, np.log) - logP)
        return _unbatch(_symmetrize(out), single)

    def _dist(self, a, b):
        a, b = np.asarray(a, float), np.asarray(b, float)
        if self.metric == "affine":
            # the eigenvalues of a^-1 b are those of the generalised problem b x = l a x
            w_a, Q = np.linalg.eigh(a)
            isq = (Q / np.sqrt(w_a)[..., None, :]) @ np.swapaxes(Q, -1, -2)
            lam = np.linalg.eigvalsh(_symmetrize(isq @ b @ isq))
            return np.sqrt(np.sum(np.log(lam) ** 2, axis=-1))
        diff = _sym_fun(a, np.log) - _sym_fun(b, np.log)
        return np.sqrt(np.sum(diff**2, axis=(-2, -1)))

    def _whiten(self, P, V):
        if self.metric == "affine":
            _, si = self._sqrt_and_isqrt(P)
            return si @ V @ si
        return self._dlog(P, V)

    def _to_coords(self, base, V):
        V = np.asarray(V, float).reshape((-1,) + self.point_shape)
        return np.ascontiguousarray(_vech(_symmetrize(self._whiten(np.asarray(base, float), V))))

    def _from_coords(self, base, C):
        P = np.asarray(base, float)
        W = _unvech(np.asarray(C, float).reshape(-1, self.dim), self.k)
        if self.metric == "affine":
            s, _ = self._sqrt_and_isqrt(P)
            return _symmetrize(s @ W @ s)
        return _symmetrize(self._dexp(_sym_fun(P, np.log), W))

    def _log_coords(self, base, Y):
        P = np.asarray(base, float)
        Y = np.asarray(Y, float).reshape((-1,) + self.point_shape)
        if self.metric == "affine":
            _, si = self._sqrt_and_isqrt(P)
            L = _sym_fun(_symmetrize(si @ Y @ si), np.log)
        else:
            L = _sym_fun(Y, np.log) - _sym_fun(P, np.log)
        return np.ascontiguousarray(_vech(L))

    def _point_errors(self, y):
        positive = np.linalg.eigvalsh(_symmetrize(y))[..., 0] > 0
        return np.where(positive, _asymmetry(y), np.inf)

    def _describe_point(self, p, name, atol):
        if _asymmetry(p[None])[0] > atol:
            return f"not symmetric (max |{name} - {name}'| = {np.max(np.abs(p - p.T)):.3g})"
        smallest = np.linalg.eigvalsh(_symmetrize(p))[0]
        return f"not positive definite (smallest eigenvalue {smallest:.6g})"

    def _tangent_errors(self, base, v):
        # the tangent vectors of both metrics are the symmetric matrices
        return _asymmetry(v)

    def _describe_tangent(self, base, v, name):
        return f"not symmetric (max |{name} - {name}'| = {np.max(np.abs(v - v.T)):.3g})"

    @renamed_keywords(rng="random_state")
    def random_point(self, n: int, random_state=None):
        n = check_positive_int(n, name="n")
        c = check_random_state(random_state).standard_normal((n, self.dim))
        eye = np.eye(self.k)
        return self._exp(eye, self._from_coords(eye, c))

    def initial_mean(self, Y):
        if self.metric == "log_euclidean":
            # the log-Euclidean Fréchet mean is closed form
            return _symmetrize(_sym_fun(_sym_fun(Y, np.log).mean(axis=0), np.exp))
        return _symmetrize(Y.mean(axis=0))


def _symmetrize(S):
    return 0.5 * (S + np.swapaxes(S, -1, -2))


def _asymmetry(S, *, skew: bool = False):
    """``max |S - S'|`` (``max |S + S'|`` when ``skew``) of each matrix of a batch, relative to
    its largest entry once that exceeds 1."""
    scale = np.maximum(1.0, np.max(np.abs(S), axis=(-2, -1)))
    other = -np.swapaxes(S, -1, -2) if skew else np.swapaxes(S, -1, -2)
    return np.max(np.abs(S - other), axis=(-2, -1)) / scale


def _vee(A):
    """Axis vector of a batch of skew 3x3 matrices; ``vee(A) . vee(B) = tr(A'B) / 2``."""
    return np.stack([A[..., 2, 1], A[..., 0, 2], A[..., 1, 0]], axis=-1)


def _hat(a):
    A = np.zeros(a.shape[:-1] + (3, 3))
    A[..., 2, 1], A[..., 1, 2] = a[..., 0], -a[..., 0]
    A[..., 0, 2], A[..., 2, 0] = a[..., 1], -a[..., 1]
    A[..., 1, 0], A[..., 0, 1] = a[..., 2], -a[..., 2]
    return A


class SO3(Manifold):
    """Rotations of R^3 with the bi-invariant metric ``<U, V> = tr(U'V) / 2``.

    ``Log_R(S) = R logm(R'S)``; the geodesic distance is the rotation angle of ``R'S``. Tangent
    coordinates at ``R`` are the axis vector of ``R'V``.

    References
    ----------
    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026*.

    Moakher, M. (2002). Means and averaging in the group of rotations. *SIAM J. Matrix Anal.
    Appl.* 24(1), 1-16.
    """

    name = "SO3"

    def __init__(self):
        self.dim = 3
        self.point_shape = (3, 3)

    def __repr__(self) -> str:
        return "SO3()"

    @staticmethod
    def _rotvec(Q):
        # scipy's quaternion route is accurate at every angle, including near pi
        return Rotation.from_matrix(Q.reshape(-1, 3, 3)).as_rotvec()

    def _exp(self, base, v):
        R = np.asarray(base, float)
        v, single = _batched(v, 2)
        a = _vee(R.T @ v)
        return _unbatch(R @ Rotation.from_rotvec(a).as_matrix(), single)

    def _log(self, base, y):
        R = np.asarray(base, float)
        y, single = _batched(y, 2)
        return _unbatch(R @ _hat(self._rotvec(R.T @ y)), single)

    def _log_coords(self, base, Y):
        R = np.asarray(base, float)
        return np.ascontiguousarray(self._rotvec(R.T @ np.asarray(Y, float)))

    def _dist(self, a, b):
        a, b = np.asarray(a, float), np.asarray(b, float)
        rel = np.swapaxes(a, -1, -2) @ b
        return np.linalg.norm(self._rotvec(rel), axis=-1).reshape(rel.shape[:-2])

    def _to_coords(self, base, V):
        R = np.asarray(base, float)
        A = R.T @ np.asarray(V, float).reshape(-1, 3, 3)
        return np.ascontiguousarray(_vee(0.5 * (A - np.swapaxes(A, -1, -2))))

    def _from_coords(self, base, C):
        return np.asarray(base, float) @ _hat(np.asarray(C, float).reshape(-1, 3))

    def _point_errors(self, y):
        gram = np.swapaxes(y, -1, -2) @ y
        error = np.max(np.abs(gram - np.eye(3)), axis=(-2, -1))
        return np.where(np.linalg.det(y) > 0, error, np.inf)

    def _describe_point(self, p, name, atol):
        error = np.max(np.abs(p.T @ p - np.eye(3)))
        if error > atol:
            return f"not orthogonal (max |{name}'{name} - I| = {error:.3g})"
        return f"det {name} = {np.linalg.det(p):.6g}, not 1 (a reflection)"

    def _tangent_errors(self, base, v):
        # R'V is skew-symmetric
        return _asymmetry(base.T @ v, skew=True)

    def _describe_tangent(self, base, v, name):
        A = base.T @ v
        asymmetry = np.max(np.abs(A + A.T))
        return f"A = base_point'{name} is not skew-symmetric (max |A + A'| = {asymmetry:.3g})"

    @renamed_keywords(rng="random_state")
    def random_point(self, n: int, random_state=None):
        n = check_positive_int(n, name="n")
        return Rotation.random(n, random_state=check_random_state(random_state)).as_matrix()

    def initial_mean(self, Y):
        # projection of the arithmetic mean onto SO(3) (the chordal L2 mean, Moakher 2002)
        U, _, Vt = np.linalg.svd(Y.mean(axis=0))
        D = np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))])
        return U @ D @ Vt


__all__ = ["SO3", "SPD"]
