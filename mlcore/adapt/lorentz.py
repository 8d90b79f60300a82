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

from mlcore._checks import check_tensor

__all__ = [
    "check_curvature",
    "check_points",
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


def check_points(x, curvature, *, name: str = "x", rtol: float | None = None) -> torch.Tensor:
    """Refuse what is not a batch of points of ``L^n_K``: a finite floating tensor (..., n+1),
    ``n >= 1``, on the upper sheet (``x_0 > 0``) with ``<x, x>_L = -1/K`` up to rounding.

    The tolerance is ``√eps`` of the dtype (1.5e-8 for float64, 3.5e-4 for float32) relative to
    ``1/K + x_0² + ‖x_s‖²``: computing ``<x, x>_L`` rounds each square to a relative ``eps``, so
    a point built by :func:`expmap0`, :func:`expmap` or :func:`project` misses the constraint by
    a few ``eps`` of that sum, far inside the tolerance, while a point off the manifold (an
    image feature passed as it is, a point of another curvature) misses it by order 1. ``rtol``
    replaces ``√eps`` (for points computed in a lower precision than they are stored in). It is
    returned unchanged."""
    check_tensor(x, name=name, kind="floating", finite=True)
    if x.ndim == 0 or x.shape[-1] < 2:
        raise ValueError(
            f"`{name}` must hold points (..., n+1) with a time coordinate and n >= 1 spatial "
            f"ones; got shape {tuple(x.shape)}"
        )
    k = check_curvature(curvature)
    if x.numel() == 0:
        return x
    data = x.detach()
    if bool((data[..., 0] <= 0).any()):
        raise ValueError(
            f"`{name}` must lie on the upper sheet of the hyperboloid (time coordinate x_0 > 0); "
            f"got {int((data[..., 0] <= 0).sum())} points with x_0 <= 0"
        )
    sq = (data * data).sum(-1)
    miss = (inner(data, data) + 1.0 / k).abs()
    rtol = torch.finfo(data.dtype).eps ** 0.5 if rtol is None else rtol
    tol = rtol * (1.0 / k + sq)
    off = miss > tol
    if bool(off.any()):
        raise ValueError(
            f"`{name}` must lie on the hyperboloid <x, x>_L = -1/curvature = {-1.0 / k:.6g}; "
            f"{int(off.sum())} of {off.numel()} points miss it by up to {float(miss.max()):.3g} "
            "(map features onto it with expmap0, or put drifted points back with project)"
        )
    return x


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
    check_points(x, curvature)
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
    check_points(x, curvature)
    sk = _sqrt_k(curvature, x)
    space = x[..., 1:]
    # asinh of the spatial norm is arccosh of the time coordinate, without its cancellation
    # near the origin.
    r = torch.asinh(sk * space.norm(dim=-1, keepdim=True))
    return space / _sinhc(r)


def dist0(x: torch.Tensor, curvature) -> torch.Tensor:
    """Geodesic distance from the origin (the point's hyperbolic radius)."""
    check_points(x, curvature)
    sk = _sqrt_k(curvature, x)
    return torch.asinh(sk * x[..., 1:].norm(dim=-1)) / sk


def dist(x: torch.Tensor, y: torch.Tensor, curvature) -> torch.Tensor:
    """Geodesic distance ``arccosh(-K <x, y>_L)/√K`` over the last axis (broadcasting).

    On the manifold ``-K<x, y>_L - 1 = (K/2) <x - y, x - y>_L``, which is computed instead: it is
    exactly 0 for ``x = y`` (so ``dist(x, x) = 0``, where ``-K<x, x>_L`` rounds to ``1 ± eps``
    and gave ``√(2 eps)/√K``) and has no cancellation for nearby points. It is clamped at 0 (the
    arccosh argument at 1) against rounding."""
    check_points(x, curvature, name="x")
    check_points(y, curvature, name="y")
    sk = _sqrt_k(curvature, x)
    k = sk * sk
    diff = x - y
    a = (0.5 * k * inner(diff, diff)).clamp_min(0.0)
    # arccosh(1 + a) = log1p(a + √(a(a+2))); the floor under the root keeps its gradient finite
    # at a = 0, and `where` keeps its value there exactly 0.
    root = (a * (a + 2)).clamp_min(_SQ_EPS).sqrt()
    root = torch.where(a > 0, root, torch.zeros_like(root))
    return torch.log1p(a + root) / sk


def expmap(x: torch.Tensor, u: torch.Tensor, curvature) -> torch.Tensor:
    """Exponential map at ``x`` of a tangent vector ``u``:
    ``cosh(√K‖u‖_L) x + sinh(√K‖u‖_L) u/(√K‖u‖_L)``."""
    check_points(x, curvature)
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
    check_points(x, curvature, name="x")
    check_points(y, curvature, name="y")
    k = check_curvature(curvature)
    coef = k * inner(y, u, keepdim=True) / (1 - k * inner(x, y, keepdim=True))
    return u + coef * (x + y)


def geodesic(x: torch.Tensor, y: torch.Tensor, t: torch.Tensor, curvature) -> torch.Tensor:
    """The point ``exp_x(t log_x y)`` a fraction ``t`` of the way from ``x`` to ``y``."""
    return expmap(x, t * logmap(x, y, curvature), curvature)
