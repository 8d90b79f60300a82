"""The resilience harness of resilient coresets: eps-close copies of a point set and the
measured disagreement (gamma-hat) of the resilient coreset pipeline, beside scikit-learn's
KMeans.

References
----------
Norouzi-Fard, A., Lattanzi, S., Bateni, M. and Monemizadeh, M. (2026). Resilient coresets and
consistent clustering. ICML 2026, poster 65810 (https://icml.cc/virtual/2026/poster/65810).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.cluster.coreset import TRANSFORMS, Coreset, _as_points
from statcore.cluster.metrics import disagreement
from statcore.compat import import_optional, renamed_keywords
from statcore.results import Results
from statcore.validation import (
    check_bool,
    check_option,
    check_positive_int,
    check_random_state,
    check_scalar,
)

__all__ = ["ResilienceResults", "eps_close", "resilience"]


def eps_close(X, eps: float, transform="linear", random_state=None) -> np.ndarray:
    """An eps-close copy of ``X``: its rows correspond, distances move by about a factor 1 + eps.

    ``"linear"``: ``X (I + E)`` with ``||E||_2 = eps / 2`` (every distance ratio in
    ``[1 - eps/2, 1 + eps/2]``: eps-close up to a global rescaling); ``"noise"``: Gaussian noise
    of standard deviation ``eps`` times the root mean squared coordinate spread / sqrt(d)
    (close in the bulk, not for near duplicates); ``"quantise"``: rounding to a grid of step
    ``eps`` times the coordinates' standard deviation. A callable ``transform(X, eps, rng)``
    is used as it is.
    """
    X = _as_points(X)
    eps = check_scalar(eps, name="eps", low=0.0)
    rng = check_random_state(random_state)
    if callable(transform):
        return np.ascontiguousarray(transform(X, eps, rng), dtype=np.float64)
    transform = check_option(transform, name="transform", options=TRANSFORMS)
    d = X.shape[1]
    if eps == 0:
        return np.array(X)
    if transform == "linear":
        E = rng.normal(size=(d, d))
        E *= (eps / 2) / np.linalg.norm(E, 2)
        return X @ (np.eye(d) + E)
    if transform == "noise":
        spread = math.sqrt(float(X.var(axis=0).sum()))
        return X + rng.normal(scale=eps * spread / math.sqrt(d), size=X.shape)
    step = eps * X.std(axis=0)
    step[step == 0] = 1.0
    return np.round(X / step) * step


def _plot_resilience(res, ax=None, **kwargs):
    """Mean disagreement against eps, the coreset pipeline beside KMeans."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    g = res.gamma_hat
    ax.plot(g["eps"], g["coreset_mean"], "o-", label="resilient coreset", **kwargs)
    if g["kmeans_mean"].notna().any():
        ax.plot(g["eps"], g["kmeans_mean"], "s--", label="scikit-learn KMeans")
    ax.set_xlabel("eps")
    ax.set_ylabel("disagreement (Hungarian-matched)")
    ax.legend(loc="best")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ResilienceResults(Results):
    """Measured disagreement of clusterings of X and of eps-close copies.

    Attributes
    ----------
    table : DataFrame
        One row per (eps, seed): ``eps, seed, coreset`` (our pipeline's Hungarian-matched
        disagreement) and ``kmeans`` (scikit-learn ``KMeans(n_init=1)`` with the same seed on
        both instances; NaN without scikit-learn).
    gamma_hat : DataFrame
        Per eps: the mean disagreement and ``gamma_hat = max over seeds of disagreement / eps``
        for both (NaN at eps = 0).
    """

    table: pd.DataFrame
    gamma_hat: pd.DataFrame

    _plots: ClassVar[dict] = {"disagreement": _plot_resilience}

    def tidy(self) -> pd.DataFrame:
        return self.gamma_hat.copy()


@renamed_keywords(k="n_clusters")
def resilience(
    X,
    n_clusters: int,
    *,
    transform: str | Callable = "linear",
    eps_grid: Sequence[float] = (0.01, 0.05, 0.1),
    size: int = 1000,
    n_seeds: int = 5,
    objective: str = "kmeans",
    bicriteria: float = 0.0,
    slack: float = 0.0,
    compare_kmeans: bool = True,
    random_state=None,
) -> ResilienceResults:
    """Measure gamma-hat of the resilient coreset pipeline against scikit-learn KMeans.

    For each eps and seed: an eps-close copy X' of X (:func:`eps_close`, drawn from its own
    stream), a resilient coreset of each with the same seed, the consistent solve, the labels of
    all points by the resilient rule, and the Hungarian-matched :func:`disagreement` between
    the two labelings; KMeans(n_init=1, random_state=seed) is run on the same pair.

    Parameters
    ----------
    X : array_like of shape (n, d)
    n_clusters : int
        Number of clusters (``k=`` is its old spelling, warns ``FutureWarning``).
    transform : {"linear", "noise", "quantise"} or callable
        See :func:`eps_close`.
    eps_grid : sequence of float
    size, objective, bicriteria, slack
        The resilient coreset's options (:meth:`Coreset.fit`).
    n_seeds : int
    compare_kmeans : bool
        Also run scikit-learn's KMeans (the ``cluster`` extra).
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    ResilienceResults

    Notes
    -----
    Fidelity: reconstruction. The eps-close generator (:func:`eps_close`) and the estimate
    ``gamma_hat = max over seeds of disagreement / eps`` are our reading of the abstract of
    Norouzi-Fard et al. (2026), which defines resilience as a bounded change of the clustering
    under eps-close inputs but does not fix a generator of such inputs.
    """
    X = _as_points(X)
    k = check_positive_int(n_clusters, name="n_clusters")
    n_seeds = check_positive_int(n_seeds, name="n_seeds")
    grid = [check_scalar(e, name="eps_grid", low=0.0) for e in np.atleast_1d(eps_grid)]
    compare_kmeans = check_bool(compare_kmeans, name="compare_kmeans")
    rng = check_random_state(random_state)
    cluster = import_optional("sklearn.cluster", "cluster") if compare_kmeans else None
    rows = []
    seeds = [int(s) for s in rng.integers(2**31 - 1, size=n_seeds)]
    for eps in grid:
        for seed in seeds:
            Xp = eps_close(X, eps, transform, random_state=np.random.default_rng([seed, 1]))
            labels = []
            for data in (X, Xp):
                res = Coreset(data, k, objective=objective).fit(
                    size=size,
                    method="resilient",
                    random_state=seed,
                    bicriteria=bicriteria,
                    slack=slack,
                )
                labels.append(res.solve().predict())
            row = {"eps": eps, "seed": seed, "coreset": disagreement(*labels)}
            if cluster is not None:
                km = [
                    cluster.KMeans(n_clusters=k, n_init=1, random_state=seed).fit_predict(data)
                    for data in (X, Xp)
                ]
                row["kmeans"] = disagreement(*km)
            else:
                row["kmeans"] = math.nan
            rows.append(row)
    table = pd.DataFrame(rows)
    summary = []
    for eps, group in table.groupby("eps", sort=True):
        entry = {"eps": eps}
        for name in ("coreset", "kmeans"):
            entry[f"{name}_mean"] = group[name].mean()
            entry[f"{name}_gamma_hat"] = group[name].max() / eps if eps > 0 else math.nan
        summary.append(entry)
    return ResilienceResults(
        method="Resilience of the resilient coreset pipeline",
        nobs=len(X),
        table=table,
        gamma_hat=pd.DataFrame(summary),
    )
