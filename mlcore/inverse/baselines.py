"""Baselines for zero-shot inverse problems: total variation (any forward operator), bicubic
upsampling, and scikit-image's biharmonic inpainting and non-local means where installed."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from mlcore._checks import check_tensor
from mlcore._device import as_numpy
from mlcore.inverse.operators import Identity, PixelMask
from statcore.compat import import_optional
from statcore.validation import check_positive, check_positive_int, describe


def total_variation(x: torch.Tensor, *, eps: float = 1e-6) -> torch.Tensor:
    """Isotropic total variation of ``(..., height, width)``, ``sum sqrt(dx^2 + dy^2 + eps)``
    (forward differences, the last row and column replicated; ``eps`` > 0 smooths the kink at 0)."""
    check_tensor(x, name="x", kind="floating", nonempty=True, finite=True)
    if x.ndim < 2:
        raise ValueError(f"`x` must be (..., height, width); got shape {tuple(x.shape)}")
    return _total_variation(x, check_positive(eps, name="eps"))


def _total_variation(x: torch.Tensor, eps: float) -> torch.Tensor:
    dx = F.pad(x[..., :, 1:] - x[..., :, :-1], (0, 1, 0, 0))
    dy = F.pad(x[..., 1:, :] - x[..., :-1, :], (0, 0, 0, 1))
    return torch.sqrt(dx**2 + dy**2 + eps).sum()


def tv_reconstruct(
    y,
    forward_op: nn.Module | None = None,
    *,
    weight: float = 0.08,
    steps: int = 500,
    lr: float = 0.02,
    signal_shape=None,
    init=None,
) -> torch.Tensor:
    """Total-variation reconstruction, ``argmin_x ||A(x) - y||^2 / 2 + weight * TV(x)``, for any
    forward operator, by Adam on the smoothed TV (Rudin, Osher & Fatemi, 1992).

    Parameters
    ----------
    y : Tensor
        Measurements as for :meth:`~mlcore.inverse.LotteryPriorSolver.fit`; not modified.
    forward_op : nn.Module, optional
        Default :class:`~mlcore.inverse.Identity` (TV denoising).
    weight : float
        The TV weight, in the units of scikit-image's ``denoise_tv_chambolle`` (whose energy is
        ``||x - y||^2 / 2 + weight * TV(x)``), so its ``weight=0.08`` carries over.
    steps : int
        Adam steps (learning rate annealed to 0 on a cosine schedule).
    lr : float
        Adam's initial learning rate (in signal units).
    signal_shape : tuple, optional
        For an operator without ``signal_shape``.
    init : Tensor, optional
        Starting point; default ``y`` for signal-shaped measurements, else the operator's
        measurements' mean everywhere.

    Returns
    -------
    Tensor
        The reconstruction, in the signal's shape, on ``y``'s device.
    """
    check_tensor(y, name="y", ndim=(2, 3), kind="floating", nonempty=True, finite=True)
    op = Identity() if forward_op is None else forward_op
    weight = check_positive(weight, name="weight", strict=False)
    steps = check_positive_int(steps, name="steps")
    lr = check_positive(lr, name="lr")
    if signal_shape is None:
        if not hasattr(op, "signal_shape"):
            raise TypeError("`forward_op` has no `signal_shape` method; pass `signal_shape`")
        signal_shape = op.signal_shape(tuple(y.shape))
    shape = tuple(int(s) for s in signal_shape)
    if init is not None:
        check_tensor(init, name="init", kind="floating", finite=True)
        if init.numel() != math.prod(shape):
            raise ValueError(
                f"`init` must have the signal's shape {shape}; got {tuple(init.shape)}"
            )
        x0 = init.detach().reshape(shape)
    elif tuple(y.shape) == shape and not isinstance(op, PixelMask):
        x0 = y.detach()
    else:
        x0 = torch.full(shape, float(y.mean()), dtype=y.dtype, device=y.device)
    x = x0.clone().requires_grad_(True)
    opt = torch.optim.Adam([x], lr=lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    target = y.detach()
    for _ in range(steps):
        pred = op(x.unsqueeze(0))[0]
        loss = 0.5 * ((pred - target) ** 2).sum() + weight * _total_variation(x, 1e-6)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        schedule.step()
    return x.detach()


def bicubic_upsample(y, factor: int) -> torch.Tensor:
    """Bicubic interpolation of ``(height, width)`` or ``(channels, height, width)`` by ``factor``,
    clipped to [0, 1]: the classical super-resolution baseline."""
    check_tensor(y, name="y", ndim=(2, 3), kind="floating", nonempty=True, finite=True)
    factor = check_positive_int(factor, name="factor")
    batch = y.reshape(1, 1, *y.shape) if y.ndim == 2 else y.unsqueeze(0)
    up = F.interpolate(batch, scale_factor=factor, mode="bicubic", align_corners=False)
    return up.clamp(0, 1).reshape(*y.shape[:-2], y.shape[-2] * factor, y.shape[-1] * factor)


def inpaint_biharmonic(y, mask) -> torch.Tensor:
    """scikit-image's biharmonic inpainting (``skimage.restoration.inpaint_biharmonic``) of the
    pixels where ``mask`` (True = observed, as :class:`~mlcore.inverse.PixelMask`) is False.

    Needs scikit-image (``pip install statcore[images]``). ``y``: ``(height, width)``."""
    restoration = import_optional("skimage.restoration", "images")
    check_tensor(y, name="y", ndim=2, kind="floating", nonempty=True, finite=True)
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.shape != y.shape:
        raise TypeError(
            f"`mask` must be a bool tensor of y's shape {tuple(y.shape)}; got {describe(mask)}"
        )
    out = restoration.inpaint_biharmonic(as_numpy(y, name="y"), ~as_numpy(mask, name="mask"))
    return torch.as_tensor(out, dtype=y.dtype, device=y.device)


def nl_means(y, *, sigma: float, h_factor: float = 0.8) -> torch.Tensor:
    """scikit-image's non-local means (``skimage.restoration.denoise_nl_means``, fast mode, 7x7
    patches, 11x11 search) with ``h = h_factor * sigma``, as in scikit-image's gallery.

    Needs scikit-image (``pip install statcore[images]``). ``y``: ``(height, width)``."""
    restoration = import_optional("skimage.restoration", "images")
    check_tensor(y, name="y", ndim=2, kind="floating", nonempty=True, finite=True)
    sigma = check_positive(sigma, name="sigma")
    h_factor = check_positive(h_factor, name="h_factor")
    out = restoration.denoise_nl_means(
        as_numpy(y, name="y"),
        h=h_factor * sigma,
        sigma=sigma,
        fast_mode=True,
        patch_size=7,
        patch_distance=5,
    )
    return torch.as_tensor(out, dtype=y.dtype, device=y.device)
