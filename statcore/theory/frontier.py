"""Learning a new task from few samples when benchmark risks are known: prune to the Pareto
frontier, cover it, and hedge on it.

Weak monotonicity (Yang, Di Gennaro, So and Wegel 2026): if a model's risk is no larger than
another's on every benchmark, its risk on the new (target) task is no larger either. Then the
target's best model lies on the Pareto frontier ``P`` of the benchmark-risk vectors, and a learner
with ``n`` target samples can restrict itself to ``P`` (or to a cover of ``P``) and pay
``log |P|`` instead of ``log |F|``; an aggregate whose prior mixes the frontier with the whole
class keeps a fallback when monotonicity fails, at the price of ``log 2``.

- :func:`pareto_frontier`: the non-dominated models (a sort-filter skyline; a sweep for two
  benchmarks), with an ``eps``-dominance variant.
- :func:`pareto_cover`: a greedy farthest-point cover of the frontier in the sup-norm.
- :class:`FrontierSelector`: frontier ERM, penalised cover-radius choice and aggregation
  (exponential weights, Q-aggregation) with the mixed prior; the results report ``|F|``,
  ``|P|``, ``N(P, r)`` and the estimated monotonicity-violation rate with intervals.
- :class:`FrontierDesign`: the simulation design of the method notes; ``predict`` gives the
  oracle-inequality scale of the aggregates, ``simulate`` the learners' excess target risks.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import special, stats

from statcore.base import Estimator
from statcore.results import IterationRecord, ResamplingResult, Results
from statcore.results.plotting import get_ax
from statcore.theory import _frontier_kernels as _K
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive_int,
    check_random_state,
    check_scalar,
    describe,
)

REFERENCE = (
    "Yang, F., Di Gennaro, F., So, G. and Wegel, T. (2026). Hedging on the frontier: learning "
    "new tasks with few samples. arXiv:2605.30997 (ICML 2026)."
)
SCHEMES = ("ew", "q")
PRIORS = ("mixed", "frontier", "uniform")
#: Dominated pairs the violation rate is computed from; beyond it a uniform sample is used
#: (the rate's bootstrap interval then also carries the pair-sampling error, which at 5,000
#: pairs is at most 0.007 in standard deviation).
MAX_PAIRS = 5000


# --------------------------------------------------------------------------------------------
# input checks


def _labels_of(value) -> pd.Index | None:
    return value.index if isinstance(value, pd.DataFrame | pd.Series) else None


def _check_risks(benchmark_risks, *, name: str) -> tuple[np.ndarray, pd.Index | None]:
    """Risks as a float (M, K) copy, plus the model labels of a DataFrame (unique)."""
    labels = _labels_of(benchmark_risks)
    if labels is not None and not labels.is_unique:
        dup = labels[labels.duplicated()].tolist()[:3]
        raise ValueError(f"`{name}` has duplicate model labels in its index: {dup}")
    R = as_float_array(benchmark_risks, name=name, ndim=(1, 2), min_rows=1)
    if R.ndim == 1:
        R = R[:, None]
    if R.shape[1] == 0:
        raise ValueError(f"`{name}` has no benchmark columns")
    if (R < 0).any():
        where = tuple(np.argwhere(R < 0)[0].tolist())
        raise ValueError(
            f"`{name}` must hold non-negative risks; found {int((R < 0).sum())} negative "
            f"value(s) (first {R[where]:g} at index {where}); shift or transform losses that "
            "can be negative (dominance is unchanged by increasing transforms)"
        )
    return R, labels


def _check_eps(eps, n_benchmarks: int) -> np.ndarray:
    values = as_float_array(eps, name="eps", ndim=(0, 1))
    values = np.broadcast_to(values, (n_benchmarks,)) if values.ndim == 0 else values
    if values.shape != (n_benchmarks,):
        raise ValueError(
            f"`eps` must be a scalar or hold one slack per benchmark ({n_benchmarks}); "
            f"got shape {values.shape}"
        )
    if (values < 0).any():
        raise ValueError(f"`eps` must be non-negative; got {values.tolist()}")
    return np.ascontiguousarray(values, dtype=np.float64)


def _align(frame_or_array, models: pd.Index, *, name: str, axis: int) -> np.ndarray:
    """Reorder a DataFrame's model axis (index for ``axis=0``, columns for 1) to ``models``;
    refuse labels that do not match. Arrays must already have ``len(models)`` along ``axis``."""
    if isinstance(frame_or_array, pd.DataFrame):
        labels = frame_or_array.index if axis == 0 else frame_or_array.columns
        if not labels.is_unique:
            raise ValueError(f"`{name}` has duplicate model labels")
        missing = models.difference(labels, sort=False)
        extra = labels.difference(models, sort=False)
        if len(missing) or len(extra):
            raise ValueError(
                f"`{name}` and `models` list different models: missing from `{name}` "
                f"{missing.tolist()[:5]}, not in `models` {extra.tolist()[:5]}"
            )
        return frame_or_array.reindex(models, axis=axis)
    size = np.shape(frame_or_array)[axis] if np.ndim(frame_or_array) > axis else None
    if size != len(models):
        where = "rows" if axis == 0 else "columns"
        raise ValueError(
            f"`{name}` must have one {where[:-1]} per model ({len(models)} {where}); got "
            f"{describe(frame_or_array)}"
        )
    return frame_or_array


# --------------------------------------------------------------------------------------------
# frontier and cover


def _frontier_mask(R: np.ndarray, eps: np.ndarray) -> np.ndarray:
    if R.shape[1] == 2 and not eps.any():
        order = np.lexsort((R[:, 1], R[:, 0]))
        return _K.skyline_2d(R[:, 0].copy(), R[:, 1].copy(), order)
    keys = [R[:, k] for k in range(R.shape[1] - 1, -1, -1)] + [R.sum(axis=1)]
    return _K.skyline_sorted(R, np.lexsort(keys), eps)


def _brute_force_mask(R: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """The O(M^2 K) definition, blocked: the reference the skylines are tested against."""
    M = len(R)
    keep = np.ones(M, dtype=bool)
    for start in range(0, M, 256):
        block = R[start : start + 256]
        below = np.all(R[:, None, :] <= block[None, :, :] - eps, axis=2)
        differ = np.any(R[:, None, :] != block[None, :, :], axis=2)
        keep[start : start + 256] = ~np.any(below & differ, axis=0)
    return keep


def pareto_frontier(benchmark_risks, eps=0.0):
    """The models no other model dominates on the benchmarks (the Pareto frontier ``P``).

    Model ``g`` eps-dominates ``f`` when ``R_k(g) <= R_k(f) - eps_k`` on every benchmark ``k``
    and their risk vectors differ; with ``eps = 0`` this is Pareto dominance, and models with
    equal risk vectors stay (or leave) together. A larger ``eps`` keeps more models: only
    models beaten by a margin on every benchmark are dropped, which is the safe pruning under
    monotonicity with slack.

    Parameters
    ----------
    benchmark_risks : array_like of shape (M, K) or DataFrame
        Risk of each model (rows; the DataFrame's index names them) on each benchmark
        (columns); lower is better, non-negative, finite. Nothing is modified.
    eps : float or array_like of shape (K,)
        Dominance margin, per benchmark or shared (non-negative).

    Returns
    -------
    ndarray of bool of shape (M,), or Series of bool indexed by the models
        ``True`` for frontier models; ``benchmark_risks[mask]`` is the frontier.

    Notes
    -----
    With ``eps = 0`` the frontier is unchanged by any strictly increasing transform of each
    benchmark's risks (only their order enters); with ``eps > 0`` the margin is in the units
    of the risks. Two benchmarks and ``eps = 0``: one lexicographic sort and a sweep,
    O(M log M). Otherwise a sort-filter skyline: rows sorted by their sum (a dominating row
    comes first) are compared only with the frontier found so far, ``O(M log M + M |P| K)``.

    Fidelity: the frontier is the paper's; the eps-dominance variant is our reading of its
    approximate monotonicity (only the abstract was available).

    References
    ----------
    Yang, Di Gennaro, So and Wegel (2026), arXiv:2605.30997. Chomicki, Godfrey, Gryz and Liang
    (2003). Skyline with presorting. *ICDE*.

    Examples
    --------
    >>> pareto_frontier([[0.1, 0.9], [0.5, 0.5], [0.6, 0.6], [0.9, 0.1]]).tolist()
    [True, True, False, True]
    """
    R, labels = _check_risks(benchmark_risks, name="benchmark_risks")
    mask = _frontier_mask(R, _check_eps(eps, R.shape[1]))
    return mask if labels is None else pd.Series(mask, index=labels, name="on_frontier")


def _cover_path(R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Farthest-point (Gonzalez) order of the rows in the sup-norm and, for each prefix of
    ``k`` centres, its covering radius: the cover of radius ``r`` is the shortest prefix whose
    radius is at most ``r``. The first centre is the lexicographically smallest row."""
    M = len(R)
    order = np.empty(M, dtype=np.int64)
    radii = np.empty(M)
    first = int(np.lexsort(R.T[::-1])[0])
    order[0] = first
    dist = np.max(np.abs(R - R[first]), axis=1)
    for k in range(1, M + 1):
        radii[k - 1] = dist.max()
        if k == M:
            break
        nxt = int(np.argmax(dist))
        order[k] = nxt
        dist = np.minimum(dist, np.max(np.abs(R - R[nxt]), axis=1))
    return order, radii


def pareto_cover(frontier, r):
    """Representatives of the frontier such that every frontier model is within ``r`` of one
    (sup-norm over benchmarks); their number is the Pareto covering number ``N(P, r)``.

    Parameters
    ----------
    frontier : array_like of shape (m, K) or DataFrame
        Benchmark risks of the frontier models (``benchmark_risks[pareto_frontier(...)]``).
    r : float
        Radius (non-negative, in the units of the risks).

    Returns
    -------
    ndarray of int, or Index
        Positions of the representatives in ``frontier`` (the model labels for a DataFrame),
        in the order the greedy traversal picked them.

    Notes
    -----
    Farthest-point traversal (Gonzalez 1985): start from the lexicographically smallest risk
    vector and add the model farthest from the chosen ones until all lie within ``r``. The
    chosen models are more than ``r`` apart, so their number is at most the ``r``-packing
    number of ``P``, hence at most the covering number at radius ``r / 2``: the greedy count is
    within that factor of the smallest cover. The covers are nested in ``r``.

    Fidelity: reconstruction. The paper's Pareto covering number adapts to the frontier's
    geometry (only the abstract was available); the sup-norm cover of the frontier's risk
    vectors is our stand-in (a model within ``r`` of a representative on every benchmark is,
    under a monotonicity modulus ``omega``, within ``omega(r)`` of it on the target). A
    one-sided cover (every frontier model dominated up to ``r`` by a representative) is a
    natural alternative the paper may use instead; the two-sided one implies it.

    References
    ----------
    Yang, Di Gennaro, So and Wegel (2026), arXiv:2605.30997. Gonzalez, T. (1985). Clustering to
    minimize the maximum intercluster distance. *Theor. Comput. Sci.* 38, 293-306.
    """
    R, labels = _check_risks(frontier, name="frontier")
    r = check_scalar(r, name="r", low=0.0)
    order, radii = _cover_path(R)
    k = int(np.argmax(radii <= r)) + 1
    chosen = order[:k]
    return chosen if labels is None else labels[chosen]


# --------------------------------------------------------------------------------------------
# learners on the target sample (shared by the selector and the simulator)


def _mixed_prior(M: int, cover: np.ndarray, kind: str) -> np.ndarray:
    """Prior over the M models: uniform on the cover, uniform on all, or their half-half mix."""
    on_cover = np.zeros(M)
    on_cover[cover] = 1.0 / len(cover)
    if kind == "frontier":
        return on_cover
    if kind == "uniform":
        return np.full(M, 1.0 / M)
    return 0.5 * on_cover + 0.5 / M


def _exponential_weights(risks: np.ndarray, prior: np.ndarray, n: int, beta: float):
    """``theta_j ~ prior_j exp(-n risk_j / beta)``, computed in log space."""
    with np.errstate(divide="ignore"):
        logits = np.log(prior) - n * risks / beta
    return np.exp(logits - special.logsumexp(logits))


def _q_aggregation(F, y, risks, prior, beta, *, nu=0.5, maxiter=2000, tol=1e-10):
    """Minimise ``nu R_n(f_theta) + (1 - nu) sum theta_j R_n(f_j) + (beta / n) KL(theta, prior)``
    over the simplex by mirror descent (multiplicative steps, halved when the objective rises),
    from the exponential-weights solution (the ``nu = 0`` optimum). Returns the weights and the
    ``IterationRecord``."""
    n = len(y)
    support = prior > 0
    Fs, logp, rs = F[:, support], np.log(prior[support]), risks[support]
    scale = beta / n

    def objective(theta):
        resid = y - Fs @ theta
        kl = np.sum(theta * (np.log(np.maximum(theta, 1e-300)) - logp))
        return nu * np.mean(resid**2) + (1 - nu) * theta @ rs + scale * kl

    theta = _exponential_weights(rs, np.exp(logp), n, beta)
    value, step, change = objective(theta), 1.0, np.inf
    history = []
    n_iter, stalled = 0, False
    for n_iter in range(1, maxiter + 1):
        grad = -2 * nu * (Fs.T @ (y - Fs @ theta)) / n + (1 - nu) * rs
        target = logp - grad / scale
        while True:
            logits = (1 - step) * np.log(np.maximum(theta, 1e-300)) + step * target
            new = np.exp(logits - special.logsumexp(logits))
            new_value = objective(new)
            if new_value <= value + 1e-15 * abs(value) or step < 1e-12:
                break
            step /= 2
        change = float(np.abs(new - theta).sum())
        theta, value = new, new_value
        history.append((n_iter, value, change))
        if change <= tol:
            break
        if step < 1e-12:
            stalled = True
            break
        step = min(1.0, 2 * step)
    record = IterationRecord.from_run(
        function="FrontierSelector.fit",
        n_iter=n_iter,
        maxiter=maxiter,
        tol=tol,
        criterion="l1 change of the Q-aggregation weights",
        last_value=change,
        stalled=stalled,
        history=pd.DataFrame(history, columns=["iteration", "objective", "change"]),
    )
    out = np.zeros(len(prior))
    out[support] = theta
    return out, record


def _comparison_scale(L: np.ndarray) -> float:
    """Median standard deviation of each model's losses minus the per-sample mean over the
    models: the spread that comparisons between models see (the part of the loss common to
    all models, such as the target noise, cancels in them)."""
    if L.shape[1] < 2:
        return float(np.std(L, ddof=1))
    return float(np.median((L - L.mean(axis=1, keepdims=True)).std(axis=0, ddof=1)))


def _cover_choice(risks_on_path: np.ndarray, radii: np.ndarray, scale: float, n: int, c: float):
    """ERM over each prefix of the cover path and the penalised criterion
    ``min risk + c * scale * sqrt(2 log k / n)``; returns (table arrays, chosen prefix size)."""
    k = np.arange(1, len(risks_on_path) + 1)
    erm = np.minimum.accumulate(risks_on_path)
    criterion = erm + c * scale * np.sqrt(2 * np.log(k) / n)
    return k, erm, criterion, int(np.argmin(criterion)) + 1


# --------------------------------------------------------------------------------------------
# results


def _plot_frontier(results, ax=None, benchmarks=(0, 1), **kwargs):
    """Benchmark risks of all models (grey), the frontier (blue), the cover (red crosses), and
    the aggregate's weights as marker areas (two benchmarks, ``benchmarks=`` picks them;
    other keywords go to the legend)."""
    ax = get_ax(ax)
    R = results.benchmark_risks
    if R.shape[1] < 2:
        raise ValueError("the frontier plot needs at least two benchmarks")
    a, b = (R.columns[i] for i in benchmarks)
    on = results.on_frontier.to_numpy()
    ax.scatter(R[a][~on], R[b][~on], s=6, color="0.7", label=f"dominated ({(~on).sum()})")
    ax.scatter(R[a][on], R[b][on], s=12, color="C0", label=f"frontier ({on.sum()})")
    cover = R.loc[results.cover]
    ax.scatter(cover[a], cover[b], marker="x", color="C3", label=f"cover ({len(cover)})")
    w = results.weights.to_numpy()
    big = w > 1e-3
    ax.scatter(
        R[a][big], R[b][big], s=2000 * w[big], facecolors="none", edgecolors="C2", label="weights"
    )
    ax.scatter(
        *R.loc[[results.selected], [a, b]].to_numpy().T,
        marker="*",
        s=150,
        color="C1",
        label=f"selected: {results.selected}",
    )
    ax.set_xlabel(f"risk on {a}")
    ax.set_ylabel(f"risk on {b}")
    legend = ax.legend(frameon=False, fontsize="small", **kwargs)
    for handle in legend.legend_handles:  # the weights' largest circle would fill the legend
        handle.set_sizes([30])
    ax.set_title(results.method)
    return ax


def _plot_cover(results, ax=None, **kwargs):
    """Pareto covering number N(P, r) against r, with the penalised criterion of the cover
    ERM on a second axis and the chosen radius marked."""
    ax = get_ax(ax)
    path = results.cover_path
    ax.step(path["radius"], path["n_cover"], where="post", color="C0", **kwargs)
    ax.set_xlabel("radius r")
    ax.set_ylabel("N(P, r)", color="C0")
    ax.axvline(results.radius, color="C3", ls="--", lw=1)
    twin = ax.twinx()
    twin.plot(path["radius"], path["criterion"], ".-", color="C1", ms=3)
    twin.set_ylabel("penalised cover-ERM criterion", color="C1")
    return ax


_SUMMARY_LABELS = {
    "n_models": "models |F|",
    "n_frontier": "frontier |P|",
    "n_cover": "cover N(P, r)",
    "radius": "cover radius r",
}


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class FrontierResults(Results):
    """A frontier-based learner fitted to a target sample.

    Attributes
    ----------
    benchmark_risks : DataFrame
        The benchmark risks (models x benchmarks).
    on_frontier : Series of bool
        Frontier membership (eps-dominance with the fit's ``eps``).
    empirical_risks : Series
        Mean target loss of each model.
    cover_path : DataFrame
        One row per cover size ``n_cover`` of the greedy frontier cover: its ``radius``, the
        ERM risk over it (``erm_risk``) and the penalised ``criterion``.
    cover : Index
        The models of the chosen cover; ``radius`` its radius.
    selected, frontier_erm, full_erm : label
        Cover ERM at the chosen radius, ERM over the frontier, ERM over all models.
    weights, prior : Series
        The aggregate's weights and the prior they were computed from.
    aggregate_risk : float
        Empirical target risk of the aggregate (of its convex-combination prediction when
        predictions were given, else its weighted mean loss).
    violation_rate : float
        The estimated monotonicity-violation rate: the share of benchmark-dominated pairs whose
        order flips on the target sample (NaN without dominated pairs).
    violation_bootstrap : ResamplingResult or None
        Its replicates over target samples resampled with replacement (None when
        ``n_resamples=0``).
    significant_violation_rate : float
        Share of dominated pairs whose flip is significant in a one-sided paired t-test at
        ``alpha`` = 0.05; under exact monotonicity its expectation is at most 0.05.
    n_pairs : int
        Dominated pairs in all (the rates use at most ``MAX_PAIRS`` of them).
    """

    benchmark_risks: pd.DataFrame
    on_frontier: pd.Series
    empirical_risks: pd.Series
    cover_path: pd.DataFrame
    cover: pd.Index
    radius: float
    selected: Hashable
    frontier_erm: Hashable
    full_erm: Hashable
    weights: pd.Series
    prior: pd.Series
    scheme: str = "ew"
    temperature: float = 1.0
    aggregate_risk: float = np.nan
    aggregate_predictions: np.ndarray | None = None
    violation_rate: float = np.nan
    violation_bootstrap: ResamplingResult | None = None
    significant_violation_rate: float = np.nan
    n_pairs: int = 0

    _plots: ClassVar[dict] = {"frontier": _plot_frontier, "cover": _plot_cover}

    @property
    def n_models(self) -> int:
        return len(self.on_frontier)

    @property
    def n_frontier(self) -> int:
        return int(self.on_frontier.sum())

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Basic bootstrap interval of the violation rate (needs dominated pairs and
        ``n_resamples > 0``).

        The basic interval ``[2 v - q_hi, 2 v - q_lo]``, not the percentile one: resampling
        adds noise to every pair's comparison a second time, so the replicates flip more
        near-ties than the sample did and sit above ``v``; the basic interval reflects that
        shift back (a first-order bias correction), the percentile interval would add it.
        """
        if self.violation_bootstrap is None:
            raise ValueError(
                "this fit has no violation-rate bootstrap (no dominated pairs, or n_resamples=0)"
            )
        return self.violation_bootstrap.conf_int(alpha, method="basic").clip(0.0, 1.0)

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per reported quantity: ``term, estimate, conf_low, conf_high``."""
        rows = [
            ("n_models", self.n_models),
            ("n_frontier", self.n_frontier),
            ("n_cover", len(self.cover)),
            ("radius", self.radius),
            ("dominated_pairs", self.n_pairs),
            ("significant_violation_rate", self.significant_violation_rate),
            ("aggregate_risk", self.aggregate_risk),
            ("selected_risk", self.empirical_risks[self.selected]),
            ("frontier_erm_risk", self.empirical_risks[self.frontier_erm]),
            ("full_erm_risk", self.empirical_risks[self.full_erm]),
        ]
        frame = pd.DataFrame(rows, columns=["term", "estimate"]).astype({"estimate": float})
        frame["conf_low"] = np.nan
        frame["conf_high"] = np.nan
        if self.n_pairs:
            row = {"term": "violation_rate", "estimate": self.violation_rate}
            if self.violation_bootstrap is not None:
                ci = self.conf_int(alpha).iloc[0]
                row.update(conf_low=ci["lower"], conf_high=ci["upper"])
            frame = pd.concat([frame.iloc[:5], pd.DataFrame([row]), frame.iloc[5:]])
        return frame.reset_index(drop=True)

    def glance(self) -> pd.DataFrame:
        row = super().glance().iloc[0].to_dict()
        row.update(
            n_models=self.n_models,
            n_frontier=self.n_frontier,
            n_cover=len(self.cover),
            radius=self.radius,
            selected=str(self.selected),
            scheme=self.scheme,
            violation_rate=self.violation_rate,
        )
        return pd.DataFrame([row])

    def summary(self, alpha: float = 0.05):
        out = super().summary(alpha)
        table = self.tidy(alpha).set_index("term").rename(index=_SUMMARY_LABELS)
        notes = out.notes + (
            f"Violation rate: share of {min(self.n_pairs, MAX_PAIRS)} benchmark-dominated pairs "
            "whose empirical target order flips (noise alone flips near-ties, so it overstates "
            f"the population rate); interval: basic bootstrap over target samples, "
            f"{1 - alpha:.0%}.",
        )
        return type(out)(title=out.title, info=out.info, tables={"frontier": table}, notes=notes)

    def _repr_lines(self) -> list[str]:
        return [
            f"  |F| = {self.n_models}, |P| = {self.n_frontier}, N(P, {self.radius:.3g}) = "
            f"{len(self.cover)}; selected {self.selected}; violation rate "
            f"{self.violation_rate:.3f}"
        ]


class FrontierSelector(Estimator):
    """Learn a new task from few samples using known benchmark risks (hedging on the frontier).

    Parameters
    ----------
    models : sequence of hashable
        Model labels, unique; the order of every array argument's model axis.
    benchmark_risks : array_like of shape (M, K) or DataFrame
        Risk of each model on each benchmark (non-negative, finite; lower is better). A
        DataFrame is aligned on its index (models as index, benchmarks as columns) and must
        list exactly ``models``. Nothing is modified.

    Notes
    -----
    :meth:`fit` takes the target sample as per-sample losses ``(n, M)`` or, for the squared
    loss, as predictions ``(n, M)`` and responses ``(n,)``. It computes, each from the same
    empirical target risks ``R_n``:

    - full-class ERM and frontier ERM (argmin of ``R_n`` over ``F`` and over ``P``);
    - the cover ERM: along the nested greedy covers of ``P`` (:func:`pareto_cover`), the ERM
      over the ``k`` first centres with the criterion ``min R_n + c s sqrt(2 log k / n)``
      (``c = penalty``, ``s`` the median per-model standard deviation of the target losses:
      the expected maximum of ``k`` Gaussian errors); the minimiser fixes the radius ``r``;
    - an aggregate with prior ``pi = 1/2 uniform(cover) + 1/2 uniform(F)`` (``prior="mixed"``):
      exponential weights ``theta_j ~ pi_j exp(-n R_n(f_j) / beta)`` (``scheme="ew"``) or
      Q-aggregation (``scheme="q"``, predictions only), which minimises
      ``1/2 R_n(sum theta_j f_j) + 1/2 sum theta_j R_n(f_j) + (beta / n) KL(theta, pi)``.
      Their oracle inequalities bound the excess risk by ``beta log(1 / pi_j) / n`` for every
      ``j``: ``log(2 N(P, r))`` for the target's best model if it is near the frontier, and
      ``log(2 M)`` always — the fallback costs ``beta log 2 / n`` over a uniform prior;
    - the monotonicity-violation rate: over benchmark-dominated pairs ``(g, f)``, the share
      with ``R_n(g) > R_n(f)``, with a bootstrap interval over target samples, and the share
      whose flip is significant (one-sided paired t-test at 0.05).

    Fidelity: reconstruction. Only the paper's abstract and summaries were available. The
    frontier and the idea of pruning, covering and hedging are the paper's; the sup-norm greedy
    cover, the penalty of the radius choice, the mixed prior's half-half split, the default
    temperatures and the KL form of Q-aggregation (Lecué and Rigollet use the linear penalty
    ``sum theta_j log(1 / pi_j)``; both equal ``log(1 / pi_j)`` at a vertex, which is all the
    fallback argument uses; at ``nu = 0`` the KL form is exactly exponential weights) are
    ours, and the paper's parameter-free algorithm may differ.

    References
    ----------
    Yang, Di Gennaro, So and Wegel (2026). Hedging on the frontier: learning new tasks with
    few samples. arXiv:2605.30997.

    Lecué, G. and Rigollet, P. (2014). Optimal learning with Q-aggregation. *Ann. Statist.*
    42(1), 211-224. Leung, G. and Barron, A. (2006). Information theory and mixing
    least-squares regressions. *IEEE Trans. Inf. Theory* 52(8), 3396-3410.

    Examples
    --------
    >>> design = FrontierDesign(n_models=200, random_state=0)
    >>> F, y = design.sample(30, random_state=1)
    >>> res = FrontierSelector(design.models, design.benchmark_risks).fit(predictions=F, y=y,
    ...                                                                   n_resamples=0)
    >>> bool(res.on_frontier[res.frontier_erm])
    True
    """

    method_name = "Learning on the Pareto frontier"

    def __init__(self, models: Sequence[Hashable], benchmark_risks):
        if isinstance(models, str) or not isinstance(models, Sequence | pd.Index | np.ndarray):
            raise TypeError(f"`models` must be a sequence of model labels; got {describe(models)}")
        index = pd.Index(list(models))
        if len(index) < 2:
            raise ValueError(f"`models` needs at least 2 models; got {len(index)}")
        if not index.is_unique:
            dup = index[index.duplicated()].tolist()[:3]
            raise ValueError(f"`models` has duplicate labels: {dup}")
        columns = benchmark_risks.columns if isinstance(benchmark_risks, pd.DataFrame) else None
        aligned = _align(benchmark_risks, index, name="benchmark_risks", axis=0)
        R, _ = _check_risks(aligned, name="benchmark_risks")
        R.setflags(write=False)
        if columns is None:
            columns = pd.Index([f"benchmark_{k}" for k in range(R.shape[1])])
        self.models = index
        self.risks = R
        self.benchmark_risks = pd.DataFrame(R, index=index, columns=columns)

    @property
    def nobs(self) -> int:
        """Number of models (the target sample size is the results' ``nobs``)."""
        return len(self.models)

    def _repr_spec(self) -> str:
        return f"benchmarks={self.risks.shape[1]}"

    def _target(self, target_losses, predictions, y):
        if (target_losses is None) == (predictions is None):
            raise ValueError("pass either `target_losses` or `predictions` with `y`")
        if predictions is None:
            if y is not None:
                raise ValueError("`y` goes with `predictions`, not with `target_losses`")
            L = as_float_array(
                _align(target_losses, self.models, name="target_losses", axis=1),
                name="target_losses",
                ndim=2,
                min_rows=2,
            )
            return L, None, None
        if y is None:
            raise ValueError("`predictions` needs `y` (the target responses)")
        F = as_float_array(
            _align(predictions, self.models, name="predictions", axis=1),
            name="predictions",
            ndim=2,
            min_rows=2,
        )
        yv = as_float_array(y, name="y", ndim=1)
        if len(yv) != len(F):
            raise ValueError(f"`y` has {len(yv)} values but `predictions` has {len(F)} rows")
        return (F - yv[:, None]) ** 2, F, yv

    def fit(
        self,
        target_losses=None,
        *,
        predictions=None,
        y=None,
        eps=0.0,
        scheme: str = "ew",
        prior: str = "mixed",
        radius: float | None = None,
        penalty: float = 1.0,
        temperature: float | None = None,
        n_resamples: int = 200,
        maxiter: int = 2000,
        tol: float = 1e-10,
        random_state=None,
    ) -> FrontierResults:
        """Select and aggregate models on the target sample.

        Parameters
        ----------
        target_losses : array_like of shape (n, M) or DataFrame, optional
            Loss of each model (columns; a DataFrame is aligned on them) on each target sample.
        predictions : array_like of shape (n, M) or DataFrame, optional
            Each model's prediction on each target sample; with ``y``, the squared loss is used
            and aggregates predict by the convex combination.
        y : array_like of shape (n,), optional
            Target responses (with ``predictions``).
        eps : float or array_like of shape (K,)
            Dominance margin of the frontier and of the violation pairs.
        scheme : {"ew", "q"}
            Exponential weights or Q-aggregation (needs ``predictions``).
        prior : {"mixed", "frontier", "uniform"}
            Half cover / half all models (the fallback prior), the cover only, or all models.
        radius : float, optional
            Cover radius; default the penalised choice.
        penalty : float
            Constant ``c`` of the radius criterion (0: plain ERM over the frontier).
        temperature : float, optional
            ``beta``; default ``4 min_j R_n(f_j)`` with predictions (Leung and Barron's
            ``4 sigma^2``, since no model's risk is below the noise level), else ``2 s`` with
            ``s`` the comparison scale of all models' losses (our heuristic).
        n_resamples : int
            Bootstrap replicates of the violation rate (0: none; else at least 2).
        maxiter, tol
            Iteration limit and l1 tolerance of Q-aggregation's mirror descent.
        random_state : None, int, SeedSequence or Generator
            Seeds the bootstrap and the pair sample.

        Returns
        -------
        FrontierResults
        """
        L, F, yv = self._target(target_losses, predictions, y)
        n, M = L.shape
        eps_v = _check_eps(eps, self.risks.shape[1])
        scheme = check_option(scheme, name="scheme", options=SCHEMES)
        prior_kind = check_option(prior, name="prior", options=PRIORS)
        if scheme == "q" and F is None:
            raise ValueError("`scheme='q'` needs `predictions` and `y` (it mixes predictions)")
        penalty = check_scalar(penalty, name="penalty", low=0.0)
        n_resamples = check_scalar(n_resamples, name="n_resamples", kind=numbers.Integral, low=0)
        if n_resamples == 1:
            raise ValueError("`n_resamples` must be 0 (no bootstrap) or at least 2; got 1")
        maxiter = check_positive_int(maxiter, name="maxiter")
        tol = check_scalar(tol, name="tol", low=0.0, low_inclusive=False)
        rng = check_random_state(random_state)

        risks = L.mean(axis=0)
        mask = _frontier_mask(self.risks, eps_v)
        frontier_idx = np.flatnonzero(mask)
        order, radii = _cover_path(self.risks[frontier_idx])
        path_models = frontier_idx[order]
        scale = _comparison_scale(L[:, frontier_idx])
        k, erm, criterion, k_hat = _cover_choice(risks[path_models], radii, scale, n, penalty)
        if radius is not None:
            radius = check_scalar(radius, name="radius", low=0.0)
            k_hat = int(np.argmax(radii <= radius)) + 1
        else:
            radius = float(radii[k_hat - 1])
        cover = path_models[:k_hat]
        selected = cover[np.argmin(risks[cover])]
        frontier_erm = frontier_idx[np.argmin(risks[frontier_idx])]

        if temperature is None:
            beta = 4 * float(risks.min()) if F is not None else 2 * _comparison_scale(L)
            if beta <= 0:
                raise ValueError(
                    "the default temperature is 0 (a model has zero target loss); "
                    "pass `temperature`"
                )
        else:
            beta = check_scalar(temperature, name="temperature", low=0.0, low_inclusive=False)
        pi = _mixed_prior(M, cover, prior_kind)
        record = None
        if scheme == "q":
            theta, record = _q_aggregation(F, yv, risks, pi, beta, maxiter=maxiter, tol=tol)
        else:
            theta = _exponential_weights(risks, pi, n, beta)
        if F is not None:
            agg_pred = F @ theta
            agg_risk = float(np.mean((yv - agg_pred) ** 2))
        else:
            agg_pred, agg_risk = None, float(theta @ risks)

        rate, boot, significant, n_pairs = self._violations(L, eps_v, n_resamples, rng)
        labels = self.models
        return FrontierResults(
            method=f"{self.method_name} ({'Q-aggregation' if scheme == 'q' else 'exp. weights'})",
            nobs=n,
            model=self,
            iterations=record,
            benchmark_risks=self.benchmark_risks,
            on_frontier=pd.Series(mask, index=labels, name="on_frontier"),
            empirical_risks=pd.Series(risks, index=labels, name="empirical_risk"),
            cover_path=pd.DataFrame(
                {"n_cover": k, "radius": radii, "erm_risk": erm, "criterion": criterion},
                index=pd.Index(labels[path_models], name="added_model"),
            ),
            cover=labels[cover],
            radius=radius,
            selected=labels[selected],
            frontier_erm=labels[frontier_erm],
            full_erm=labels[int(np.argmin(risks))],
            weights=pd.Series(theta, index=labels, name="weight"),
            prior=pd.Series(pi, index=labels, name="prior"),
            scheme=scheme,
            temperature=beta,
            aggregate_risk=agg_risk,
            aggregate_predictions=agg_pred,
            violation_rate=rate,
            violation_bootstrap=boot,
            significant_violation_rate=significant,
            n_pairs=n_pairs,
        )

    def _violations(self, L, eps, n_resamples, rng):
        n_pairs = _K.count_dominance_pairs(self.risks, eps)
        if n_pairs == 0:
            return np.nan, None, np.nan, 0
        if n_pairs > MAX_PAIRS:
            ranks = np.sort(rng.choice(n_pairs, MAX_PAIRS, replace=False))
        else:
            ranks = np.arange(n_pairs)
        pairs = _K.dominance_pairs(self.risks, eps, ranks.astype(np.int64))
        g, f = pairs[:, 0], pairs[:, 1]
        n = len(L)
        diff = L[:, g] - L[:, f]
        mean = diff.mean(axis=0)
        sd = diff.std(axis=0, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = mean / (sd / np.sqrt(n))
        significant = float(np.mean(np.nan_to_num(t, nan=0.0) > stats.t.ppf(0.95, n - 1)))
        rate = float(np.mean(mean > 0))
        if not n_resamples:
            return rate, None, significant, int(n_pairs)
        estimate = pd.Series({"violation_rate": rate}, name="estimate")
        reps = np.empty((n_resamples, 1))
        for b in range(n_resamples):
            w = rng.multinomial(n, np.full(n, 1.0 / n)) / n
            reps[b, 0] = np.mean(w @ diff > 0)
        result = ResamplingResult(
            method="Monotonicity-violation rate: bootstrap over target samples",
            nobs=n,
            estimate=estimate,
            replicates=pd.DataFrame(reps, columns=estimate.index),
            scheme="bootstrap over target samples",
        )
        return rate, result, significant, int(n_pairs)


# --------------------------------------------------------------------------------------------
# simulation design


def _plot_rates(results, ax=None, **kwargs):
    """Mean excess target risk against n (log-log) per learner, with Monte Carlo intervals and
    the aggregates' oracle-inequality scale ``beta log(1 / pi_j*) / n`` dashed."""
    ax = get_ax(ax)
    for i, (name, block) in enumerate(results.table.groupby("learner", sort=False)):
        colour = f"C{i}"
        ax.errorbar(
            block["n"],
            block["mean_excess"],
            yerr=1.96 * block["std_error"],
            marker="o",
            ms=3,
            capsize=2,
            color=colour,
            label=name,
            **kwargs,
        )
    for j, column in enumerate(results.theory.columns):
        ax.plot(
            results.theory.index,
            results.theory[column],
            ls="--",
            lw=1,
            color=f"C{7 + j}",
            label=f"bound: {column}",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("target samples n")
    ax.set_ylabel("excess target risk")
    ax.legend(frameon=False, fontsize="small")
    ax.set_title(results.method)
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class FrontierSimulationResults(Results):
    """Monte Carlo excess target risks of the frontier learners over a grid of ``n``.

    Attributes
    ----------
    table : DataFrame
        ``n, learner, mean_excess, std_error, conf_low, conf_high`` (95 % normal intervals of
        the Monte Carlo mean).
    theory : DataFrame
        The aggregates' oracle-inequality scale ``beta log(1 / pi_j*) / n`` per prior, indexed
        by ``n`` (from :meth:`FrontierDesign.predict`).
    draws : DataFrame
        Every replicate's excess risk (``rep, n, learner, excess``).
    n_reps : int
    """

    table: pd.DataFrame
    theory: pd.DataFrame
    draws: pd.DataFrame
    n_reps: int = 0

    _plots: ClassVar[dict] = {"rates": _plot_rates}

    def tidy(self) -> pd.DataFrame:
        return self.table.copy()

    def slope(self, learner: str, n_min: int = 0, n_max: float = np.inf) -> float:
        """Least-squares slope of log mean excess on log n for one learner (within n range)."""
        block = self.table[
            (self.table["learner"] == learner) & self.table["n"].between(n_min, n_max)
        ]
        if len(block) < 2:
            raise ValueError(f"`learner` {learner!r} has fewer than 2 grid points in range")
        if (block["mean_excess"] <= 0).any():
            raise ValueError(f"`learner` {learner!r} has a mean excess <= 0 in range: no log")
        return float(np.polyfit(np.log(block["n"]), np.log(block["mean_excess"]), 1)[0])


class FrontierDesign:
    """The notes' simulation design: models on a curved two-benchmark frontier plus a dominated
    interior, and a squared-loss target task whose risks are monotone in (or unrelated to) the
    benchmark risks.

    Parameters
    ----------
    n_models : int
        ``|F|``; ``n_arc`` of them lie on the arc, the rest inside.
    n_arc : int
        Models on the frontier arc ``R = a - (cos t, sin t)``, ``t`` evenly spread on
        ``[0, pi / 2]``, ``a = 1.2``; interior models have ``R = a - rho (cos t, sin t)`` with
        ``rho ~ U(0.2, 0.95)`` and ``t ~ U(0, pi / 2)``.
    target : {"monotone", "unrelated"}
        Excess target risk ``b_j^2 = scale (w R_1 + (1 - w) R_2 - min)`` (exactly monotone, so
        the best model is on the frontier) or ``scale U_j`` with ``U_j ~ U(0, 1)`` independent of
        the benchmarks.
    mix : float
        ``w`` above.
    scale : float
        Scale of the excess target risks.
    noise : float
        ``sigma``: target ``y = sigma epsilon``.
    correlation : float in [0, 1]
        ``rho_e``: model ``j`` predicts ``b_j (sqrt(rho_e) z + sqrt(1 - rho_e) zeta_j)`` with
        ``z, zeta_j, epsilon`` standard normal, so ``R_0(f_j) = sigma^2 + b_j^2`` and a convex
        combination has the exact risk ``sigma^2 + rho_e (sum theta b)^2 +
        (1 - rho_e) sum theta^2 b^2``. ``rho_e = 1``: the errors are collinear and no mixture
        beats the best model (excess risks stay non-negative).
    random_state : None, int, SeedSequence or Generator
        Seeds the interior models and the unrelated target.

    Fidelity: reconstruction. The notes' design (M = 1000, a curved 2-D frontier plus a dominated
    interior) was not taken from the paper, whose experiments were not available; the target
    model is ours.
    """

    def __init__(
        self,
        n_models: int = 1000,
        n_arc: int = 40,
        *,
        target: str = "monotone",
        mix: float = 0.5,
        scale: float = 1.0,
        noise: float = 1.0,
        correlation: float = 0.5,
        random_state=0,
    ):
        self.n_models = check_positive_int(n_models, name="n_models", minimum=2)
        self.n_arc = check_positive_int(n_arc, name="n_arc", minimum=1)
        if self.n_arc > self.n_models:
            raise ValueError(f"`n_arc` ({n_arc}) must not exceed `n_models` ({n_models})")
        self.target = check_option(target, name="target", options=("monotone", "unrelated"))
        self.mix = check_scalar(mix, name="mix", low=0.0, high=1.0)
        self.scale = check_scalar(scale, name="scale", low=0.0, low_inclusive=False)
        self.noise = check_scalar(noise, name="noise", low=0.0, low_inclusive=False)
        self.correlation = check_scalar(correlation, name="correlation", low=0.0, high=1.0)
        rng = check_random_state(random_state)
        m_in = self.n_models - self.n_arc
        t = np.concatenate([np.linspace(0, np.pi / 2, self.n_arc), rng.uniform(0, np.pi / 2, m_in)])
        rho = np.concatenate([np.ones(self.n_arc), rng.uniform(0.2, 0.95, m_in)])
        R = 1.2 - rho[:, None] * np.column_stack([np.cos(t), np.sin(t)])
        self.models = pd.Index([f"m{j:04d}" for j in range(self.n_models)], name="model")
        self.benchmark_risks = pd.DataFrame(R, index=self.models, columns=["bench_1", "bench_2"])
        if self.target == "monotone":
            score = self.mix * R[:, 0] + (1 - self.mix) * R[:, 1]
            excess = self.scale * (score - score.min())
        else:
            excess = self.scale * rng.uniform(size=self.n_models)
        self.b = np.sqrt(excess)
        self.target_risks = pd.Series(self.noise**2 + excess, index=self.models, name="R0")

    def sample(self, n: int, random_state=None) -> tuple[np.ndarray, np.ndarray]:
        """``n`` target samples: predictions ``(n, M)`` and responses ``(n,)``."""
        n = check_positive_int(n, name="n", minimum=2)
        rng = check_random_state(random_state)
        z = rng.standard_normal((n, 1))
        zeta = rng.standard_normal((n, self.n_models))
        c = self.correlation
        F = self.b * (np.sqrt(c) * z + np.sqrt(1 - c) * zeta)
        return F, self.noise * rng.standard_normal(n)

    def excess_risk(self, weights) -> float:
        """Exact excess target risk of the convex combination with these weights."""
        w = np.asarray(weights, dtype=float)
        c = self.correlation
        risk = c * (w @ self.b) ** 2 + (1 - c) * np.sum((w * self.b) ** 2)
        return float(risk - self.b.min() ** 2)

    def _cover(self) -> np.ndarray:
        R = self.benchmark_risks.to_numpy()
        idx = np.flatnonzero(_frontier_mask(R, np.zeros(2)))
        return idx

    def predict(self, n_grid, *, temperature: float | None = None) -> pd.DataFrame:
        """The aggregates' oracle-inequality scale ``beta log(1 / pi_j*) / n`` on ``n_grid``
        for the mixed, frontier and uniform priors (``beta`` default ``4 sigma^2``;
        ``j*`` the target's best model; infinite when the prior misses it).

        This is the bound's complexity term (Leung and Barron 2006 for exponential weights,
        Lecué and Rigollet 2014 for Q-aggregation, constants of the fixed-design Gaussian case),
        a reference slope and scale, not an exact prediction of the simulated means.
        """
        n = np.asarray(as_float_array(n_grid, name="n_grid", ndim=1), dtype=float)
        beta = (
            4 * self.noise**2
            if temperature is None
            else check_scalar(temperature, name="temperature", low=0.0, low_inclusive=False)
        )
        best = int(np.argmin(self.b))
        cover = self._cover()
        out = {}
        for kind in PRIORS:
            pi = _mixed_prior(self.n_models, cover, kind)[best]
            out[kind] = beta * (np.log(1 / pi) if pi > 0 else np.inf) / n
        return pd.DataFrame(out, index=pd.Index(n, name="n"))

    def simulate(
        self,
        n_grid,
        *,
        n_reps: int = 200,
        temperature: float | None = None,
        penalty: float = 1.0,
        random_state=None,
    ) -> FrontierSimulationResults:
        """Excess target risk of full-class ERM, frontier ERM, cover ERM and exponential-weights
        aggregates (mixed, frontier and uniform priors; cover = the whole frontier) over
        ``n_reps`` target samples of each size in ``n_grid``.

        The aggregates' risk is computed exactly (:meth:`excess_risk`), so only the target
        sample is random. ``temperature`` defaults to ``4 sigma^2`` (the oracle value, so that
        the rate is not confounded with a data-driven temperature).
        """
        grid = [check_positive_int(int(v), name="n_grid", minimum=2) for v in n_grid]
        n_reps = check_positive_int(n_reps, name="n_reps")
        rng = check_random_state(random_state)
        beta = (
            4 * self.noise**2
            if temperature is None
            else check_scalar(temperature, name="temperature", low=0.0, low_inclusive=False)
        )
        R = self.benchmark_risks.to_numpy()
        frontier = self._cover()
        order, radii = _cover_path(R[frontier])
        path = frontier[order]
        priors = {kind: _mixed_prior(self.n_models, frontier, kind) for kind in PRIORS}
        excess0 = self.b**2 - self.b.min() ** 2
        rows = []
        for n in grid:
            for rep in range(n_reps):
                F, yv = self.sample(n, random_state=rng)
                L = (F - yv[:, None]) ** 2
                risks = L.mean(axis=0)
                scale = _comparison_scale(L[:, frontier])
                *_, k_hat = _cover_choice(risks[path], radii, scale, n, penalty)
                cover = path[:k_hat]
                picks = {
                    "full ERM": int(np.argmin(risks)),
                    "frontier ERM": frontier[np.argmin(risks[frontier])],
                    "cover ERM": cover[np.argmin(risks[cover])],
                }
                for name, j in picks.items():
                    rows.append((rep, n, name, excess0[j]))
                for kind, pi in priors.items():
                    theta = _exponential_weights(risks, pi, n, beta)
                    rows.append((rep, n, f"EW ({kind} prior)", self.excess_risk(theta)))
        draws = pd.DataFrame(rows, columns=["rep", "n", "learner", "excess"])
        grouped = draws.groupby(["n", "learner"], sort=False)["excess"]
        table = grouped.agg(mean_excess="mean", std_error="sem").reset_index()
        table["conf_low"] = table["mean_excess"] - 1.96 * table["std_error"]
        table["conf_high"] = table["mean_excess"] + 1.96 * table["std_error"]
        return FrontierSimulationResults(
            method=f"Frontier learners, {self.target} target (|F|={self.n_models}, "
            f"|P|={len(frontier)})",
            nobs=n_reps,
            table=table,
            theory=self.predict(grid, temperature=beta),
            draws=draws,
            n_reps=n_reps,
        )

    def __repr__(self) -> str:
        return (
            f"FrontierDesign(n_models={self.n_models}, n_arc={self.n_arc}, "
            f"target={self.target!r}, correlation={self.correlation})"
        )


__all__ = [
    "FrontierDesign",
    "FrontierResults",
    "FrontierSelector",
    "FrontierSimulationResults",
    "pareto_cover",
    "pareto_frontier",
]
