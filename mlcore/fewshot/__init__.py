"""Few-shot adaptation of a dual encoder: BOIF (Bayesian prior + likelihood fusion) and
Tip-Adapter.

- :class:`BOIFHead`: zero-shot prior logits plus a few-shot cache's likelihood logits, with an
  optional :class:`MultiLevelAdapter` trained on the support set; :class:`BOIFResult`.
- :class:`TipAdapter`: the training-free baseline, logits as in Tip-Adapter's code.
- :func:`cache_likelihood`: the caches ("prototype" vMF, "kde", "tip") on their own;
  :func:`vmf_concentration`: the shots' vMF concentration (``fit(tune_beta=True)``).
- :func:`compare_fewshot` / :class:`FewShotComparison`: BOIF, its pathways and Tip-Adapter over
  shots and seeds, with t-intervals; :func:`simulate_fewshot`: a synthetic task.
"""

from mlcore.fewshot.adapter import MultiLevelAdapter
from mlcore.fewshot.boif import (
    BOIFHead,
    BOIFResult,
    TipAdapter,
    cache_likelihood,
    vmf_concentration,
)
from mlcore.fewshot.simulate import FewShotTask, simulate_fewshot
from mlcore.fewshot.study import FewShotComparison, compare_fewshot

__all__ = [
    "BOIFHead",
    "BOIFResult",
    "FewShotComparison",
    "FewShotTask",
    "MultiLevelAdapter",
    "TipAdapter",
    "cache_likelihood",
    "compare_fewshot",
    "simulate_fewshot",
    "vmf_concentration",
]
