"""The argument checks shared by every encoder of :mod:`mlcore.encoders`."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from mlcore._checks import check_tensor
from mlcore._device import as_numpy
from statcore.validation import as_class_labels


def check_images(images, *, channels: int | None, size: tuple | None = None, name="images"):
    """A finite float (n, C, H, W) batch with the encoder's channels (and size, when fixed)."""
    sizes = {}
    if channels is not None:
        sizes["channels"] = channels
    if size is not None:
        sizes["height"], sizes["width"] = size
    check_tensor(
        images,
        name=name,
        dims=("n", "channels", "height", "width"),
        sizes=sizes,
        kind="floating",
        nonempty=("n",),
        finite=True,
    )
    return images


def check_texts(texts, *, name: str = "texts") -> list[str]:
    """A non-empty list of strings (one string alone is refused: it would iterate by char)."""
    if isinstance(texts, str):
        raise TypeError(f"`{name}` must be a list of strings; got one string {texts!r} (wrap it)")
    try:
        texts = list(texts)
    except TypeError:
        raise TypeError(f"`{name}` must be a list of strings; got {type(texts).__name__}") from None
    if not texts:
        raise ValueError(f"`{name}` must hold at least one string")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"`{name}[{i}]` must be a string; got {type(t).__name__} {t!r}")
    return texts


def check_prompt_inputs(embeds, ids, *, width: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """``embeds`` (m, L, width) floating and ``ids`` (m, L) integer, moved to ``device``."""
    check_tensor(embeds, name="embeds", dims=("m", "L", "width"), sizes={"width": width},
                 kind="floating", nonempty=("m",))  # fmt: skip
    check_tensor(ids, name="ids", dims=("m", "L"), kind="integer")
    if tuple(ids.shape) != tuple(embeds.shape[:2]):
        raise ValueError(
            f"`ids` must have the (m, L) shape of `embeds`' first two axes "
            f"{tuple(embeds.shape[:2])}; got {tuple(ids.shape)}"
        )
    return embeds.to(device), ids.to(device)


def normalize(x: torch.Tensor) -> torch.Tensor:
    return F.normalize(x, dim=-1)


def check_layers(requested, available: tuple, *, name: str = "layers") -> tuple:
    """``None`` -> all of ``available``; otherwise each requested name must be available."""
    if requested is None:
        return available
    if isinstance(requested, str):
        requested = (requested,)
    requested = tuple(requested)
    if not requested:
        raise ValueError(f"`{name}` must name at least one layer (or be None for all)")
    unknown = [r for r in requested if r not in available]
    if unknown:
        raise ValueError(
            f"`{name}` has unknown layer names {unknown}; available: {list(available)}"
        )
    return requested


def check_class_indices(labels, *, name: str, n: int, n_classes: int, of: str = "classes"):
    """``n`` class labels as an int64 numpy copy, each an index in ``0..n_classes - 1``.

    Tensors (on any device), arrays and lists are accepted; whole-number floats are read as
    integers, text, booleans and fractions are refused (:func:`as_class_labels`).
    """
    if isinstance(labels, torch.Tensor):
        labels = as_numpy(labels, name=name)
    labels = as_class_labels(labels, name=name, n=n)
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(
            f"`{name}` must index the {n_classes} {of} (0..{n_classes - 1}); got values in "
            f"[{labels.min()}, {labels.max()}]"
        )
    return labels
