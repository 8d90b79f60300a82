"""Analysis of trained models: features at named layers for representational geometry, and the
units of a vision backbone that carry forgery traces (DNA), with the digits study's generator
(:func:`upsampled_digits`) and backbone (:func:`digit_backbone`)."""

from mlcore.analysis.features import extract_features
from mlcore.analysis.forgery import (
    ForgeryDetector,
    ForgeryDetectorResults,
    ForgeryUnits,
    ForgeryUnitsResults,
    ablate_units,
    kneedle,
)
from mlcore.analysis.simulate import digit_backbone, upsampled_digits

__all__ = [
    "ForgeryDetector",
    "ForgeryDetectorResults",
    "ForgeryUnits",
    "ForgeryUnitsResults",
    "ablate_units",
    "digit_backbone",
    "extract_features",
    "kneedle",
    "upsampled_digits",
]
