"""Decoding with two language models: disagreement-guided token intervention, and the "plan,
then execute" task its studies train two tiny models on (:mod:`mlcore.decoding.simulate`)."""

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
