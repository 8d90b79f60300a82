"""Source models as ordered layer lists, the splice stems and junction adapters, and costs.

XTransfer (Zhang et al., arXiv 2506.22726) reuses layers of pretrained source models. Here a
source is a :class:`SourceModel`: its frozen layers in forward order, the shape of its input
space and a sample of source-domain inputs (the reference for anchors and for the layer-wise
MMD). Two sources come ready: the image tower of the shipped tiny CLIP
(:func:`tiny_clip_source`) and a small 1-D CNN pretrained in-process on a synthetic waveform
task (:func:`cnn1d_source`).
"""

from __future__ import annotations

import copy
import functools
import math
import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from mlcore._device import seeded_torch, torch_generator
from statcore.validation import check_positive_int, check_random_state, describe

REFERENCE = (
    "Zhang, Zhang, Zhou, Chen, Gao, Jia, Yang, Qi and Gu (2025). XTransfer: modality-agnostic "
    "few-shot model transfer for human sensing at the edge. arXiv:2506.22726."
)
COST_METRICS = ("params", "flops", "latency")


@dataclass(frozen=True, eq=False)
class SourceModel:
    """A pretrained model as an ordered list of frozen layers.

    Parameters
    ----------
    name : str
    layers : tuple of (str, nn.Module)
        The layers in forward order; composing them maps ``input_shape`` to the source's
        features. Each is deep-copied, frozen and put in eval mode.
    input_shape : tuple of int
        One input without the batch axis: ``(channels, height, width)`` for an image source,
        ``(channels, length)`` for a 1-D one.
    reference : Tensor ``(m, *input_shape)``
        Source-domain inputs: the source activations that anchors and the MMD compare with.
    reference_labels : ndarray (m,)
        Their source-task classes (the source anchors are the class means).

    Notes
    -----
    timm/torchvision CNNs qualify once cut into their stages; only the forward order matters.
    """

    name: str
    layers: tuple
    input_shape: tuple
    reference: torch.Tensor = field(repr=False)
    reference_labels: np.ndarray = field(repr=False)

    def __post_init__(self):
        if not self.layers:
            raise ValueError(f"source {self.name!r} has no layers")
        frozen = []
        for lname, module in self.layers:
            module = copy.deepcopy(module).eval()
            for p in module.parameters():
                p.requires_grad_(False)
            frozen.append((str(lname), module))
        object.__setattr__(self, "layers", tuple(frozen))
        object.__setattr__(self, "input_shape", tuple(int(s) for s in self.input_shape))
        if tuple(self.reference.shape[1:]) != self.input_shape:
            raise ValueError(
                f"source {self.name!r}: `reference` has inputs of shape "
                f"{tuple(self.reference.shape[1:])}, not `input_shape` {self.input_shape}"
            )
        object.__setattr__(self, "reference_labels", np.asarray(self.reference_labels))

    @property
    def layer_names(self) -> tuple:
        return tuple(n for n, _ in self.layers)

    @functools.cached_property
    def shapes(self) -> tuple:
        """``(in_shape, out_shape)`` of every layer, from one forward pass."""
        out, x = [], torch.zeros((1, *self.input_shape))
        with torch.no_grad():
            for _, module in self.layers:
                y = module(x)
                out.append((tuple(x.shape[1:]), tuple(y.shape[1:])))
                x = y
        return tuple(out)

    @functools.cached_property
    def reference_activations(self) -> tuple:
        """Channel activations (m, channels) of ``reference`` after each layer, spatially
        averaged."""
        acts, x = [], self.reference
        with torch.no_grad():
            for _, module in self.layers:
                x = module(x)
                acts.append(pool(x))
        return tuple(acts)

    @functools.cached_property
    def input_moments(self) -> tuple:
        """Per-channel mean and sd (channels,) of the reference inputs."""
        return channel_moments(self.reference)

    @functools.cached_property
    def layer_input_moments(self) -> tuple:
        """Per-channel ``(mean, sd)`` of the reference at the input of each layer."""
        out, x = [], self.reference
        with torch.no_grad():
            for _, module in self.layers:
                out.append(channel_moments(x))
                x = module(x)
        return tuple(out)


