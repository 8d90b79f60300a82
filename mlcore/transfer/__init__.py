"""mlcore.transfer: few-shot model transfer across sensor modalities (XTransfer).

Zhang et al. (2025), arXiv:2506.22726: splice a sensor stem onto pretrained source layers,
repair them with anchors in a PCA space from a few labelled windows, remove negligible
layers, and recombine layers of several sources under a parameter / FLOP / latency budget.
"""

from mlcore.transfer.data import SensorDomain, basic_motions, synthetic_imu
from mlcore.transfer.sources import (
    ShapeAdapter,
    SignalStem,
    SourceModel,
    SpectrogramStem,
    cnn1d_source,
    module_cost,
    tiny_clip_source,
)
from mlcore.transfer.xtransfer import (
    LayerAnchors,
    LayerRecombiner,
    LightAdapter,
    TransferredModel,
    XTransfer,
    XTransferResult,
    anchor_separability,
    build_model,
    fit_anchors,
    mmd2,
)

__all__ = [
    "LayerAnchors",
    "LayerRecombiner",
    "LightAdapter",
    "SensorDomain",
    "ShapeAdapter",
    "SignalStem",
    "SourceModel",
    "SpectrogramStem",
    "TransferredModel",
    "XTransfer",
    "XTransferResult",
    "anchor_separability",
    "basic_motions",
    "build_model",
    "cnn1d_source",
    "fit_anchors",
    "mmd2",
    "module_cost",
    "synthetic_imu",
    "tiny_clip_source",
]
