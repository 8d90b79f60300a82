"""Lorentz-model geometry of mlcore.adapt.lorentz: the HFM notes' float64 checks."""

import importlib.util
import math

import pytest
import torch

from mlcore.adapt import lorentz as L

F64 = torch.float64


def _radial(n, dim, k, gen, spread=1.5):
    """Tangent vectors at the origin with √K·radius about ``spread`` (at most ~3 here).

    The Lorentz model loses about e^{2√K r} in relative precision at hyperbolic radius r (the
    coordinates grow like cosh and the maps subtract them), so the 1e-8 checks are run where
    lifted features live, √K r ≲ 3, not at arbitrary radii.
    """
    return spread * torch.randn(n, dim, generator=gen, dtype=F64) / math.sqrt(dim * k)


def _points(n, dim, k, seed, spread=1.5):
    return L.expmap0(_radial(n, dim, k, torch.Generator().manual_seed(seed), spread), k)


@pytest.mark.parametrize("k", [0.05, 1.0, 3.0])
def test_minkowski_constraint_and_round_trips(k):
    gen = torch.Generator().manual_seed(0)
    v = _radial(64, 8, k, gen)
    x = L.expmap0(v, k)
    # The notes' bound, 1e-8 relative to 1/K; coordinates here are at most ~e^3, so float64's
    # rounding of the summed products is ~1e-13.
    assert (L.inner(x, x) + 1 / k).abs().max() * k < 1e-8
    assert (x[:, 0] > 0).all()
    assert torch.allclose(L.logmap0(x, k), v, atol=1e-8 / math.sqrt(k), rtol=0)
    y = _points(64, 8, k, seed=1)
    u = L.logmap(x, y, k)
    assert (L.expmap(x, u, k) - y).abs().max() / y.abs().max() < 1e-8
    assert (L.tangent_norm(u) - L.dist(x, y, k)).abs().max() * math.sqrt(k) < 1e-8
    # exp then log at a base point returns the tangent vector.
    w = L.proj_tangent(x, torch.randn(64, 9, generator=gen, dtype=F64) / math.sqrt(k), k)
    assert (L.logmap(x, L.expmap(x, w, k), k) - w).abs().max() / w.abs().max() < 1e-8


def test_tangent_projection_is_orthogonal_and_idempotent():
    k = 0.8
    x = _points(32, 6, k, seed=2)
    gen = torch.Generator().manual_seed(3)
    u = torch.randn(32, 7, generator=gen, dtype=F64)
    p = L.proj_tangent(x, u, k)
    # ⟨x, p⟩_L is a difference of products of size ~|x||u|; 1e-10 is ~1e5 float64 ulps.
    assert L.inner(x, p).abs().max() < 1e-10
    assert torch.allclose(L.proj_tangent(x, p, k), p, atol=1e-12, rtol=0)


@pytest.mark.parametrize("k", [0.3, 1.0, 2.5])
def test_geodesic_distance_scales_with_t(k):
    x, y = _points(50, 5, k, seed=4), _points(50, 5, k, seed=5)
    t = torch.rand(50, 1, generator=torch.Generator().manual_seed(6), dtype=F64)
    z = L.geodesic(x, y, t, k)
    assert (L.inner(z, z) + 1 / k).abs().max() * k < 1e-8
    # The notes' tolerance: d(z0, z_t) = t d(z0, z1) within 1e-6.
    assert (L.dist(x, z, k) - t[:, 0] * L.dist(x, y, k)).abs().max() < 1e-6
    assert (L.dist(z, y, k) - (1 - t[:, 0]) * L.dist(x, y, k)).abs().max() < 1e-6


