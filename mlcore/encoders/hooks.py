"""Multi-level features of any backbone through forward hooks."""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn


def pool_features(output, *, name: str = "output") -> torch.Tensor:
    """One layer's output as a (n, width) tensor.

    A tuple or a ``transformers`` ModelOutput gives its first tensor; ``(n, width)`` stays as
    is; ``(n, tokens, width)`` (a transformer's hidden states, batch first) is averaged over
    tokens; ``(n, channels, *spatial)`` (a feature map) over its spatial axes.
    """
    if isinstance(output, (tuple, list)):
        output = output[0]
    elif hasattr(output, "to_tuple"):
        output = output.to_tuple()[0]
    if not isinstance(output, torch.Tensor):
        raise TypeError(f"layer {name!r} returned {type(output).__name__}, not a tensor")
    if output.ndim == 2:
        return output
    if output.ndim == 3:
        return output.mean(dim=1)
    if output.ndim >= 4:
        return output.flatten(2).mean(dim=2)
    raise ValueError(
        f"layer {name!r} returned a tensor of shape {tuple(output.shape)}; cannot pool"
    )


class MultilevelFeatures:
    """What :func:`collect_multilevel` yields: the pooled outputs of the hooked layers.

    Attributes
    ----------
    layer_names : tuple of str
    features : dict of str to Tensor
        The pooled (n, width) output of each layer from the latest forward pass (a layer
        called several times in one pass keeps its last output).
    """

    def __init__(self, layer_names):
        self.layer_names = tuple(layer_names)
        self.features: dict[str, torch.Tensor] = {}

    def as_list(self) -> list[torch.Tensor]:
        """The features in ``layer_names`` order; an error names any layer that did not run."""
        missing = [n for n in self.layer_names if n not in self.features]
        if missing:
            raise RuntimeError(
                f"layers {missing} did not run in the forward pass; run the module inside the "
                "`with collect_multilevel(...)` block"
            )
        return [self.features[n] for n in self.layer_names]

    def clear(self) -> None:
        self.features.clear()


def check_layer_names(module: nn.Module, layer_names, *, name: str = "layer_names") -> tuple:
    """Layer names as a tuple, each a submodule of ``module`` (a clear error otherwise)."""
    if isinstance(layer_names, str):
        layer_names = (layer_names,)
    try:
        layer_names = tuple(layer_names)
    except TypeError:
        raise TypeError(
            f"`{name}` must be a sequence of submodule names; got {layer_names!r}"
        ) from None
    if not layer_names:
        raise ValueError(f"`{name}` must name at least one layer")
    available = dict(module.named_modules())
    for layer in layer_names:
        if not isinstance(layer, str):
            raise TypeError(f"`{name}` must hold strings; got {layer!r}")
        if layer not in available:
            shown = [n for n in available if n][:12]
            raise ValueError(
                f"`{name}` entry {layer!r} is not a submodule of {type(module).__name__}; "
                f"submodules include {shown}"
            )
    return layer_names


@contextmanager
def collect_multilevel(module: nn.Module, layer_names, *, pool=None):
    """Record the pooled outputs of named submodules while the block runs.

    Parameters
    ----------
    module : nn.Module
        Any backbone (a tiny CLIP, a ``transformers`` vision tower, a torchvision ResNet).
    layer_names : sequence of str
        Dotted submodule names as in ``module.named_modules()`` (``"layer3"``,
        ``"encoder.layers.5"``).
    pool : callable, optional
        ``pool(output, name=layer) -> Tensor (n, width)``; default :func:`pool_features`
        (which takes sequences batch first).

    Yields
    ------
    MultilevelFeatures
        Filled by each forward pass in the block: ``features[name]`` is the layer's output
        pooled to (n, width) by :func:`pool_features` (mean over tokens or spatial positions).
        Features keep their graph when gradients are enabled.

    Notes
    -----
    The hooks are removed on leaving the block, also after an error. Multi-level features
    of this kind feed the multi-level adapter of BOIF (see :mod:`mlcore.fewshot`).

    Examples
    --------
    >>> net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 8, 3))
    >>> with collect_multilevel(net, ["0", "2"]) as rec:
    ...     _ = net(torch.zeros(2, 3, 8, 8))
    >>> [tuple(f.shape) for f in rec.as_list()]
    [(2, 4), (2, 8)]
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"`module` must be a torch nn.Module; got {type(module).__name__}")
    layer_names = check_layer_names(module, layer_names)
    modules = dict(module.named_modules())
    record = MultilevelFeatures(layer_names)
    pool = pool_features if pool is None else pool
    handles = []

    def make_hook(layer):
        def hook(_module, _inputs, output):
            record.features[layer] = pool(output, name=layer)

        return hook

    try:
        for layer in layer_names:
            handles.append(modules[layer].register_forward_hook(make_hook(layer)))
        yield record
    finally:
        for handle in handles:
            handle.remove()
