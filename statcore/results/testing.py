"""``TestResult``: one hypothesis test, printed the way R prints an ``htest``."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import special

from statcore.exceptions import NotApplicableWarning
from statcore.results._format import format_number, format_pvalue
from statcore.results.base import Results
from statcore.results.plotting import get_ax, plot_histogram
from statcore.results.summary import Summary
from statcore.validation import check_alpha, check_alternative


def _plot_null(results, ax=None, **kwargs):
    """The null distribution (histogram of the draws, or the reference density) with the
    observed statistic marked."""
    if results.null_distribution is not None:
        return plot_histogram(
            results.null_distribution,
            ax=ax,
            marker=results.statistic,
            marker_label="observed statistic",
            title=f"{results.method}: null distribution",
            **kwargs,
        )
    if results.reference is None:
        raise ValueError("this test keeps neither null draws nor a reference distribution to plot")
    ax = get_ax(ax)
    lo, hi = results.reference.ppf([0.001, 0.999])
    grid = np.linspace(min(lo, results.statistic), max(hi, results.statistic), 400)
    ax.plot(grid, results.reference.pdf(grid), color="0.4", **kwargs)
    ax.axvline(results.statistic, color="C3", lw=1.5, label="observed statistic")
    ax.legend(frameon=False)
    ax.set_title(f"{results.method}: {results.distribution}")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class TestResult(Results):
    """The outcome of a hypothesis test.

    ``statistic, pvalue = result`` always unpacks exactly these two; everything else is an
    attribute.

    Parameters
    ----------
    statistic, pvalue : float
        The test statistic and its p-value (NaN when the test does not apply; see ``notes``).
    alternative : {"two-sided", "less", "greater"}
        The rejection region: for statistics that reject for large values only (chi-square,
        F, n·MMDD², permutation statistics) this is ``"greater"``. A chi-square or F test has
        no direction to report, so its print leaves the alternative out (as R does).
    df : float or tuple, optional
        Degrees of freedom of the reference distribution.
    distribution : str
        The reference, in words ("chi2(2)", "N(0,1)", "wild bootstrap (Rademacher)").
    null_distribution : ndarray, optional
        Resampled or simulated draws of the statistic under the null.
    null_hypothesis : str
        What is tested, in words.
    estimate : float, optional
        The estimated effect the test is about, and ``std_error`` its standard error (which
        enables :meth:`conf_int`).
    n_resamples : int, optional
        Number of resamples behind ``null_distribution``.
    reference : scipy frozen distribution, optional
        The statistic's null distribution, for :meth:`critical_value` and plots.
    statistic_name : str, optional
        How the print names the statistic (R's ``X-squared``, ``F``, ``t``); by default
        "chi-squared", "F", "t" or "z" from ``reference``, else "statistic".
    """

    __test__ = False  # keeps pytest from collecting the class

    statistic: float
    pvalue: float
    alternative: str = "two-sided"
    df: Any = None
    distribution: str = ""
    null_distribution: np.ndarray | None = field(default=None, repr=False)
    null_hypothesis: str = ""
    estimate: float | None = None
    std_error: float | None = None
    n_resamples: int | None = None
    reference: Any = field(default=None, repr=False)
    statistic_name: str = ""

    _plots: ClassVar[dict] = {"null": _plot_null}

    def __post_init__(self):
        super().__post_init__()
        check_alternative(self.alternative)

    @classmethod
    def not_applicable(cls, method: str, reason: str, **fields) -> TestResult:
        """A NaN result carrying the reason, for tests that cannot apply to the input."""
        warnings.warn(f"{method}: {reason}", NotApplicableWarning, stacklevel=2)
        notes = tuple(fields.pop("notes", ())) + (f"Not applicable: {reason}",)
        return cls(method=method, statistic=np.nan, pvalue=np.nan, notes=notes, **fields)

    @property
    def _reference_name(self) -> str:
        """scipy's name of ``reference`` ("chi2", "f", "t", "norm"), or ""."""
        dist = getattr(self.reference, "dist", None)
        return getattr(dist, "name", "") or ""

    @property
    def is_directional(self) -> bool:
        """False for chi-square and F tests: they reject for large values only, and "greater"
        would describe the statistic, not a direction of the effect."""
        if self._reference_name in ("chi2", "f"):
            return False
        return not self.distribution.startswith(("chi2(", "F("))

    def _statistic_label(self) -> str:
        if self.statistic_name:
            return self.statistic_name
        names = {"chi2": "chi-squared", "f": "F", "t": "t", "norm": "z"}
        if self._reference_name in names:
            return names[self._reference_name]
        if self.distribution.startswith("chi2("):
            return "chi-squared"
        return "F" if self.distribution.startswith("F(") else "statistic"

    def _df_text(self) -> str | None:
        if self.df is None:
            return None
        if np.isscalar(self.df):
            return f"df = {format_number(self.df)}"
        if len(self.df) == 2:
            num, den = self.df
            return f"num df = {format_number(num)}, denom df = {format_number(den)}"
        return f"df = {self.df}"

    def __iter__(self):
        yield self.statistic
        yield self.pvalue

    def critical_value(self, alpha: float = 0.05):
        """The rejection threshold(s) at level ``alpha``.

        From ``reference`` when known, else from the null draws. A pair ``(lower, upper)`` for
        two-sided tests, a single value otherwise.
        """
        alpha = check_alpha(alpha)
        if self.reference is not None:
            quantile = self.reference.ppf
        elif self.null_distribution is not None:
            draws = np.asarray(self.null_distribution, dtype=float)
            draws = draws[np.isfinite(draws)]

            def quantile(p):
                return np.quantile(draws, p)
        else:
            raise ValueError("this test keeps neither a reference distribution nor null draws")
        if self.alternative == "greater":
            return float(quantile(1 - alpha))
        if self.alternative == "less":
            return float(quantile(alpha))
        return float(quantile(alpha / 2)), float(quantile(1 - alpha / 2))

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Normal ``1 - alpha`` interval for ``estimate`` (needs ``std_error``)."""
        alpha = check_alpha(alpha)
        if self.estimate is None or self.std_error is None:
            raise ValueError("this test has no estimate with a standard error to build an interval")
        z = special.ndtri(1 - alpha / 2)
        return pd.DataFrame(
            {
                "lower": [self.estimate - z * self.std_error],
                "upper": [self.estimate + z * self.std_error],
            },
            index=["estimate"],
        )

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row: ``statistic, p_value, df, distribution, method, alternative`` (+ estimate)."""
        row = {
            "statistic": self.statistic,
            "p_value": self.pvalue,
            "df": self.df if np.isscalar(self.df) or self.df is None else str(self.df),
            "distribution": self.distribution,
            "method": self.method,
            "alternative": self.alternative,
        }
        if self.estimate is not None:
            row["estimate"] = self.estimate
            if self.std_error is not None:
                ci = self.conf_int(alpha)
                row["conf_low"] = ci["lower"].iloc[0]
                row["conf_high"] = ci["upper"].iloc[0]
        return pd.DataFrame([row])

    def glance(self) -> pd.DataFrame:
        return self.tidy()

    def summary(self, alpha: float = 0.05) -> Summary:
        info = [
            ("statistic", format_number(self.statistic)),
            ("p-value", format_pvalue(self.pvalue)),
        ]
        for key, value in (
            ("df", self.df),
            ("null distribution", self.distribution),
            ("resamples", self.n_resamples),
            ("nobs", self.nobs),
            ("alternative", self.alternative if self.is_directional else None),
            ("null hypothesis", self.null_hypothesis),
        ):
            if value not in (None, ""):
                info.append((key, value if isinstance(value, str) else format_number(value)))
        return Summary(title=self.method, info=tuple(info), notes=self.notes)

    def __repr__(self) -> str:
        """R's ``htest`` print: the method, what is tested, then
        ``chi-squared = 3.2, df = 1, p-value = 0.07``."""
        parts = [f"{self._statistic_label()} = {format_number(self.statistic)}"]
        df_text = self._df_text()
        if df_text:
            parts.append(df_text)
        shown_p = format_pvalue(self.pvalue)
        shown_p = f"< {shown_p[1:]}" if shown_p.startswith("<") else f"= {shown_p}"
        parts.append(f"p-value {shown_p}")
        lines = ["", f"\t{self.method}", ""]
        if self.null_hypothesis:
            lines.append(f"null hypothesis: {self.null_hypothesis}")
        lines.append(", ".join(parts))
        if self.is_directional:
            lines.append(f"alternative hypothesis: {self.alternative}")
        if self.distribution:
            reference = self.distribution
            if self.n_resamples:
                reference += f", {self.n_resamples} resamples"
            lines.append(f"null distribution: {reference}")
        if self.estimate is not None:
            lines.append(f"sample estimate: {format_number(self.estimate)}")
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines) + "\n"

    __str__ = __repr__
