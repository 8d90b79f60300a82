"""Test-time adaptation: the CONGA learning-rate schedule and its host method, Tent, with the
digits source model their studies adapt (:func:`digits_source_model`)."""

from mlcore.tta.conga import CONGA
from mlcore.tta.corruptions import CORRUPTIONS, corrupt_images
from mlcore.tta.simulate import digits_source_model, digits_split
from mlcore.tta.tent import Tent, configure_norm_params

__all__ = [
    "CONGA",
    "CORRUPTIONS",
    "Tent",
    "configure_norm_params",
    "corrupt_images",
    "digits_source_model",
    "digits_split",
]
