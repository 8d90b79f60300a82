"""mlcore: the torch companion of statcore.

Torch conventions inside (modules, devices, tensors), statcore results at the edges
(:class:`TrainingResult`, :class:`EvaluationResult`). Needs PyTorch: ``pip install statcore[ml]``.
"""

try:
    import torch  # noqa: F401 -- fail here, with the extra's name, rather than deep inside
except ImportError as exc:
    raise ImportError(
        "mlcore needs PyTorch, which could not be imported; install it with "
        "`pip install statcore[ml]`"
    ) from exc

from mlcore._device import get_device, seed_everything
from mlcore.results import EvaluationResult, TrainingResult
from statcore import __version__

__all__ = ["EvaluationResult", "TrainingResult", "__version__", "get_device", "seed_everything"]
