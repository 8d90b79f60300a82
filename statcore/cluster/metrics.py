"""Scores of a clustering: external metrics against true classes (ARI, AMI, NMI, matched
accuracy), the Hungarian matching of two labelings, and the label-free selection criteria
(silhouette, Calinski-Harabasz, Davies-Bouldin).

ARI, AMI and NMI are scikit-learn's (the ``cluster`` extra); the matching is scipy's
``linear_sum_assignment``.

References
----------
Kuhn, H. W. (1955). The Hungarian method for the assignment problem. *Naval Research Logistics
Quarterly* 2, 83-97. Hubert, L. and Arabie, P. (1985). Comparing partitions. *Journal of
Classification* 2, 193-218. Vinh, N. X., Epps, J. and Bailey, J. (2010). Information theoretic
measures for clusterings comparison. *JMLR* 11, 2837-2854. Davies, D. L. and Bouldin, D. W.
(1979). A cluster separation measure. *IEEE TPAMI* 1, 224-227.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from statcore.cluster import _kernels as K
from statcore.compat import import_optional
from statcore.validation import describe

#: The silhouette criterion is computed on at most this many points (a seeded subsample): it
#: costs O(n^2 d) per trial.
_CRITERION_MAX_POINTS = 5000


def _encode(labels, *, name: str) -> np.ndarray:
    raw = np.asarray(labels)
    if raw.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D; got {describe(labels)}")
    return np.unique(raw, return_inverse=True)[1].astype(np.int64)


def contingency(labels_a, labels_b, *, names=("labels_true", "labels_pred")) -> np.ndarray:
    """The contingency table of two labelings of the same points (rows: ``labels_a``).

    Parameters
    ----------
    labels_a, labels_b : array_like of shape (n,)
        Any hashable labels.
    names : pair of str
        The argument names that errors quote.

    Returns
    -------
    ndarray of int64, shape (n_labels_a, n_labels_b)
    """
    a = _encode(labels_a, name=names[0])
    b = _encode(labels_b, name=names[1])
    if len(a) != len(b):
        raise ValueError(
            f"`{names[0]}` and `{names[1]}` must have the same length; got {len(a)} and {len(b)}"
        )
    if len(a) == 0:
        raise ValueError(f"`{names[0]}` must hold at least one label; got none")
    table = np.zeros((a.max() + 1, b.max() + 1), dtype=np.int64)
    np.add.at(table, (a, b), 1)
    return table


def matched_share(table: np.ndarray) -> float:
    """Share of the points on the best one-to-one matching of a contingency table's rows and
    columns (Hungarian method, ``scipy.optimize.linear_sum_assignment``); unmatched rows or
    columns count as disagreement."""
    rows, cols = optimize.linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / table.sum())


def clustering_accuracy(labels_true, labels_pred) -> float:
    """Share of points whose cluster is matched to their class by the best one-to-one matching.

    The matching maximises the agreement in the contingency table (Hungarian algorithm,
    ``scipy.optimize.linear_sum_assignment``); with more clusters than classes the unmatched
    clusters count as errors.

    Parameters
    ----------
    labels_true, labels_pred : array_like of shape (n,)
        Any hashable labels.

    Returns
    -------
    float

    References
    ----------
    Kuhn, H. W. (1955). The Hungarian method for the assignment problem. *Naval Research
    Logistics Quarterly* 2, 83-97; the ACC of CHB (ICML 2026, poster 65800).
    """
    return matched_share(contingency(labels_true, labels_pred))


def external_scores(labels_true, labels_pred) -> dict[str, float]:
    """ARI, AMI, NMI and Hungarian accuracy of a clustering against the true classes.

    Parameters
    ----------
    labels_true, labels_pred : array_like of shape (n,)
        Any hashable labels; a noise label (DBSCAN's -1) is one cluster like any other.

    Returns
    -------
    dict
        ``ari`` (adjusted Rand index), ``ami`` (adjusted mutual information), ``nmi``
        (normalised mutual information), ``acc`` (:func:`clustering_accuracy`): scikit-learn's
        ``adjusted_rand_score``, ``adjusted_mutual_info_score`` and
        ``normalized_mutual_info_score`` (arithmetic-mean normalisation).

    References
    ----------
    Hubert, L. and Arabie, P. (1985). Comparing partitions. *Journal of Classification* 2,
    193-218. Vinh, N. X., Epps, J. and Bailey, J. (2010). Information theoretic measures for
    clusterings comparison. *JMLR* 11, 2837-2854. CHB (ICML 2026, poster 65800) for their use.
    """
    table = contingency(labels_true, labels_pred)
    metrics = import_optional("sklearn.metrics", "cluster")
    t = _encode(labels_true, name="labels_true")
    p = _encode(labels_pred, name="labels_pred")
    return {
        "ari": float(metrics.adjusted_rand_score(t, p)),
        "ami": float(metrics.adjusted_mutual_info_score(t, p)),
        "nmi": float(metrics.normalized_mutual_info_score(t, p)),
        "acc": matched_share(table),
    }


def disagreement(labels_a, labels_b) -> float:
    """Fraction of points whose clusters differ after the best one-to-one matching of labels.

    ``1 - max_matching / n`` over the contingency table, the matching by the Hungarian method
    (scipy's ``linear_sum_assignment``): 0 for the same partition under any renaming.
    """
    return 1.0 - matched_share(contingency(labels_a, labels_b, names=("labels_a", "labels_b")))


def davies_bouldin(spreads: np.ndarray, centres: np.ndarray) -> float:
    """scikit-learn's Davies-Bouldin index from the clusters' mean distances to their centre
    (``spreads``) and the centres: mean over clusters of the worst ``(s_i + s_j) / d(c_i, c_j)``.
    Coinciding centres give ``inf``."""
    # the direct difference, not the Gram expansion: exact for near-coinciding centres
    gaps = np.sqrt(((centres[:, None, :] - centres[None, :, :]) ** 2).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (spreads[:, None] + spreads[None, :]) / gaps
    np.fill_diagonal(ratio, -np.inf)
    return float(np.nan_to_num(ratio, nan=0.0, posinf=np.inf).max(axis=1).mean())


def internal_score(X: np.ndarray, labels: np.ndarray, criterion: str, rng) -> float:
    """The label-free selection criterion, larger is better (Davies-Bouldin negated); NaN for
    one cluster or all singletons (the criteria are undefined there)."""
    labels = np.unique(labels, return_inverse=True)[1].astype(np.int64)
    n, k = len(labels), int(labels.max()) + 1
    if k < 2 or k >= n:
        return float("nan")
    if criterion == "silhouette":
        if n > _CRITERION_MAX_POINTS:
            keep = np.sort(rng.choice(n, _CRITERION_MAX_POINTS, replace=False))
            X, labels = X[keep], np.unique(labels[keep], return_inverse=True)[1]
            if labels.max() < 1:
                return float("nan")
        return float(K.silhouette_samples(X, labels).mean())
    counts = np.bincount(labels).astype(float)
    centres = np.zeros((k, X.shape[1]))
    np.add.at(centres, labels, X)
    centres /= counts[:, None]
    deviation = X - centres[labels]
    if criterion == "calinski_harabasz":
        within = float((deviation**2).sum())
        between = float((counts * ((centres - X.mean(axis=0)) ** 2).sum(axis=1)).sum())
        return 1.0 if within == 0 else between * (n - k) / (within * (k - 1))
    if criterion == "davies_bouldin":
        spread = np.bincount(labels, weights=np.sqrt((deviation**2).sum(axis=1))) / counts
        return -davies_bouldin(spread, centres)
    raise ValueError(
        f"`criterion` must be 'silhouette', 'calinski_harabasz' or 'davies_bouldin'; "
        f"got {criterion!r}"
    )
