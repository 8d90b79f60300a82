"""Any geomstats manifold seen through statcore's :class:`~statcore.manifold.interface.Manifold`
interface.

References
----------
Miolane, N. et al. (2020). Geomstats: a Python package for Riemannian geometry in machine
learning. *Journal of Machine Learning Research* 21(223), 1-9.
"""

from __future__ import annotations

import numpy as np

from statcore.compat import renamed_keywords
from statcore.manifold.interface import TOL, Manifold
from statcore.validation import check_positive_int, check_random_state, describe


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


__all__ = ["GeomstatsManifold", "from_geomstats"]
