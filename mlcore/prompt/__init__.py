"""Prompt tuning of frozen vision-language encoders: ManiPT, with CoOp and KgCoOp as baselines.

:class:`ManiPT` is the estimator: its ``fit`` trains a :class:`PromptLearner` (the torch
module, which a user may also drop into their own loop through
:meth:`PromptLearner.loss_from_features`) and returns a :class:`PromptTuningResult` carrying
it; :class:`ManifoldConsistencyLoss`, :class:`IncrementalFusion` and :func:`manifold_drift`
are ManiPT's parts on their own; :func:`base_to_novel` runs CoOp's base-to-novel protocol over
seeds.
"""

from mlcore.prompt.manipt import (
    METHODS,
    IncrementalFusion,
    LossTerms,
    ManifoldConsistencyLoss,
    ManiPT,
    PromptLearner,
    PromptTuningResult,
    manifold_drift,
)
from mlcore.prompt.study import STUDY_METHODS, BaseToNovelResult, base_to_novel

__all__ = [
    "METHODS",
    "STUDY_METHODS",
    "BaseToNovelResult",
    "IncrementalFusion",
    "LossTerms",
    "ManiPT",
    "ManifoldConsistencyLoss",
    "PromptLearner",
    "PromptTuningResult",
    "base_to_novel",
    "manifold_drift",
]
