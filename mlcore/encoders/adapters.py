"""Adapters that make pretrained CLIP models (transformers, open_clip) and plain functions meet
:class:`~mlcore.encoders.DualEncoder`.

The prompt-tuning entry ``encode_text_embeddings`` of the model adapters runs the model's own
text forward (``get_text_features`` / ``encode_text``) with a forward hook that swaps the output
of its token-embedding layer for the caller's embeddings: positions, the causal transformer,
the final LayerNorm, pooling at the end-of-text token and the text projection are then exactly
the model's, whatever its version.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn

from mlcore._device import module_device
from mlcore.encoders._inputs import (
    check_images,
    check_layers,
    check_prompt_inputs,
    check_texts,
    normalize,
)
from mlcore.encoders.hooks import check_layer_names, collect_multilevel, pool_features

_CLIP_REFERENCE = (
    "Radford, Kim, Hallacy, et al. (2021). Learning transferable visual models from natural "
    "language supervision. ICML 2021."
)


def _module_dtype(module: nn.Module) -> torch.dtype:
    for p in module.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.float32


def _tensor_output(out) -> torch.Tensor:
    """``transformers`` >= 5 returns a ModelOutput whose ``pooler_output`` holds the features;
    earlier versions the tensor itself."""
    if isinstance(out, torch.Tensor):
        return out
    pooled = getattr(out, "pooler_output", None)
    if isinstance(pooled, torch.Tensor):
        return pooled
    return out[0]


class _SwapEmbeddings:
    """Context manager: while active, ``embedding(ids)`` returns ``embeds`` instead."""

    def __init__(self, embedding: nn.Module, embeds: torch.Tensor):
        self.embedding, self.embeds = embedding, embeds

    def __enter__(self):
        def hook(_module, inputs, output):
            if tuple(inputs[0].shape) != tuple(self.embeds.shape[:-1]):
                raise RuntimeError(
                    "the text tower embedded ids of another shape than `embeds`; it does not "
                    "follow the expected layout"
                )
            return self.embeds.to(output.dtype)

        self.handle = self.embedding.register_forward_hook(hook)
        return self

    def __exit__(self, *exc):
        self.handle.remove()


def _ids_from_tokenizer(tokenizer, texts, device, **hf_kwargs) -> torch.Tensor:
    if tokenizer is None:
        raise ValueError(
            "this encoder has no tokenizer: pass `tokenizer=` (a transformers tokenizer, or a "
            "callable mapping a list of strings to token ids) when building it"
        )
    try:
        from transformers import PreTrainedTokenizerBase
    except ImportError:  # pragma: no cover -- transformers is optional for the other adapters
        PreTrainedTokenizerBase = ()
    if PreTrainedTokenizerBase and isinstance(tokenizer, PreTrainedTokenizerBase):
        out = tokenizer(texts, return_tensors="pt", **hf_kwargs)
    else:
        out = tokenizer(texts)
    if isinstance(out, Mapping) or hasattr(out, "keys"):
        out = out["input_ids"]
    ids = torch.as_tensor(out)
    if ids.ndim != 2 or ids.is_floating_point() or ids.dtype == torch.bool:
        raise TypeError(
            f"the tokenizer must return (m, L) integer token ids; got {ids.dtype} of shape "
            f"{tuple(ids.shape)}"
        )
    if len(ids) != len(texts):
        raise ValueError(f"the tokenizer returned {len(ids)} rows for {len(texts)} texts")
    return ids.to(device=device, dtype=torch.long)


class _WrappedModel:
    """What the adapters of a library's CLIP model share: ``self.model`` and its layer names."""

    @property
    def device(self) -> torch.device:
        return module_device(self.model)

    @property
    def image_layer_names(self) -> tuple:
        return self._layer_names


