"""Input handling shared by the MI estimators: paired samples to tensors, the copula transform,
noise padding and random slicing."""

from __future__ import annotations

import math

import torch

from mlcore._checks import check_tensor
from statcore.geometry.mutual_information import check_pair


def as_pair(x, y, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """``x`` and ``y`` as float32 tensors of shape (n, d) on one device (the inputs' device for
    tensors, else ``device`` or the CPU); checked for equal length, at least 4 rows and finite
    entries. The inputs are never modified (tensors are copied)."""
    if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
        for arr, name in ((x, "x"), (y, "y")):
            check_tensor(arr, name=name, ndim=(1, 2), kind="real", nonempty=True, finite=True)
        if x.device != y.device:
            raise ValueError(f"`x` and `y` must share a device; got {x.device} and {y.device}")
        xt = x.detach().reshape(len(x), -1).to(torch.float32).clone()
        yt = y.detach().reshape(len(y), -1).to(torch.float32).clone()
        if len(xt) != len(yt):
            raise ValueError(
                f"`x` and `y` must have the same number of samples; got {len(xt)} and {len(yt)}"
            )
        if len(xt) < 4:
            raise ValueError(f"`x` needs at least 4 samples; got {len(xt)}")
        if device is not None:
            xt, yt = xt.to(device), yt.to(device)
        return xt, yt
    xa, ya = check_pair(x, y)
    dev = torch.device("cpu") if device is None else torch.device(device)
    return (
        torch.as_tensor(xa, dtype=torch.float32, device=dev),
        torch.as_tensor(ya, dtype=torch.float32, device=dev),
    )


def rank_gaussianize(a: torch.Tensor) -> torch.Tensor:
    """Van der Waerden scores ``Phi^{-1}(rank / (n + 1))`` along the sample axis (-2).

    Ties get their average rank, so atoms stay atoms and discrete MI is kept. The paper's
    two-pass soft rank at strength 1e-3 (torchsort) equals hard ranks up to 1e-3 and is
    replaced by them here; it then rescales ranks into [0.1, 0.9] before ``Phi^{-1}``, a
    monotone difference that MI does not see.
    """
    cols = a.transpose(-1, -2).contiguous()  # (..., d, n)
    ordered = cols.sort(dim=-1).values
    lo = torch.searchsorted(ordered, cols, right=False)
    hi = torch.searchsorted(ordered, cols, right=True)
    n = cols.shape[-1]
    u = (lo + hi + 1).to(a.dtype) / (2.0 * (n + 1))
    return torch.special.ndtri(u).transpose(-1, -2)


def pad_and_permute(a: torch.Tensor, max_dim: int, generator) -> torch.Tensor:
    """Pad (..., n, d) to (..., n, max_dim) with independent N(0, 1) columns (MI unchanged)
    and shuffle the columns, so that no position marks the data."""
    d = a.shape[-1]
    if d < max_dim:
        noise = torch.randn(
            (*a.shape[:-1], max_dim - d), generator=generator, device="cpu", dtype=a.dtype
        ).to(a.device)
        a = torch.cat([a, noise], dim=-1)
    order = torch.randperm(max_dim, generator=generator, device="cpu").to(a.device)
    return a[..., order]


def random_projection(d: int, k: int, generator, device) -> torch.Tensor:
    """A (d, k) matrix with orthonormal columns, uniform on the Stiefel manifold."""
    g = torch.randn(d, k, generator=generator, device="cpu", dtype=torch.float64)
    q, r = torch.linalg.qr(g)
    q = q * torch.sign(torch.diagonal(r))  # Haar, not biased by QR's sign convention
    return q.to(device=device, dtype=torch.float32)


def log_mean_exp(a: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.logsumexp(a, dim=dim) - math.log(a.shape[dim])
