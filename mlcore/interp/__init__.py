"""Interpretability of trained transformers: function vectors and their decomposition.

:class:`HeadHooks` reads and patches attention heads of any transformer (mlcore's
``TinyTransformer``, Hugging Face GPT-2 / Llama / GPT-J naming, TransformerLens hook points);
the functions build Todd et al.'s function vectors and Wang et al.'s decomposition of them into
per-demonstration parts.
"""

from mlcore.interp.function_vectors import (
    SpanDecomposition,
    contextual_reweighting,
    extract_function_vector,
    fit_additivity,
    function_vector,
    indirect_effects,
    isolated_sub_vectors,
    mean_head_activations,
    qk_v_hybrid_patch,
    span_decomposition,
    steered_accuracy,
)
from mlcore.interp.hooks import HeadHooks, HeadLayout, detect_layout
from mlcore.interp.results import (
    AdditivityResult,
    FunctionVectorResult,
    HybridPatchResult,
    ReweightingResult,
)

__all__ = [
    "AdditivityResult",
    "FunctionVectorResult",
    "HeadHooks",
    "HeadLayout",
    "HybridPatchResult",
    "ReweightingResult",
    "SpanDecomposition",
    "contextual_reweighting",
    "detect_layout",
    "extract_function_vector",
    "fit_additivity",
    "function_vector",
    "indirect_effects",
    "isolated_sub_vectors",
    "mean_head_activations",
    "qk_v_hybrid_patch",
    "span_decomposition",
    "steered_accuracy",
]
