"""Maximum likelihood from quantized data under normal variance-mean mixtures (ECM).

Public names: :class:`Quantizer`, :class:`QuantizedNVMM` (families ``gaussian``, ``t``,
``skew_t``, ``nig``, ``vg``, ``gh``; scalar cells, and Gaussian / t boxes),
:class:`QuantizedRegression`, :class:`QuantizedCovariance`, :class:`QuantizedMatrixCompletion`,
:class:`QuantizedCompressedSensing`, :func:`midpoint_impute`,
:class:`IdentifiabilityWarning`, and the paper's designs in :mod:`statcore.quantized.simulate`.

References
----------
Inference from quantized data under the normal variance-mean mixture (NVMM) framework
(ICML 2026).
"""

from statcore.quantized.completion import (
    QuantizedMatrixCompletion,
    QuantizedMatrixCompletionResults,
)
from statcore.quantized.covariance import QuantizedCovariance
from statcore.quantized.model import IdentifiabilityWarning, QuantizedNVMM, QuantizedNVMMResults
from statcore.quantized.quantizer import Quantizer, midpoint_impute
from statcore.quantized.regression import QuantizedRegression, QuantizedRegressionResults
from statcore.quantized.sensing import (
    QuantizedCompressedSensing,
    QuantizedCompressedSensingResults,
)

__all__ = [
    "IdentifiabilityWarning",
    "QuantizedCompressedSensing",
    "QuantizedCompressedSensingResults",
    "QuantizedCovariance",
    "QuantizedMatrixCompletion",
    "QuantizedMatrixCompletionResults",
    "QuantizedNVMM",
    "QuantizedNVMMResults",
    "QuantizedRegression",
    "QuantizedRegressionResults",
    "Quantizer",
    "midpoint_impute",
]
