"""Riemannian manifolds with closed-form exponential and logarithm maps.

Every manifold works on batches: a point set ``Y`` is an ``(n, *point_shape)`` array, a base point
a single point, and ``log(base, Y)`` returns the ``(n, *point_shape)`` tangent vectors (ambient
representation). ``to_tangent_coords(base, V)`` expresses tangent vectors in an orthonormal basis
of the tangent space, an ``(n, dim)`` array whose dot products are the Riemannian inner products;
this is all the MMDD statistic needs.

References
----------
Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
manifold-valued data. *ICML 2026* (the Manifold Martingale Difference Divergence, MMDD).

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
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive_int,
    check_random_state,
    describe,
)

__all__ = [
    "SO3",
    "SPD",
    "Euclidean",
    "GeomstatsManifold",
    "Hyperbolic",
    "Manifold",
    "Sphere",
    "from_geomstats",
]

_SQRT2 = np.sqrt(2.0)


#: Tolerance of the checks of points and tangent vectors, relative to the scale of what is
#: checked (the unit radius, a matrix's largest entry, the squared time coordinate): rounding
#: passes, data off the manifold does not.
TOL = 1e-6


class Manifold:
    """A Riemannian manifold: the interface :func:`~statcore.manifold.mmdd` and friends use.

    Every map takes a single base point and broadcasts over a leading batch axis of its other
    arguments. The public maps check their arguments (points on the manifold, tangent vectors
    tangent at the base point, within :data:`TOL` relative to their scale) and then call the
    private map of the same name; ``check=False`` skips the checks, for inner loops over data
    already checked.

    Subclasses define ``dim`` (intrinsic dimension), ``point_shape``, the private maps ``_exp``,
    ``_log``, ``_dist``, ``_to_coords``, ``_from_coords`` (and ``_inner``, ``_log_coords`` where a
    closed form beats the default), and the scale-aware defects ``_point_errors`` and
    ``_tangent_errors`` with their descriptions.
    """

    name: str = "manifold"
    dim: int
    point_shape: tuple[int, ...]

    # ---- the public maps: checks, then the closed forms of the subclass -------------------

    def exp(self, base, v, *, check: bool = True):
        """Riemannian exponential ``Exp_base(v)`` of one tangent vector or an (n, ...) batch.

        Raises ``ValueError`` (unless ``check=False``) when ``base`` is off the manifold or ``v``
        is not tangent at ``base``.
        """
        if check:
            base = self._checked_points(base, "base", batch_dims=0)
            v = self._checked_tangent(base, v, "v", "base")
        return self._exp(base, v)

    def log(self, base, y, *, check: bool = True):
        """Riemannian logarithm ``Log_base(y)`` (tangent vectors at ``base``) of one point or an
        (n, ...) batch; ``check=False`` skips the checks that both lie on the manifold."""
        if check:
            base = self._checked_points(base, "base", batch_dims=0)
            y = self._checked_points(y, "y", batch_dims=(0, 1))
        return self._log(base, y)

    def dist(self, a, b, *, check: bool = True):
        """Geodesic distance, broadcast over the leading batch axes of ``a`` and ``b``;
        ``check=False`` skips the checks that both lie on the manifold."""
        if check:
            a = self._checked_points(a, "a", batch_dims=None)
            b = self._checked_points(b, "b", batch_dims=None)
            self._check_batches(a, b, "a", "b")
        return self._dist(a, b)

    def inner(self, base, u, v, *, check: bool = True):
        """Riemannian inner product of tangent vectors ``u`` and ``v`` at ``base``."""
        if check:
            base = self._checked_points(base, "base", batch_dims=0)
            u = self._checked_tangent(base, u, "u", "base")
            v = self._checked_tangent(base, v, "v", "base")
            self._check_batches(u, v, "u", "v")
        return self._inner(base, u, v)

    def to_tangent_coords(self, base, V, *, check: bool = True):
        """Coordinates of tangent vectors ``V`` at ``base`` in an orthonormal basis (n, dim)."""
        if check:
            base = self._checked_points(base, "base", batch_dims=0)
            V = self._checked_tangent(base, V, "V", "base")
        return self._to_coords(base, V)

    def from_tangent_coords(self, base, C, *, check: bool = True):
        """Inverse of :meth:`to_tangent_coords`: tangent vectors from orthonormal coordinates."""
        if check:
            base = self._checked_points(base, "base", batch_dims=0)
            C = as_float_array(C, name="C", ndim=(1, 2))
            if C.shape[-1] != self.dim:
                raise ValueError(
                    f"`C` must hold {self.dim} coordinates per vector (the dimension of "
                    f"{self!r}), as a ({self.dim},) or (n, {self.dim}) array; got shape {C.shape}"
                )
        return self._from_coords(base, C)

    def log_coords(self, base, Y, *, check: bool = True):
        """``to_tangent_coords(base, log(base, Y))``, computed directly where that is cheaper."""
        if check:
            base = self._checked_points(base, "base", batch_dims=0)
            Y = self._checked_points(Y, "Y", batch_dims=(0, 1))
        return self._log_coords(base, Y)

    def belongs(self, y, atol: float = 1e-8):
        """Whether each point lies on the manifold within ``atol`` (bool array over the batch),
        ``atol`` relative to the scale of the point as in every check."""
        y, single = _batched(y, len(self.point_shape))
        if y.shape[1:] != self.point_shape:
            return _unbatch(np.zeros(len(y), dtype=bool), single)
        return _unbatch(self._point_errors(y) <= atol, single)

    @renamed_keywords(rng="random_state")
    def random_point(self, n: int, random_state=None):
        """``n`` random points, an ``(n, *point_shape)`` array.

        ``random_state`` (None, int, SeedSequence or Generator) seeds the draws; its old
        spelling ``rng=`` still works for one release, with a ``FutureWarning``.
        """
        raise NotImplementedError

    def initial_mean(self, Y):
        """Starting point of the Fréchet mean iteration: the extrinsic mean put on the manifold."""
        return Y[0].copy()

    def check_mean_domain(self, Y) -> None:
        """Raise when the Fréchet mean of ``Y`` cannot be unique (e.g. no open hemisphere)."""

    # ---- what a subclass provides ---------------------------------------------------------

    def _exp(self, base, v):
        raise NotImplementedError

    def _log(self, base, y):
        raise NotImplementedError

    def _dist(self, a, b):
        raise NotImplementedError

    def _to_coords(self, base, V):
        raise NotImplementedError

    def _from_coords(self, base, C):
        raise NotImplementedError

    def _inner(self, base, u, v):
        return np.sum(self._to_coords(base, u) * self._to_coords(base, v), axis=-1)

    def _log_coords(self, base, Y):
        return self._to_coords(base, self._log(base, Y))

    def _point_errors(self, y):
        """How far each point of the finite batch ``y`` (k, *point_shape) is off the manifold,
        relative to its scale; ``inf`` where a sign condition fails."""
        raise NotImplementedError

    def _describe_point(self, p, name: str, atol: float) -> str:
        """Why the point ``p`` is off the manifold, in the words of its defining equation."""
        return "not on the manifold"

    def _tangent_errors(self, base, v):
        """How far each vector of the finite batch ``v`` is from the tangent space at ``base``,
        relative to its scale (zero where every vector is tangent)."""
        return np.zeros(len(v))

    def _describe_tangent(self, base, v, name: str) -> str:
        return "not in the tangent space"

    # ---- the checks -----------------------------------------------------------------------

    def _checked_points(self, x, name: str, *, batch_dims, atol: float = TOL):
        """``x`` as a float64 copy of one point (``batch_dims`` 0) or a batch of them (the
        numbers of leading axes in ``batch_dims``; None: any), each on the manifold."""
        arr = self._shaped(x, name, batch_dims)
        k = len(self.point_shape)
        flat = arr.reshape((-1,) + self.point_shape)
        bad = np.flatnonzero(~(self._point_errors(flat) <= atol))
        if bad.size:
            if arr.ndim == k:
                raise ValueError(
                    f"`{name}` is not on {self!r}: {self._describe_point(flat[0], name, atol)} "
                    f"(tolerance {atol:g})"
                )
            index = np.unravel_index(bad[0], arr.shape[: arr.ndim - k])
            row = f"{name}[{', '.join(str(int(i)) for i in index)}]"
            raise ValueError(
                f"`{name}` has {bad.size} point(s) off {self!r}, first at {row}: "
                f"{self._describe_point(flat[bad[0]], row, atol)} (tolerance {atol:g}); project "
                "them onto the manifold first"
            )
        return arr

    def _checked_tangent(self, base, v, name: str, base_name: str, *, atol: float = TOL):
        """``v`` as a float64 copy of one vector or an (n, ...) batch, each tangent at ``base``."""
        arr = self._shaped(v, name, (0, 1))
        flat = arr.reshape((-1,) + self.point_shape)
        bad = np.flatnonzero(~(self._tangent_errors(base, flat) <= atol))
        if bad.size:
            at = f"tangent to {self!r} at `{base_name}`"
            if arr.ndim == len(self.point_shape):
                raise ValueError(
                    f"`{name}` is not {at}: {self._describe_tangent(base, flat[0], name)} "
                    f"(tolerance {atol:g})"
                )
            row = f"{name}[{bad[0]}]"
            raise ValueError(
                f"`{name}` has {bad.size} vector(s) not {at}, first at {row}: "
                f"{self._describe_tangent(base, flat[bad[0]], row)} (tolerance {atol:g})"
            )
        return arr

    def _check_batches(self, a, b, name_a: str, name_b: str) -> None:
        """Raise unless the batch axes of ``a`` and ``b`` broadcast against each other."""
        k = len(self.point_shape)
        batch_a, batch_b = a.shape[: a.ndim - k], b.shape[: b.ndim - k]
        try:
            np.broadcast_shapes(batch_a, batch_b)
        except ValueError:
            raise ValueError(
                f"`{name_a}` and `{name_b}` must hold the same number of points, or one of them "
                f"a single one; got batches of shape {batch_a} and {batch_b}"
            ) from None

    def _shaped(self, x, name: str, batch_dims) -> np.ndarray:
        """``x`` as a finite float64 copy of shape ``(*batch, *point_shape)``."""
        arr = as_float_array(x, name=name)
        k = len(self.point_shape)
        allowed = (batch_dims,) if isinstance(batch_dims, int) else batch_dims
        shape_ok = arr.ndim >= k and arr.shape[arr.ndim - k :] == self.point_shape
        if not shape_ok or (allowed is not None and arr.ndim - k not in allowed):
            shape = ", ".join(map(str, self.point_shape))
            want = {
                (0,): f"one point of shape {self.point_shape}",
                (0, 1): f"one point of shape {self.point_shape} or an array (n, {shape}) of them",
            }.get(allowed, f"an array (..., {shape}) of points")
            raise ValueError(f"`{name}` must be {want} on {self!r}; got shape {arr.shape}")
        return arr

    def check_points(self, Y, *, name: str = "Y", atol: float = TOL, min_rows: int = 0):
        """``Y`` as a float64 ``(n, *point_shape)`` copy, each row on the manifold within ``atol``
        (relative to its scale)."""
        arr = as_float_array(Y, name=name, ndim=1 + len(self.point_shape), min_rows=min_rows)
        if arr.shape[1:] != self.point_shape:
            raise ValueError(
                f"`{name}` must hold points of shape {self.point_shape} on {self!r}, i.e. an "
                f"array of shape (n, {', '.join(map(str, self.point_shape))}); got shape "
                f"{arr.shape}"
            )
        return self._checked_points(arr, name, batch_dims=1, atol=atol)

    def check_point(self, p, *, name: str = "base_point", atol: float = TOL):
        """A single point, checked like :meth:`check_points`."""
        return self._checked_points(p, name, batch_dims=0, atol=atol)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dim})"


def _batched(x, ndim: int):
    """``x`` with a leading batch axis, and whether it was added."""
    x = np.asarray(x, dtype=float)
    if x.ndim == ndim:
        return x[None], True
    return x, False


def _unbatch(x, single: bool):
    return x[0] if single else x


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


class Sphere(Manifold):
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

    def __init__(self, m: int):
        self.dim = check_positive_int(m, name="m")
        self.point_shape = (self.dim + 1,)

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
        return f"<base, {name}> = {v @ base:.6g}, not 0"

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


class Hyperbolic(Manifold):
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

    def __init__(self, m: int):
        self.dim = check_positive_int(m, name="m")
        self.point_shape = (self.dim + 1,)

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
        return f"<base, {name}>_L = {self._minkowski(v, base):.6g}, not 0"

    @renamed_keywords(rng="random_state")
    def random_point(self, n: int, random_state=None):
        n = check_positive_int(n, name="n")
        c = check_random_state(random_state).standard_normal((n, self.dim))
        return self._exp(self.origin, self._from_coords(self.origin, c))

    def initial_mean(self, Y):
        m = Y.mean(axis=0)
        # the mean of points of the upper sheet is time-like; rescale it onto the sheet
        return m / np.sqrt(-self._minkowski(m, m))


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
        return (
            f"A = base'{name} is not skew-symmetric (max |A + A'| = {np.max(np.abs(A + A.T)):.3g})"
        )

    @renamed_keywords(rng="random_state")
    def random_point(self, n: int, random_state=None):
        n = check_positive_int(n, name="n")
        return Rotation.random(n, random_state=check_random_state(random_state)).as_matrix()

    def initial_mean(self, Y):
        # projection of the arithmetic mean onto SO(3) (the chordal L2 mean, Moakher 2002)
        U, _, Vt = np.linalg.svd(Y.mean(axis=0))
        D = np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))])
        return U @ D @ Vt


class GeomstatsManifold(Manifold):
    """A geomstats manifold seen through the :class:`Manifold` interface (see
    :func:`from_geomstats`)."""

    name = "geomstats"

    def __init__(self, space):
        for attr in ("metric", "belongs", "to_tangent", "shape", "dim"):
            if not hasattr(space, attr):
                raise TypeError(
                    "`space` must be a geomstats manifold with a metric (e.g. "
                    f"`Hypersphere(dim=2)`); got {describe(space)}, which lacks `{attr}`"
                )
        self.space = space
        self.dim = int(space.dim)
        self.point_shape = tuple(int(s) for s in space.shape)

    def __repr__(self) -> str:
        return f"from_geomstats({type(self.space).__name__}(dim={self.dim}))"

    def _exp(self, base, v):
        return np.asarray(self.space.metric.exp(np.asarray(v, float), np.asarray(base, float)))

    def _log(self, base, y):
        return np.asarray(self.space.metric.log(np.asarray(y, float), np.asarray(base, float)))

    def _dist(self, a, b):
        return np.asarray(self.space.metric.dist(np.asarray(a, float), np.asarray(b, float)))

    def _inner(self, base, u, v):
        return np.asarray(
            self.space.metric.inner_product(
                np.asarray(u, float), np.asarray(v, float), np.asarray(base, float)
            )
        )

    def _basis(self, base):
        """An orthonormal basis of the tangent space at ``base``: ambient unit vectors projected
        onto it, orthonormalised (Gram-Schmidt in the manifold's inner product)."""
        size = int(np.prod(self.point_shape))
        candidates = np.eye(size).reshape((size,) + self.point_shape)
        if len(self.point_shape) == 2:
            # matrix spaces: symmetric and skew units span every tangent space of interest
            sym = candidates + np.swapaxes(candidates, -1, -2)
            candidates = np.concatenate([sym, candidates - np.swapaxes(candidates, -1, -2)])
        tangent = np.asarray(self.space.to_tangent(candidates, np.asarray(base, float)))
        basis = []
        for t in tangent:
            for b in basis:
                t = t - float(self._inner(base, t, b)) * b
            norm2 = float(self._inner(base, t, t))
            if norm2 > 1e-10:
                basis.append(t / np.sqrt(norm2))
            if len(basis) == self.dim:
                break
        return np.stack(basis)

    def _to_coords(self, base, V):
        V = np.asarray(V, float).reshape((-1,) + self.point_shape)
        basis = self._basis(base)
        return np.ascontiguousarray(
            np.stack([self._inner(base, V, np.broadcast_to(b, V.shape)) for b in basis], axis=-1)
        )

    def _from_coords(self, base, C):
        C = np.asarray(C, float).reshape(-1, self.dim)
        return np.tensordot(C, self._basis(base), axes=1)

    def belongs(self, y, atol: float = 1e-8):
        return np.asarray(self.space.belongs(np.asarray(y, float), atol=atol))

    # geomstats answers membership and tangency with booleans at a tolerance, no closer measure
    def _point_errors(self, y):
        return np.where(self.belongs(y, atol=TOL), 0.0, np.inf)

    def _describe_point(self, p, name, atol):
        return f"geomstats' `belongs` is False for `{name}`"

    def _tangent_errors(self, base, v):
        return np.where(np.asarray(self.space.is_tangent(v, base, atol=TOL)), 0.0, np.inf)

    def _describe_tangent(self, base, v, name):
        return f"geomstats' `is_tangent` is False for `{name}`"

    @renamed_keywords(rng="random_state")
    def random_point(self, n: int, random_state=None):
        n = check_positive_int(n, name="n")
        seed = int(check_random_state(random_state).integers(2**32))
        # geomstats draws from numpy's global generator: seed it from ours, then restore it
        state = np.random.get_state()  # noqa: NPY002 - geomstats uses the legacy global RNG
        try:
            np.random.seed(seed)  # noqa: NPY002
            return np.asarray(self.space.random_point(n)).reshape((n,) + self.point_shape)
        finally:
            np.random.set_state(state)  # noqa: NPY002

    def initial_mean(self, Y):
        proj = getattr(self.space, "projection", None)
        return np.asarray(proj(Y.mean(axis=0))) if proj is not None else Y[0].copy()


def from_geomstats(space) -> GeomstatsManifold:
    """Adapt a geomstats manifold (``Hypersphere``, ``SPDMatrices``, ``Hyperboloid``, ...).

    Exp, log, distance and inner product are geomstats' own; orthonormal tangent coordinates
    come from a basis built by projecting ambient unit vectors onto the tangent space and
    orthonormalising them in the metric. Slower than the closed-form classes; meant for
    manifolds without one.

    Parameters
    ----------
    space : geomstats manifold
        Equipped with its metric (geomstats 2.8: ``space.metric``).

    Returns
    -------
    GeomstatsManifold

    Notes
    -----
    geomstats is imported through :func:`statcore.compat.import_geomstats`, which restores the
    ``numpy.trapz`` alias geomstats 2.8 needs under numpy 2.4.

    References
    ----------
    Miolane, N. et al. (2020). Geomstats: a Python package for Riemannian geometry in machine
    learning. *JMLR* 21(223), 1-9.

    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026*.
    """
    from statcore.compat import import_geomstats

    import_geomstats()
    return GeomstatsManifold(space)
