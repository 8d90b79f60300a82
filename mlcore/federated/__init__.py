"""Federated adaptation of dual encoders: FedSPA and its baselines.

- :func:`federated_partition` / :class:`FederatedData`: clients with Dirichlet label skew and
  per-client domain shifts, from a pool of cached features.
- :class:`FedSPA` / :class:`FedSPAResult`: semantic-visual prototype alignment, clients' local
  training run as tasks on statcore's execution backends (``backend=``), communication per round
  recorded; its pieces :func:`info_nce`, :func:`tip_logits`, :func:`client_update`,
  :func:`server_align`, :func:`pooled_prototypes`, :func:`prototype_divergence`.
- Baselines: :func:`zero_shot_accuracy`, :func:`local_tip_adapter` (local-only Tip-Adapter and
  Tip-Adapter-F), :func:`fedavg_prompts` (PromptFL: FedAvg of CoOp prompts).
- :func:`compare_federated` / :class:`FederatedComparison`: all of them over seeds, with
  intervals.
"""

from mlcore.federated.baselines import fedavg_prompts, local_tip_adapter, zero_shot_accuracy
from mlcore.federated.fedspa import (
    AlignTrace,
    FedSPA,
    FedSPAResult,
    client_update,
    info_nce,
    pooled_prototypes,
    prototype_divergence,
    server_align,
    tip_logits,
)
from mlcore.federated.partition import ClientData, FederatedData, federated_partition
from mlcore.federated.study import FederatedComparison, compare_federated

__all__ = [
    "AlignTrace",
    "ClientData",
    "FedSPA",
    "FedSPAResult",
    "FederatedComparison",
    "FederatedData",
    "client_update",
    "compare_federated",
    "fedavg_prompts",
    "federated_partition",
    "info_nce",
    "local_tip_adapter",
    "pooled_prototypes",
    "prototype_divergence",
    "server_align",
    "tip_logits",
    "zero_shot_accuracy",
]
