"""Layers: rotary positional embeddings (RoPE, HIPE) and a tiny transformer to test them in."""

from mlcore.nn.positional import (
    HIPERotaryEmbedding,
    RotaryEmbedding,
    half_width,
    hipe_gains,
    hipe_scales,
    rope_frequencies,
)
from mlcore.nn.simulate import local_copy_sequences
from mlcore.nn.transformer import TinyTransformer

__all__ = [
    "HIPERotaryEmbedding",
    "RotaryEmbedding",
    "TinyTransformer",
    "half_width",
    "hipe_gains",
    "hipe_scales",
    "local_copy_sequences",
    "rope_frequencies",
]
