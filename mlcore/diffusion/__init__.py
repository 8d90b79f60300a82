"""Masked diffusion: IMDM's infinite mask (MDLM as its special case), sampler and distillation."""

from mlcore.diffusion import synthetic
from mlcore.diffusion.denoiser import TinyDenoiser
from mlcore.diffusion.distill import distill_on_couplings, rectified_couplings
from mlcore.diffusion.imdm import (
    IMDMSampler,
    InfiniteMaskEmbedding,
    imdm_elbo_loss,
    transition_probabilities,
)

__all__ = [
    "IMDMSampler",
    "InfiniteMaskEmbedding",
    "TinyDenoiser",
    "distill_on_couplings",
    "imdm_elbo_loss",
    "rectified_couplings",
    "synthetic",
    "transition_probabilities",
]
