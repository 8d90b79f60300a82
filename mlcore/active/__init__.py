"""Sea² (See, Act, Adapt): adapt how a frozen perception module is deployed, not the module, by
training a pose-control policy on its confidence.

- :class:`ActiveRoomEnv`: a procedural room (objects, occluders, a nuisance region as the domain
  shift) rendered to small egocentric images, with gymnasium's API; :func:`check_pose_env` for
  a user's environment.
- :class:`FrozenPerception` around any detector; :func:`pretrained_detector` (a
  :class:`TinyDetector` trained once on clean renders, cached); :func:`state_dict_hash`.
- Policies ``policy(image, history, query) -> logits``: :class:`PoseTransformerPolicy`,
  :class:`RuleExplorer` (stage 1's teacher), :class:`RandomPolicy`, :class:`ForwardPolicy`.
- :class:`Sea2Agent`: stage 1 ``sft``, stage 2 ``grpo``; the pieces :func:`rollout`,
  :class:`PerceptionReward`, :func:`grpo_advantages`, :func:`grpo_loss`.
- :func:`evaluate_policies` / :class:`ActivePerceptionResult`: held-out detection accuracy with
  seed intervals and paired margins.
"""

from mlcore.active.env import ACTIONS, ActiveRoomEnv, check_pose_env, render_view
from mlcore.active.grpo import (
    PerceptionReward,
    Rollouts,
    Sea2Agent,
    grpo_advantages,
    grpo_loss,
    rollout,
)
from mlcore.active.perception import (
    FrozenPerception,
    TinyDetector,
    pretrained_detector,
    state_dict_hash,
)
from mlcore.active.policy import (
    ForwardPolicy,
    PoseTransformerPolicy,
    RandomPolicy,
    RuleExplorer,
    history_features,
)
from mlcore.active.study import ActivePerceptionResult, evaluate_policies

__all__ = [
    "ACTIONS",
    "ActivePerceptionResult",
    "ActiveRoomEnv",
    "ForwardPolicy",
    "FrozenPerception",
    "PerceptionReward",
    "PoseTransformerPolicy",
    "RandomPolicy",
    "Rollouts",
    "RuleExplorer",
    "Sea2Agent",
    "TinyDetector",
    "check_pose_env",
    "evaluate_policies",
    "grpo_advantages",
    "grpo_loss",
    "history_features",
    "pretrained_detector",
    "render_view",
    "rollout",
    "state_dict_hash",
]
