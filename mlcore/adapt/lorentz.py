"""The Lorentz (hyperboloid) model of hyperbolic space, in plain torch, any float dtype.

Convention: for a curvature parameter ``K > 0`` the manifold is

    L^n_K = {x ∈ R^{n+1} : <x, x>_L = -1/K, x_0 > 0},   <x, y>_L = -x_0 y_0 + Σ_i x_i y_i,

a space of constant sectional curvature ``-K`` (MERU's and geoopt's ``k`` is ``1/K``). Points carry
the time coordinate first; ``o = (1/√K, 0, ..., 0)`` is the origin. A tangent vector at ``x``
satisfies ``<x, u>_L = 0``; its norm is ``√<u, u>_L``. As ``K → 0`` the maps below tend to their
Euclidean counterparts on the spatial coordinates (``expmap0(v) → (·, v)``, ``dist → ‖x - y‖``).

Every function works batch-wise on the last axis and keeps the input's dtype: pass float64 for
the accuracy the checks of Li et al. (2026) ask (constraint, round trips, geodesic scaling to
1e-8-1e-6).

References
----------
Nickel & Kiela (2018). Learning continuous hierarchies in the Lorentz model of hyperbolic
geometry. *ICML 2018*.
Desai, Nickel, Rajpurohit, Johnson & Vedantam (2023). Hyperbolic image-text representations
(MERU). *ICML 2023*.
Li, Jiang, Ye, He, Li, Xiao, Cheng & Chen (2026). Path-decoupled hyperbolic flow matching for
few-shot adaptation. arXiv:2602.20479.
"""

from __future__ import annotations

import numbers

import torch

__all__ = [
    "check_curvature",
    "dist",
    "dist0",
    "expmap",
    "expmap0",
    "geodesic",
    "inner",
    "logmap",
    "logmap0",
    "origin",
    "project",
    "proj_tangent",
    "tangent_norm",
    "transport",
]

#: Floor under squared norms before a square root: keeps the gradient finite at a zero vector
#: (the flow's velocity starts at exactly 0) and changes no value above 1e-15.
_SQ_EPS = 1e-30


def check_curvature(curvature) -> float:
    """The curvature parameter ``K`` as a float, refusing ``K <= 0``.

    ``K <= 0`` is not hyperbolic: ``K = 0`` is flat space (use the Euclidean
    :class:`~mlcore.adapt.FlowMatchingAdapter`), ``K < 0`` a sphere.
    """
    if isinstance(curvature, bool) or not isinstance(curvature, numbers.Real):
        raise TypeError(f"`curvature` must be a positive real number; got {curvature!r}")
    value = float(curvature)
    if not value > 0 or value != value or value == float("inf"):
        raise ValueError(
            f"`curvature` must be a finite number > 0 (the space has sectional curvature "
            f"-curvature); got {curvature!r}. For the flat limit use FlowMatchingAdapter"
        )
    return value


