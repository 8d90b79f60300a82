"""Latent space network models and SyNGLER synthetic network generation.

References
----------
Jiang, F. et al. (2026). SyNGLER: Synthetic network generation via latent embedding
reconstruction. ICML 2026.
"""

from statcore.network import simulate
from statcore.network.baselines import baseline_graphs
from statcore.network.diffusion import (
    ForestDiffusion,
    ForestDiffusionResults,
    ForestFlow,
    ForestFlowResults,
)
from statcore.network.latent import LatentSpaceModel, LatentSpaceResults
from statcore.network.metrics import NetworkComparison, compare_networks, network_statistics
from statcore.network.syngler import SyNGLER, SynglerResults

__all__ = [
    "ForestDiffusion",
    "ForestDiffusionResults",
    "ForestFlow",
    "ForestFlowResults",
    "LatentSpaceModel",
    "LatentSpaceResults",
    "NetworkComparison",
    "SyNGLER",
    "SynglerResults",
    "baseline_graphs",
    "compare_networks",
    "network_statistics",
    "simulate",
]
