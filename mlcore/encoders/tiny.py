"""A tiny CLIP trained on the offline digits and shapes corpus, shipped as a checkpoint.

:func:`tiny_clip` loads ``mlcore/encoders/tiny_clip.pt`` (retrained bit for bit by
``python -m mlcore.encoders.train_tiny_clip``). The model meets :class:`DualEncoder` and
:class:`PromptableTextEncoder`, so every adaptation method of mlcore runs on it in tests and
vignettes, with no download.
"""

from __future__ import annotations

import math
import re
from importlib import resources

import torch
from torch import nn

from mlcore._checkpoints import write_checkpoint
from mlcore._device import get_device
from mlcore.encoders._inputs import (
    check_images,
    check_layers,
    check_prompt_inputs,
    check_texts,
    normalize,
)
from mlcore.encoders.hooks import collect_multilevel

CHECKPOINT = "tiny_clip.pt"
SPECIAL_TOKENS = ("<pad>", "<sot>", "<eot>", "<unk>")
PAD, SOT, EOT, UNK = range(4)
REFERENCE = (
    "Radford, Kim, Hallacy, et al. (2021). Learning transferable visual models from natural "
    "language supervision. ICML 2021."
)


class _ConvBlock(nn.Module):
    """conv 3x3 -> GroupNorm -> GELU, with a residual connection when the shape is kept."""

    def __init__(self, c_in: int, c_out: int, stride: int = 1):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1)
        self.norm = nn.GroupNorm(8, c_out)
        self.residual = c_in == c_out and stride == 1

    def forward(self, x):
        y = nn.functional.gelu(self.norm(self.conv(x)))
        return x + y if self.residual else y


class TinyVisual(nn.Module):
    """A four-block CNN over (n, 3, 16, 16) images: 16x16 -> 16x16 -> 8x8 -> 4x4, mean-pooled."""

    def __init__(self, widths=(32, 32, 64, 96), in_channels: int = 3):
        super().__init__()
        self.stem = _ConvBlock(in_channels, widths[0])
        self.block1 = _ConvBlock(widths[0], widths[1])
        self.block2 = _ConvBlock(widths[1], widths[2], stride=2)
        self.block3 = _ConvBlock(widths[2], widths[3], stride=2)
        self.ln_post = nn.LayerNorm(widths[3])

    def forward(self, x):
        x = self.block3(self.block2(self.block1(self.stem(x))))
        return self.ln_post(x.flatten(2).mean(dim=2))


