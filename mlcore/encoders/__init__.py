"""Pretrained image-text dual encoders as a substrate for adaptation methods.

A structural protocol (:class:`DualEncoder`, :class:`PromptableTextEncoder`), adapters for
``transformers`` and ``open_clip`` CLIP models and for any pair of functions, a tiny CLIP
trained offline and shipped as a checkpoint (:func:`tiny_clip`), its image domains
(:func:`digits_domain`, :func:`shapes_dataset`), the zero-shot and multi-level feature tools,
and the splits and metrics (K-shot, generalised zero-shot, base-to-novel) that the methods of
:mod:`mlcore.gzsl`, :mod:`mlcore.weak`, :mod:`mlcore.fewshot` and :mod:`mlcore.prompt` share.

References
----------
Radford, Kim, Hallacy, et al. (2021). Learning transferable visual models from natural language
supervision. *ICML 2021*.
"""

from mlcore.encoders.adapters import CallableEncoder, HFCLIPEncoder, OpenCLIPEncoder
from mlcore.encoders.corpus import (
    SEGMENTS,
    SHAPES_CLASSES,
    SHAPES_HELD_OUT,
    Domain,
    digits_domain,
    shapes_dataset,
)
from mlcore.encoders.hooks import MultilevelFeatures, collect_multilevel
from mlcore.encoders.metrics import (
    ausuc,
    base_novel_scores,
    gzsl_scores,
    harmonic_mean,
    per_class_accuracy,
)
from mlcore.encoders.protocol import DualEncoder, PromptableTextEncoder, check_dual_encoder
from mlcore.encoders.splits import GZSLSplit, base_novel_split, gzsl_split, kshot_split
from mlcore.encoders.tiny import TinyCLIP, tiny_clip
from mlcore.encoders.zeroshot import (
    encode_images,
    zero_shot_evaluate,
    zero_shot_logits,
    zero_shot_weights,
)

__all__ = [
    "SEGMENTS",
    "SHAPES_CLASSES",
    "SHAPES_HELD_OUT",
    "CallableEncoder",
    "Domain",
    "DualEncoder",
    "GZSLSplit",
    "HFCLIPEncoder",
    "MultilevelFeatures",
    "OpenCLIPEncoder",
    "PromptableTextEncoder",
    "TinyCLIP",
    "ausuc",
    "base_novel_scores",
    "base_novel_split",
    "check_dual_encoder",
    "collect_multilevel",
    "digits_domain",
    "encode_images",
    "gzsl_scores",
    "gzsl_split",
    "harmonic_mean",
    "kshot_split",
    "per_class_accuracy",
    "shapes_dataset",
    "tiny_clip",
    "zero_shot_evaluate",
    "zero_shot_logits",
    "zero_shot_weights",
]