def pool(x: torch.Tensor) -> torch.Tensor:
    """Average over every axis after the channels: (n, C, ...) -> (n, C)."""
    return x.flatten(2).mean(dim=2) if x.ndim > 2 else x


def channel_moments(x: torch.Tensor) -> tuple:
    """Per-channel mean and sd over the batch and positions of (n, C, ...) activations."""
    flat = x.detach().transpose(0, 1).reshape(x.shape[1], -1)
    return flat.mean(dim=1), flat.std(dim=1).clamp_min(1e-6)


class _MomentMatched(nn.Module):
    """Base of modules that end in a per-channel affine set so their output moments match a
    target's (a data-driven initialisation, the way LSUV initialises layers)."""

    def _init_affine(self, channels: int, ndim: int):
        shape = (1, channels) + (1,) * (ndim - 2)
        self.scale = nn.Parameter(torch.ones(shape))
        self.shift = nn.Parameter(torch.zeros(shape))

    @torch.no_grad()
    def match(self, x: torch.Tensor, mean: torch.Tensor, sd: torch.Tensor) -> None:
        """Set the affine so that ``self(x)`` has per-channel ``mean`` and ``sd``."""
        self.scale.fill_(1.0)
        self.shift.zero_()
        m, s = channel_moments(self(x))
        shape = self.scale.shape
        self.scale.copy_((sd / s).reshape(shape))
        self.shift.copy_((mean - m * sd / s).reshape(shape))


def _mixing(out_channels: int, in_channels: int) -> torch.Tensor:
    """A fixed mixing matrix: output ``o`` averages the inputs ``i ≡ o (mod out_channels)``
    (every input channel reaches the output even when there are more of them)."""
    w = torch.zeros(out_channels, in_channels)
    for i in range(in_channels):
        w[i % out_channels, i] = 1.0
    for o in range(out_channels):
        if w[o].sum() == 0:
            w[o, o % in_channels] = 1.0
    return w / w.sum(dim=1, keepdim=True)


