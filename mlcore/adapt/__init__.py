"""Adapting cached vision-language features by flow matching: the Euclidean FMA and the
path-decoupled hyperbolic HFM on the Lorentz model.

- :mod:`mlcore.adapt.lorentz`: Lorentz-model geometry (Minkowski inner product, exp/log maps,
  parallel transport, distance, tangent projection), any float dtype.
- :class:`HyperbolicFlowMatcher` (HFM) and :class:`FlowMatchingAdapter` (FMA): ``fit(image_feats,
  labels, text_feats)`` returns a :class:`FlowFitResult`, whose ``predict(image_feats, labels,
  steps=..., stop="fixed"|"diameter")`` gives a :class:`FlowResult` with per-step accuracy,
  stopping steps and trajectories;
  :func:`crossing_pairs`.
- :func:`entangled_features` / :class:`EntangledTask`: the synthetic entangled few-shot set.

References
----------
Li, Jiang, Ye, He, Li, Xiao, Cheng & Chen (2026). Path-decoupled hyperbolic flow matching for
few-shot adaptation. arXiv:2602.20479.
Jiang, Wang & Chen (2025). Exploring cross-modal flows for few-shot learning.
arXiv:2510.14543; code github.com/HKUST-LongGroup/FMA.
"""

from mlcore.adapt import lorentz
from mlcore.adapt.flow import (
    FlowFitResult,
    FlowMatchingAdapter,
    FlowResult,
    HyperbolicFlowMatcher,
    VelocityNet,
    crossing_pairs,
)
from mlcore.adapt.simulate import EntangledTask, entangled_features

__all__ = [
    "EntangledTask",
    "FlowFitResult",
    "FlowMatchingAdapter",
    "FlowResult",
    "HyperbolicFlowMatcher",
    "VelocityNet",
    "crossing_pairs",
    "entangled_features",
    "lorentz",
]
