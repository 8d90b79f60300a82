"""Numba kernels of the coresets (private), beside the shared ones of ``_kernels.py``.

- hashed keys: a uniform in (0, 1) for every (seed, stream, point id), from two rounds of
  splitmix64, so that two runs that share the seed draw the same key for the same point however
  the rest of the data changed (the consistent sampling of the resilient coreset);
- D^z seeding (k-means++ / k-median++) from the caller's uniforms, and its consistent twin, an
  exponential race on hashed keys: point p wins step t with probability proportional to
  ``w_p d(p, S)^z`` and, under a (1 + eps) change of every distance, the winner changes only when
  the two best race times lie within a factor (1 + O(eps)) of each other;
- nearest centres by blocks of rows: one matrix product per block, ``|x|^2 + |c|^2 - 2 x.c``
  on coordinates shifted by the centres' mean (the rounding error of a squared distance is
  about 1e-16 times the squared distances to that mean), the blocks spread over numba's
  threads with one BLAS thread each (as :mod:`statcore.neighbours` does);
- weighted Lloyd iterations: the weighted mean for k-means, one Weiszfeld step per cluster for
  the (continuous) k-median; the k-means' assignments are the blocked products above;
- the randomised-threshold assignment of the resilient coreset.

No kernel draws random numbers: uniforms come in as arrays, or as a seed that is hashed.
"""

from __future__ import annotations

import numpy as np
from numba import prange
from threadpoolctl import ThreadpoolController

from statcore._numba import njit
from statcore.cluster._kernels import nearest_centre, squared_distance

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_STREAM = np.uint64(0xD1B54A32D192ED03)
_CONTROLLER = []


def one_blas_thread():
    """A context holding BLAS to one thread: the blocked products are small, and BLAS's own
    threads only wait on each other there (on a busy machine, tenfold slower and more).

    The controller is built once (finding the loaded BLAS libraries takes about 10 ms).
    """
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


#: rows per block of the nearest-centre products: a (512, d) block and its (512, k) products
#: stay in cache, and a million rows still make thousands of blocks to spread over threads
BLOCK = 512


@njit
def _splitmix(x):
    z = x + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit
def _key(seed, stream, ident):
    """A uniform in (0, 1), a fixed function of (seed, stream, id)."""
    h = _splitmix(_splitmix(np.uint64(seed) ^ (np.uint64(stream) * _STREAM)) ^ np.uint64(ident))
    return (float(h >> np.uint64(11)) + 0.5) * 2.0**-53


@njit
def hashed_uniforms(seed, stream, ids):
    """``_key(seed, stream, id)`` for every id (int64)."""
    out = np.empty(ids.shape[0])
    for i in range(ids.shape[0]):
        out[i] = _key(seed, stream, ids[i])
    return out


@njit
def _update_nearest(X, c, nearest):
    n = X.shape[0]
    for i in range(n):
        acc = squared_distance(X, i, X, c)
        if acc < nearest[i]:
            nearest[i] = acc


@njit
def _mass(w, nearest, t, power, out):
    total = 0.0
    for i in range(w.shape[0]):
        if t == 0:
            out[i] = w[i]
        elif power == 2:
            out[i] = w[i] * nearest[i]
        else:
            out[i] = w[i] * np.sqrt(nearest[i])
        total += out[i]
    return total


@njit
def _potential(X, w, c, nearest, power):
    """``sum_i w_i min(nearest_i, |x_i - x_c|^2)^(power/2)``: the cost after adding row c."""
    n = X.shape[0]
    total = 0.0
    for i in range(n):
        acc = squared_distance(X, i, X, c)
        if acc > nearest[i]:
            acc = nearest[i]
        total += w[i] * (acc if power == 2 else np.sqrt(acc))
    return total


@njit
def _pick_best(X, w, candidates, nearest, power, t):
    """The candidate that lowers the cost most (the first; greedy k-means++)."""
    if t == 0 or candidates.shape[0] == 1:
        return candidates[0]
    best = np.inf
    pick = candidates[0]
    for j in range(candidates.shape[0]):
        value = _potential(X, w, candidates[j], nearest, power)
        if value < best:
            best = value
            pick = candidates[j]
    return pick