class SpectrogramStem(_MomentMatched):
    """Sensor windows (n, C, L) -> log-magnitude STFT resized to an image (n, c_out, s, s).

    ``log1p|STFT|`` of every channel (Hann window ``n_fft``, hop ``n_fft // 4``) is resized
    bilinearly to ``size x size``, mixed by a 3x3 convolution (initialised to a fixed channel
    mixing at its centre tap) and put through a per-channel affine that ``match`` sets to
    the source's input moments.
    """

    def __init__(self, in_channels: int, out_channels: int, size: int, n_fft: int = 32):
        super().__init__()
        self.size = size
        self.n_fft = n_fft
        self.register_buffer("window", torch.hann_window(n_fft), persistent=False)
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        with torch.no_grad():
            self.conv.weight.zero_()
            self.conv.weight[:, :, 1, 1] = _mixing(out_channels, in_channels)
            self.conv.bias.zero_()
        self._init_affine(out_channels, 4)

    def forward(self, x):
        n, c, length = x.shape
        n_fft = min(self.n_fft, length)
        spec = torch.stft(
            x.reshape(n * c, length),
            n_fft=n_fft,
            hop_length=max(1, n_fft // 4),
            window=self.window[:n_fft] if n_fft == self.n_fft else torch.hann_window(n_fft),
            return_complex=True,
        ).abs()
        img = torch.log1p(spec).reshape(n, c, *spec.shape[-2:])
        img = F.interpolate(img, size=(self.size, self.size), mode="bilinear", align_corners=False)
        return self.conv(img) * self.scale + self.shift


class SignalStem(_MomentMatched):
    """Sensor windows (n, C, L) -> (n, c_out, length): linear resampling, a 3-tap convolution
    (initialised to a fixed channel mixing) and a moment-matched per-channel affine."""

    def __init__(self, in_channels: int, out_channels: int, length: int):
        super().__init__()
        self.length = length
        self.conv = nn.Conv1d(in_channels, out_channels, 3, padding=1)
        with torch.no_grad():
            self.conv.weight.zero_()
            self.conv.weight[:, :, 1] = _mixing(out_channels, in_channels)
            self.conv.bias.zero_()
        self._init_affine(out_channels, 3)

    def forward(self, x):
        if x.shape[-1] != self.length:
            x = F.interpolate(x, size=self.length, mode="linear", align_corners=False)
        return self.conv(x) * self.scale + self.shift


def make_stem(source: SourceModel, in_channels: int) -> _MomentMatched:
    """The splice stem from sensor windows into ``source``'s input space (not yet matched)."""
    shape = source.input_shape
    if len(shape) == 3:
        if shape[1] != shape[2]:
            raise ValueError(f"source {source.name!r}: image inputs must be square; got {shape}")
        return SpectrogramStem(in_channels, shape[0], shape[1])
    if len(shape) == 2:
        return SignalStem(in_channels, shape[0], shape[1])
    raise ValueError(f"source {source.name!r}: `input_shape` must be (C, L) or (C, H, W)")


class ShapeAdapter(_MomentMatched):
    """A junction between layers of different sources: ``(C, *S) -> (C', *S')``.

    2-D maps become 1-D by flattening the positions, 1-D become 2-D by average-pooling to
    ``H'·W'`` positions and reshaping; positions are then average-pooled (or, upward,
    nearest-upsampled) to ``S'`` and the channels mapped by a 1x1 convolution (seeded
    orthogonal initialisation) followed by a per-channel affine that ``match`` sets to the
    moments the next layer saw on its source.
    """

    def __init__(self, in_shape, out_shape, *, generator=None):
        super().__init__()
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        conv = nn.Conv2d if len(out_shape) == 3 else nn.Conv1d
        self.proj = conv(in_shape[0], out_shape[0], 1)
        with torch.no_grad():
            w = torch.empty(out_shape[0], in_shape[0])
            w.copy_(_orthogonal(out_shape[0], in_shape[0], generator))
            self.proj.weight.copy_(w.reshape(self.proj.weight.shape))
            self.proj.bias.zero_()
        self._init_affine(out_shape[0], len(out_shape) + 1)

    def forward(self, x):
        target = self.out_shape[1:]
        if len(target) == 1:
            x = x.flatten(2)
            x = (
                F.adaptive_avg_pool1d(x, target[0])
                if x.shape[-1] >= target[0]
                else F.interpolate(x, size=target[0], mode="nearest")
            )
        else:
            if x.ndim == 3:
                x = F.adaptive_avg_pool1d(x, target[0] * target[1]).reshape(
                    x.shape[0], x.shape[1], *target
                )
            x = (
                F.adaptive_avg_pool2d(x, target)
                if x.shape[-1] >= target[1]
                else F.interpolate(x, size=target, mode="nearest")
            )
        return self.proj(x) * self.scale + self.shift


def _orthogonal(rows: int, cols: int, generator) -> torch.Tensor:
    """A (rows, cols) matrix with orthonormal rows or columns, from a seeded Gaussian."""
    g = torch.randn(max(rows, cols), min(rows, cols), generator=generator)
    q, r = torch.linalg.qr(g)
    q = q * torch.sign(torch.diagonal(r))
    return q if rows >= cols else q.T


def module_cost(module: nn.Module, in_shape) -> dict:
    """Parameters and multiply-accumulates of one forward pass of ``module`` on one input.

    FLOPs count the multiply-accumulates of convolutions and linear maps (hooked on a forward
    of a zero input); norms, activations and poolings are left out, as is customary.
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"`module` must be a torch.nn.Module; got {describe(module)}")
    try:
        shape = tuple(in_shape)
    except TypeError:
        shape = None
    if (
        isinstance(in_shape, str)
        or not shape
        or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) and v > 0 for v in shape
        )
    ):
        raise ValueError(
            f"`in_shape` must be a non-empty sequence of positive ints (one input's shape); got "
            f"{describe(in_shape)}"
        )
    in_shape = tuple(int(v) for v in shape)
    macs = [0]

    def hook(mod, inputs, output):
        if isinstance(mod, (nn.Conv1d, nn.Conv2d)):
            per_out = mod.in_channels // mod.groups * math.prod(mod.kernel_size)
            macs[0] += output[0].numel() * per_out
        elif isinstance(mod, nn.Linear):
            macs[0] += output[0].numel() * mod.in_features

    handles = [m.register_forward_hook(hook) for m in module.modules()]
    try:
        with torch.no_grad():
            module(torch.zeros((1, *in_shape)))
    except RuntimeError as err:
        raise ValueError(f"`module` does not take inputs of `in_shape`={in_shape}: {err}") from None
    finally:
        for h in handles:
            h.remove()
    return {"params": sum(p.numel() for p in module.parameters()), "flops": macs[0]}


def module_latency(module: nn.Module, in_shape, *, batch: int = 32, repeats: int = 5) -> float:
    """Median wall time (ms) of a forward pass on a batch of ``batch`` zero inputs (CPU).

    Wall times vary between runs, so a search under a latency budget is deterministic only as
    far as the measured times are.
    """
    x = torch.zeros((batch, *in_shape))
    times = []
    with torch.no_grad():
        module(x)
        for _ in range(repeats):
            start = time.perf_counter()
            module(x)
            times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


# --- the two shipped sources ------------------------------------------------------------


def tiny_clip_source(n_reference: int = 200) -> SourceModel:
    """The image tower of mlcore's tiny CLIP, as the layers ``stem, block1, block2, block3``.

    Input ``(3, 16, 16)``; the reference is the first ``n_reference`` images of
    ``digits_domain("pretrain")`` (the digits the tiny CLIP was trained on).

    Parameters
    ----------
    n_reference : int

    Returns
    -------
    SourceModel
    """
    from mlcore.encoders import digits_domain, tiny_clip

    n_reference = check_positive_int(n_reference, name="n_reference", minimum=2)
    visual = tiny_clip("cpu").visual
    domain = digits_domain("pretrain", random_state=0)
    names = ("stem", "block1", "block2", "block3")
    return SourceModel(
        name="tiny_clip",
        layers=tuple((n, getattr(visual, n)) for n in names),
        input_shape=(3, 16, 16),
        reference=domain.images[:n_reference].float(),
        reference_labels=np.asarray(domain.labels[:n_reference]),
    )


WAVE_CLASSES = ("sine", "square", "sawtooth", "chirp", "bursts", "ar", "beat", "steps")


def _waveforms(n_per_class: int, length: int, rng: np.random.Generator):
    """The source task of :func:`cnn1d_source`: eight three-channel waveform families."""
    t = np.linspace(0, 1, length, endpoint=False)
    X, y = [], []
    for c in range(len(WAVE_CLASSES)):
        for _ in range(n_per_class):
            f = rng.uniform(3, 8)
            ph = rng.uniform(0, 2 * np.pi, 3)[:, None]
            arg = 2 * np.pi * f * t + ph
            if c == 0:
                x = np.sin(arg)
            elif c == 1:
                x = np.sign(np.sin(arg))
            elif c == 2:
                x = 2 * ((arg / (2 * np.pi)) % 1) - 1
            elif c == 3:
                x = np.sin(2 * np.pi * (f * t + 6 * t**2) + ph)
            elif c == 4:
                x = np.exp(-(((arg % (2 * np.pi)) - np.pi) ** 2) / 0.1) * 2 - 0.3
            elif c == 5:
                x = np.zeros((3, length))
                e = rng.normal(0, 0.4, (3, length))
                for k in range(1, length):
                    x[:, k] = 0.9 * x[:, k - 1] + e[:, k]
            elif c == 6:
                x = np.sin(arg) * np.sin(2 * np.pi * 0.8 * t + ph)
            else:
                x = np.floor(((arg / (2 * np.pi)) % 1) * 4) / 2 - 0.75
            x = x * rng.uniform(0.6, 1.6) + rng.normal(0, 0.2, (3, length))
            X.append(x)
            y.append(c)
    return np.asarray(X, np.float32), np.asarray(y, np.int64)


class _Block1d(nn.Module):
    """conv (kernel 5) -> GroupNorm -> GELU, residual when the shape is kept."""

    def __init__(self, c_in, c_out, stride=1):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, 5, stride=stride, padding=2)
        self.norm = nn.GroupNorm(4, c_out)
        self.residual = c_in == c_out and stride == 1

    def forward(self, x):
        y = F.gelu(self.norm(self.conv(x)))
        return x + y if self.residual else y


@functools.lru_cache(maxsize=4)
def _pretrained_cnn1d(seed: int, steps: int, length: int):
    gen = torch_generator(seed)
    rng = check_random_state(seed)
    widths = (16, 16, 32, 48)
    with seeded_torch(seed):
        layers = [
            ("conv", _Block1d(3, widths[0])),
            ("block1", _Block1d(widths[0], widths[1])),
            ("block2", _Block1d(widths[1], widths[2], stride=2)),
            ("block3", _Block1d(widths[2], widths[3], stride=2)),
        ]
        head = nn.Linear(widths[3], len(WAVE_CLASSES))
    body = nn.Sequential(*(m for _, m in layers))
    X, y = _waveforms(40, length, rng)
    X, y = torch.from_numpy(X), torch.from_numpy(y)
    params = list(body.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=3e-3)
    for _ in range(steps):
        idx = torch.randint(0, len(y), (32,), generator=gen)
        loss = F.cross_entropy(head(pool(body(X[idx]))), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    Xr, yr = _waveforms(25, length, check_random_state(seed + 1))
    return tuple(layers), torch.from_numpy(Xr), yr


def cnn1d_source(*, random_state: int = 0, steps: int = 150, length: int = 128) -> SourceModel:
    """A four-layer 1-D CNN pretrained in-process on a synthetic eight-class waveform task.

    The source task (sine, square, sawtooth, chirp, bursts, AR(1), beat, steps; three channels,
    random frequency, phase and gain) stands in for a public sensor model: it shares none of
    the target activities. Trained with Adam for ``steps`` mini-batches; cached per arguments,
    so repeated calls cost nothing.

    Parameters
    ----------
    random_state : int
        Seeds the source data and the weights.
    steps : int
    length : int
        Input length.

    Returns
    -------
    SourceModel
        Layers ``conv, block1, block2, block3``; input ``(3, length)``; the reference 200 fresh
        source-task windows.
    """
    seed = check_positive_int(random_state, name="random_state", minimum=0)
    steps = check_positive_int(steps, name="steps")
    length = check_positive_int(length, name="length", minimum=16)
    layers, ref, ref_labels = _pretrained_cnn1d(seed, steps, length)
    return SourceModel(
        name="cnn1d",
        layers=layers,
        input_shape=(3, length),
        reference=ref,
        reference_labels=ref_labels,
    )


def check_sources(sources) -> tuple:
    if isinstance(sources, SourceModel):
        sources = (sources,)
    sources = tuple(sources)
    if not sources:
        raise ValueError("`sources` must hold at least one SourceModel")
    for s in sources:
        if not isinstance(s, SourceModel):
            raise TypeError(f"`sources` must hold SourceModel objects; got {describe(s)}")
    return sources


def check_architecture(architecture) -> tuple:
    try:
        arch = tuple((int(s), int(j)) for s, j in architecture)
    except (TypeError, ValueError):
        raise TypeError(
            "`architecture` must be a sequence of (source index, layer index) pairs; got "
            f"{describe(architecture)}"
        ) from None
    if not arch or min(min(p) for p in arch) < 0:
        raise ValueError("`architecture` must hold at least one pair of non-negative indices")
    if arch[0][1] != 0:
        raise ValueError("`architecture` must start at layer 0 of a source (the stem feeds it)")
    return arch