class HFCLIPEncoder(_WrappedModel):
    """A ``transformers`` ``CLIPModel`` as a :class:`DualEncoder` and
    :class:`PromptableTextEncoder`.

    Parameters
    ----------
    model : transformers.CLIPModel
        Pretrained (``CLIPModel.from_pretrained(...)``) or built from a config. Not copied,
        not frozen or moved: the adapter computes where the model is, in its current mode.
    tokenizer : transformers tokenizer or callable, optional
        A ``CLIPTokenizer`` (called with ``padding="max_length"`` and truncation to the
        model's ``max_position_embeddings``), or any callable mapping a list of strings to
        (m, L) token ids (a tensor, array, list of lists, or a mapping with ``"input_ids"``).
        Needed by ``encode_text`` and ``tokenize`` only.
    image_layer_names : sequence of str, optional
        Submodules of ``model`` offered by ``image_layer_features``; default every
        ``vision_model.encoder.layers.<i>``.

    Notes
    -----
    Images are the model's ``pixel_values`` (already resized and normalised: pass them
    through a ``CLIPImageProcessor`` first). Text features follow ``get_text_features``: the
    attention mask is not passed, which leaves the end-of-text state unchanged under the causal
    mask (padding comes after it). Layer features average a layer's hidden states over tokens,
    class token included.

    References
    ----------
    Radford, Kim, Hallacy, et al. (2021). Learning transferable visual models from natural
    language supervision. *ICML 2021*.
    """

    def __init__(self, model, tokenizer=None, *, image_layer_names=None):
        for member in ("get_image_features", "get_text_features", "text_model", "vision_model"):
            if not hasattr(model, member):
                raise TypeError(
                    f"`model` must be a transformers CLIPModel; {type(model).__name__} lacks "
                    f"`{member}`"
                )
        self.model = model
        self.tokenizer = tokenizer
        self._vision_config = model.config.vision_config
        self._text_config = model.config.text_config
        if image_layer_names is None:
            n_layers = len(model.vision_model.encoder.layers)
            image_layer_names = tuple(f"vision_model.encoder.layers.{i}" for i in range(n_layers))
        self._layer_names = check_layer_names(model, image_layer_names, name="image_layer_names")

    @property
    def embed_dim(self) -> int:
        return int(self.model.config.projection_dim)

    @property
    def logit_scale(self) -> float:
        return float(self.model.logit_scale.detach().exp())

    def _images(self, images) -> torch.Tensor:
        size = self._vision_config.image_size
        check_images(images, channels=self._vision_config.num_channels, size=(size, size))
        return images.to(device=self.device, dtype=_module_dtype(self.model))

    def encode_image(self, images: torch.Tensor) -> torch.Tensor:
        """L2-normalised ``get_image_features`` of (n, C, H, W) pixel values."""
        return normalize(
            _tensor_output(self.model.get_image_features(pixel_values=self._images(images)))
        )

    def tokenize(self, texts) -> torch.Tensor:
        """Token ids (m, L) from the tokenizer, on the model's device."""
        texts = check_texts(texts)
        length = self._text_config.max_position_embeddings
        return _ids_from_tokenizer(
            self.tokenizer, texts, self.device, padding="max_length", truncation=True,
            max_length=length,
        )  # fmt: skip

    def encode_text(self, texts) -> torch.Tensor:
        """L2-normalised ``get_text_features`` of a list of strings."""
        ids = self.tokenize(texts)
        return normalize(_tensor_output(self.model.get_text_features(input_ids=ids)))

    def token_embedding(self, ids: torch.Tensor) -> torch.Tensor:
        """The word embeddings (m, L, hidden) of the text tower, without positions."""
        return self.model.text_model.embeddings.token_embedding(ids.to(self.device))

    def encode_text_embeddings(self, embeds: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """``get_text_features`` with ``embeds`` in place of ``token_embedding(ids)``;
        differentiable in ``embeds``."""
        layer = self.model.text_model.embeddings.token_embedding
        embeds, ids = check_prompt_inputs(
            embeds, ids, width=layer.embedding_dim, device=self.device
        )
        with _SwapEmbeddings(layer, embeds):
            return normalize(_tensor_output(self.model.get_text_features(input_ids=ids)))

    def image_layer_features(self, images: torch.Tensor, layers=None) -> list:
        """Token-averaged hidden states (n, hidden) of the named vision layers."""
        layers = check_layers(layers, self._layer_names)
        images = self._images(images)
        with collect_multilevel(self.model, layers) as record:
            self.model.get_image_features(pixel_values=images)
        return record.as_list()

    def __repr__(self) -> str:
        return f"HFCLIPEncoder(embed_dim={self.embed_dim}, layers={len(self._layer_names)})"


def _open_clip_text_tower(model):
    """open_clip's ``CLIP`` keeps the text tower's parts on the model; ``CustomTextCLIP`` in
    ``model.text``."""
    if hasattr(model, "token_embedding"):
        return model
    text = getattr(model, "text", None)
    if text is not None and hasattr(text, "token_embedding"):
        return text
    raise TypeError(
        "`model` must be an open_clip CLIP or CustomTextCLIP: found no `token_embedding` on it "
        "or on `model.text`"
    )


class OpenCLIPEncoder(_WrappedModel):
    """An ``open_clip`` model as a :class:`DualEncoder` and :class:`PromptableTextEncoder`.

    Parameters
    ----------
    model : open_clip.CLIP or open_clip.CustomTextCLIP
        From ``open_clip.create_model_and_transforms(...)``. Used as is (mode, device, grads).
    tokenizer : callable
        ``open_clip.get_tokenizer(name)``: list of str -> LongTensor (m, context_length).
    image_layer_names : sequence of str, optional
        Submodules of ``model`` for ``image_layer_features``; default the residual blocks
        ``visual.transformer.resblocks.<i>`` of a ViT tower, or ``visual.layer1..4`` of a
        ModifiedResNet.

    Notes
    -----
    The attribute names followed are open_clip's (``encode_image``, ``encode_text``,
    ``logit_scale`` (log scale), ``token_embedding``, ``positional_embedding``,
    ``transformer``, ``ln_final``, ``text_projection``, ``attn_mask``, ``text_pool_type``).
    open_clip could not be installed where this adapter was written; it is tested against a
    stand-in module with those attributes and open_clip's ``encode_text`` code.

    References
    ----------
    Cherti, Beaumont, Wightman, et al. (2023). Reproducible scaling laws for contrastive
    language-image learning. *CVPR 2023* (OpenCLIP). Radford et al. (2021), *ICML*.
    """

    def __init__(self, model, tokenizer=None, *, image_layer_names=None):
        for member in ("encode_image", "encode_text", "logit_scale", "visual"):
            if not hasattr(model, member):
                raise TypeError(
                    f"`model` must be an open_clip model; {type(model).__name__} lacks `{member}`"
                )
        self.model = model
        self.tokenizer = tokenizer
        self._text = _open_clip_text_tower(model)
        if image_layer_names is None:
            image_layer_names = self._default_layers(model.visual)
        self._layer_names = check_layer_names(model, image_layer_names, name="image_layer_names")
        transformer = getattr(model.visual, "transformer", None)
        self._batch_first = getattr(transformer, "batch_first", True)

    @staticmethod
    def _default_layers(visual) -> tuple:
        transformer = getattr(visual, "transformer", None)
        if transformer is not None and hasattr(transformer, "resblocks"):
            return tuple(
                f"visual.transformer.resblocks.{i}" for i in range(len(transformer.resblocks))
            )
        if all(hasattr(visual, f"layer{i}") for i in range(1, 5)):
            return tuple(f"visual.layer{i}" for i in range(1, 5))
        raise TypeError(
            "cannot find the layers of this vision tower; pass `image_layer_names=` (submodule "
            "names of the model)"
        )

    @property
    def embed_dim(self) -> int:
        proj = self._text.text_projection
        if isinstance(proj, nn.Linear):
            return int(proj.out_features)
        if proj is not None:
            return int(proj.shape[1])
        return int(self._text.ln_final.normalized_shape[0])

    @property
    def logit_scale(self) -> float:
        return float(self.model.logit_scale.detach().exp().reshape(-1)[0])

    def _images(self, images) -> torch.Tensor:
        size = getattr(self.model.visual, "image_size", None)
        if isinstance(size, int):
            size = (size, size)
        check_images(images, channels=3, size=tuple(size) if size is not None else None)
        return images.to(device=self.device, dtype=_module_dtype(self.model.visual))

    def encode_image(self, images: torch.Tensor) -> torch.Tensor:
        """L2-normalised ``model.encode_image`` of preprocessed (n, 3, H, W) images."""
        return normalize(self.model.encode_image(self._images(images)))

    def tokenize(self, texts) -> torch.Tensor:
        texts = check_texts(texts)
        return _ids_from_tokenizer(self.tokenizer, texts, self.device)

    def encode_text(self, texts) -> torch.Tensor:
        """L2-normalised ``model.encode_text`` of a list of strings."""
        return normalize(self.model.encode_text(self.tokenize(texts)))

    def token_embedding(self, ids: torch.Tensor) -> torch.Tensor:
        return self._text.token_embedding(ids.to(self.device))

    def encode_text_embeddings(self, embeds: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """``model.encode_text(ids)`` with ``embeds`` in place of ``token_embedding(ids)``:
        positions, ``transformer(x, attn_mask)``, ``ln_final``, ``text_global_pool`` by
        ``text_pool_type`` and ``text_projection`` are open_clip's own."""
        layer = self._text.token_embedding
        embeds, ids = check_prompt_inputs(
            embeds, ids, width=layer.embedding_dim, device=self.device
        )
        with _SwapEmbeddings(layer, embeds):
            return normalize(self.model.encode_text(ids))

    def _pool(self, output, *, name):
        if not self._batch_first and isinstance(output, torch.Tensor) and output.ndim == 3:
            output = output.transpose(0, 1)  # open_clip < 2.24 runs its blocks length first
        return pool_features(output, name=name)

    def image_layer_features(self, images: torch.Tensor, layers=None) -> list:
        """Pooled outputs (n, width) of the named vision blocks (token or spatial mean)."""
        layers = check_layers(layers, self._layer_names)
        images = self._images(images)
        with collect_multilevel(self.model, layers, pool=self._pool) as record:
            self.model.encode_image(images)
        return record.as_list()

    def __repr__(self) -> str:
        return f"OpenCLIPEncoder(embed_dim={self.embed_dim}, layers={len(self._layer_names)})"


class CallableEncoder:
    """Any pair of functions as a :class:`DualEncoder`.

    Parameters
    ----------
    image_fn : callable
        ``image_fn(images) -> Tensor (n, d)`` (normalised by the adapter).
    text_fn : callable
        ``text_fn(list_of_str) -> Tensor (m, d)`` (normalised by the adapter).
    logit_scale : float
        CLIP's ``s`` (exponentiated); 100 is CLIP's trained value.
    embed_dim : int, optional
        Checked against every output; when None, taken from the first output (reading
        ``embed_dim`` before any call encodes the probe text ``"a photo."``).
    layer_fns : mapping of str to callable, optional
        ``name -> fn(images) -> Tensor (n, width)`` for ``image_layer_features``.
    device : str or torch.device
        Where inputs are moved before the calls.

    Examples
    --------
    >>> enc = CallableEncoder(lambda x: x.flatten(1), lambda t: torch.ones(len(t), 12),
    ...                       embed_dim=12)
    >>> enc.encode_image(torch.rand(2, 3, 2, 2)).shape
    torch.Size([2, 12])
    """

    def __init__(
        self,
        image_fn,
        text_fn,
        logit_scale: float = 100.0,
        embed_dim: int | None = None,
        *,
        layer_fns=None,
        device="cpu",
    ):
        if not callable(image_fn) or not callable(text_fn):
            raise TypeError("`image_fn` and `text_fn` must be callables")
        scale = float(logit_scale)
        if not scale > 0 or scale == float("inf"):
            raise ValueError(f"`logit_scale` must be a finite positive number; got {logit_scale!r}")
        if embed_dim is not None and (not isinstance(embed_dim, int) or embed_dim < 1):
            raise ValueError(f"`embed_dim` must be a positive int; got {embed_dim!r}")
        layer_fns = dict(layer_fns or {})
        if not all(isinstance(k, str) and callable(v) for k, v in layer_fns.items()):
            raise TypeError("`layer_fns` must map layer names (str) to callables")
        self._image_fn, self._text_fn, self._layer_fns = image_fn, text_fn, layer_fns
        self._scale, self._embed_dim = scale, embed_dim
        self._device = torch.device(device)

    @property
    def embed_dim(self) -> int:
        if self._embed_dim is None:  # one probe text settles it
            self.encode_text(["a photo."])
        return self._embed_dim

    @property
    def logit_scale(self) -> float:
        return self._scale

    @property
    def device(self) -> torch.device:
        return self._device

    @property
    def image_layer_names(self) -> tuple:
        return tuple(self._layer_fns)

    def _check_output(self, out, n, what) -> torch.Tensor:
        if not isinstance(out, torch.Tensor) or out.ndim != 2 or len(out) != n:
            shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise ValueError(f"`{what}` must return a ({n}, d) tensor; got {shape}")
        if self._embed_dim is None:
            self._embed_dim = int(out.shape[1])
        elif out.shape[1] != self._embed_dim:
            raise ValueError(
                f"`{what}` returned width {out.shape[1]}; embed_dim is {self._embed_dim}"
            )
        return normalize(out)

    def encode_image(self, images: torch.Tensor) -> torch.Tensor:
        check_images(images, channels=None)
        out = self._image_fn(images.to(self._device))
        return self._check_output(out, len(images), "image_fn")

    def encode_text(self, texts) -> torch.Tensor:
        texts = check_texts(texts)
        return self._check_output(self._text_fn(texts), len(texts), "text_fn")

    def image_layer_features(self, images: torch.Tensor, layers=None) -> list:
        if not self._layer_fns:
            raise ValueError("this CallableEncoder has no layers; pass `layer_fns=` to build one")
        layers = check_layers(layers, self.image_layer_names)
        check_images(images, channels=None)
        images = images.to(self._device)
        return [pool_features(self._layer_fns[name](images), name=name) for name in layers]

    def __repr__(self) -> str:
        return f"CallableEncoder(embed_dim={self._embed_dim}, logit_scale={self._scale})"
