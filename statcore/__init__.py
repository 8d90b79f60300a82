"""statcore: statistics-first implementations of ICML 2026 methods.

Public names are re-exported lazily, so ``import statcore`` stays cheap and the numba-heavy
method areas load only when used.
"""

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "Results": "statcore.results",
    "EstimationResults": "statcore.results",
    "LikelihoodResults": "statcore.results",
    "TestResult": "statcore.results",
    "ResamplingResult": "statcore.results",
    "Summary": "statcore.results",
    "compare": "statcore.results",
    "IterationRecord": "statcore.results",
    "Estimator": "statcore.base",
    "Model": "statcore.base",
    "LikelihoodModel": "statcore.base",
    "Design": "statcore.formula",
    "ConvergenceWarning": "statcore.exceptions",
    "NotApplicableWarning": "statcore.exceptions",
    "get_backend": "statcore.distributed",
    "borrowed_backend": "statcore.distributed",
    "MonteCarloStudy": "statcore.distributed",
    "warmup": "statcore._warmup",
}
_SUBMODULES = (
    "base",
    "cluster",
    "datasets",
    "distributed",
    "formula",
    "geometry",
    "manifold",
    "network",
    "outliers",
    "ot",
    "quantized",
    "quantreg",
    "results",
    "ridge",
    "select",
    "shift",
)

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"statcore.{name}")
    raise AttributeError(f"module 'statcore' has no attribute {name!r}")


def __dir__():
    return __all__
