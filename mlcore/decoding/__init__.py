"""Decoding with two language models: disagreement-guided token intervention."""

from mlcore.decoding.intervene import (
    MEASURES,
    PAIR_MEASURES,
    intervene_generate,
    token_disagreement,
)
from mlcore.decoding.results import InterventionResult

__all__ = [
    "MEASURES",
    "PAIR_MEASURES",
    "InterventionResult",
    "intervene_generate",
    "token_disagreement",
]
