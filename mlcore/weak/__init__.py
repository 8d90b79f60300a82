"""Weak supervision: CLAPOR for imbalanced unreliable partial-label learning, its baselines
(fixed-prior logit adjustment, SoLar-style Sinkhorn targets, PRODEN), and the long-tailed /
partial-label generators."""

from mlcore.weak.clapor import (
    CandidateTargets,
    CLAPORLoss,
    DirichletPriorPerturbation,
    LogitAdjustedLoss,
    PriorEstimator,
    candidate_targets,
    logit_adjusted_cross_entropy,
    sinkhorn_targets,
)
from mlcore.weak.data import (
    long_tailed_counts,
    long_tailed_indices,
    long_tailed_mixture,
    long_tailed_split,
    partial_label_candidates,
)
from mlcore.weak.train import (
    PartialLabelStudyResult,
    PartialLabelTrainingResult,
    partial_label_study,
    train_partial_label_classifier,
)

__all__ = [
    "CLAPORLoss",
    "CandidateTargets",
    "DirichletPriorPerturbation",
    "LogitAdjustedLoss",
    "PartialLabelStudyResult",
    "PartialLabelTrainingResult",
    "PriorEstimator",
    "candidate_targets",
    "logit_adjusted_cross_entropy",
    "long_tailed_counts",
    "long_tailed_indices",
    "long_tailed_mixture",
    "long_tailed_split",
    "partial_label_candidates",
    "partial_label_study",
    "sinkhorn_targets",
    "train_partial_label_classifier",
]