@njit
def seed_dz(X, w, u, power):
    """Greedy D^z seeding (k-means++ for power 2) from uniforms ``u`` of shape (k, trials).

    Step t draws ``trials`` candidates with probabilities proportional to ``w`` (t = 0) or to
    ``w * d(p, chosen)^power`` and keeps the one that lowers the cost most (scikit-learn's
    greedy k-means++; one trial is plain k-means++). Draws whose mass is 0 (fewer distinct
    points than centres) take the lowest row not yet on a centre.
    """
    n = X.shape[0]
    k, trials = u.shape
    out = np.empty(k, dtype=np.int64)
    nearest = np.full(n, np.inf)
    mass = np.empty(n)
    candidates = np.empty(trials, dtype=np.int64)
    for t in range(k):
        total = _mass(w, nearest, t, power, mass)
        for j in range(trials):
            pick = -1
            if total > 0.0:
                target = u[t, j] * total
                acc = 0.0
                for i in range(n):
                    acc += mass[i]
                    if acc >= target and mass[i] > 0.0:
                        pick = i
                        break
                if pick < 0:  # rounding left the target just past the last positive mass
                    for i in range(n - 1, -1, -1):
                        if mass[i] > 0.0:
                            pick = i
                            break
            if pick < 0:
                pick = 0
                while pick < n - 1 and nearest[pick] == 0.0:
                    pick += 1
            candidates[j] = pick
        out[t] = _pick_best(X, w, candidates, nearest, power, t)
        _update_nearest(X, out[t], nearest)
    return out


@njit
def seed_race(X, w, ids, seed, k, trials, power):
    """Consistent greedy D^z seeding: trial j of step t is argmin_p E / (w_p d(p, chosen)^power)
    with E = -log(key(seed, 64 t + j, id_p)) (step 0 races on ``w``), the law of
    :func:`seed_dz`'s draws; the best trial is kept as there."""
    n = X.shape[0]
    out = np.empty(k, dtype=np.int64)
    nearest = np.full(n, np.inf)
    mass = np.empty(n)
    candidates = np.empty(trials, dtype=np.int64)
    for t in range(k):
        _mass(w, nearest, t, power, mass)
        for j in range(trials):
            best = np.inf
            pick = -1
            for i in range(n):
                if mass[i] <= 0.0:
                    continue
                time = -np.log(_key(seed, 64 * t + j, ids[i])) / mass[i]
                if time < best:
                    best = time
                    pick = i
            candidates[j] = max(pick, 0)
        out[t] = _pick_best(X, w, candidates, nearest, power, t)
        _update_nearest(X, out[t], nearest)
    return out


@njit
def _nearest_rows(X, i0, i1, C, c_sq, offset, labels, sq, buf):
    """Rows i0:i1's nearest centres (ties to the lower centre) and squared distances, from one
    product of the shifted block ``X[i0:i1] - offset`` with the shifted centres ``C``."""
    rows, d = i1 - i0, X.shape[1]
    k = C.shape[0]
    block = buf[:rows]
    for a in range(rows):
        for t in range(d):
            block[a, t] = X[i0 + a, t] - offset[t]
    gram = np.dot(block, C.T)
    for a in range(rows):
        x_sq = 0.0
        for t in range(d):
            x_sq += block[a, t] * block[a, t]
        arg = 0
        top = c_sq[0] - 2.0 * gram[a, 0]
        for c in range(1, k):
            value = c_sq[c] - 2.0 * gram[a, c]
            if value < top:
                top = value
                arg = c
        labels[i0 + a] = arg
        sq[i0 + a] = max(x_sq + top, 0.0)


@njit
def _nearest_serial(X, C, c_sq, offset, labels, sq):
    n = X.shape[0]
    buf = np.empty((BLOCK, X.shape[1]))
    for i0 in range(0, n, BLOCK):
        _nearest_rows(X, i0, min(i0 + BLOCK, n), C, c_sq, offset, labels, sq, buf)


