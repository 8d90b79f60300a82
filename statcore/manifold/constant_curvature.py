"""The model spaces of constant curvature: flat space, the sphere and hyperbolic space, with
closed-form exponential and logarithm maps.

References
----------
Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
manifold-valued data. *ICML 2026*.
"""

from __future__ import annotations

import numpy as np

from statcore.compat import renamed_keywords
from statcore.manifold.interface import Manifold, _batched, _unbatch
from statcore.validation import check_positive_int, check_random_state


class Euclidean(Manifold):
    """The flat space R^m: ``Exp_p(v) = p + v``, ``Log_p(y) = y - p``.

    Parameters
    ----------
    m : int
        Dimension.

    References
    ----------
    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026*. With this manifold MMDD is the MDD of Shao and Zhang
    (2014), *JASA* 109, 1302-1318.
    """

    name = "Euclidean"

    def __init__(self, m: int):
        self.dim = check_positive_int(m, name="m")
        self.point_shape = (self.dim,)

    def _exp(self, base, v):
        return np.asarray(base, float) + np.asarray(v, float)

    def _log(self, base, y):
        return np.asarray(y, float) - np.asarray(base, float)

    def _dist(self, a, b):
        return np.linalg.norm(np.asarray(a, float) - np.asarray(b, float), axis=-1)

    def _inner(self, base, u, v):
        return np.sum(np.asarray(u, float) * np.asarray(v, float), axis=-1)

    def _to_coords(self, base, V):
        return np.asarray(V, float).reshape(-1, self.dim)

    def _from_coords(self, base, C):
        return np.asarray(C, float).reshape(-1, self.dim)

    def _point_errors(self, y):
        return np.where(np.all(np.isfinite(y), axis=-1), 0.0, np.inf)

    @renamed_keywords(rng="random_state")
    def random_point(self, n: int, random_state=None):
        n = check_positive_int(n, name="n")
        return check_random_state(random_state).standard_normal((n, self.dim))

    def initial_mean(self, Y):
        return Y.mean(axis=0)


def _householder(p):
    """Vector ``w`` and sign ``s`` of the reflection ``H = I - 2ww'/|w|^2`` with ``Hp = -s e0``.

    ``w = p + s e0`` with ``s = sign(p0)`` never cancels, so ``H`` is accurate for every unit ``p``.
    """
    s = 1.0 if p[0] >= 0 else -1.0
    w = p.copy()
    w[0] += s
    return w, s


class _Hypersurface(Manifold):
    """An ``m``-dimensional manifold whose points are vectors of ``R^(m+1)``."""

    def __init__(self, m: int):
        self.dim = check_positive_int(m, name="m")
        self.point_shape = (self.dim + 1,)


