"""What an image-text dual encoder must offer to the adaptation methods of mlcore.

:class:`DualEncoder` is the contract every method (PUFE, CLAPOR, BOIF, ManiPT) codes against;
:class:`PromptableTextEncoder` adds the token-level access prompt tuning needs. Both are
structural (``typing.Protocol``): an object qualifies by having the members, whatever its
class; :func:`check_dual_encoder` says which members are missing.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import torch

DUAL_ENCODER_MEMBERS = (
    "embed_dim",
    "logit_scale",
    "device",
    "encode_image",
    "encode_text",
    "image_layer_names",
    "image_layer_features",
)
PROMPTABLE_MEMBERS = ("tokenize", "token_embedding", "encode_text_embeddings")


@runtime_checkable
class DualEncoder(Protocol):
    """An image encoder and a text encoder into one embedding space (CLIP, Radford et al. 2021).

    Attributes
    ----------
    embed_dim : int
        Dimension of the joint embedding.
    logit_scale : float
        CLIP's temperature ``s`` (already exponentiated): zero-shot logits are
        ``s * image_features @ text_features.T``.
    device : torch.device
        Where the encoder computes; inputs are moved there.
    image_layer_names : tuple of str
        Layers whose pooled features ``image_layer_features`` can return.

    Methods
    -------
    encode_image(images) -> Tensor (n, embed_dim), L2-normalised
        Gradients flow to ``images`` when the caller enables them.
    encode_text(texts) -> Tensor (m, embed_dim), L2-normalised
        ``texts`` a list of strings.
    image_layer_features(images, layers=None) -> list of Tensor (n, width_l)
        Pooled intermediate features, one per layer (default: all of ``image_layer_names``).

    References
    ----------
    Radford, Kim, Hallacy, et al. (2021). Learning transferable visual models from natural
    language supervision. *ICML 2021*.
    """

    embed_dim: int
    logit_scale: float
    device: torch.device
    image_layer_names: tuple

    def encode_image(self, images: torch.Tensor) -> torch.Tensor: ...

    def encode_text(self, texts: Sequence[str]) -> torch.Tensor: ...

    def image_layer_features(self, images: torch.Tensor, layers=None) -> list: ...


@runtime_checkable
class PromptableTextEncoder(Protocol):
    """A text encoder that can run from word embeddings, as prompt tuning (CoOp) needs.

    Methods
    -------
    tokenize(texts) -> LongTensor (m, L)
        Padded token ids.
    token_embedding(ids) -> Tensor (m, L, width)
        Word embeddings, without positions.
    encode_text_embeddings(embeds, ids) -> Tensor (m, embed_dim), L2-normalised
        The text features with ``embeds`` in place of ``token_embedding(ids)``; ``ids`` (same
        ``L``) locate the end-of-text token. Differentiable in ``embeds``.

    References
    ----------
    Zhou, Yang, Loy and Liu (2022). Learning to prompt for vision-language models (CoOp).
    *IJCV* 130, 2337-2348.
    """

    def tokenize(self, texts: Sequence[str]) -> torch.Tensor: ...

    def token_embedding(self, ids: torch.Tensor) -> torch.Tensor: ...

    def encode_text_embeddings(self, embeds: torch.Tensor, ids: torch.Tensor) -> torch.Tensor: ...


def _has_member(obj, member: str) -> bool:
    """Look ``member`` up without running a property (which may compute, e.g. probe a model)."""
    try:
        inspect.getattr_static(obj, member)
        return True
    except AttributeError:
        return hasattr(obj, member)  # nn.Module keeps submodules and parameters out of __dict__


def check_dual_encoder(obj, name: str = "encoder", *, promptable: bool = False):
    """Return ``obj`` if it meets :class:`DualEncoder` (and :class:`PromptableTextEncoder` when
    ``promptable``); otherwise raise a TypeError listing the missing members.

    Parameters
    ----------
    obj : object
    name : str
        The argument's name, for the message.
    promptable : bool
        Also require the prompt-tuning members.

    Raises
    ------
    TypeError
        Naming every missing member, and the adapters that wrap common models.

    Examples
    --------
    ``check_dual_encoder(object(), "encoder")`` raises ``TypeError: `encoder` must be a dual
    encoder (mlcore.encoders.DualEncoder); object lacks encode_image, ...``.
    """
    wanted = DUAL_ENCODER_MEMBERS + (PROMPTABLE_MEMBERS if promptable else ())
    missing = [m for m in wanted if not _has_member(obj, m)]
    if missing:
        kind = "a promptable dual encoder" if promptable else "a dual encoder"
        raise TypeError(
            f"`{name}` must be {kind} (mlcore.encoders.DualEncoder"
            f"{' and PromptableTextEncoder' if promptable else ''}); {type(obj).__name__} lacks "
            f"{', '.join(missing)}. Wrap a transformers CLIPModel in HFCLIPEncoder, an open_clip "
            "model in OpenCLIPEncoder, or two functions in CallableEncoder"
        )
    return obj