def _sqrt_k(curvature, like: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(check_curvature(curvature), dtype=like.dtype, device=like.device).sqrt()


def inner(x: torch.Tensor, y: torch.Tensor, keepdim: bool = False) -> torch.Tensor:
    """Minkowski inner product ``<x, y>_L = -x_0 y_0 + Σ x_i y_i`` over the last axis."""
    prod = x * y
    out = prod[..., 1:].sum(-1, keepdim=keepdim) - prod[..., :1].sum(-1, keepdim=keepdim)
    return out


def tangent_norm(u: torch.Tensor, keepdim: bool = False) -> torch.Tensor:
    """``√<u, u>_L`` of a tangent vector (clamped at 0 against rounding)."""
    return inner(u, u, keepdim=keepdim).clamp_min(_SQ_EPS).sqrt()


def origin(dim: int, curvature, *, dtype=None, device=None) -> torch.Tensor:
    """The origin ``(1/√K, 0, ..., 0)`` of ``L^dim_K`` (a vector of length ``dim + 1``)."""
    o = torch.zeros(dim + 1, dtype=dtype, device=device)
    o[0] = check_curvature(curvature) ** -0.5
    return o


def project(x: torch.Tensor, curvature) -> torch.Tensor:
    """Put a point back on the hyperboloid by recomputing its time coordinate from the spatial
    ones, ``x_0 = √(1/K + ‖x_s‖²)`` (undoes rounding drift after many steps)."""
    k = check_curvature(curvature)
    space = x[..., 1:]
    time = (1.0 / k + (space * space).sum(-1, keepdim=True)).sqrt()
    return torch.cat([time, space], dim=-1)


def proj_tangent(x: torch.Tensor, u: torch.Tensor, curvature) -> torch.Tensor:
    """Orthogonal (Minkowski) projection of an ambient vector ``u`` onto ``T_x``:
    ``u + K <x, u>_L x``."""
    k = check_curvature(curvature)
    return u + k * inner(x, u, keepdim=True) * x


def _sinhc(r: torch.Tensor) -> torch.Tensor:
    """``sinh(r)/r`` with its limit 1 at 0."""
    safe = torch.where(r.abs() > 1e-6, r, torch.ones_like(r))
    # Below 1e-6 the Taylor term r²/6 is < 2e-13, under the tolerances the checks ask.
    return torch.where(r.abs() > 1e-6, torch.sinh(safe) / safe, 1 + r * r / 6)


def expmap0(v: torch.Tensor, curvature) -> torch.Tensor:
    """Exponential map at the origin of spatial tangent coordinates ``v`` (..., n) to
    ``L^n_K`` (..., n+1): ``(cosh(√K‖v‖)/√K, sinh(√K‖v‖) v/(√K‖v‖))``."""
    sk = _sqrt_k(curvature, v)
    r = sk * v.norm(dim=-1, keepdim=True)
    return torch.cat([torch.cosh(r) / sk, _sinhc(r) * v], dim=-1)


def logmap0(x: torch.Tensor, curvature) -> torch.Tensor:
    """Inverse of :func:`expmap0`: the spatial tangent coordinates (..., n) at the origin."""
    sk = _sqrt_k(curvature, x)
    space = x[..., 1:]
    # asinh of the spatial norm is arccosh of the time coordinate, without its cancellation
    # near the origin.
    r = torch.asinh(sk * space.norm(dim=-1, keepdim=True))
    return space / _sinhc(r)


def dist0(x: torch.Tensor, curvature) -> torch.Tensor:
    """Geodesic distance from the origin (the point's hyperbolic radius)."""
    sk = _sqrt_k(curvature, x)
    return torch.asinh(sk * x[..., 1:].norm(dim=-1)) / sk


def dist(x: torch.Tensor, y: torch.Tensor, curvature) -> torch.Tensor:
    """Geodesic distance ``arccosh(-K <x, y>_L)/√K`` over the last axis (broadcasting)."""
    sk = _sqrt_k(curvature, x)
    k = sk * sk
    arg = (-k * inner(x, y)).clamp_min(1.0)
    # arccosh(1 + a) = log1p(a + √(a(a+2))) keeps accuracy for nearby points.
    a = arg - 1
    return torch.log1p(a + (a * (a + 2)).clamp_min(_SQ_EPS).sqrt()) / sk


def expmap(x: torch.Tensor, u: torch.Tensor, curvature) -> torch.Tensor:
    """Exponential map at ``x`` of a tangent vector ``u``:
    ``cosh(√K‖u‖_L) x + sinh(√K‖u‖_L) u/(√K‖u‖_L)``."""
    sk = _sqrt_k(curvature, x)
    r = sk * tangent_norm(u, keepdim=True)
    return torch.cosh(r) * x + _sinhc(r) * u


def logmap(x: torch.Tensor, y: torch.Tensor, curvature) -> torch.Tensor:
    """Logarithmic map at ``x`` of ``y``: the tangent vector at ``x`` of length ``d(x, y)``
    pointing along the geodesic to ``y``."""
    sk = _sqrt_k(curvature, x)
    k = sk * sk
    xy = inner(x, y, keepdim=True)
    direction = y + k * xy * x
    d = dist(x, y, curvature).unsqueeze(-1)
    # ‖y + K<x,y>x‖_L = sinh(√K d)/√K, so the scale is d/that = 1/sinhc(√K d).
    return direction / _sinhc(sk * d)


def transport(x: torch.Tensor, y: torch.Tensor, u: torch.Tensor, curvature) -> torch.Tensor:
    """Parallel transport of ``u ∈ T_x`` to ``T_y`` along the geodesic:
    ``u + K<y, u>_L/(1 - K<x, y>_L) (x + y)``."""
    k = check_curvature(curvature)
    coef = k * inner(y, u, keepdim=True) / (1 - k * inner(x, y, keepdim=True))
    return u + coef * (x + y)


def geodesic(x: torch.Tensor, y: torch.Tensor, t: torch.Tensor, curvature) -> torch.Tensor:
    """The point ``exp_x(t log_x y)`` a fraction ``t`` of the way from ``x`` to ``y``."""
    return expmap(x, t * logmap(x, y, curvature), curvature)
