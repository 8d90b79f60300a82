"""Model merging and the overtrained-experts study.

Task vectors and merges (average, task arithmetic, TIES, DARE) over state dicts, modules and
LoRA adapters; per-example difficulty tracking; merged-vs-expert accuracy along fine-tuning;
and the task-dependent early-stopping policy of Horoi et al. (2025), arXiv:2506.14126.
"""

from mlcore.merging.difficulty import (
    DifficultyResult,
    ExampleDifficultyTracker,
    late_gradient_share,
)
from mlcore.merging.methods import lora_task_vector, merge, task_vectors
from mlcore.merging.study import MergeStudyResult, MergeTrajectoryStudy, select_stops
from mlcore.merging.toy import DigitsToy, digits_merging_toy

__all__ = [
    "DifficultyResult",
    "DigitsToy",
    "ExampleDifficultyTracker",
    "MergeStudyResult",
    "MergeTrajectoryStudy",
    "digits_merging_toy",
    "late_gradient_share",
    "lora_task_vector",
    "merge",
    "select_stops",
    "task_vectors",
]
