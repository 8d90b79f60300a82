"""Analysis of trained models: features at named layers for representational geometry."""

from mlcore.analysis.features import extract_features

__all__ = ["extract_features"]
