"""The transferred network of XTransfer: light adapters, the head, the spliced model and its
construction from ``(source, layer)`` pairs.

Zhang et al. (2025), arXiv:2506.22726. The splice (a stem onto pretrained source layers) and
the repair of light parameters are the paper's; the modules below are this package's
reconstruction, stated in each docstring.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from mlcore._device import as_numpy, seeded_torch, torch_generator
from mlcore.transfer.sources import (
    ShapeAdapter,
    SourceModel,
    check_architecture,
    check_sources,
    make_stem,
    pool,
)
from statcore.validation import as_float_array, check_positive_int, check_random_state


class LightAdapter(nn.Module):
    """The light parameters repaired after a frozen layer: a per-channel affine (identity at
    start) plus, for ``rank > 0``, a low-rank 1x1 residual ``up(down(h))`` with ``up`` zero at
    start, so the adapter starts as the identity.

    Fidelity: reconstruction. The paper repairs light parameters; affine or low-rank adapters
    added after each frozen layer (rather than retraining its own norm) are our reading, and
    keep the source's activations, which the anchors and the MMD compare with, unchanged.
    """

    def __init__(self, channels: int, ndim: int, rank: int = 0):
        super().__init__()
        shape = (1, channels) + (1,) * (ndim - 2)
        self.scale = nn.Parameter(torch.ones(shape))
        self.shift = nn.Parameter(torch.zeros(shape))
        self.rank = rank
        if rank:
            conv = nn.Conv2d if ndim == 4 else nn.Conv1d
            self.down = conv(channels, rank, 1, bias=False)
            self.up = conv(rank, channels, 1, bias=False)
            nn.init.zeros_(self.up.weight)

    def forward(self, h):
        out = h * self.scale + self.shift
        return out + self.up(self.down(h)) if self.rank else out


class _Head(nn.Module):
    """Spatial average, standardisation by fixed moments of the spliced few shots, linear."""

    def __init__(self, features: torch.Tensor, n_classes: int, generator):
        super().__init__()
        self.register_buffer("mean", features.mean(dim=0))
        self.register_buffer("sd", features.std(dim=0).clamp_min(1e-6))
        self.linear = nn.Linear(features.shape[1], n_classes)
        with torch.no_grad():
            bound = 1 / math.sqrt(features.shape[1])
            self.linear.weight.uniform_(-bound, bound, generator=generator)
            self.linear.bias.zero_()

    def forward(self, h):
        return self.linear((pool(h) - self.mean) / self.sd)


class TransferredModel(nn.Module):
    """Splice stem -> [junction adapter] -> frozen source layer -> light adapter ... -> head.

    Parameters
    ----------
    stem : nn.Module
    parts : list of (kind, name, module)
        ``kind`` is ``"junction"`` (a :class:`~mlcore.transfer.sources.ShapeAdapter`) or
        ``"layer"`` (a frozen source layer followed by its :class:`LightAdapter`, the module an
        ``nn.Sequential`` of the two).
    head : nn.Module
    """

    def __init__(self, stem, parts, head):
        super().__init__()
        self.stem = stem
        self.kinds = tuple(k for k, _, _ in parts)
        self.names = tuple(n for _, n, _ in parts)
        self.parts = nn.ModuleList(m for _, _, m in parts)
        self.head = head

    @property
    def layer_names(self) -> tuple:
        return tuple(n for k, n in zip(self.kinds, self.names, strict=True) if k == "layer")

    def features(self, x, *, layers: bool = False):
        """Final activations and, with ``layers``, the pooled activations after each source
        layer's adapter."""
        h, acts = self.stem(x), []
        for kind, part in zip(self.kinds, self.parts, strict=True):
            h = part(h)
            if kind == "layer" and layers:
                acts.append(pool(h))
        return h, acts

    def forward(self, x, *, layers: bool = False):
        h, acts = self.features(x, layers=layers)
        return (self.head(h), acts) if layers else self.head(h)


def _seed_for(seed: int, key) -> torch.Generator:
    """A generator seeded by ``seed`` and a position key, so a junction or head is the same
    whichever order the search builds it in."""
    state = np.random.SeedSequence([seed, *(int(k) for k in key)]).generate_state(2)
    return torch_generator(int(state[0]) << 32 | int(state[1]))


def _flat_key(arch) -> list:
    return [v + 1 for pair in arch for v in pair]


