"""The building blocks of the Lottery Prior: frozen random convolutions with learned binary masks,
quantised multi-resolution latents and their entropy models.

Fidelity: reconstruction. The masked random layer follows LotteryCodec's code (eedavidwu/
LotteryCodec, ``models/model.py``: frozen random weights, learned scores, a binary mask with a
straight-through gradient, weights regenerated from a seed), and so does the auto-regressive
Laplace entropy model (its ``estimate_rate``: an MLP on causal neighbours, probabilities floored
at ``2**-16``), with a smaller context. The threshold mask with a density penalty, the bilinear
upsampling of the latents (LotteryCodec learns it, and feeds the latents through a learned
modulation network) and the factorised Laplace alternative are this library's reconstruction; the
Lottery Prior paper's own layers were not read.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from statcore.validation import check_option, check_positive_int, check_scalar

MASK_MODES = ("threshold", "topk")


class _StraightThrough(torch.autograd.Function):
    """The hard mask forward, the gradient of its soft relaxation backward."""

    @staticmethod
    def forward(ctx, hard, soft):
        return hard

    @staticmethod
    def backward(ctx, grad):
        return None, grad


def _topk_mask(scores: torch.Tensor, density: float) -> torch.Tensor:
    keep = max(1, round(density * scores.numel()))
    threshold = scores.flatten().topk(keep).values[-1]
    return (scores >= threshold).to(scores.dtype)


class MaskedRandomConv(nn.Module):
    """A convolution whose weights are frozen random draws; only a binary mask over them is learned.

    The mask is the "lottery ticket" of LotteryCodec: the output is ``conv(x, W0 * tau)``, with
    ``W0`` drawn once from ``generator`` (so a seed regenerates it) and ``tau`` a binary mask from
    learned scores ``s``.

    Parameters
    ----------
    in_channels, out_channels, kernel_size : int
        As in ``nn.Conv2d`` (odd ``kernel_size``; "same" reflect padding).
    mode : {"threshold", "topk"}
        ``"threshold"``: ``tau = [sigmoid(s) > 1/2]``, gradient through ``sigmoid(s)``, so the
        density is learned and :meth:`density_penalty` (the expected density) can shrink it.
        ``"topk"``: LotteryCodec's mask, the top ``density`` fraction of scores kept, gradient
        passed straight through to the scores.
    density : float
        The initial kept fraction (``"threshold"``) or the fixed one (``"topk"``).
    generator : torch.Generator, optional
        A CPU generator for the weights and the initial scores.
    dtype : torch.dtype, optional

    Notes
    -----
    Weights are He-normal (``std = sqrt(2 / fan_in)``), scaled by ``1 / sqrt(density)`` so that a
    masked layer keeps the activation scale of a dense one.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int = 1,
        *,
        mode: str = "threshold",
        density: float = 0.5,
        generator: torch.Generator | None = None,
        dtype: torch.dtype | None = None,
    ):
        super().__init__()
        self.in_channels = check_positive_int(in_channels, name="in_channels")
        self.out_channels = check_positive_int(out_channels, name="out_channels")
        self.kernel_size = check_positive_int(kernel_size, name="kernel_size")
        if self.kernel_size % 2 == 0:
            raise ValueError(f"`kernel_size` must be odd; got {kernel_size}")
        self.mode = check_option(mode, name="mode", options=MASK_MODES)
        self.density = check_scalar(density, name="density", low=0.0, high=1.0, low_inclusive=False)
        shape = (self.out_channels, self.in_channels, self.kernel_size, self.kernel_size)
        fan_in = self.in_channels * self.kernel_size**2
        std = math.sqrt(2.0 / (fan_in * self.density))
        weight = torch.randn(shape, generator=generator) * std
        noise = torch.rand(shape, generator=generator) - 0.5
        if self.mode == "threshold":
            # uniform scores on [2d - 2, 2d): a fraction d of them is positive, so the initial mask
            # keeps a fraction `density` of the weights
            scores = 2 * noise + (2 * self.density - 1)
        else:
            scores = noise
        factory = {"dtype": dtype}
        self.register_buffer("weight", weight.to(**factory))
        self.scores = nn.Parameter(scores.to(**factory))

    def mask(self) -> torch.Tensor:
        """The binary mask ``tau`` (carrying the relaxation's gradient)."""
        if self.mode == "topk":
            hard = _topk_mask(self.scores.detach(), self.density)
            return _StraightThrough.apply(hard, self.scores)
        soft = torch.sigmoid(self.scores)
        return _StraightThrough.apply((soft > 0.5).to(soft.dtype), soft)

    def density_penalty(self) -> torch.Tensor:
        """The expected fraction of kept weights, ``mean(sigmoid(s))`` (constant under topk)."""
        if self.mode == "topk":
            return self.scores.new_tensor(self.density)
        return torch.sigmoid(self.scores).mean()

    def n_kept(self) -> int:
        """Weights the current mask keeps (the layer's effective parameters)."""
        with torch.no_grad():
            return int(self.mask().sum())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight * self.mask()
        r = self.kernel_size // 2
        if r:
            x = F.pad(x, (r, r, r, r), mode="reflect")
        return F.conv2d(x, w)

    def extra_repr(self) -> str:
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"mode={self.mode!r}, density={self.density:g}"
        )


