"""Old home of the tensor-parallel pieces, kept for one release.

The module was split by job: :mod:`mlcore.quant.collectives` (the rewrite and its reference),
:mod:`mlcore.quant.tp_model` (:class:`~mlcore.quant.TinyTPLM`, the LM loss),
:mod:`mlcore.quant.corpus`, :mod:`mlcore.quant.tp_train`, :mod:`mlcore.quant.sharded` (one
rank's forward), :mod:`mlcore.quant.launch` (the gloo runs) and :mod:`mlcore.quant.tp_results`.
Every public name is importable from :mod:`mlcore.quant`; reading one from here warns
``FutureWarning`` and returns the object from its new module.
"""

from __future__ import annotations

import importlib
import warnings

#: old name -> the module that now holds it
_MOVED = {
    "CollectiveLog": "collectives",
    "allreduce_quantize": "collectives",
    "fused_allreduce_quantize": "collectives",
    "payload_linear": "collectives",
    "simulate_tp_allreduce": "collectives",
    "TinyTPLM": "tp_model",
    "causal_lm_loss": "tp_model",
    "batches": "corpus",
    "synthetic_corpus": "corpus",
    "train_causal_lm": "tp_train",
    "tp_forward": "sharded",
    "TPRunResult": "tp_results",
    "check_rewrite": "launch",
    "run_tensor_parallel": "launch",
}


def __getattr__(name: str):
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home = f"mlcore.quant.{_MOVED[name]}"
    warnings.warn(
        f"mlcore.quant.tp.{name} is now {home}.{name} (also importable from mlcore.quant); "
        "mlcore.quant.tp will be removed in the next release",
        FutureWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(home), name)
