"""numba kernels of MetaEns: average precision of many score columns, of every two-detector
mean ensemble, and the tail pair features. Private; ``_scores.py`` and ``metaens.py`` call them."""

from __future__ import annotations

import numpy as np

from statcore._numba import njit


@njit
def _ap_walk(s_sorted, y_sorted, n_pos):
    """AP of scores sorted decreasingly: precision counted once per group of tied scores, at
    the group's last row (scikit-learn's step-wise definition)."""
    n = len(s_sorted)
    tp = 0.0
    prev = 0.0
    ap = 0.0
    i = 0
    while i < n:
        j = i
        while j < n and s_sorted[j] == s_sorted[i]:
            tp += y_sorted[j]
            j += 1
        ap += (tp - prev) * tp / j
        prev = tp
        i = j
    return ap / n_pos


@njit
def ap_columns(y, S):
    """Average precision of every column of ``S`` against 0/1 labels ``y`` (n_pos > 0)."""
    n, m = S.shape
    n_pos = y.sum()
    out = np.empty(m)
    for j in range(m):
        col = -S[:, j]
        order = np.argsort(col)
        out[j] = _ap_walk(col[order], y[order], n_pos)
    return out


@njit
def ap_presorted(s_sorted, order, y):
    """Average precision of every column against ``y`` when each column's decreasing order
    (``order``) and sorted values (``s_sorted``) are known: O(n) per column, no sort."""
    n, m = order.shape
    n_pos = y.sum()
    out = np.empty(m)
    for j in range(m):
        out[j] = _ap_walk(s_sorted[:, j], y[order[:, j]], n_pos)
    return out


@njit
def pair_ap(y, norm):
    """(M, M): AP of the mean of columns p and q (the diagonal is column p's own AP)."""
    n, m = norm.shape
    n_pos = y.sum()
    out = np.empty((m, m))
    for p in range(m):
        for q in range(p, m):
            col = -(norm[:, p] + norm[:, q])
            order = np.argsort(col)
            out[p, q] = _ap_walk(col[order], y[order], n_pos)
    for p in range(m):
        for q in range(p):
            out[p, q] = out[q, p]
    return out


@njit
def tail_features(raw, norm, mask, p):
    """(M, 3) tail Pearson of the raw scores, mean positive and mean absolute difference of
    the normalised scores (q minus p), on the union of the top sets of p and of each q; zeros
    where the union has at most 2 rows, and a zero Pearson where either side is constant."""
    n, m = raw.shape
    out = np.zeros((m, 3))
    for q in range(m):
        cnt = 0
        sa = 0.0
        sb = 0.0
        pos = 0.0
        ab = 0.0
        for i in range(n):
            if mask[i, p] or mask[i, q]:
                cnt += 1
                sa += raw[i, p]
                sb += raw[i, q]
                d = norm[i, q] - norm[i, p]
                if d > 0:
                    pos += d
                ab += abs(d)
        if cnt <= 2:
            continue
        ma = sa / cnt
        mb = sb / cnt
        va = 0.0
        vb = 0.0
        cab = 0.0
        for i in range(n):
            if mask[i, p] or mask[i, q]:
                da = raw[i, p] - ma
                db = raw[i, q] - mb
                va += da * da
                vb += db * db
                cab += da * db
        if np.sqrt(va / cnt) > 1e-9 and np.sqrt(vb / cnt) > 1e-9:
            out[q, 0] = cab / np.sqrt(va * vb)
        out[q, 1] = pos / cnt
        out[q, 2] = ab / cnt
    return out