def test_parallel_transport_is_the_geodesic_velocity_and_an_isometry():
    k = 1.3
    x, y = _points(40, 4, k, seed=7), _points(40, 4, k, seed=8)
    t = torch.rand(40, 1, generator=torch.Generator().manual_seed(9), dtype=F64) * 0.9
    u0 = L.logmap(x, y, k)
    z = L.geodesic(x, y, t, k)
    ut = L.transport(x, z, u0, k)
    assert L.inner(z, ut).abs().max() < 1e-9
    assert (L.tangent_norm(ut) - L.tangent_norm(u0)).abs().max() < 1e-9
    # Along a geodesic the transported initial velocity is the velocity at z_t, which points at
    # y with the remaining length: log_{z_t}(y) / (1 - t).
    assert (ut - L.logmap(z, y, k) / (1 - t)).abs().max() < 1e-8
    other = L.proj_tangent(x, torch.randn(40, 5, generator=torch.Generator().manual_seed(10),
                                          dtype=F64), k)  # fmt: skip
    moved = L.transport(x, z, other, k)
    assert (L.inner(moved, ut) - L.inner(other, u0)).abs().max() < 1e-8


def test_distance_is_a_metric_and_flat_in_the_small_curvature_limit():
    k = 1.0
    x, y, z = (_points(30, 3, k, seed=s) for s in (11, 12, 13))
    assert torch.allclose(L.dist(x, y, k), L.dist(y, x, k), atol=1e-10)
    assert (L.dist(x, z, k) <= L.dist(x, y, k) + L.dist(y, z, k) + 1e-10).all()
    assert L.dist(x, x, k).abs().max() < 1e-6
    assert torch.allclose(L.dist0(x, k), L.dist(L.origin(3, k, dtype=F64), x, k), atol=1e-10)
    # K → 0: expmap0 becomes the identity on spatial coordinates and distance the Euclidean
    # one; the error is O(K r²) = 1e-8 · r² for K = 1e-8.
    gen = torch.Generator().manual_seed(14)
    a, b = torch.randn(20, 4, generator=gen, dtype=F64), torch.randn(20, 4, generator=gen,
                                                                     dtype=F64)  # fmt: skip
    tiny = 1e-8
    za, zb = L.expmap0(a, tiny), L.expmap0(b, tiny)
    assert torch.allclose(za[:, 1:], a, atol=1e-6)
    assert torch.allclose(L.dist(za, zb, tiny), (a - b).norm(dim=1), rtol=1e-4, atol=1e-4)


def test_gradients_are_finite_at_a_zero_velocity():
    # The velocity net starts at exactly 0; exp_z(0) must have a usable gradient.
    k = 1.0
    x = _points(4, 3, k, seed=15)
    u = torch.zeros(4, 4, dtype=F64, requires_grad=True)
    L.dist(L.expmap(x, u, k), x[:1], k).sum().backward()
    assert torch.isfinite(u.grad).all()


@pytest.mark.parametrize("bad", [0, 0.0, -1.0, float("nan"), float("inf")])
def test_non_positive_curvature_is_refused(bad):
    with pytest.raises(ValueError, match="curvature"):
        L.expmap0(torch.zeros(2, 3), bad)


def test_curvature_type_is_checked():
    with pytest.raises(TypeError, match="curvature"):
        L.check_curvature("1")


@pytest.mark.skipif(importlib.util.find_spec("geoopt") is None, reason="geoopt not installed")
def test_matches_geoopt():
    import geoopt

    k = 0.5
    # geoopt's Lorentz(k) has <x, x>_L = -k, i.e. our K = 1/k.
    manifold = geoopt.Lorentz(k=torch.tensor(1 / k, dtype=F64))
    x, y = _points(10, 4, k, seed=16), _points(10, 4, k, seed=17)
    assert torch.allclose(manifold.dist(x, y), L.dist(x, y, k), atol=1e-8)
    assert torch.allclose(manifold.logmap(x, y), L.logmap(x, y, k), atol=1e-8)
    u = L.logmap(x, y, k)
    assert torch.allclose(manifold.expmap(x, u), L.expmap(x, u, k), atol=1e-8)
    assert torch.allclose(manifold.transp(x, y, u), L.transport(x, y, u, k), atol=1e-8)
