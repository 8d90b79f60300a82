"""XTransfer: splice, anchor-based repair, removal and layer-wise search of source layers.

Zhang, Zhang, Zhou, Chen, Gao, Jia, Yang, Qi and Gu (2025), "XTransfer: modality-agnostic
few-shot model transfer for human sensing at the edge", arXiv:2506.22726.

Fidelity: reconstruction. Only the abstract and two summaries were read (no method section,
no code): the pipeline Splice-Repair-Removal plus Layer-Wise Search, the anchor-based repair
loss in a PCA-reduced space and the resource-budgeted, NAS-inspired recombination are the
paper's; every operator (the stems, the source anchors matched to target classes, the light
adapters, the removal rule, the beam search and its proxy score, the junction adapters) is our
reconstruction, stated in each docstring.

The implementation is split by job; this module gathers its public names:

- :mod:`mlcore.transfer.transferred`: the light adapters, the head, the spliced
  :class:`TransferredModel` and :func:`build_model`;
- :mod:`mlcore.transfer.anchors`: :class:`LayerAnchors`, :func:`fit_anchors`, :func:`mmd2`
  and the search's proxy :func:`anchor_separability`;
- :mod:`mlcore.transfer.recombiner`: the layer-wise search :class:`LayerRecombiner`;
- :mod:`mlcore.transfer.result`: :class:`XTransferResult`;
- :mod:`mlcore.transfer.estimator`: the estimator :class:`XTransfer`.
"""

from mlcore.transfer.anchors import LayerAnchors, anchor_separability, fit_anchors, mmd2
from mlcore.transfer.estimator import XTransfer
from mlcore.transfer.recombiner import LayerRecombiner
from mlcore.transfer.result import XTransferResult
from mlcore.transfer.transferred import LightAdapter, TransferredModel, build_model

__all__ = [
    "LayerAnchors",
    "LayerRecombiner",
    "LightAdapter",
    "TransferredModel",
    "XTransfer",
    "XTransferResult",
    "anchor_separability",
    "build_model",
    "fit_anchors",
    "mmd2",
]