def build_model(
    sources: Sequence[SourceModel],
    arch,
    X: torch.Tensor,
    n_classes: int,
    *,
    rank: int = 0,
    seed: int = 0,
) -> TransferredModel:
    """Splice ``arch`` (a sequence of ``(source index, layer index)``) onto a stem.

    The stem maps sensor windows into the input space of the first layer's source and is
    moment-matched to that source's reference inputs on ``X``. Wherever a layer does not
    follow its predecessor in its own source, a :class:`ShapeAdapter` is inserted and
    moment-matched to the input moments that layer saw on its own source. Torch's global RNG
    is left as it was (``seeded_torch``).

    Fidelity: reconstruction (the junction adapters are ours).
    """
    from mlcore._checks import check_tensor

    sources = check_sources(sources)
    arch = check_architecture(arch)
    for s, j in arch:
        if s >= len(sources) or j >= len(sources[s].layers):
            raise ValueError(
                f"`arch` names layer {j} of source {s}; there are {len(sources)} source(s)"
                + (f" and {len(sources[s].layers)} layers in it" if s < len(sources) else "")
            )
    check_tensor(X, name="X", ndim=3, kind="floating", finite=True, nonempty=True)
    n_classes = check_positive_int(n_classes, name="n_classes", minimum=2)
    rank = check_positive_int(rank, name="rank", minimum=0)
    seed = check_positive_int(seed, name="seed", minimum=0)
    # module constructors draw initial weights from torch's global RNG; every weight below is
    # then set from the data or from ``_seed_for``, so those draws only need to leave it alone
    with seeded_torch(seed):
        s0 = arch[0][0]
        stem = make_stem(sources[s0], X.shape[1])
        stem.match(X, *sources[s0].input_moments)
        parts = []
        with torch.no_grad():
            h = stem(X)
            prev = None
            for pos, (s, j) in enumerate(arch):
                src = sources[s]
                lname, layer = src.layers[j]
                in_shape = src.shapes[j][0]
                if prev is not None and (prev != (s, j - 1) or tuple(h.shape[1:]) != in_shape):
                    gen = _seed_for(seed, _flat_key(arch[: pos + 1]))
                    junction = ShapeAdapter(tuple(h.shape[1:]), in_shape, generator=gen)
                    junction.match(h, *src.layer_input_moments[j])
                    h = junction(h)
                    parts.append(("junction", f"{src.name}.{lname}<-", junction))
                out_shape = src.shapes[j][1]
                adapter = LightAdapter(out_shape[0], len(out_shape) + 1, rank)
                if rank:
                    gen = _seed_for(seed, [7, *_flat_key(arch[: pos + 1])])
                    nn.init.orthogonal_(adapter.down.weight, generator=gen)
                part = nn.Sequential(layer, adapter)
                h = part(h)
                parts.append(("layer", f"{src.name}.{lname}", part))
                prev = (s, j)
            head = _Head(pool(h), n_classes, _seed_for(seed, [9, *_flat_key(arch)]))
    return TransferredModel(stem, parts, head)


def _trainable(model: TransferredModel, which: str) -> list:
    """``"light"``: stem, junctions, layer adapters, head; ``"head"``; ``"all"``."""
    for p in model.parameters():
        p.requires_grad_(False)
    if which == "head":
        chosen = list(model.head.parameters())
    elif which == "all":
        chosen = list(model.parameters())
    else:
        # the stem's and junctions' convolutions keep their data-driven initialisation: with a
        # few shots, training them as well overfits the users seen (measured in the vignette)
        chosen = [model.stem.scale, model.stem.shift, *model.head.parameters()]
        for kind, part in zip(model.kinds, model.parts, strict=True):
            chosen += [part.scale, part.shift] if kind == "junction" else list(part[1].parameters())
    for p in chosen:
        p.requires_grad_(True)
    return chosen


class _Features(nn.Module):
    """A head over cached features, in the call shape of :meth:`TransferredModel.forward`."""

    def __init__(self, head):
        super().__init__()
        self.head = head

    def forward(self, h, *, layers: bool = False):
        return (self.head(h), []) if layers else self.head(h)


def check_windows(X, *, name: str, channels: int | None = None) -> np.ndarray:
    """Sensor windows ``(n, channels, length)`` as a float array (tensors leave torch here)."""
    if isinstance(X, torch.Tensor):
        X = as_numpy(X, name=name)
    X = as_float_array(X, name=name, ndim=3, min_rows=1)
    if X.shape[2] < 8:
        raise ValueError(f"`{name}` must be (n, channels, length) with length >= 8; got {X.shape}")
    if channels is not None and X.shape[1] != channels:
        raise ValueError(f"`{name}` must have {channels} channels like `X_few`; got {X.shape[1]}")
    return X


def transfer_seed(random_state) -> int:
    """The one integer seed of a fit, from ``random_state`` (None, an int or a numpy Generator).

    Checked by :func:`statcore.validation.check_random_state`: an int is the seed itself (so
    that a fit is reproducible across releases); None draws it from fresh entropy and a numpy
    Generator from its stream (advancing it by one draw). Every torch draw of the fit gets its
    generator from this seed and a position key (``_seed_for``), so that the search and the
    final build splice identical junctions and heads.
    """
    rng = check_random_state(random_state)
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(rng.integers(0, 2**31 - 1))


__all__ = [
    "LightAdapter",
    "TransferredModel",
    "build_model",
    "check_windows",
    "transfer_seed",
]
