"""Weighted solvers run on a coreset (Lloyd, weighted k-median, k-medoids, scikit-learn's
KMeans, the consistent seeding of resilient coresets) and the results they return: the
solution on a coreset and the Monte Carlo approximation check.

References
----------
Prabhu et al. (2026) and Norouzi-Fard et al. (2026), cited in full in
:mod:`statcore.cluster.coreset`.

Arthur, D. and Vassilvitskii, S. (2007). k-means++: the advantages of careful seeding. SODA 2007.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from statcore.cluster import _coreset_kernels as CK
from statcore.cluster import _kernels as K
from statcore.compat import import_optional
from statcore.results import IterationRecord, Results

__all__ = ["ApproximationCheck", "CoresetSolution"]


def _costs(X, centres, power: int) -> np.ndarray:
    """Each row's distance (power 1) or squared distance (power 2) to its nearest centre."""
    if power == 2:
        return CK.nearest(X, np.ascontiguousarray(centres, dtype=np.float64))[1]
    return np.sqrt(K.assign_nearest(X, centres)[1])


def _solve(P, w, ids, key_seed, power, algorithm, n_centres, n_init, maxiter, tol, rng, starts=()):
    """``(centres, weighted cost, iteration record)`` of ``algorithm`` on the points ``P``.

    ``starts`` are centre sets to run Lloyd from besides the ``n_init`` seeded starts (the
    coreset construction's solution); the lowest weighted cost on ``P`` wins.
    """
    if algorithm in ("lloyd", "sklearn"):
        power = 2
    elif algorithm == "kmedian":
        power = 1
    function = f"CoresetResults.solve({algorithm!r})"
    if algorithm == "sklearn":
        return _solve_sklearn(P, w, n_centres, n_init, maxiter, tol, rng, function)
    # scikit-learn's number of greedy k-means++ trials
    trials = 2 + int(math.log(n_centres))
    if algorithm == "kmedoids":
        seeds = [CK.seed_dz(P, w, rng.random((n_centres, trials)), power) for _ in range(n_init)]
        return _best_of([_kmedoids(P, w, s, power, maxiter, function) for s in seeds])
    with CK.one_blas_thread():
        if algorithm == "consistent":
            seeded = [CK.seed_race(P, w, ids, key_seed, n_centres, trials, power)]
            runs = [_lloyd(P, w, P[seeded[0]], power, maxiter, tol, function)]
        else:
            U = rng.random((n_init, n_centres, trials))
            centres, costs, n_iter, rels, histories = CK.lloyd_starts(P, w, U, power, maxiter, tol)
            runs = [
                (
                    centres[s],
                    float(costs[s]),
                    _record(
                        function, n_iter[s], rels[s], histories[s, : n_iter[s] + 1], maxiter, tol
                    ),
                )
                for s in range(n_init)
            ]
        runs += [_lloyd(P, w, C, power, maxiter, tol, function) for C in starts]
    return _best_of(runs)


def _best_of(runs):
    """The run with the lowest coreset cost: ``(centres, cost, record)``."""
    return min(runs, key=lambda run: run[1])


def _record(function, n_iter, rel, history, maxiter, tol):
    return IterationRecord.from_run(
        function=function,
        n_iter=int(n_iter),
        maxiter=maxiter,
        tol=tol,
        criterion="relative decrease of the weighted cost",
        last_value=float(rel),
        met=rel <= tol,
        history=pd.DataFrame({"iteration": np.arange(len(history)), "cost": history}),
        warn=False,
    )


def _lloyd(P, w, C0, power, maxiter, tol, function):
    C, _, _, cost, n_iter, rel, history = CK.lloyd(
        P, w, np.ascontiguousarray(C0), power, maxiter, tol
    )
    return C, float(cost), _record(function, n_iter, rel, history, maxiter, tol)


