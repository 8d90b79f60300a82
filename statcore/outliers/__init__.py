"""Outlier detection: MetaEns, meta-learned selection of an outlier-detector ensemble.

References
----------
Phan, P., Vu, ., Kieu, T., Ha Xuan, T., Yang, B. and Jensen, C. S. MetaEns: meta-learned
ensemble selection for unsupervised outlier detection. ICML 2026 (arXiv:2605.16567).
"""

from pathlib import Path

import numpy as np

from statcore.outliers.metaens import (
    LODOResults,
    MetaEns,
    MetaEnsFit,
    MetaEnsSelection,
    discounted_greedy,
)
from statcore.outliers.pool import DetectorPool, detector_family, score_pool

__all__ = [
    "DetectorPool",
    "LODOResults",
    "MetaEns",
    "MetaEnsFit",
    "MetaEnsSelection",
    "detector_family",
    "discounted_greedy",
    "load_score_tables",
    "score_pool",
]


def load_score_tables(path=None) -> tuple[dict, tuple[str, ...]]:
    """The shipped score matrices: 40 PyOD detectors on 28 ADBench tables (at most 800 rows
    each; ``data/outliers/README.md`` has the provenance).

    Returns
    -------
    tables : dict
        ``{table name: (scores (n, 40) float64, y (n,) 0/1)}``, ready for ``MetaEns.fit``.
    detectors : tuple of str
        The column names (``DetectorPool().names``).
    """
    if path is None:
        path = Path(__file__).resolve().parent.parent / "datasets" / "_files" / "outliers"
        path = path / "scores.npz"
    with np.load(path) as z:
        tables = {
            str(t): (z[f"{t}__scores"].astype(np.float64), z[f"{t}__y"].astype(np.int64))
            for t in z["tables"]
        }
        names = tuple(str(n) for n in z["detectors"])
    return tables, names
