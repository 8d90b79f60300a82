"""Clustering: hardness fingerprints and benchmarks, size-constrained anchor graph clustering,
coresets, capacitated fair-range clustering, on one set of shared geometry kernels (the
neighbour search is :mod:`statcore.neighbours`, shared with the other areas).

Vocabulary
----------
One name per concept across the area, the scikit-learn words: ``n_clusters`` is the number of
clusters, and also the number of centres where each cluster has one (k-means, k-median,
fair-range centres, a coreset's k); ``n_centres`` only where solutions may use more centres than
clusters (a coreset's bi-criteria count); ``n_neighbors`` is the number of neighbours of a
point (kNN purity, anchors per point); ``centre`` is the spelling of centre. Bounds keep the
scale they are given in (``size_bounds``); the same bounds on another scale have their own
name (``size_limits``, shares of the data). The older spellings (``k``, ``center``,
``center_box``, ``FairRangeResults.audit``) work for one release with a ``FutureWarning``.

References
----------
CHB: a diagnostic toolkit for hardness-aware clustering evaluation. ICML 2026 (poster 65800).
Liu, J. SC-FAGC: size constrained fast anchor-based graph clustering. ICML 2026 (poster 65836).
Prabhu, M., Schwiegelshohn, C. and Shyam, S. Approximation preserving coresets. ICML 2026,
arXiv:2606.17316.
Norouzi-Fard, A., Lattanzi, S., Bateni, M. and Monemizadeh, M. Resilient coresets and
consistent clustering. ICML 2026 (poster 65810).
Gadekar, A. and Thejaswi, S. Capacitated fair-range clustering: hardness and approximation
algorithms. arXiv:2505.15905.
"""

from statcore.cluster import simulate
from statcore.cluster.anchor import AnchorClusteringResults, SizeConstrainedAnchorClustering
from statcore.cluster.attribution import AuditResults
from statcore.cluster.benchmark import BenchmarkResults, ClusteringBenchmark
from statcore.cluster.coreset import Coreset, CoresetResults
from statcore.cluster.coreset_solvers import ApproximationCheck, CoresetSolution
from statcore.cluster.fairrange import FairRangeKClustering, FairRangeResults
from statcore.cluster.hardness import HardnessFingerprint, HardnessResults, fingerprint_map
from statcore.cluster.metrics import clustering_accuracy, disagreement, external_scores
from statcore.cluster.regimes import RegimeResults
from statcore.cluster.resilience import ResilienceResults, eps_close, resilience

__all__ = [
    "AnchorClusteringResults",
    "ApproximationCheck",
    "AuditResults",
    "BenchmarkResults",
    "ClusteringBenchmark",
    "Coreset",
    "CoresetResults",
    "CoresetSolution",
    "FairRangeKClustering",
    "FairRangeResults",
    "HardnessFingerprint",
    "HardnessResults",
    "RegimeResults",
    "ResilienceResults",
    "SizeConstrainedAnchorClustering",
    "clustering_accuracy",
    "disagreement",
    "eps_close",
    "external_scores",
    "fingerprint_map",
    "resilience",
    "simulate",
]
