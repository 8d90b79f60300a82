"""CoCoQuant: co-optimised communication and computation quantisation for tensor parallelism.

"CoCoQuant: Breaking the Bandwidth Wall via Co-Optimized Communication and Computation
Quantization", ICML 2026. Pieces, each usable alone:

- :func:`fused_allreduce_quantize` — the precision-aligned rewrite as ``torch.distributed``
  collectives (fp32 reduce-scatter, quantise each shard once, all-gather payload and scales);
  :func:`run_tensor_parallel` runs a :class:`TinyTPLM` forward across gloo processes and records
  bytes and wall time per collective; :func:`simulate_tp_allreduce` is the one-process check.
- :class:`HardwareSpec` / ``HARDWARE`` / :func:`measure_hardware` and
  :class:`RooflineCostModel` — the roofline cost of every op at every precision.
- :class:`SensitivityCalibrator` — relative Δloss of quantising one ``nn.Linear`` op at a time,
  on any model; :func:`linear_ops` builds the op list of any model.
- :func:`allocate_precision` / :func:`pareto_frontier` — the global integer program (cvxpy,
  HiGHS) with the alignment couplings, and its frontier against uniform baselines.

The tensor-parallel pieces live in :mod:`~mlcore.quant.collectives`, :mod:`~mlcore.quant.tp_model`,
:mod:`~mlcore.quant.corpus`, :mod:`~mlcore.quant.tp_train`, :mod:`~mlcore.quant.sharded`,
:mod:`~mlcore.quant.launch` and :mod:`~mlcore.quant.tp_results`.

Fidelity: reconstruction (only the abstract was read; each module's docstring says which
choices are this library's).
"""

from mlcore.quant.allocate import (
    AllocationResult,
    ParetoResult,
    allocate_precision,
    baseline_allocation,
    pareto_frontier,
)
from mlcore.quant.collectives import (
    CollectiveLog,
    allreduce_quantize,
    fused_allreduce_quantize,
    payload_linear,
    simulate_tp_allreduce,
)
from mlcore.quant.corpus import batches, synthetic_corpus
from mlcore.quant.cost import (
    HARDWARE,
    HardwareSpec,
    QuantOp,
    RooflineCostModel,
    measure_hardware,
)
from mlcore.quant.launch import check_rewrite, run_tensor_parallel
from mlcore.quant.quantizers import (
    dequantize,
    fake_quantize,
    pack_int4,
    quantize,
    quantized_linear,
    unpack_int4,
)
from mlcore.quant.sensitivity import (
    SensitivityCalibrator,
    SensitivityResult,
    evaluate_loss,
    linear_ops,
    quantized,
)
from mlcore.quant.tp_model import TinyTPLM, causal_lm_loss
from mlcore.quant.tp_results import TPRunResult
from mlcore.quant.tp_train import train_causal_lm

__all__ = [
    "HARDWARE",
    "AllocationResult",
    "CollectiveLog",
    "HardwareSpec",
    "ParetoResult",
    "QuantOp",
    "RooflineCostModel",
    "SensitivityCalibrator",
    "SensitivityResult",
    "TPRunResult",
    "TinyTPLM",
    "allocate_precision",
    "allreduce_quantize",
    "baseline_allocation",
    "batches",
    "causal_lm_loss",
    "check_rewrite",
    "dequantize",
    "evaluate_loss",
    "fake_quantize",
    "fused_allreduce_quantize",
    "linear_ops",
    "measure_hardware",
    "pack_int4",
    "pareto_frontier",
    "payload_linear",
    "quantize",
    "quantized",
    "quantized_linear",
    "run_tensor_parallel",
    "simulate_tp_allreduce",
    "synthetic_corpus",
    "train_causal_lm",
    "unpack_int4",
]
