"""mlcore: the torch companion of statcore.

Torch conventions inside (modules, devices, tensors), statcore results at the edges
(:class:`TrainingResult`, :class:`EvaluationResult`). Needs PyTorch: ``pip install statcore[ml]``.
"""

from statcore.compat import import_optional

# Fail here, with the extra's name, rather than deep inside the first module that uses torch.
import_optional("torch", "ml")

from mlcore._device import get_device, seed_everything  # noqa: E402 -- after the torch check
from mlcore.results import EvaluationResult, TrainingResult  # noqa: E402
from statcore import __version__  # noqa: E402

__all__ = ["EvaluationResult", "TrainingResult", "__version__", "get_device", "seed_everything"]