class RandomSynthesis(nn.Module):
    """The default synthesis network: masked random convolutions, GELU between them.

    ``1x1 -> 1x1 -> kxk -> kxk`` layers of width ``width``, ending in ``out_channels``; the last
    two are 3x3 so that neighbouring latents mix (LotteryCodec's ``ModConv`` has two 3x3 layers).

    Parameters
    ----------
    in_channels, out_channels : int
    width : int
        Hidden channels.
    generator : torch.Generator, optional
        Draws every layer's weights: one seed, one network.
    **mask_options
        ``mode`` and ``density`` of :class:`MaskedRandomConv`.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        *,
        width: int = 24,
        generator: torch.Generator | None = None,
        **mask_options,
    ):
        super().__init__()
        width = check_positive_int(width, name="width")
        sizes = [
            (in_channels, width, 1),
            (width, width, 1),
            (width, width, 3),
            (width, out_channels, 3),
        ]
        self.layers = nn.ModuleList(
            MaskedRandomConv(i, o, k, generator=generator, **mask_options) for i, o, k in sizes
        )

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            z = F.gelu(layer(z))
        return self.layers[-1](z)


def masked_layers(module: nn.Module) -> list[MaskedRandomConv]:
    """The :class:`MaskedRandomConv` layers inside ``module``."""
    return [m for m in module.modules() if isinstance(m, MaskedRandomConv)]


def _laplace_cdf(x: torch.Tensor, loc: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    z = (x - loc) / scale
    return 0.5 - 0.5 * torch.sign(z) * torch.expm1(-z.abs())


class FactorizedEntropyModel(nn.Module):
    """A learned Laplace per latent level; the rate of integer latents in bits.

    ``P(q) = F(q + 1/2) - F(q - 1/2)`` with ``F`` the Laplace CDF of the level's learned location
    and scale, floored at ``2**-16`` (no value costs more than 16 bits, as in Cool-chic and
    LotteryCodec); the rate is ``-sum log2 P(q)``.

    Parameters
    ----------
    n_levels : int
        Latent levels, each with its own location and scale.
    """

    def __init__(self, n_levels: int, *, dtype: torch.dtype | None = None):
        super().__init__()
        self.n_levels = check_positive_int(n_levels, name="n_levels")
        self.loc = nn.Parameter(torch.zeros(self.n_levels, dtype=dtype))
        self.log_scale = nn.Parameter(torch.zeros(self.n_levels, dtype=dtype))

    def bits(self, latents: list[torch.Tensor]) -> torch.Tensor:
        """Total bits of the (quantised or noisy) ``latents``, one tensor per level."""
        if len(latents) != self.n_levels:
            raise ValueError(f"`latents` must hold {self.n_levels} levels; got {len(latents)}")
        total = latents[0].new_zeros(())
        for level, q in enumerate(latents):
            loc, scale = self.loc[level], self.log_scale[level].exp() + 1e-3
            p = _laplace_cdf(q + 0.5, loc, scale) - _laplace_cdf(q - 0.5, loc, scale)
            total = total - torch.log2(p.clamp_min(2.0**-16)).sum()
        return total


class LatentPyramid(nn.Module):
    """Multi-resolution latents, quantised to integers, upsampled to the signal's grid.

    Level ``l`` has shape ``(batch, channels, ceil(H / 2**l), ceil(W / 2**l))``. Training adds
    uniform noise on ``[-1/2, 1/2)`` in place of rounding (the rate-distortion relaxation of
    Ballé et al.); evaluation rounds. The upsampled integers are scaled by ``step`` before they
    reach the synthesis network.

    Parameters
    ----------
    shape : tuple (batch, height, width)
    n_levels : int
    channels : int
        Latent channels per level.
    step : float
        The synthesis input per quantisation step.
    """

    def __init__(
        self, shape, *, n_levels: int = 6, channels: int = 1, step: float = 0.125, dtype=None
    ):
        super().__init__()
        batch, h, w = shape
        self.n_levels = check_positive_int(n_levels, name="n_levels")
        self.channels = check_positive_int(channels, name="channels")
        self.step = check_scalar(step, name="step", low=0.0, low_inclusive=False)
        self.size = (h, w)
        self.latents = nn.ParameterList(
            nn.Parameter(
                torch.zeros(
                    batch, channels, math.ceil(h / 2**lvl), math.ceil(w / 2**lvl), dtype=dtype
                )
            )
            for lvl in range(self.n_levels)
        )

    @property
    def out_channels(self) -> int:
        return self.n_levels * self.channels

    def quantised(
        self, *, noise_generator: torch.Generator | None = None, straight_through: bool = False
    ) -> list[torch.Tensor]:
        """The latents with uniform noise (training), rounded with the identity's gradient
        (training, ``straight_through``: Cool-chic's final phase, which removes the mismatch
        between noisy training and rounded decoding) or rounded (evaluation)."""
        out = []
        for z in self.latents:
            if self.training and straight_through:
                out.append(z + (torch.round(z) - z).detach())
            elif self.training:
                u = torch.rand(z.shape, generator=noise_generator, device=z.device, dtype=z.dtype)
                out.append(z + u - 0.5)
            else:
                out.append(torch.round(z))
        return out

    def upsample(self, latents: list[torch.Tensor]) -> torch.Tensor:
        """Every level upsampled (bilinear) to the signal's grid and stacked on channels."""
        planes = [
            q
            if q.shape[-2:] == self.size
            else F.interpolate(q, size=self.size, mode="bilinear", align_corners=False)
            for q in latents
        ]
        return torch.cat(planes, dim=1) * self.step


