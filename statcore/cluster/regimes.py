"""Ranking regimes of CHB: bin the benchmark's (dataset, representation) units by a hardness
fingerprint coordinate and compare the method rankings between bins (Kendall tau with a
bootstrap over the seeds), exposing ranking reversals.

References
----------
CHB: a diagnostic toolkit for hardness-aware clustering evaluation. ICML 2026 (poster 65800).
Kendall, M. G. (1938). A new measure of rank correlation. *Biometrika* 30, 81-93.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from statcore.results import Results, Summary
from statcore.results.plotting import get_ax
from statcore.validation import (
    as_float_array,
    check_alpha,
    check_option,
    check_positive_int,
    check_random_state,
)


def _ordered(values: pd.Series) -> list:
    """The distinct values in order of first appearance."""
    return list(dict.fromkeys(values))


def ranking_regimes(
    results,
    by: str,
    *,
    bins=2,
    metric: str = "ari",
    track: str | None = None,
    methods: Sequence[str] | None = None,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    fingerprints: pd.DataFrame | None = None,
    random_state=None,
) -> RegimeResults:
    """Bin the (dataset, representation) units by a fingerprint coordinate and compare the
    method rankings between bins.

    Parameters
    ----------
    results : BenchmarkResults
        The benchmark's results (with fingerprints, or pass ``fingerprints``).
    by : str
        A fingerprint coordinate (a column of ``fingerprints``).
    bins : int or sequence of float
        A number of quantile bins of ``by`` over the units, or the bin edges (units outside
        them are left out).
    metric : {"ari", "ami", "nmi", "acc"}
    track : str, optional
        Default: the first track.
    methods : sequence of str, optional
        The methods to rank (at least two); default all.
    n_resamples : int
        Bootstrap resamples of the seeds.
    alpha : float
        The intervals are ``1 - alpha`` percentile intervals.
    fingerprints : DataFrame, optional
        Coordinates indexed by (dataset, representation); default the results' own.
    random_state : None, int, SeedSequence or Generator
        Seeds the bootstrap.

    Returns
    -------
    RegimeResults

    Notes
    -----
    A method's score in a bin is its metric averaged over the bin's units and the seeds.
    Kendall's tau-b compares the methods' scores in two bins: 1 is the same order, -1 the
    order reversed. The bootstrap resamples the seeds with replacement (the same draw for
    every unit and method, since a seed is shared by all cells), recomputes the scores and
    tau, and gives percentile intervals; ``reversals`` lists the method pairs whose order
    flips between two bins with the share of resamples in which it flips. With one seed,
    or methods that ignore the seed, the intervals only reflect seed noise: they are not
    intervals over datasets.
    """
    metric, track = results._metric(metric), results._track(track)
    n_resamples = check_positive_int(n_resamples, name="n_resamples")
    alpha = check_alpha(alpha)
    frame = results._fingerprints(fingerprints)
    if by not in frame.columns:
        raise ValueError(
            f"`by` must be a fingerprint coordinate, one of {list(frame.columns)}; got {by!r}"
        )
    rows = results.scores[results.scores["track"] == track]
    units = _ordered(zip(rows["dataset"], rows["representation"], strict=True))
    missing = [u for u in units if u not in frame.index]
    if missing:
        raise ValueError(f"`fingerprints` has no row for {missing[:3]}")
    values = frame.loc[units, by].to_numpy(dtype=float)
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        n_bins = check_positive_int(bins, name="bins", minimum=2)
        cut, edges = pd.qcut(values, n_bins, duplicates="drop", retbins=True)
    else:
        edges = as_float_array(bins, name="bins", ndim=1)
        cut = pd.cut(values, edges, include_lowest=True)
    codes = np.asarray(cut.codes)
    labels = [f"[{lo:.3g}, {hi:.3g}]" for lo, hi in itertools.pairwise(edges)]
    present = [b for b in range(len(labels)) if (codes == b).any()]
    if len(present) < 2:
        raise ValueError(
            f"`bins` leaves fewer than two non-empty bins of {by!r} over {len(units)} units"
        )
    if methods is None:
        methods = results.methods
    else:
        methods = [check_option(m, name="methods", options=results.methods) for m in methods]
        if len(set(methods)) < 2:
            raise ValueError(f"`methods` must name at least two methods; got {methods}")
    seeds = _ordered(rows["seed"])
    cube = (
        rows.set_index(["dataset", "representation", "method", "seed"])[metric]
        .reindex(
            pd.MultiIndex.from_tuples([(*u, m, s) for u in units for m in methods for s in seeds])
        )
        .to_numpy(dtype=float)
        .reshape(len(units), len(methods), len(seeds))
    )
    # per bin, method and seed: the mean over the bin's units
    per_bin = np.stack([np.nanmean(cube[codes == b], axis=0) for b in present])
    point = per_bin.mean(axis=2)
    rng = check_random_state(random_state)
    draws = rng.integers(0, len(seeds), size=(n_resamples, len(seeds)))
    boot = per_bin[:, :, draws].mean(axis=3)  # (bins, methods, resamples)
    tau_rows, flip_rows = [], []
    for a, b in itertools.combinations(range(len(present)), 2):
        tau = _tau(point[a], point[b])
        taus = np.array([_tau(boot[a, :, r], boot[b, :, r]) for r in range(n_resamples)])
        low, high = _percentile_interval(taus, alpha)
        tau_rows.append(
            {
                "bin_a": labels[present[a]],
                "bin_b": labels[present[b]],
                "tau": tau,
                "conf_low": low,
                "conf_high": high,
                "n_units_a": int((codes == present[a]).sum()),
                "n_units_b": int((codes == present[b]).sum()),
            }
        )
        for i, j in itertools.combinations(range(len(methods)), 2):
            diff_a, diff_b = point[a, i] - point[a, j], point[b, i] - point[b, j]
            if diff_a * diff_b < 0:
                flips = (boot[a, i] - boot[a, j]) * (boot[b, i] - boot[b, j]) < 0
                flip_rows.append(
                    {
                        "bin_a": labels[present[a]],
                        "bin_b": labels[present[b]],
                        "method_1": methods[i],
                        "method_2": methods[j],
                        "diff_a": diff_a,
                        "diff_b": diff_b,
                        "bootstrap_share": float(flips.mean()),
                    }
                )
    rankings = pd.DataFrame(
        [
            {
                "bin": labels[present[b]],
                "method": m,
                metric: point[b, i],
                "rank": float(stats.rankdata(-point[b])[i]),
            }
            for b in range(len(present))
            for i, m in enumerate(methods)
        ]
    )
    assignment = pd.DataFrame(
        {
            "dataset": [u[0] for u in units],
            "representation": [u[1] for u in units],
            by: values,
            "bin": [labels[c] if c >= 0 else None for c in codes],
        }
    )
    flip_columns = ["bin_a", "bin_b", "method_1", "method_2", "diff_a", "diff_b"]
    return RegimeResults(
        method=f"Ranking reversals across bins of {by}",
        nobs=len(units),
        coordinate=by,
        metric=metric,
        track=track,
        assignment=assignment,
        rankings=rankings,
        taus=pd.DataFrame(tau_rows),
        reversals=pd.DataFrame(flip_rows, columns=[*flip_columns, "bootstrap_share"]),
        n_resamples=n_resamples,
        alpha=alpha,
    )


def _tau(x: np.ndarray, y: np.ndarray) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0 or len(x) < 2:
        return float("nan")
    return float(stats.kendalltau(x, y).statistic)


def _percentile_interval(values: np.ndarray, alpha: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if not finite.size:
        return float("nan"), float("nan")
    low, high = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _plot_rankings(results, ax=None, **kwargs):
    """Each method's mean metric per bin, one line per method (crossing lines = reversals)."""
    ax = get_ax(ax)
    bins = _ordered(results.rankings["bin"])
    for method, rows in results.rankings.groupby("method", sort=False):
        ax.plot(np.arange(len(bins)), rows[results.metric], "o-", label=method, **kwargs)
    ax.set_xticks(np.arange(len(bins)), bins)
    ax.set_xlabel(f"bin of {results.coordinate}")
    ax.set_ylabel(f"mean {results.metric}")
    ax.legend(frameon=False, fontsize="small")
    ax.set_title(f"method scores by {results.coordinate} ({results.track} track)")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class RegimeResults(Results):
    """Method rankings per fingerprint bin and the Kendall tau between bins.

    Parameters
    ----------
    coordinate, metric, track : str
    assignment : DataFrame
        Each unit (dataset, representation), its coordinate value and its bin.
    rankings : DataFrame
        ``bin, method, <metric>, rank`` (rank 1 = best).
    taus : DataFrame
        ``bin_a, bin_b, tau, conf_low, conf_high, n_units_a, n_units_b``: one row per pair of
        bins.
    reversals : DataFrame
        Method pairs whose order flips between two bins: ``bin_a, bin_b, method_1,
        method_2, diff_a, diff_b`` (method_1 minus method_2 in each bin) and
        ``bootstrap_share``.
    n_resamples : int
    alpha : float

    References
    ----------
    CHB: Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster 65800.
    """

    coordinate: str
    metric: str
    track: str
    assignment: pd.DataFrame
    rankings: pd.DataFrame
    taus: pd.DataFrame
    reversals: pd.DataFrame
    n_resamples: int
    alpha: float = 0.05

    _plots: ClassVar[dict] = {"rankings": _plot_rankings}

    def tidy(self) -> pd.DataFrame:
        """One row per pair of bins: Kendall tau and its bootstrap interval."""
        return self.taus.copy()

    def summary(self, alpha: float | None = None) -> Summary:
        """Rankings per bin, taus and reversals (the interval level is the one computed)."""
        wide = self.rankings.pivot(index="method", columns="bin", values=self.metric)
        wide = wide.reindex(
            index=_ordered(self.rankings["method"]), columns=_ordered(self.rankings["bin"])
        )
        tables = {
            f"mean {self.metric} by bin": wide,
            "kendall tau": self.taus.set_index(["bin_a", "bin_b"]),
        }
        if len(self.reversals):
            tables["reversals"] = self.reversals
        notes = self.notes + (
            f"{100 * (1 - self.alpha):g}% percentile intervals over {self.n_resamples} bootstrap "
            "resamples of the seeds.",
        )
        return Summary(title=self.method, info=self._info(), tables=tables, notes=notes)
