"""Few-shot adaptation of a dual encoder: BOIF (Bayesian prior + likelihood fusion) and
Tip-Adapter.

- :class:`BOIF`: the estimator; ``fit`` on a support set returns a :class:`BOIFResult` that
  carries the fitted :class:`BOIFHead` (zero-shot prior logits plus a few-shot cache's
  likelihood logits, with an optional :class:`MultiLevelAdapter` trained on the support set).
- :class:`TipAdapterClassifier`: the training-free baseline's estimator, fitting a
  :class:`TipAdapter` (logits as in Tip-Adapter's code).
- :func:`cache_likelihood`: the caches ("prototype" vMF, "kde", "tip") on their own;
  :func:`vmf_concentration`: the shots' vMF concentration (``fit(tune_beta=True)``).
- :func:`compare_fewshot` / :class:`FewShotComparison`: BOIF, its pathways and Tip-Adapter over
  shots and seeds, with t-intervals; :func:`simulate_fewshot`: a synthetic task.
"""

from mlcore.fewshot.adapter import MultiLevelAdapter
from mlcore.fewshot.boif import (
    BOIF,
    BOIFHead,
    BOIFResult,
    TipAdapter,
    TipAdapterClassifier,
    cache_likelihood,
    vmf_concentration,
)
from mlcore.fewshot.simulate import FewShotTask, simulate_fewshot
from mlcore.fewshot.study import FewShotComparison, compare_fewshot

__all__ = [
    "BOIF",
    "BOIFHead",
    "BOIFResult",
    "FewShotComparison",
    "FewShotTask",
    "MultiLevelAdapter",
    "TipAdapter",
    "TipAdapterClassifier",
    "cache_likelihood",
    "compare_fewshot",
    "simulate_fewshot",
    "vmf_concentration",
]