def _causal_offsets(radius: int) -> list[tuple[int, int]]:
    """The ``(row, col)`` offsets of the already-decoded neighbours in raster order within a
    ``(2 radius + 1)``-wide window: the rows above, then the pixels to the left."""
    above = [(dy, dx) for dy in range(-radius, 0) for dx in range(-radius, radius + 1)]
    return above + [(0, dx) for dx in range(-radius, 0)]


class AutoregressiveEntropyModel(nn.Module):
    """A Laplace per latent whose location and scale a small MLP predicts from the latent's
    already-decoded neighbours (Cool-chic's and LotteryCodec's auto-regressive model, "ARM").

    Each latent ``q`` of each level costs ``-log2 (F(q + 1/2) - F(q - 1/2))``, floored at
    ``2**-16`` as in :class:`FactorizedEntropyModel`, with ``F`` the Laplace CDF of
    ``(mu, b) = MLP(causal neighbours of q)``; neighbours outside the level read 0. One MLP
    serves every level. Smooth latents are cheap under it, so the rate acts as a spatial prior,
    not only a sparsity one.

    Parameters
    ----------
    n_levels : int
        Latent levels (only checked against the latents passed to :meth:`bits`).
    radius : int
        Context window half-width: ``2 radius^2 + 2 radius`` neighbours (12 for radius 2).
    hidden : int
        Width of the MLP's two hidden layers.
    generator : torch.Generator, optional
        Draws the MLP's initial weights.

    Notes
    -----
    Fidelity: reconstruction. LotteryCodec (``models/model.py``, ``estimate_rate``) and
    Cool-chic feed a 9x9 causal context (up to 24 of its pixels) to a learned MLP with a Laplace
    output; the context size and MLP width here are smaller for speed, and the weights are
    plain float (not themselves quantised and counted in the rate).
    """

    def __init__(
        self,
        n_levels: int,
        *,
        radius: int = 2,
        hidden: int = 16,
        generator: torch.Generator | None = None,
        dtype: torch.dtype | None = None,
    ):
        super().__init__()
        self.n_levels = check_positive_int(n_levels, name="n_levels")
        self.radius = check_positive_int(radius, name="radius")
        hidden = check_positive_int(hidden, name="hidden")
        offsets = _causal_offsets(self.radius)
        width = 2 * self.radius + 1
        index = [(dy + self.radius) * width + dx + self.radius for dy, dx in offsets]
        self.register_buffer("context_index", torch.tensor(index), persistent=False)
        sizes = [(len(index), hidden), (hidden, hidden), (hidden, 2)]
        self.layers = nn.ModuleList(nn.Linear(i, o, dtype=dtype) for i, o in sizes)
        with torch.no_grad():
            for layer in self.layers:
                bound = 1 / math.sqrt(layer.in_features)
                layer.weight.copy_(
                    (torch.rand(layer.weight.shape, generator=generator) * 2 - 1) * bound
                )
                layer.bias.zero_()
            # start as a zero-mean Laplace of unit scale, whatever the context
            self.layers[-1].weight.zero_()

    def _parameters_of(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        r = self.radius
        patches = F.unfold(q.reshape(-1, 1, *q.shape[-2:]), 2 * r + 1, padding=r)
        context = patches[:, self.context_index].transpose(1, 2)
        h = context
        for layer in self.layers[:-1]:
            h = F.gelu(layer(h))
        loc, log_scale = self.layers[-1](h).unbind(-1)
        return loc, log_scale.exp() + 1e-3

    def bits(self, latents: list[torch.Tensor]) -> torch.Tensor:
        """Total bits of the (quantised or noisy) ``latents``, one tensor per level."""
        if len(latents) != self.n_levels:
            raise ValueError(f"`latents` must hold {self.n_levels} levels; got {len(latents)}")
        total = latents[0].new_zeros(())
        for q in latents:
            loc, scale = self._parameters_of(q)
            flat = q.reshape(loc.shape)
            p = _laplace_cdf(flat + 0.5, loc, scale) - _laplace_cdf(flat - 0.5, loc, scale)
            total = total - torch.log2(p.clamp_min(2.0**-16)).sum()
        return total
