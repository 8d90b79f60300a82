"""``ResamplingResult``: bootstrap (or other resampling) replicates and the intervals they give."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import special

from statcore.results.base import Results
from statcore.results.plotting import plot_histogram
from statcore.results.summary import Summary
from statcore.validation import check_alpha, check_option, check_positive_int, check_random_state

CI_METHODS = ("percentile", "basic", "normal", "bca")


def _plot_replicates(results, ax=None, term=None, **kwargs):
    """Histogram of one term's replicates (``term=``, default the first) with the estimate
    marked."""
    term = results.estimate.index[0] if term is None else term
    return plot_histogram(
        results.replicates[term].to_numpy(),
        ax=ax,
        marker=results.estimate[term],
        marker_label="observed",
        title=f"{results.scheme} replicates: {term}",
        **kwargs,
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ResamplingResult(Results):
    """Replicates of an estimate under a resampling scheme, and the intervals they imply.

    Parameters
    ----------
    estimate : Series
        The estimate on the observed data, by term.
    replicates : DataFrame
        One row per resample, one column per term (same labels as ``estimate``).
    scheme : str
        What was resampled ("pairs bootstrap", "wild (Rademacher)", ...).
    jackknife : DataFrame, optional
        Leave-one-out estimates (one row per observation); needed for BCa intervals.
    resampler : callable, optional
        ``resampler(n, rng) -> array (n, k)`` drawing more replicates, used by :meth:`extend`.

    References
    ----------
    Efron, B. and Tibshirani, R. (1993). *An Introduction to the Bootstrap*, ch. 13-14.
    """

    estimate: pd.Series
    replicates: pd.DataFrame
    scheme: str = "bootstrap"
    jackknife: pd.DataFrame | None = None
    resampler: Callable | None = field(default=None, repr=False)

    _plots: ClassVar[dict] = {"hist": _plot_replicates}

    def __post_init__(self):
        super().__post_init__()
        if list(self.replicates.columns) != list(self.estimate.index):
            raise ValueError(
                "`replicates` must have one column per term of `estimate`; got columns "
                f"{list(self.replicates.columns)} for terms {list(self.estimate.index)}"
            )
        if len(self.replicates) < 2:
            raise ValueError(f"`replicates` needs at least 2 rows; got {len(self.replicates)}")

    @property
    def n_resamples(self) -> int:
        return len(self.replicates)

    @property
    def bse(self) -> pd.Series:
        """Standard deviation of the replicates (ddof=1)."""
        return self.replicates.std(ddof=1).rename("std_error")

    @property
    def bias(self) -> pd.Series:
        """Mean of the replicates minus the observed estimate."""
        return (self.replicates.mean() - self.estimate).rename("bias")

    @property
    def vcov(self) -> pd.DataFrame:
        """Covariance of the replicates (ddof=1)."""
        return self.replicates.cov(ddof=1)

    def conf_int(self, alpha: float = 0.05, method: str = "percentile") -> pd.DataFrame:
        """``1 - alpha`` intervals, rows = terms, columns ``lower``, ``upper``.

        Parameters
        ----------
        alpha : float
            Significance level.
        method : {"percentile", "basic", "normal", "bca"}
            ``"normal"`` is the bias-corrected normal interval of Davison & Hinkley (1997, eq. 5.5);
            ``"bca"`` needs ``jackknife`` and follows Efron (1987), with ties in the replicates
            counted half, as scipy does.
        """
        alpha = check_alpha(alpha)
        check_option(method, name="method", options=CI_METHODS)
        reps = self.replicates.to_numpy()
        est = self.estimate.to_numpy()
        if method == "percentile":
            lower, upper = np.quantile(reps, [alpha / 2, 1 - alpha / 2], axis=0)
        elif method == "basic":
            q_lo, q_hi = np.quantile(reps, [alpha / 2, 1 - alpha / 2], axis=0)
            lower, upper = 2 * est - q_hi, 2 * est - q_lo
        elif method == "normal":
            z = special.ndtri(1 - alpha / 2)
            centre = est - self.bias.to_numpy()
            se = self.bse.to_numpy()
            lower, upper = centre - z * se, centre + z * se
        else:
            lower, upper = self._bca(reps, est, alpha)
        return pd.DataFrame({"lower": lower, "upper": upper}, index=self.estimate.index)

    def _bca(self, reps, est, alpha):
        if self.jackknife is None:
            raise ValueError(
                "`method='bca'` needs the jackknife estimates; this result has jackknife=None"
            )
        share_below = ((reps < est).sum(axis=0) + (reps <= est).sum(axis=0)) / (2 * len(reps))
        z0 = special.ndtri(share_below)
        jack = self.jackknife.to_numpy()
        dev = jack.mean(axis=0) - jack
        accel = (dev**3).sum(axis=0) / (6.0 * ((dev**2).sum(axis=0)) ** 1.5)
        bounds = []
        for tail in (alpha / 2, 1 - alpha / 2):
            z = special.ndtri(tail)
            level = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
            bounds.append(
                np.array([np.quantile(reps[:, j], level[j]) for j in range(reps.shape[1])])
            )
        return bounds

    def extend(self, n_more: int, random_state=None) -> ResamplingResult:
        """A new result with ``n_more`` further replicates drawn by the stored ``resampler``."""
        n_more = check_positive_int(n_more, name="n_more")
        if self.resampler is None:
            raise ValueError("this result has no `resampler`, so it cannot draw more replicates")
        rng = check_random_state(random_state)
        extra = pd.DataFrame(
            np.asarray(self.resampler(n_more, rng), dtype=float), columns=self.replicates.columns
        )
        return replace(self, replicates=pd.concat([self.replicates, extra], ignore_index=True))

    def tidy(self, alpha: float = 0.05, method: str = "percentile") -> pd.DataFrame:
        """``term, estimate, std_error, bias, conf_low, conf_high``."""
        ci = self.conf_int(alpha, method)
        return pd.DataFrame(
            {
                "term": list(self.estimate.index),
                "estimate": self.estimate.to_numpy(),
                "std_error": self.bse.to_numpy(),
                "bias": self.bias.to_numpy(),
                "conf_low": ci["lower"].to_numpy(),
                "conf_high": ci["upper"].to_numpy(),
            }
        )

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["scheme"] = self.scheme
        row["n_resamples"] = self.n_resamples
        return row

    def summary(self, alpha: float = 0.05, method: str = "percentile") -> Summary:
        return Summary(
            title=self.method,
            info=self._info(),
            tables={"replicates": self.tidy(alpha, method)},
            notes=self.notes
            + (f"{100 * (1 - alpha):g}% {method} intervals from {self.n_resamples} replicates.",),
        )