class TinyCLIP(nn.Module):
    """A small CLIP: a CNN image tower and a causal word-level text transformer.

    Parameters
    ----------
    vocab : sequence of str
        The words of the tokenizer, after the special tokens ``<pad> <sot> <eot> <unk>``.
        Text is lower-cased and split into alphanumeric words; unknown words become
        ``<unk>`` (so prompt-tuning placeholders such as ``"X X X X"`` tokenize).
    embed_dim : int
        Dimension of the joint embedding.
    widths : tuple of 4 int
        Channels of the four image blocks (``visual.stem``, ``visual.block1``,
        ``visual.block2``, ``visual.block3``: the ``image_layer_names``).
    text_width, text_layers, text_heads : int
        The text transformer (pre-norm, GELU, feed-forward ``2 * text_width``).
    context_length : int
        Token positions, including ``<sot>`` and ``<eot>``.
    image_size : int
        Side of the square input images.

    Notes
    -----
    The layout follows CLIP (Radford et al. 2021): text features are the final-LayerNorm state
    at the end-of-text token under a causal mask, projected linearly; image features the
    projected pooled image state; both L2-normalised; ``logit_scale = exp(t)`` with ``t``
    learned (clamped at ``log 100``). The image tower is a small CNN rather than a ViT (16x16
    inputs), the tokenizer word-level rather than BPE.

    Fidelity: reconstruction at toy size. CLIP's objective (symmetric InfoNCE with a learned
    temperature) and its text-tower layout (causal mask, pooling at end-of-text, final
    LayerNorm, linear projections) are followed; the CNN tower, word tokenizer, the
    multi-positive targets of :func:`~mlcore.encoders.train_tiny_clip.contrastive_loss` and
    the offline corpus are this package's.

    References
    ----------
    Radford, Kim, Hallacy, et al. (2021). Learning transferable visual models from natural
    language supervision. *ICML 2021*.
    """

    def __init__(
        self,
        vocab,
        *,
        embed_dim: int = 64,
        widths=(32, 32, 64, 96),
        text_width: int = 64,
        text_layers: int = 2,
        text_heads: int = 4,
        context_length: int = 32,
        image_size: int = 16,
    ):
        super().__init__()
        vocab = list(vocab)
        if any(not isinstance(w, str) or not re.fullmatch(r"[a-z0-9]+", w) for w in vocab):
            raise ValueError("`vocab` must hold lower-case alphanumeric words")
        self.vocab = vocab
        self._index = {w: i + len(SPECIAL_TOKENS) for i, w in enumerate(vocab)}
        self._config = {
            "embed_dim": embed_dim,
            "widths": list(widths),
            "text_width": text_width,
            "text_layers": text_layers,
            "text_heads": text_heads,
            "context_length": context_length,
            "image_size": image_size,
        }
        self.image_size = image_size
        self.context_length = context_length
        self.visual = TinyVisual(widths)
        self.visual_projection = nn.Linear(widths[-1], embed_dim, bias=False)
        self.token_embedding = nn.Embedding(len(vocab) + len(SPECIAL_TOKENS), text_width)
        self.positional_embedding = nn.Parameter(0.01 * torch.randn(context_length, text_width))
        layer = nn.TransformerEncoderLayer(
            text_width, text_heads, 2 * text_width, dropout=0.0, activation="gelu",
            batch_first=True, norm_first=True,
        )  # fmt: skip
        self.transformer = nn.TransformerEncoder(layer, text_layers, enable_nested_tensor=False)
        self.ln_final = nn.LayerNorm(text_width)
        self.text_projection = nn.Linear(text_width, embed_dim, bias=False)
        self.log_logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
        mask = torch.full((context_length, context_length), float("-inf")).triu(1)
        self.register_buffer("attn_mask", mask, persistent=False)

    # --- the DualEncoder members -------------------------------------------------------
    @property
    def embed_dim(self) -> int:
        return self._config["embed_dim"]

    @property
    def logit_scale(self) -> float:
        """CLIP's ``s = exp(t)``, clamped at 100 as in CLIP's training."""
        return float(self.log_logit_scale.detach().clamp(max=math.log(100)).exp())

    @property
    def device(self) -> torch.device:
        return self.log_logit_scale.device

    @property
    def image_layer_names(self) -> tuple:
        return ("visual.stem", "visual.block1", "visual.block2", "visual.block3")

    def config(self) -> dict:
        return dict(self._config)

    def _images(self, images) -> torch.Tensor:
        check_images(images, channels=3, size=(self.image_size, self.image_size))
        return images.to(device=self.device, dtype=self.log_logit_scale.dtype)

    def encode_image(self, images: torch.Tensor) -> torch.Tensor:
        """L2-normalised image features (n, embed_dim) of (n, 3, 16, 16) float images."""
        return normalize(self.visual_projection(self.visual(self._images(images))))

    def encode_text(self, texts) -> torch.Tensor:
        """L2-normalised text features (m, embed_dim) of a list of strings."""
        ids = self.tokenize(texts)
        return self._encode_tokens(self.token_embedding(ids), ids)

    def image_layer_features(self, images: torch.Tensor, layers=None) -> list:
        """Spatially averaged outputs (n, channels) of the named image blocks."""
        layers = check_layers(layers, self.image_layer_names)
        images = self._images(images)
        with collect_multilevel(self, layers) as record:
            self.visual(images)
        return record.as_list()

    # --- the PromptableTextEncoder members ----------------------------------------------
    def tokenize(self, texts) -> torch.Tensor:
        """Token ids (m, context_length): ``<sot> words <eot>`` then ``<pad>``, on ``device``.

        Raises
        ------
        ValueError
            When a text has more than ``context_length - 2`` words.
        """
        texts = check_texts(texts)
        ids = torch.full((len(texts), self.context_length), PAD, dtype=torch.long)
        for i, text in enumerate(texts):
            words = re.findall(r"[a-z0-9]+", text.lower())
            if len(words) > self.context_length - 2:
                raise ValueError(
                    f"`texts[{i}]` has {len(words)} words; the tiny CLIP takes at most "
                    f"{self.context_length - 2}"
                )
            row = [SOT, *(self._index.get(w, UNK) for w in words), EOT]
            ids[i, : len(row)] = torch.tensor(row)
        return ids.to(self.device)

    def encode_text_embeddings(self, embeds: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Text features from word embeddings ``embeds`` (m, L, width) standing for
        ``token_embedding(ids)``; ``ids`` (m, L) locate ``<eot>``. Differentiable in ``embeds``."""
        embeds, ids = check_prompt_inputs(
            embeds, ids, width=self.token_embedding.embedding_dim, device=self.device
        )
        if ids.shape[1] > self.context_length:
            raise ValueError(
                f"`ids` has {ids.shape[1]} positions; the tiny CLIP takes at most "
                f"{self.context_length}"
            )
        has_eot = (ids == EOT).any(dim=1)
        if not bool(has_eot.all()):
            raise ValueError(
                f"every row of `ids` must contain the end-of-text id {EOT}; rows "
                f"{torch.nonzero(~has_eot).flatten().tolist()} do not"
            )
        return self._encode_tokens(embeds, ids)

    def _encode_tokens(self, embeds, ids):
        length = ids.shape[1]
        x = embeds + self.positional_embedding[:length]
        x = self.transformer(x, mask=self.attn_mask[:length, :length], is_causal=True)
        x = self.ln_final(x)
        eot = (ids == EOT).int().argmax(dim=1)
        pooled = x[torch.arange(len(x), device=x.device), eot]
        return normalize(self.text_projection(pooled))

    def forward(self, images: torch.Tensor, texts) -> torch.Tensor:
        """CLIP logits ``logit_scale * image_features @ text_features.T`` (n, m)."""
        scale = self.log_logit_scale.clamp(max=math.log(100)).exp()
        return scale * self.encode_image(images) @ self.encode_text(texts).T

    # --- checkpoints ---------------------------------------------------------------------
    def save(self, path, **metadata) -> None:
        """Write config, vocabulary and float32 weights (and ``metadata``) to ``path``."""
        write_checkpoint(path, self, self.config(), vocab=list(self.vocab), **metadata)

    @classmethod
    def load(cls, path, *, device=None, frozen: bool = True) -> TinyCLIP:
        """Load a checkpoint written by :meth:`save` (``torch.load(weights_only=True)``).

        Parameters
        ----------
        path : str or path-like
        device : None, str or torch.device
            As in :func:`mlcore.get_device` (None: CUDA when available).
        frozen : bool
            Turn off ``requires_grad`` of every parameter.

        Returns
        -------
        TinyCLIP
            In eval mode; the checkpoint's metadata in ``metadata``.
        """
        blob = torch.load(path, map_location="cpu", weights_only=True)
        model = cls(blob["vocab"], **blob["config"])
        model.load_state_dict(blob["state_dict"])
        model.metadata = {
            k: v for k, v in blob.items() if k not in ("config", "vocab", "state_dict")
        }
        if frozen:
            model.requires_grad_(False)
        return model.to(get_device(device)).eval()


def tiny_clip(device=None) -> TinyCLIP:
    """The tiny CLIP shipped with mlcore: frozen, in eval mode, on ``device``.

    Trained contrastively (symmetric InfoNCE, Radford et al. 2021) on the offline corpus of
    :func:`mlcore.encoders.corpus.pretraining_corpus`: the ``"pretrain"`` half of the digits
    and 24 of the 32 shape classes (``mlcore.encoders.corpus.SHAPES_HELD_OUT`` never
    appear), with templated captions. Zero-shot accuracy is deliberately imperfect on the
    shifted ``"downstream"`` digits and on the held-out shapes, leaving room to adapt.

    Parameters
    ----------
    device : None, str or torch.device
        None: CUDA when available, else the CPU.

    Returns
    -------
    TinyCLIP
        Retrained bit for bit (same torch version, one thread) by
        ``python -m mlcore.encoders.train_tiny_clip``.

    References
    ----------
    Radford et al. (2021), CLIP; full reference in :class:`TinyCLIP`.

    Examples
    --------
    >>> enc = tiny_clip("cpu")
    >>> enc.encode_text(["a photo of the digit seven."]).shape
    torch.Size([1, 64])
    """
    ref = resources.files("mlcore.encoders").joinpath(CHECKPOINT)
    with resources.as_file(ref) as path:
        return TinyCLIP.load(path, device=device)
