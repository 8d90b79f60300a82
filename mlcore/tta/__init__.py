"""Test-time adaptation: the CONGA learning-rate schedule and its host method, Tent."""

from mlcore.tta.conga import CONGA
from mlcore.tta.corruptions import CORRUPTIONS, corrupt_images
from mlcore.tta.tent import Tent, configure_norm_params

__all__ = ["CONGA", "CORRUPTIONS", "Tent", "configure_norm_params", "corrupt_images"]
