"""Analysis of trained models: features at named layers for representational geometry, and the
units of a vision backbone that carry forgery traces (DNA)."""

from mlcore.analysis.features import extract_features
from mlcore.analysis.forgery import (
    ForgeryDetector,
    ForgeryDetectorResults,
    ForgeryUnits,
    ForgeryUnitsResults,
    ablate_units,
    kneedle,
)

__all__ = [
    "ForgeryDetector",
    "ForgeryDetectorResults",
    "ForgeryUnits",
    "ForgeryUnitsResults",
    "ablate_units",
    "extract_features",
    "kneedle",
]