def _kmedoids(P, w, start, power, maxiter, function):
    """Weighted alternating k-medoids (Park and Jun, 2009): assign, then move each medoid to
    the member with the least weighted cost to its cluster, until the medoids stay."""
    medoids = np.array(start)
    history, met = [], False
    for _ in range(maxiter):
        labels, sq = K.assign_nearest(P, P[medoids])
        dist = sq if power == 2 else np.sqrt(sq)
        history.append(float(w @ dist))
        new = medoids.copy()
        for c in range(len(medoids)):
            members = np.flatnonzero(labels == c)
            if len(members) == 0:
                continue
            D = K.pairwise_distances(P[members], metric="sqeuclidean")
            if power == 1:
                D = np.sqrt(D)
            new[c] = members[np.argmin(D @ w[members])]
        if np.array_equal(new, medoids):
            met = True
            break
        medoids = new
    labels, sq = K.assign_nearest(P, P[medoids])
    cost = float(w @ (sq if power == 2 else np.sqrt(sq)))
    record = IterationRecord.from_run(
        function=function,
        n_iter=len(history),
        maxiter=maxiter,
        tol=None,
        criterion="medoids changed",
        last_value=0.0 if met else 1.0,
        met=met,
        history=pd.DataFrame({"iteration": np.arange(len(history)), "cost": history}),
        warn=False,
    )
    return P[medoids].copy(), cost, record


def _solve_sklearn(P, w, n_centres, n_init, maxiter, tol, rng, function):
    cluster = import_optional("sklearn.cluster", "cluster")
    km = cluster.KMeans(
        n_clusters=n_centres,
        n_init=n_init,
        max_iter=maxiter,
        tol=tol,
        random_state=int(rng.integers(2**31 - 1)),
    ).fit(P, sample_weight=w)
    centres = np.ascontiguousarray(km.cluster_centers_, dtype=np.float64)
    cost = float(w @ _costs(P, centres, 2))
    record = IterationRecord.from_run(
        function=function,
        n_iter=int(km.n_iter_),
        maxiter=maxiter,
        tol=tol,
        criterion="scikit-learn's centre shift",
        met=int(km.n_iter_) < maxiter,
        warn=False,
    )
    return centres, cost, record


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class CoresetSolution(Results):
    """Centres found on a coreset.

    Attributes
    ----------
    centres : ndarray of shape (n_centres, d)
    coreset_cost_value : float
        Its weighted cost on the coreset.
    algorithm : str
    coreset : CoresetResults
        The coreset it was found on (its data give :meth:`cost` and :meth:`predict`).
    """

    centres: np.ndarray
    coreset_cost_value: float
    algorithm: str
    coreset: Any = field(default=None, repr=False)

    def cost(self, X=None, weights=None) -> float:
        """The solution's cost on the data (``cost_P``)."""
        return self.coreset.cost(self.centres, X, weights)

    def predict(self, X=None) -> np.ndarray:
        """Labels of the data under the coreset's assignment rule."""
        return self.coreset.predict(self.centres, X)

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["algorithm"] = self.algorithm
        row["n_centres"] = len(self.centres)
        row["coreset_cost"] = self.coreset_cost_value
        return row


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ApproximationCheck(Results):
    """Monte Carlo approximation ratios ``cost_P(S_Omega) / best cost_P`` of one coreset law.

    Attributes
    ----------
    ratios, costs : ndarray of shape (n_repeats,)
    best_cost, reference_cost : float
        The denominator, and the best full-data run alone.
    estimate, conf_low, conf_high : float
        The mean ratio and its t-interval at level ``1 - alpha``.
    """

    ratios: np.ndarray
    costs: np.ndarray
    best_cost: float
    reference_cost: float
    estimate: float
    conf_low: float
    conf_high: float
    alpha: float
    algorithm: str
    size: int
    construction: str

    def tidy(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "term": "approximation ratio",
                    "estimate": self.estimate,
                    "std_error": float(self.ratios.std(ddof=1) / math.sqrt(len(self.ratios))),
                    "conf_low": self.conf_low,
                    "conf_high": self.conf_high,
                    "max": float(self.ratios.max()),
                    "n_repeats": len(self.ratios),
                }
            ]
        )

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["construction"] = self.construction
        row["size"] = self.size
        row["estimate"] = self.estimate
        return row
