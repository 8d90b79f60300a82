"""The interface of a Riemannian manifold: batched exponential and logarithm maps, tangent
coordinates, and the checks of points and tangent vectors every manifold shares.

Every manifold works on batches: a point set ``Y`` is an ``(n, *point_shape)`` array, a base point
a single point, and ``log(base, Y)`` returns the ``(n, *point_shape)`` tangent vectors (ambient
representation). ``to_tangent_coords(base, V)`` expresses tangent vectors in an orthonormal basis
of the tangent space, an ``(n, dim)`` array whose dot products are the Riemannian inner products;
this is all the MMDD statistic needs.

References
----------
Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
manifold-valued data. *ICML 2026* (the Manifold Martingale Difference Divergence, MMDD).
"""

from __future__ import annotations

import numpy as np

from statcore.compat import renamed_keywords
from statcore.validation import as_float_array

#: Tolerance of the checks of points and tangent vectors, relative to the scale of what is
#: checked (the unit radius, a matrix's largest entry, the squared time coordinate): rounding
#: passes, data off the manifold does not.
TOL = 1e-6


class Manifold:
    """A Riemannian manifold: the interface :func:`~statcore.manifold.mmdd` and friends use.

    Every map takes a single base point and broadcasts over a leading batch axis of its other
    arguments. The public maps check their arguments (points on the manifold, tangent vectors
    tangent at the base point, within ``TOL`` relative to their scale) and then call the
    private map of the same name; ``check=False`` skips the checks, for inner loops over data
    already checked.

    Subclasses define ``dim`` (intrinsic dimension), ``point_shape``, the private maps ``_exp``,
    ``_log``, ``_dist``, ``_to_coords``, ``_from_coords`` (and ``_inner``, ``_log_coords`` where a
    closed form beats the default), and the scale-aware defects ``_point_errors`` and
    ``_tangent_errors`` with their descriptions.

    Vocabulary
    ----------
    One name per quantity across :mod:`statcore.manifold`: ``base_point`` is the point whose
    tangent space the maps and the MMDD statistic work in (``base=``, its old spelling in the
    maps, warns ``FutureWarning``); ``Y`` a batch of points on the manifold, ``X`` the
    Euclidean covariate; ``dim`` the intrinsic dimension; ``random_state`` the seed (None, an
    int, a SeedSequence or a Generator); ``n_resamples`` the bootstrap draws; ``mean`` the
    Fréchet mean.
    """

    name: str = "manifold"
    dim: int
    point_shape: tuple[int, ...]

    # ---- the public maps: checks, then the closed forms of the subclass -------------------

    @renamed_keywords(base="base_point")
    def exp(self, base_point, v, *, check: bool = True):
        """Riemannian exponential ``Exp_{base_point}(v)`` of one tangent vector or an (n, ...)
        batch.

        Raises ``ValueError`` (unless ``check=False``) when ``base_point`` is off the manifold or
        ``v`` is not tangent at ``base_point``.
        """
        if check:
            base_point = self._checked_points(base_point, "base_point", batch_dims=0)
            v = self._checked_tangent(base_point, v, "v", "base_point")
        return self._exp(base_point, v)

    @renamed_keywords(base="base_point")
    def log(self, base_point, y, *, check: bool = True):
        """Riemannian logarithm ``Log_{base_point}(y)`` (tangent vectors at ``base_point``) of one
        point or an (n, ...) batch; ``check=False`` skips the checks that both lie on the
        manifold."""
        if check:
            base_point = self._checked_points(base_point, "base_point", batch_dims=0)
            y = self._checked_points(y, "y", batch_dims=(0, 1))
        return self._log(base_point, y)

    def dist(self, a, b, *, check: bool = True):
        """Geodesic distance, broadcast over the leading batch axes of ``a`` and ``b``;
        ``check=False`` skips the checks that both lie on the manifold."""
        if check:
            a = self._checked_points(a, "a", batch_dims=None)
            b = self._checked_points(b, "b", batch_dims=None)
            self._check_batches(a, b, "a", "b")
        return self._dist(a, b)

    @renamed_keywords(base="base_point")
    def inner(self, base_point, u, v, *, check: bool = True):
        """Riemannian inner product of tangent vectors ``u`` and ``v`` at ``base_point``."""
        if check:
            base_point = self._checked_points(base_point, "base_point", batch_dims=0)
            u = self._checked_tangent(base_point, u, "u", "base_point")
            v = self._checked_tangent(base_point, v, "v", "base_point")
            self._check_batches(u, v, "u", "v")
        return self._inner(base_point, u, v)

    @renamed_keywords(base="base_point")
    def to_tangent_coords(self, base_point, V, *, check: bool = True):
        """Coordinates of tangent vectors ``V`` at ``base_point`` in an orthonormal basis
        (n, dim)."""
        if check:
            base_point = self._checked_points(base_point, "base_point", batch_dims=0)
            V = self._checked_tangent(base_point, V, "V", "base_point")
        return self._to_coords(base_point, V)

    @renamed_keywords(base="base_point")
    def from_tangent_coords(self, base_point, C, *, check: bool = True):
        """Inverse of :meth:`to_tangent_coords`: tangent vectors from orthonormal coordinates."""
        if check:
            base_point = self._checked_points(base_point, "base_point", batch_dims=0)
            C = as_float_array(C, name="C", ndim=(1, 2))
            if C.shape[-1] != self.dim:
                raise ValueError(
                    f"`C` must hold {self.dim} coordinates per vector (the dimension of "
                    f"{self!r}), as a ({self.dim},) or (n, {self.dim}) array; got shape {C.shape}"
                )
        return self._from_coords(base_point, C)

    @renamed_keywords(base="base_point")
    def log_coords(self, base_point, Y, *, check: bool = True):
        """``to_tangent_coords(base_point, log(base_point, Y))``, computed directly where that is
        cheaper."""
        if check:
            base_point = self._checked_points(base_point, "base_point", batch_dims=0)
            Y = self._checked_points(Y, "Y", batch_dims=(0, 1))
        return self._log_coords(base_point, Y)

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


__all__ = ["TOL", "Manifold"]
