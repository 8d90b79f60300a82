"""Unsupervised coreset selection for few-shot in-context learning: the process-aware greedy
and its baselines (facility location, Sub-SA's graph cut, vote-k, k-centre, random) on any
embedding matrix, reusing the clustering area's geometry kernels.

References
----------
Unsupervised process-aware coreset selection for in-context learning. ICML 2026, poster 64776
(https://icml.cc/virtual/2026/poster/64776).
"""

from statcore.select.model import CoresetSelector, SelectionResults

__all__ = ["CoresetSelector", "SelectionResults"]
