"""Score statistics of MetaEns: normalisation, column-wise AP / ROC-AUC, top-fraction Jaccard,
the per-dataset statistics and the 20 pair features. Plain numpy (vectorised over detectors)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from statcore.outliers import _kernels as _K
from statcore.outliers.pool import detector_family

#: The 20 pair features of a (primary p, candidate q) pair, in column order.
PAIR_FEATURES = (
    "pearson",
    "tail_pearson",
    "jaccard",
    "rel_kurtosis",
    "tail_pos_disagreement",
    "centrality",
    "cand_std",
    "pseudo_ap",
    "pseudo_roc",
    "tail_entropy",
    "score_dist_l2",
    "cosine_dist",
    "tail_divergence",
    "same_family",
    "same_as_ensemble_count",
    "prim_std",
    "prim_entropy",
    "prim_centrality",
    "prim_kurtosis",
    "prim_skewness",
)
#: The 63 columns of a meta row: pair (p, q), mean over s of (p, s), mean over s of (s, q),
#: the set size and the largest and mean top-fraction Jaccard of q with the set.
META_FEATURES = (
    tuple(f"pq_{f}" for f in PAIR_FEATURES)
    + tuple(f"ps_{f}" for f in PAIR_FEATURES)
    + tuple(f"sq_{f}" for f in PAIR_FEATURES)
    + ("set_size", "sim_max", "sim_mean")
)


def minmax(S: np.ndarray) -> np.ndarray:
    """Each column mapped onto [0, 1]; a constant column becomes 0."""
    lo, hi = S.min(axis=0), S.max(axis=0)
    span = hi - lo
    safe = np.where(span > 0, span, 1.0)
    return np.where(span > 0, (S - lo) / safe, 0.0)


def average_precision(y: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Average precision of every column of ``S`` (higher = positive) against 0/1 labels ``y``:
    sklearn's step-wise definition, tied scores forming one threshold (NaN without positives)."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    S = np.asarray(S, dtype=np.float64).reshape(len(y), -1)
    if y.sum() == 0:
        return np.full(S.shape[1], np.nan)
    return _K.ap_columns(y, S)


def roc_auc(y: np.ndarray, S: np.ndarray) -> np.ndarray:
    """ROC-AUC of every column of ``S`` (Mann-Whitney with mid-ranks for ties)."""
    S = S.reshape(len(y), -1)
    pos = np.asarray(y) == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    if n_pos == 0 or n_neg == 0:
        return np.full(S.shape[1], np.nan)
    ranks = sps.rankdata(S, axis=0)
    return (ranks[pos].sum(axis=0) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def top_mask(S: np.ndarray, fraction: float = 0.1) -> np.ndarray:
    """Boolean (n, M): the ``max(1, floor(fraction n))`` highest scores of each column
    (ties go to the lower row index)."""
    n = S.shape[0]
    k = max(1, int(np.floor(fraction * n)))
    top = np.argsort(-S, axis=0, kind="stable")[:k]
    mask = np.zeros(S.shape, dtype=bool)
    np.put_along_axis(mask, top, True, axis=0)
    return mask


def jaccard_matrix(mask: np.ndarray) -> np.ndarray:
    """Jaccard similarity of the columns' top sets, by one matrix product (every set has the
    same size k, so |A u B| = 2k - |A n B|)."""
    m = mask.astype(np.float64)
    inter = m.T @ m
    k = m.sum(axis=0)
    return inter / (k[:, None] + k[None, :] - inter)


def discount(similarity, beta: float) -> np.ndarray:
    """The submodular discount gamma = 1 / (1 + beta * s), s clipped to [0, 1]."""
    return 1.0 / (1.0 + beta * np.clip(np.asarray(similarity, dtype=float), 0.0, 1.0))


@dataclass(frozen=True)
class ScoreStats:
    """Label-free statistics of one score matrix (everything the pair features read), with
    each normalised column's decreasing order and mid-ranks kept so that the pseudo-AP and
    pseudo-AUC of every candidate against a primary's top set need no sort."""

    raw: np.ndarray
    norm: np.ndarray
    order: np.ndarray
    sorted_norm: np.ndarray
    ranks: np.ndarray
    mask: np.ndarray
    jaccard: np.ndarray
    pearson: np.ndarray
    kurtosis: np.ndarray
    skewness: np.ndarray
    std: np.ndarray
    entropy: np.ndarray
    centrality: np.ndarray
    families: tuple[str, ...]

    @classmethod
    def from_scores(cls, S: np.ndarray, names, fraction: float = 0.1) -> ScoreStats:
        norm = minmax(S)
        order = np.argsort(-norm, axis=0, kind="stable")
        mask = top_mask(S, fraction)
        with np.errstate(all="ignore"):
            pearson = np.nan_to_num(np.corrcoef(S, rowvar=False))
            kurt = np.nan_to_num(sps.kurtosis(S, axis=0))
            skew = np.nan_to_num(sps.skew(S, axis=0))
        std = norm.std(axis=0)
        entropy = np.empty(S.shape[1])
        for j in range(S.shape[1]):
            hist, _ = np.histogram(norm[:, j], bins=10, density=True)
            entropy[j] = sps.entropy(hist + 1e-9)
        centre = norm.mean(axis=1)
        cn, cc = norm - norm.mean(axis=0), centre - centre.mean()
        denom = np.sqrt((cn**2).sum(axis=0) * (cc**2).sum())
        centrality = np.where(denom > 1e-12, cn.T @ cc / np.where(denom > 0, denom, 1.0), 0.0)
        return cls(
            raw=np.ascontiguousarray(S, dtype=np.float64),
            norm=norm,
            order=np.ascontiguousarray(order),
            sorted_norm=np.ascontiguousarray(np.take_along_axis(norm, order, axis=0)),
            ranks=sps.rankdata(norm, axis=0),
            mask=mask,
            jaccard=jaccard_matrix(mask),
            pearson=pearson,
            kurtosis=kurt,
            skewness=skew,
            std=std,
            entropy=entropy,
            centrality=centrality,
            families=tuple(detector_family(n) for n in names),
        )

    def pair_features(self, p: int) -> np.ndarray:
        """(M, 20) features of the pairs (p, q) for every q (row p is that of the pair (p, p)).

        Column 14, the authors' ``same_as_ensemble_count``, is 0 in their training and
        selection alike; it is kept (constant) so the 63 columns line up with theirs."""
        M = self.norm.shape[1]
        F = np.zeros((M, len(PAIR_FEATURES)))
        F[:, 0] = self.pearson[p]
        F[:, 2] = self.jaccard[p]
        F[:, 3] = self.kurtosis / max(self.kurtosis[p], 1e-3)
        F[:, 5] = self.centrality
        F[:, 6] = self.std
        labels = self.mask[:, p].astype(np.float64)
        n_pos = labels.sum()
        n_neg = len(labels) - n_pos
        F[:, 7] = _K.ap_presorted(self.sorted_norm, self.order, labels)
        F[:, 8] = (labels @ self.ranks - n_pos * (n_pos + 1) / 2) / max(n_pos * n_neg, 1.0)
        F[:, 9] = self.entropy
        F[:, 10] = np.linalg.norm(self.sorted_norm - self.sorted_norm[:, [p]], axis=0)
        norms = np.linalg.norm(self.norm, axis=0)
        F[:, 11] = 1.0 - self.norm[:, p] @ self.norm / (norms[p] * norms + 1e-9)
        F[:, 13] = [float(f == self.families[p]) for f in self.families]
        F[:, 15:20] = (
            self.std[p],
            self.entropy[p],
            self.centrality[p],
            self.kurtosis[p],
            self.skewness[p],
        )
        F[:, [1, 4, 12]] = _K.tail_features(self.raw, self.norm, self.mask, p)
        return np.nan_to_num(F, nan=0.0, posinf=1e9, neginf=-1e9)


def meta_rows(
    pq: np.ndarray,
    ps_mean: np.ndarray | None,
    sq_mean: np.ndarray | None,
    set_size: int,
    sim_max: np.ndarray | None,
    sim_mean: np.ndarray | None,
) -> np.ndarray:
    """Stack the 63 meta columns for a block of candidates (zeros for an empty set)."""
    n, f = pq.shape
    zeros = np.zeros((n, f))
    ps = zeros if ps_mean is None else np.broadcast_to(ps_mean, (n, f))
    sq = zeros if sq_mean is None else sq_mean
    tail = np.column_stack(
        [
            np.full(n, float(set_size)),
            np.zeros(n) if sim_max is None else sim_max,
            np.zeros(n) if sim_mean is None else sim_mean,
        ]
    )
    return np.hstack([pq, ps, sq, tail])