class Sphere(_Hypersurface):
    """The unit sphere S^m in R^(m+1) with the round (great-circle) metric.

    ``Log_p(y) = theta (y - cos(theta) p) / sin(theta)`` with ``theta = arccos<p, y>``;
    ``Exp_p(v) = cos|v| p + sin|v| v / |v|``; the metric is the ambient dot product.

    Parameters
    ----------
    m : int
        Intrinsic dimension (points are unit vectors of length ``m + 1``).

    References
    ----------
    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026*.
    """

    name = "Sphere"

    def _exp(self, base, v):
        p = np.asarray(base, float)
        v, single = _batched(v, 1)
        norm = np.linalg.norm(v, axis=-1, keepdims=True)
        # sin|v|/|v| written with np.sinc (sin(pi x)/(pi x)) stays exact as |v| -> 0
        out = np.cos(norm) * p + np.sinc(norm / np.pi) * v
        out /= np.linalg.norm(out, axis=-1, keepdims=True)
        return _unbatch(out, single)

    def _log(self, base, y):
        p = np.asarray(base, float)
        y, single = _batched(y, 1)
        cos = y @ p
        u = y - cos[:, None] * p
        sin = np.linalg.norm(u, axis=-1)
        # atan2 keeps theta accurate both near 0 and near pi, where arccos loses digits
        theta = np.arctan2(sin, cos)
        scale = np.divide(theta, sin, out=np.ones_like(theta), where=sin > 0)
        return _unbatch(scale[:, None] * u, single)

    def _dist(self, a, b):
        a, b = np.asarray(a, float), np.asarray(b, float)
        chord = np.linalg.norm(a - b, axis=-1)
        return 2.0 * np.arcsin(np.clip(chord / 2.0, 0.0, 1.0))

    def _inner(self, base, u, v):
        return np.sum(np.asarray(u, float) * np.asarray(v, float), axis=-1)

    def _to_coords(self, base, V):
        w, _ = _householder(np.asarray(base, float))
        V = np.asarray(V, float).reshape(-1, self.dim + 1)
        HV = V - np.outer(V @ w, 2.0 * w / (w @ w))
        return np.ascontiguousarray(HV[:, 1:])

    def _from_coords(self, base, C):
        w, _ = _householder(np.asarray(base, float))
        C = np.asarray(C, float).reshape(-1, self.dim)
        full = np.hstack([np.zeros((len(C), 1)), C])
        return full - np.outer(full @ w, 2.0 * w / (w @ w))

    def _point_errors(self, y):
        return np.abs(np.linalg.norm(y, axis=-1) - 1.0)

    def _describe_point(self, p, name, atol):
        return f"|{name}| = {np.linalg.norm(p):.6g}, not 1"

    def _tangent_errors(self, base, v):
        # <p, v> = 0, relative to |v| (|p| = 1) once |v| exceeds 1
        return np.abs(v @ base) / np.maximum(1.0, np.linalg.norm(v, axis=-1))

    def _describe_tangent(self, base, v, name):
        return f"<base_point, {name}> = {v @ base:.6g}, not 0"

    @renamed_keywords(rng="random_state")
    def random_point(self, n: int, random_state=None):
        n = check_positive_int(n, name="n")
        z = check_random_state(random_state).standard_normal((n, self.dim + 1))
        return z / np.linalg.norm(z, axis=1, keepdims=True)

    def initial_mean(self, Y):
        m = Y.mean(axis=0)
        norm = np.linalg.norm(m)
        return m / norm if norm > 1e-12 else Y[0].copy()

    def check_mean_domain(self, Y) -> None:
        """Raise unless the points lie in an open hemisphere (then the Fréchet mean is unique
        for data within it, and the Karcher flow started inside converges to it)."""
        c = Y.mean(axis=0)
        if np.linalg.norm(c) > 0 and np.all(Y @ c > 0):
            return
        from scipy.optimize import linprog

        # maximise t subject to <c, y_i> >= t, |c_j| <= 1: t > 0 iff an open hemisphere exists
        d = Y.shape[1]
        res = linprog(
            c=np.r_[np.zeros(d), -1.0],
            A_ub=np.hstack([-Y, np.ones((len(Y), 1))]),
            b_ub=np.zeros(len(Y)),
            bounds=[(-1, 1)] * d + [(None, 1)],
            method="highs",
        )
        if not (res.status == 0 and -res.fun > 1e-10):
            raise ValueError(
                "`Y` does not lie in an open hemisphere of the sphere, so its Fréchet mean is "
                "not unique; remove antipodal points, or (in mmdd and its tests) pass "
                "`base_point=`, a point whose hemisphere holds the data"
            )