@njit(parallel=True)
def _nearest_parallel(X, C, c_sq, offset, labels, sq):
    n = X.shape[0]
    for b in prange((n + BLOCK - 1) // BLOCK):
        buf = np.empty((BLOCK, X.shape[1]))
        i0 = b * BLOCK
        _nearest_rows(X, i0, min(i0 + BLOCK, n), C, c_sq, offset, labels, sq, buf)


def nearest(X, C, *, parallel: bool = True):
    """Each row's nearest centre and squared distance, ``(labels, sq)``, by blocked products.

    ``X`` and ``C`` are float64 C-contiguous. The coordinates are shifted by the centres' mean
    first, so the rounding error is relative to the spread of the data around the centres,
    not to their distance from the origin; ``parallel=True`` spreads the blocks over numba's
    threads and gives the same result (each row's arithmetic is the same).
    """
    offset = C.mean(axis=0)
    shifted = np.ascontiguousarray(C - offset)
    c_sq = np.einsum("ij,ij->i", shifted, shifted)
    labels = np.empty(X.shape[0], dtype=np.int64)
    sq = np.empty(X.shape[0])
    kernel = _nearest_parallel if parallel else _nearest_serial
    with one_blas_thread():
        kernel(X, shifted, c_sq, offset, labels, sq)
    return labels, sq


@njit
def sensitivity(w, dist, labels, k):
    """Sampling probabilities ``q ~ w_p (cost(p, A) / cost(C_a, A) + 1 / w(C_a))`` of the rows
    (rows of weight 0, and the cost share of a cluster that costs 0, get 0)."""
    n = w.shape[0]
    cluster_cost = np.zeros(k)
    cluster_weight = np.zeros(k)
    for i in range(n):
        cluster_cost[labels[i]] += w[i] * dist[i]
        cluster_weight[labels[i]] += w[i]
    q = np.empty(n)
    total = 0.0
    for i in range(n):
        c = labels[i]
        if w[i] == 0.0:
            q[i] = 0.0
            continue
        share = dist[i] / cluster_cost[c] if cluster_cost[c] > 0.0 else 0.0
        q[i] = w[i] * (share + 1.0 / cluster_weight[c])
        total += q[i]
    for i in range(n):
        q[i] /= total
    return q


@njit
def _assign_cost(X, w, C, power, labels, dist, zero, buf):
    """Nearest centre of every row (ties to the lower centre) and the weighted cost.

    k-means (power 2) uses the blocked products on ``X`` as given (the caller has centred it);
    the k-median's Weiszfeld weights 1/d need distances exact near 0, so it sums coordinates.
    """
    n = X.shape[0]
    if power == 2:
        k = C.shape[0]
        c_sq = np.empty(k)
        for c in range(k):
            c_sq[c] = np.dot(C[c], C[c])
        for i0 in range(0, n, BLOCK):
            _nearest_rows(X, i0, min(i0 + BLOCK, n), C, c_sq, zero, labels, dist, buf)
    else:
        for i in range(n):
            labels[i], top = nearest_centre(X, i, C)
            dist[i] = np.sqrt(top)
    cost = 0.0
    for i in range(n):
        cost += w[i] * dist[i]
    return cost


@njit
def lloyd(X, w, C0, power, maxiter, tol):
    """Weighted Lloyd iterations from the centres ``C0``.

    Each iteration moves every centre to its cluster's weighted mean (power 2) or takes one
    Weiszfeld step towards its cluster's weighted geometric median (power 1), then reassigns;
    it stops when the relative decrease of the weighted cost is at most ``tol``. A cluster left
    empty is moved onto the row with the largest weighted cost. Rows sitting on their centre
    (closer than 1e-9 of the mean distance) are left out of the Weiszfeld step, whose weight
    1/d would pin the centre there; a step that raised the cost is undone, and the loop stops.

    The iterations run on coordinates centred at the weighted mean (the blocked products'
    rounding is then relative to the data's spread); the caller holds BLAS to one thread.

    Returns ``(centres, labels, dist, cost, n_iter, last_relative_decrease, cost_history)``.
    """
    n, d = X.shape
    k = C0.shape[0]
    total_weight = w.sum()
    mean = np.zeros(d)
    if total_weight > 0.0:
        for i in range(n):
            for t in range(d):
                mean[t] += w[i] * X[i, t]
        mean /= total_weight
    X = X - mean
    C = C0 - mean
    zero = np.zeros(d)
    buf = np.empty((BLOCK, d))
    labels = np.empty(n, dtype=np.int64)
    dist = np.empty(n)
    history = np.empty(maxiter + 1)
    cost = _assign_cost(X, w, C, power, labels, dist, zero, buf)
    history[0] = cost
    rel = np.inf
    n_iter = 0
    sums = np.empty((k, d))
    mass = np.empty(k)
    members = np.empty(k, dtype=np.int64)
    previous_C = C.copy()
    for it in range(1, maxiter + 1):
        sums[:] = 0.0
        mass[:] = 0.0
        members[:] = 0
        previous_C[:] = C
        floor = 1e-9 * cost / total_weight if total_weight > 0.0 else 0.0
        for i in range(n):
            c = labels[i]
            if power == 2:
                a = w[i]
            elif dist[i] > floor:
                a = w[i] / dist[i]
            else:
                a = 0.0
            members[c] += 1
            mass[c] += a
            for t in range(d):
                sums[c, t] += a * X[i, t]
        for c in range(k):
            if mass[c] > 0.0:
                for t in range(d):
                    C[c, t] = sums[c, t] / mass[c]
            elif members[c] == 0:
                far = 0
                top = -1.0
                for i in range(n):
                    if w[i] * dist[i] > top:
                        top = w[i] * dist[i]
                        far = i
                for t in range(d):
                    C[c, t] = X[far, t]
                dist[far] = 0.0
        previous = cost
        cost = _assign_cost(X, w, C, power, labels, dist, zero, buf)
        history[it] = cost
        n_iter = it
        rel = (previous - cost) / previous if previous > 0.0 else 0.0
        if rel < 0.0:
            C[:] = previous_C
            cost = _assign_cost(X, w, C, power, labels, dist, zero, buf)
            history[it] = cost
            rel = 0.0
        if rel <= tol:
            break
    return C + mean, labels, dist, cost, n_iter, rel, history[: n_iter + 1]


@njit
def _removal_losses(X, w, C, power):
    """Per centre, the cost added when it is removed and its rows go to their second nearest,
    and the row with the largest weighted cost, with that cost."""
    n = X.shape[0]
    k = C.shape[0]
    loss = np.zeros(k)
    far, top = 0, -1.0
    for i in range(n):
        first, second, arg = np.inf, np.inf, 0
        for c in range(k):
            acc = squared_distance(X, i, C, c)
            if acc < first:
                second = first
                first = acc
                arg = c
            elif acc < second:
                second = acc
        if power == 1:
            first, second = np.sqrt(first), np.sqrt(second)
        loss[arg] += w[i] * (second - first)
        if w[i] * first > top:
            top = w[i] * first
            far = i
    return loss, far, top


@njit
def swap_search(X, w, C, cost, power, maxiter, tol, run):
    """Single swaps after Lloyd: move the centre whose removal costs least onto the row with the
    largest weighted cost, rerun Lloyd, keep the result while the cost falls (at most k swaps).

    Lloyd cannot leave the local optimum in which one centre serves two far-apart groups while
    two others split one group; on clusters of very unequal sizes a small far cluster holds the
    costliest row, and one swap covers it. The row's own cost need not exceed the removal loss
    (its cluster's other rows gain too), so every swap is tried and judged by Lloyd's cost.
    ``run`` is the last Lloyd run's ``(n_iter, rel, history)``, returned for the kept solution.
    """
    for _ in range(C.shape[0]):
        loss, far, _ = _removal_losses(X, w, C, power)
        c = np.argmin(loss)
        trial = C.copy()
        trial[c] = X[far]
        C2, _, _, cost2, it, rel, history = lloyd(X, w, trial, power, maxiter, tol)
        if not cost2 < cost:
            break
        C, cost, run = C2, cost2, (it, rel, history)
    return C, cost, run


@njit(parallel=True)
def lloyd_starts(X, w, U, power, maxiter, tol):
    """Greedy D^z seeding from ``U[s]`` (shape (k, trials)), :func:`lloyd` and
    :func:`swap_search`, for every start s; the starts are spread over numba's threads (each
    start's arithmetic is the same in any order, so the result does not depend on the thread
    count).

    Returns ``(centres, costs, n_iter, last_relative_decrease, histories)`` stacked over the
    starts; row s of ``histories`` holds ``n_iter[s] + 1`` costs, then NaN.
    """
    n_starts, k = U.shape[0], U.shape[1]
    d = X.shape[1]
    centres = np.empty((n_starts, k, d))
    costs = np.empty(n_starts)
    n_iter = np.empty(n_starts, dtype=np.int64)
    rels = np.empty(n_starts)
    histories = np.full((n_starts, maxiter + 1), np.nan)
    for s in prange(n_starts):
        start = X[seed_dz(X, w, U[s], power)]
        C, _, _, cost, it, rel, history = lloyd(X, w, start, power, maxiter, tol)
        C, cost, (it, rel, history) = swap_search(
            X, w, C, cost, power, maxiter, tol, (it, rel, history)
        )
        centres[s] = C
        costs[s] = cost
        n_iter[s] = it
        rels[s] = rel
        histories[s, : it + 1] = history
    return centres, costs, n_iter, rels, histories


#: row chunks of the full-data Lloyd step, each with its own sums: a fixed count, so that the
#: sums' rounding does not depend on the number of threads
STEP_CHUNKS = 64


@njit(parallel=True)
def _lloyd_step(X, w, C, c_sq, offset):
    n, d = X.shape
    k = C.shape[0]
    sums = np.zeros((STEP_CHUNKS, k, d))
    mass = np.zeros((STEP_CHUNKS, k))
    per_chunk = (n + STEP_CHUNKS - 1) // STEP_CHUNKS
    per_chunk = ((per_chunk + BLOCK - 1) // BLOCK) * BLOCK
    for chunk in prange(STEP_CHUNKS):
        buf = np.empty((BLOCK, d))
        labels = np.empty(BLOCK, dtype=np.int64)
        sq = np.empty(BLOCK)
        start = chunk * per_chunk
        stop = min(start + per_chunk, n)
        for i0 in range(start, stop, BLOCK):
            i1 = min(i0 + BLOCK, stop)
            _nearest_rows(X[i0:i1], 0, i1 - i0, C, c_sq, offset, labels, sq, buf)
            for a in range(i1 - i0):
                c = labels[a]
                weight = w[i0 + a]
                mass[chunk, c] += weight
                for t in range(d):
                    sums[chunk, c, t] += weight * X[i0 + a, t]
    return sums.sum(axis=0), mass.sum(axis=0)


def lloyd_step(X, w, C):
    """One weighted Lloyd step of the k-means on the data ``X``: assign every row to its
    nearest centre of ``C`` (blocked products), then move each centre to its cluster's
    weighted mean; a centre that no row chose stays where it was."""
    offset = C.mean(axis=0)
    shifted = np.ascontiguousarray(C - offset)
    c_sq = np.einsum("ij,ij->i", shifted, shifted)
    with one_blas_thread():
        sums, mass = _lloyd_step(X, w, shifted, c_sq, offset)
    out = np.array(C, dtype=np.float64)
    chosen = mass > 0
    out[chosen] = sums[chosen] / mass[chosen, None]
    return out


@njit
def threshold_assign(X, C, seed, ids, slack, power):
    """The resilient assignment rule: row i goes to the lowest-numbered centre within a factor
    ``1 + slack * u_i`` of its nearest distance, ``u_i`` a hashed key of its id.

    Returns ``(labels, dist)`` with ``dist`` the distance (power 1) or squared distance (power 2)
    to the chosen centre.
    """
    n = X.shape[0]
    k = C.shape[0]
    labels = np.empty(n, dtype=np.int64)
    dist = np.empty(n)
    row = np.empty(k)
    for i in range(n):
        top = np.inf
        for c in range(k):
            acc = squared_distance(X, i, C, c)
            row[c] = np.sqrt(acc)
            if row[c] < top:
                top = row[c]
        limit = top * (1.0 + slack * _key(seed, 1 << 40, ids[i]))
        for c in range(k):
            if row[c] <= limit:
                labels[i] = c
                dist[i] = row[c] * row[c] if power == 2 else row[c]
                break
    return labels, dist
