"""Numba kernels of the coresets (private), beside the shared ones of ``_kernels.py``.

- hashed keys: a uniform in (0, 1) for every (seed, stream, point id), from two rounds of
  splitmix64, so that two runs that share the seed draw the same key for the same point however
  the rest of the data changed (the consistent sampling of the resilient coreset);
- D^z seeding (k-means++ / k-median++) from the caller's uniforms, and its consistent twin, an
  exponential race on hashed keys: point p wins step t with probability proportional to
  ``w_p d(p, S)^z`` and, under a (1 + eps) change of every distance, the winner changes only when
  the two best race times lie within a factor (1 + O(eps)) of each other;
- weighted Lloyd iterations: the weighted mean for k-means, one Weiszfeld step per cluster for
  the (continuous) k-median;
- the randomised-threshold assignment of the resilient coreset.

No kernel draws random numbers: uniforms come in as arrays, or as a seed that is hashed.
"""

from __future__ import annotations

import numpy as np

from statcore._numba import njit
from statcore.cluster._kernels import nearest_centre

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_STREAM = np.uint64(0xD1B54A32D192ED03)


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
    n, d = X.shape
    for i in range(n):
        acc = 0.0
        for t in range(d):
            diff = X[i, t] - X[c, t]
            acc += diff * diff
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
    n, d = X.shape
    total = 0.0
    for i in range(n):
        acc = 0.0
        for t in range(d):
            diff = X[i, t] - X[c, t]
            acc += diff * diff
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
def _assign_cost(X, w, C, power, labels, dist):
    """Nearest centre of every row (ties to the lower centre) and the weighted cost."""
    cost = 0.0
    for i in range(X.shape[0]):
        labels[i], top = nearest_centre(X, i, C)
        dist[i] = top if power == 2 else np.sqrt(top)
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

    Returns ``(centres, labels, dist, cost, n_iter, last_relative_decrease, cost_history)``.
    """
    n, d = X.shape
    k = C0.shape[0]
    C = C0.copy()
    labels = np.empty(n, dtype=np.int64)
    dist = np.empty(n)
    history = np.empty(maxiter + 1)
    cost = _assign_cost(X, w, C, power, labels, dist)
    history[0] = cost
    rel = np.inf
    n_iter = 0
    sums = np.empty((k, d))
    mass = np.empty(k)
    members = np.empty(k, dtype=np.int64)
    previous_C = C.copy()
    total_weight = w.sum()
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
        cost = _assign_cost(X, w, C, power, labels, dist)
        history[it] = cost
        n_iter = it
        rel = (previous - cost) / previous if previous > 0.0 else 0.0
        if rel < 0.0:
            C[:] = previous_C
            cost = _assign_cost(X, w, C, power, labels, dist)
            history[it] = cost
            rel = 0.0
        if rel <= tol:
            break
    return C, labels, dist, cost, n_iter, rel, history[: n_iter + 1]


@njit
def threshold_assign(X, C, seed, ids, slack, power):
    """The resilient assignment rule: row i goes to the lowest-numbered centre within a factor
    ``1 + slack * u_i`` of its nearest distance, ``u_i`` a hashed key of its id.

    Returns ``(labels, dist)`` with ``dist`` the distance (power 1) or squared distance (power 2)
    to the chosen centre.
    """
    n, d = X.shape
    k = C.shape[0]
    labels = np.empty(n, dtype=np.int64)
    dist = np.empty(n)
    row = np.empty(k)
    for i in range(n):
        top = np.inf
        for c in range(k):
            acc = 0.0
            for t in range(d):
                diff = X[i, t] - C[c, t]
                acc += diff * diff
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
