"""Numba kernels of the selection area: similarity rows, the penalised greedy, lazy and naive
facility-location greedy on a max-heap, the coverage update of the incremental greedy, vote-k.

Every kernel takes the prepared rows ``U`` (unit-normalised for the cosine metric, centred for
the Euclidean one) with their squared norms, a metric code and the Gaussian bandwidth ``h``
(Euclidean only), and builds similarities from one matrix-vector product per row, so no n x n
array is held. The similarity of the cosine metric is ``(1 + cos) / 2`` and that of the
Euclidean metric ``exp(-d^2 / (2 h^2))``: both lie in [0, 1], which keeps every objective here
submodular (a negative similarity would make the redundancy penalty reward overlap).
Ties go to the lower index everywhere, so the lazy and the naive greedy pick the same points.
"""

from __future__ import annotations

import math

import numpy as np

from statcore._numba import njit

#: metric codes
COSINE, EUCLIDEAN = 0, 1
#: penalty codes
PENALTY_MAX, PENALTY_SUM = 0, 1


@njit(fastmath=True)
def _to_similarity(gram_row, u_sq, j_sq, code, h, out):
    """Similarities of one point (squared norm ``j_sq``) to all, from its inner products."""
    if code == COSINE:
        for i in range(gram_row.shape[0]):
            out[i] = 0.5 + 0.5 * gram_row[i]
    else:
        scale = 1.0 / (2.0 * h * h)
        for i in range(gram_row.shape[0]):
            out[i] = math.exp(-max(u_sq[i] + j_sq - 2.0 * gram_row[i], 0.0) * scale)


@njit
def similarity_row(U, u_sq, j, code, h, out):
    """``out[i] = s(i, j)`` for every i; ``s(j, j) = 1`` exactly."""
    _to_similarity(np.dot(U, U[j]), u_sq, u_sq[j], code, h, out)
    out[j] = 1.0


@njit
def penalised_greedy(U, u_sq, code, h, base, weights, penalty):
    """Greedy on ``gain_t(j | S) = base[j] - weights[t] * R(j, S)``.

    ``R`` is ``max_{s in S} s(j, s)`` (``penalty`` 0) or the sum (1), 0 for the empty set.
    Returns the picks in order, each step's gain, its base part and its penalty part (the
    subtracted ``weights[t] * R``). O(n d) per step: one similarity row per pick.
    """
    n = U.shape[0]
    budget = weights.shape[0]
    order = np.empty(budget, dtype=np.int64)
    gains = np.empty(budget)
    parts_base = np.empty(budget)
    parts_penalty = np.empty(budget)
    redundancy = np.zeros(n)
    taken = np.zeros(n, dtype=np.bool_)
    row = np.empty(n)
    for t in range(budget):
        best, best_gain = -1, -np.inf
        w = weights[t]
        for j in range(n):
            if taken[j]:
                continue
            g = base[j] - w * redundancy[j]
            if g > best_gain:
                best, best_gain = j, g
        order[t] = best
        gains[t] = best_gain
        parts_base[t] = base[best]
        parts_penalty[t] = w * redundancy[best]
        taken[best] = True
        similarity_row(U, u_sq, best, code, h, row)
        if penalty == PENALTY_MAX:
            for i in range(n):
                if row[i] > redundancy[i]:
                    redundancy[i] = row[i]
        else:
            for i in range(n):
                redundancy[i] += row[i]
    return order, gains, parts_base, parts_penalty


@njit
def _heap_before(keys, ids, a, b):
    """Whether entry a sits above entry b in the max-heap (larger key, then lower id)."""
    return keys[a] > keys[b] or (keys[a] == keys[b] and ids[a] < ids[b])


@njit
def _heap_swap(keys, ids, a, b):
    keys[a], keys[b] = keys[b], keys[a]
    ids[a], ids[b] = ids[b], ids[a]


@njit
def _sift_down(keys, ids, size, pos):
    while True:
        left = 2 * pos + 1
        if left >= size:
            return
        top = left
        right = left + 1
        if right < size and _heap_before(keys, ids, right, left):
            top = right
        if not _heap_before(keys, ids, top, pos):
            return
        _heap_swap(keys, ids, top, pos)
        pos = top


