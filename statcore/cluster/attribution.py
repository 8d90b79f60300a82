"""Representation auditing of CHB: attribute the gain of one representation over another to
the hardness-fingerprint shifts it causes, by least squares across the datasets.

References
----------
CHB: a diagnostic toolkit for hardness-aware clustering evaluation. ICML 2026 (poster 65800)
("representation auditing"; the attribution rule is a reconstruction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.results import EstimationResults
from statcore.results.plotting import get_ax, plot_coefficients
from statcore.validation import check_design, check_option


def attribute_gain(
    results,
    rep_a: str,
    rep_b: str,
    *,
    metric: str = "ari",
    track: str | None = None,
    method: str | None = None,
    coordinates: Sequence[str] | None = None,
    fingerprints: pd.DataFrame | None = None,
) -> AuditResults:
    """Attribute the gain of representation ``rep_b`` over ``rep_a`` to the shift of the
    fingerprint coordinates.

    Parameters
    ----------
    results : BenchmarkResults
        The benchmark's results (with fingerprints, or pass ``fingerprints``).
    rep_a, rep_b : str
        Two representations of the benchmark.
    metric : {"ari", "ami", "nmi", "acc"}
    track : str, optional
        Default: the first track.
    method : str, optional
        One method's gain; default the mean over the methods.
    coordinates : sequence of str, optional
        The coordinates to attribute to; default every coordinate whose shift varies across
        the datasets (one that shifts identically everywhere cannot be told from the
        intercept).
    fingerprints : DataFrame, optional
        Coordinates indexed by (dataset, representation); default the results' own.

    Returns
    -------
    AuditResults
        The regression coefficients (``params``, with t inference), and
        :meth:`AuditResults.contributions`.

    Notes
    -----
    For each dataset ``d`` the gain ``g_d`` is the metric's mean over seeds (and methods)
    under ``rep_b`` less that under ``rep_a``, and the shift ``delta_d`` the difference of
    the fingerprints. Ordinary least squares fits ``g_d = beta_0 + delta_d' beta + e_d``
    over the datasets. Because the fit has an intercept, the mean gain splits exactly into
    ``beta_0`` (not explained by the shifts) plus one contribution ``beta_j mean(delta_j)``
    per coordinate. This is an association across datasets, not a causal effect: it needs
    more datasets than coordinates (and, to be stable, many more), and its t intervals
    treat the datasets as independent.
    """
    metric, track = results._metric(metric), results._track(track)
    reps = results.representations
    rep_a = check_option(rep_a, name="rep_a", options=reps)
    rep_b = check_option(rep_b, name="rep_b", options=reps)
    if rep_a == rep_b:
        raise ValueError(f"`rep_b` must differ from `rep_a`; both are {rep_a!r}")
    rows = results.scores[results.scores["track"] == track]
    if method is not None:
        rows = rows[rows["method"] == check_option(method, name="method", options=results.methods)]
    means = rows.groupby(["dataset", "representation"], sort=False)[metric].mean()
    datasets = results.datasets
    gains = pd.Series(
        [means.get((d, rep_b), np.nan) - means.get((d, rep_a), np.nan) for d in datasets],
        index=pd.Index(datasets, name="dataset"),
    )
    frame = results._fingerprints(fingerprints)
    try:
        shifts = pd.DataFrame(
            frame.loc[[(d, rep_b) for d in datasets]].to_numpy(dtype=float)
            - frame.loc[[(d, rep_a) for d in datasets]].to_numpy(dtype=float),
            index=gains.index,
            columns=frame.columns,
        )
    except KeyError as exc:
        raise ValueError(f"`fingerprints` lacks a row for {exc}") from None
    keep = gains.notna() & shifts.notna().all(axis=1)
    gains, shifts = gains[keep], shifts[keep]
    notes = ()
    if coordinates is None:
        spread = shifts.std(axis=0, ddof=0) > 1e-12 * (1 + shifts.abs().max())
        varying = shifts.columns[spread.to_numpy()]
        dropped = [c for c in shifts.columns if c not in varying]
        if dropped:
            notes = (f"Left out (shift constant across datasets): {', '.join(dropped)}.",)
        shifts = shifts[list(varying)]
    else:
        if isinstance(coordinates, str):
            coordinates = [coordinates]
        for c in coordinates:
            check_option(c, name="coordinates", options=list(shifts.columns))
        shifts = shifts[list(coordinates)]
    n, p = len(gains), shifts.shape[1] + 1
    if n <= p:
        raise ValueError(
            f"`coordinates`: {p - 1} coordinate(s) and an intercept need more than {p} "
            f"datasets; there are {n}. Pass fewer `coordinates`"
        )
    names = ["Intercept", *shifts.columns]
    design = np.column_stack([np.ones(n), shifts.to_numpy()])
    try:
        check_design(design, names)
    except ValueError as exc:
        raise ValueError(f"`coordinates`: {exc}") from None
    beta, *_ = np.linalg.lstsq(design, gains.to_numpy(), rcond=None)
    resid = gains.to_numpy() - design @ beta
    sigma2 = float(resid @ resid) / (n - p)
    # (X'X)^-1 as pinv(X) pinv(X)': the SVD route, without forming and inverting X'X
    pinv = np.linalg.pinv(design)
    vcov = sigma2 * (pinv @ pinv.T)
    return AuditResults(
        method=f"Representation audit: {rep_b} vs {rep_a} ({metric}, {track} track)",
        nobs=n,
        params=pd.Series(beta, index=names),
        vcov=pd.DataFrame(vcov, index=names, columns=names),
        df_resid=float(n - p),
        inference="t",
        scale=sigma2,
        notes=notes,
        gains=gains,
        shifts=shifts,
    )


def _plot_contributions(results, ax=None, **kwargs):
    """The mean gain split into the unexplained intercept and each coordinate's contribution."""
    ax = get_ax(ax)
    frame = results.contributions()
    colours = ["tab:gray" if t == "Intercept" else "tab:blue" for t in frame["term"]]
    ax.barh(frame["term"], frame["contribution"], color=colours, **kwargs)
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set_xlabel("contribution to the mean gain")
    ax.set_title(f"mean gain {results.gains.mean():+.3f}")
    ax.invert_yaxis()
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class AuditResults(EstimationResults):
    """A representation's gain regressed on the fingerprint shifts it causes.

    ``params`` are the OLS coefficients (``Intercept`` and one per coordinate shift) with t
    inference; ``gains`` the per-dataset gains and ``shifts`` the coordinate shifts (rows =
    datasets). See :func:`attribute_gain`.

    References
    ----------
    CHB: Diagnostic Toolkit for Hardness-Aware Clustering Evaluation. ICML 2026, poster 65800
    ("representation auditing"; the attribution rule is a reconstruction).
    """

    gains: pd.Series = field(default_factory=pd.Series)
    shifts: pd.DataFrame = field(default_factory=pd.DataFrame)

    _plots: ClassVar[dict] = {"contributions": _plot_contributions, "coef": plot_coefficients}

    def contributions(self) -> pd.DataFrame:
        """``term, coefficient, mean_shift, contribution, share``: the mean gain equals the sum
        of ``contribution`` (the intercept's is itself, its mean shift 1)."""
        mean_shift = pd.concat([pd.Series({"Intercept": 1.0}), self.shifts.mean()])
        contribution = self.params * mean_shift
        total = float(self.gains.mean())
        return pd.DataFrame(
            {
                "term": self.params.index,
                "coefficient": self.params.to_numpy(),
                "mean_shift": mean_shift.to_numpy(),
                "contribution": contribution.to_numpy(),
                "share": contribution.to_numpy() / total if total else np.nan,
            }
        )