class Hyperbolic(_Hypersurface):
    """Hyperbolic space H^m in the hyperboloid model of R^(m+1).

    Points satisfy ``-y0^2 + y1^2 + ... + ym^2 = -1`` with ``y0 > 0``. With the Minkowski form
    ``<x, y>_L = -x0 y0 + sum_j xj yj``: ``Log_p(y) = theta (y + <p, y>_L p) / sinh(theta)``,
    ``theta = arccosh(-<p, y>_L)``; the tangent inner product is ``<., .>_L``.

    Parameters
    ----------
    m : int
        Intrinsic dimension.

    References
    ----------
    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026*.
    """

    name = "Hyperbolic"

    @property
    def origin(self):
        """The point ``(1, 0, ..., 0)``."""
        return np.eye(self.dim + 1)[0]

    @staticmethod
    def _minkowski(x, y):
        return np.sum(x[..., 1:] * y[..., 1:], axis=-1) - x[..., 0] * y[..., 0]

    def _exp(self, base, v):
        p = np.asarray(base, float)
        v, single = _batched(v, 1)
        norm = np.sqrt(np.maximum(self._minkowski(v, v), 0.0))[:, None]
        safe = np.where(norm > 0, norm, 1.0)
        ratio = np.where(norm > 0, np.sinh(norm) / safe, 1.0)
        out = np.cosh(norm) * p + ratio * v
        # restore y0 from the spatial part: keeps the point on the hyperboloid to rounding
        out[:, 0] = np.sqrt(1.0 + np.sum(out[:, 1:] ** 2, axis=-1))
        return _unbatch(out, single)

    def _log(self, base, y):
        p = np.asarray(base, float)
        y, single = _batched(y, 1)
        u = y + self._minkowski(p, y)[:, None] * p
        sinh = np.sqrt(np.maximum(self._minkowski(u, u), 0.0))
        theta = np.arcsinh(sinh)
        scale = np.divide(theta, sinh, out=np.ones_like(theta), where=sinh > 0)
        return _unbatch(scale[:, None] * u, single)

    def _dist(self, a, b):
        a, b = np.asarray(a, float), np.asarray(b, float)
        return np.arccosh(np.maximum(-self._minkowski(a, b), 1.0))

    def _inner(self, base, u, v):
        return self._minkowski(np.asarray(u, float), np.asarray(v, float))

    def _to_coords(self, base, V):
        # the Lorentz boost taking `base` to the origin maps T_base to {0} x R^m isometrically
        p = np.asarray(base, float)
        ps = p[1:]
        V = np.asarray(V, float).reshape(-1, self.dim + 1)
        return np.ascontiguousarray(
            V[:, 1:] - np.outer(V[:, 0], ps) + np.outer(V[:, 1:] @ ps, ps / (1.0 + p[0]))
        )

    def _from_coords(self, base, C):
        p = np.asarray(base, float)
        ps = p[1:]
        C = np.asarray(C, float).reshape(-1, self.dim)
        dot = C @ ps
        return np.hstack([dot[:, None], C + np.outer(dot, ps / (1.0 + p[0]))])

    def _point_errors(self, y):
        # relative: far from the origin both terms of <y, y>_L grow like y0^2
        error = np.abs(self._minkowski(y, y) + 1.0) / np.maximum(1.0, y[:, 0] ** 2)
        return np.where(y[:, 0] > 0, error, np.inf)

    def _describe_point(self, p, name, atol):
        if p[0] <= 0:
            return f"{name}[0] = {p[0]:.6g}, not positive (the model is the sheet x0 > 0)"
        return f"<{name}, {name}>_L = {self._minkowski(p, p):.6g}, not -1"

    def _tangent_errors(self, base, v):
        # <p, v>_L = 0, relative to the Euclidean sizes of both once their product exceeds 1
        scale = np.maximum(1.0, np.linalg.norm(v, axis=-1) * np.linalg.norm(base))
        return np.abs(self._minkowski(v, base)) / scale

    def _describe_tangent(self, base, v, name):
        return f"<base_point, {name}>_L = {self._minkowski(v, base):.6g}, not 0"

    @renamed_keywords(rng="random_state")
    def random_point(self, n: int, random_state=None):
        n = check_positive_int(n, name="n")
        c = check_random_state(random_state).standard_normal((n, self.dim))
        return self._exp(self.origin, self._from_coords(self.origin, c))

    def initial_mean(self, Y):
        m = Y.mean(axis=0)
        # the mean of points of the upper sheet is time-like; rescale it onto the sheet
        return m / np.sqrt(-self._minkowski(m, m))


__all__ = ["Euclidean", "Hyperbolic", "Sphere"]