@njit
def _heapify(keys, ids):
    size = keys.shape[0]
    for pos in range(size // 2 - 1, -1, -1):
        _sift_down(keys, ids, size, pos)


@njit(fastmath=True)
def _coverage_gain(row, current):
    total = 0.0
    for i in range(row.shape[0]):
        d = row[i] - current[i]
        if d > 0.0:
            total += d
    return total


@njit
def facility_location_lazy(U, u_sq, code, h, upper, budget):
    """Lazy greedy (Minoux) for ``F(S) = sum_i max_{s in S} s(i, s)`` on a max-heap.

    ``upper`` holds each point's gain on the empty set (its similarity column sum), an upper
    bound on every later gain by submodularity. The top of the heap is re-evaluated (one
    similarity row, O(n d)); when its fresh gain still beats the next stale bound, or ties it
    with a lower index, it is the greedy choice. Returns the picks, their gains and the number
    of gain evaluations.
    """
    n = U.shape[0]
    keys = upper.copy()
    ids = np.arange(n)
    _heapify(keys, ids)
    fresh = np.full(n, -1, dtype=np.int64)  # the step at which a key was last re-evaluated
    current = np.zeros(n)
    row = np.empty(n)
    order = np.empty(budget, dtype=np.int64)
    gains = np.empty(budget)
    size = n
    evaluations = 0
    for t in range(budget):
        while True:
            j = ids[0]
            if fresh[j] == t:
                break
            similarity_row(U, u_sq, j, code, h, row)
            keys[0] = _coverage_gain(row, current)
            fresh[j] = t
            evaluations += 1
            _sift_down(keys, ids, size, 0)
        order[t] = j
        gains[t] = keys[0]
        size -= 1
        _heap_swap(keys, ids, 0, size)
        _sift_down(keys, ids, size, 0)
        similarity_row(U, u_sq, j, code, h, row)
        for i in range(n):
            if row[i] > current[i]:
                current[i] = row[i]
    return order, gains, evaluations


@njit
def similarity_block(gram, rows, u_sq, code, h):
    """Turn ``gram[r, j]``, the inner products of prepared rows ``rows[r]`` and j, into
    similarities in place (``s(i, i) = 1`` exactly, as in :func:`similarity_row`)."""
    m, n = gram.shape
    scale = 1.0 / (2.0 * h * h)
    for r in range(m):
        i = rows[r]
        if code == COSINE:
            for j in range(n):
                gram[r, j] = 0.5 + 0.5 * gram[r, j]
        else:
            for j in range(n):
                gram[r, j] = math.exp(-max(u_sq[i] + u_sq[j] - 2.0 * gram[r, j], 0.0) * scale)
        gram[r, i] = 1.0


#: candidates per chunk of :func:`coverage_drop` (16 KB of gains: they stay in L1)
_CHUNK = 2048


@njit(fastmath=True)
def _drop_columns(S, at, old, new, scale, gains, err, delta, lo, hi):
    # slices rather than offset indices let LLVM vectorise the inner loop
    g = gains[lo:hi]
    e = err[lo:hi]
    for r in range(at.shape[0]):
        row = S[at[r], lo:hi]
        o, c = old[r], new[r]
        edge = o - delta
        for j in range(hi - lo):
            v = np.float64(row[j])
            g[j] -= scale * max(min(v, c) - o, 0.0)
            e[j] += delta if v > edge else 0.0


@njit
def coverage_drop(S, at, old, new, gains, err, delta, scale=1.0):
    """Subtract from ``gains[j]`` what candidate j loses when the coverage of the points whose
    similarity rows are ``S[at[r]]`` rises from ``old[r]`` to ``new[r]``:
    ``(s - old)_+ - (s - new)_+ = (min(s, new) - old)_+``.

    ``S`` may instead hold an affine image ``(s - a) / scale`` of the similarities, with
    ``old`` and ``new`` mapped the same way (the cosine metric's inner products: a = scale =
    1/2), or rounded similarities (float32, scale 1), each within ``delta`` of the exact
    one: a term is 1-Lipschitz in s and exactly 0 while s <= old - delta, so ``err[j]`` grows
    by ``delta`` for each other term, a bound on what the rounding moved ``gains[j]``.

    Serial: the pass is bound by memory bandwidth, and with numba's threads the whole
    greedy took 3.3 s against 2.0 s on the benchmark's (shared) 2-core machine. The rows
    stream past a chunk of columns that stays in L1.
    """
    n = gains.shape[0]
    for lo in range(0, n, _CHUNK):
        _drop_columns(S, at, old, new, scale, gains, err, delta, lo, min(lo + _CHUNK, n))


@njit
def coverage_gains(U, u_sq, code, h, candidates, current):
    """Fresh gains ``sum_i (s(i, j) - current_i)_+`` of the given candidates (one row each)."""
    n = U.shape[0]
    row = np.empty(n)
    out = np.empty(candidates.shape[0])
    for c in range(candidates.shape[0]):
        similarity_row(U, u_sq, candidates[c], code, h, row)
        out[c] = _coverage_gain(row, current)
    return out


@njit
def facility_location_naive(S, budget):
    """Plain greedy for facility location on a dense similarity matrix ``S`` (the reference:
    every gain re-evaluated at every step, the first maximum taken)."""
    n = S.shape[0]
    current = np.zeros(n)
    taken = np.zeros(n, dtype=np.bool_)
    order = np.empty(budget, dtype=np.int64)
    gains = np.empty(budget)
    for t in range(budget):
        best, best_gain = -1, -np.inf
        for j in range(n):
            if taken[j]:
                continue
            g = _coverage_gain(S[j], current)
            if g > best_gain:
                best, best_gain = j, g
        order[t] = best
        gains[t] = best_gain
        taken[best] = True
        for i in range(n):
            if S[best, i] > current[i]:
                current[i] = S[best, i]
    return order, gains


@njit
def vote_k(voter_ptr, voters, budget):
    """Vote-k (Su et al., 2023): ``score(u) = sum_{v votes u, v not in S} 10^(-c(v))``.

    ``voters[voter_ptr[u]:voter_ptr[u + 1]]`` are the points that hold u among their k nearest
    neighbours; ``c(v)`` counts the selected points v voted for. A pick raises ``c`` of its
    voters. Points nobody votes for score 0. Returns the picks and their scores.
    """
    n = voter_ptr.shape[0] - 1
    count = np.zeros(n, dtype=np.int64)
    taken = np.zeros(n, dtype=np.bool_)
    order = np.empty(budget, dtype=np.int64)
    scores = np.empty(budget)
    for t in range(budget):
        best, best_score = -1, -1.0
        for u in range(n):
            if taken[u]:
                continue
            score = 0.0
            for p in range(voter_ptr[u], voter_ptr[u + 1]):
                v = voters[p]
                if not taken[v]:
                    score += 10.0 ** (-count[v])
            if score > best_score:
                best, best_score = u, score
        order[t] = best
        scores[t] = best_score
        taken[best] = True
        for p in range(voter_ptr[best], voter_ptr[best + 1]):
            count[voters[p]] += 1
    return order, scores
