"""Features of any ``nn.Module`` at named layers, collected with forward hooks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

from mlcore._device import as_numpy
from statcore.validation import describe


def _inputs(batch):
    """The model input of a loader batch: a tensor, the first item of a tuple/list
    (``(x, y)`` batches), or the ``"x"`` / ``"input"`` entry of a dict."""
    if isinstance(batch, torch.Tensor):
        return batch
    if isinstance(batch, Sequence) and batch and isinstance(batch[0], torch.Tensor):
        return batch[0]
    if isinstance(batch, Mapping):
        for key in ("x", "input", "inputs"):
            if isinstance(batch.get(key), torch.Tensor):
                return batch[key]
    raise TypeError(
        "each batch of `loader` must be a tensor, a (inputs, ...) tuple or list, or a dict "
        f"with an 'x' / 'input' tensor; got {describe(batch)}"
    )


def _model_device(model: torch.nn.Module) -> torch.device:
    for tensor in (*model.parameters(), *model.buffers()):
        return tensor.device
    return torch.device("cpu")


def extract_features(
    model: torch.nn.Module, loader, layers: Sequence[str] | str | None = None
) -> dict[str, np.ndarray]:
    """Run ``model`` over ``loader`` and return each layer's output, one row per input.

    Parameters
    ----------
    model : torch.nn.Module
        Any module; it runs in ``eval()`` mode under ``torch.no_grad()`` on the device its
        parameters live on (CPU or CUDA), and its training flag is restored afterwards.
        Nothing else about it is changed: hooks are removed even when a batch fails.
    loader : iterable of batches
        A ``DataLoader`` or any iterable of tensors, ``(inputs, targets)`` pairs or dicts with
        an ``"x"`` entry; inputs are moved to the model's device.
    layers : str or sequence of str, optional
        Names from ``model.named_modules()`` whose outputs to keep; None keeps the model's
        output under the name ``"output"``. A layer that returns a tuple contributes its
        first element.

    Returns
    -------
    dict of str to ndarray
        ``{layer: (n, features)}`` float64 arrays, each output flattened after the batch axis
        (convolutional maps become ``channels * height * width`` columns), rows in loader
        order: ready for :class:`statcore.geometry.AlignmentStudy`.

    Notes
    -----
    Fidelity: reconstruction. The paper that motivates it (Yu et al. 2026, arXiv:2601.22722;
    abstract only) extracts embeddings of many pretrained models for the same stimuli; which
    layer and pooling it uses is not known, so both are left to the caller.

    References
    ----------
    Yu, Ma, Wei, Zhang, Deng, Deng and Liu (2026). Local intrinsic dimension of representations
    predicts alignment and generalization in AI models and human brain. arXiv:2601.22722.

    Examples
    --------
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    >>> feats = extract_features(net, [torch.randn(5, 4), torch.randn(3, 4)], layers=["1", "2"])
    >>> {name: value.shape for name, value in feats.items()}
    {'1': (8, 8), '2': (8, 2)}
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"`model` must be a torch.nn.Module; got {describe(model)}")
    if isinstance(layers, str):
        layers = [layers]
    modules = dict(model.named_modules())
    if layers is not None:
        layers = list(layers)
        if not layers:
            raise ValueError("`layers` must name at least one module; got an empty sequence")
        missing = [name for name in layers if name not in modules]
        if missing:
            shown = [name for name in modules if name][:12]
            raise ValueError(
                f"`layers` names no module of `model`: {missing}; available include {shown}"
            )
    names = ["output"] if layers is None else layers
    collected: dict[str, list[np.ndarray]] = {name: [] for name in names}

    def keep(name):
        def hook(_module, _inputs, output):
            if isinstance(output, tuple | list):
                output = output[0]
            collected[name].append(as_numpy(output.flatten(start_dim=1), name=name))

        return hook

    handles = [] if layers is None else [modules[n].register_forward_hook(keep(n)) for n in names]
    device = _model_device(model)
    was_training = model.training
    model.eval()
    n_batches = 0
    try:
        with torch.no_grad():
            for batch in loader:
                output = model(_inputs(batch).to(device))
                if layers is None:
                    keep("output")(model, None, output)
                n_batches += 1
    finally:
        for handle in handles:
            handle.remove()
        model.train(was_training)
    if n_batches == 0:
        raise ValueError("`loader` yielded no batches")
    return {name: np.concatenate(parts, axis=0) for name, parts in collected.items()}
