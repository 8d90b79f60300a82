"""One-shot pruning: SparseSSM for Mamba's state matrix; SparseGPT, Wanda, magnitude baselines."""

from mlcore.nn.mamba import MambaBlock, MambaLM, mixer_ssm_inputs, selective_scan
from mlcore.pruning.linear import magnitude_prune, sparsegpt_prune_linear, wanda_prune_linear
from mlcore.pruning.results import PruningResult
from mlcore.pruning.sparsessm import (
    TIME_WEIGHTS,
    apply_ssm_mask,
    sparsessm_prune,
    ssm_statistics,
    time_weights,
)

__all__ = [
    "TIME_WEIGHTS",
    "MambaBlock",
    "MambaLM",
    "PruningResult",
    "apply_ssm_mask",
    "magnitude_prune",
    "mixer_ssm_inputs",
    "selective_scan",
    "sparsegpt_prune_linear",
    "sparsessm_prune",
    "ssm_statistics",
    "time_weights",
    "wanda_prune_linear",
]
