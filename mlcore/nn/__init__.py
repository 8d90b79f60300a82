"""Layers: rotary positional embeddings (RoPE, HIPE), a tiny transformer, a small Mamba."""

from mlcore.nn.mamba import MambaBlock, MambaLM, mixer_ssm_inputs, selective_scan
from mlcore.nn.positional import (
    HIPERotaryEmbedding,
    RotaryEmbedding,
    half_width,
    hipe_gains,
    hipe_scales,
    rope_frequencies,
)
from mlcore.nn.simulate import local_copy_sequences, local_copy_val_loss
from mlcore.nn.transformer import TinyTransformer

__all__ = [
    "HIPERotaryEmbedding",
    "MambaBlock",
    "MambaLM",
    "RotaryEmbedding",
    "TinyTransformer",
    "half_width",
    "hipe_gains",
    "hipe_scales",
    "local_copy_sequences",
    "local_copy_val_loss",
    "mixer_ssm_inputs",
    "rope_frequencies",
    "selective_scan",
]
