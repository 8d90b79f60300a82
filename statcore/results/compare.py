"""``compare(*results)``: several fits side by side, one column per model."""

from __future__ import annotations

import pandas as pd

from statcore.results._format import format_level, format_number, format_pvalue
from statcore.results.estimation import EstimationResults
from statcore.results.summary import Summary
from statcore.validation import check_option

SHOW = ("std_error", "statistic", "p_value", "conf_int")
_STARS = ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.1, "."))


def _stars(p) -> str:
    return next((mark for cut, mark in _STARS if p < cut), "")


def _columns(res: EstimationResults, name: str, alpha: float):
    """(column name, tidy rows) per level of one fit."""
    tidy = res.tidy(alpha=alpha)
    if "level" not in tidy.columns:
        return [(name, tidy)]
    return [
        (f"{name} [{format_level(lvl)}]", rows) for lvl, rows in tidy.groupby("level", sort=False)
    ]


def compare(
    *results: EstimationResults,
    names=None,
    show: str = "std_error",
    stars: bool = False,
    alpha: float = 0.05,
    digits: int = 4,
) -> Summary:
    """Line up estimation results side by side (statsmodels' ``summary_col``, R's ``modelsummary``).

    Parameters
    ----------
    *results : EstimationResults
        The fits; multi-level fits contribute one column per level.
    names : sequence of str, optional
        Column names (default ``model 1``, ``model 2``, ...).
    show : {"std_error", "statistic", "p_value", "conf_int"}
        What goes in parentheses under each estimate.
    stars : bool
        Append significance stars (``*** 0.001, ** 0.01, * 0.05, . 0.1``).
    alpha : float
        Level of the intervals when ``show="conf_int"``.

    Returns
    -------
    Summary
        Tables ``"estimates"`` (formatted text cells) and ``"fit"`` (numeric model facts).
    """
    if not results:
        raise ValueError("`results` must hold at least one fit; got none")
    for i, res in enumerate(results):
        if not isinstance(res, EstimationResults):
            raise TypeError(
                f"`results[{i}]` must be an EstimationResults; got {type(res).__name__}"
            )
    check_option(show, name="show", options=SHOW)
    if names is None:
        names = [f"model {i}" for i in range(1, len(results) + 1)]
    if len(names) != len(results):
        raise ValueError(f"`names` must have {len(results)} entries; got {len(names)}")

    columns, fit_rows = {}, {}
    for res, name in zip(results, names, strict=True):
        for col, tidy in _columns(res, name, alpha):
            cells = {}
            for row in tidy.itertuples(index=False):
                has_p = res.null_value is not None and res.has_inference
                mark = _stars(row.p_value) if stars and has_p else ""
                cells[(row.term, "estimate")] = format_number(row.estimate, digits) + mark
                cells[(row.term, show)] = (
                    _second_line(row, show, has_p, digits) if res.has_inference else ""
                )
            columns[col] = cells
            fit_rows[col] = res.glance().iloc[0][["nobs", "loglik", "aic", "bic"]]
    estimates = pd.DataFrame(columns).loc[_ordered_terms(columns)].fillna("")
    estimates.index.names = ["term", ""]
    fit = pd.DataFrame.from_dict(fit_rows, orient="index").infer_objects()
    fit = fit.dropna(axis=1, how="all")
    notes = (f"In parentheses: {show.replace('_', ' ')}.",)
    if stars:
        notes += ("Signif. codes: 0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1",)
    return Summary(
        title="Model comparison", tables={"estimates": estimates, "fit": fit}, notes=notes
    )


def _second_line(row, show, has_p, digits) -> str:
    if show == "std_error":
        return f"({format_number(row.std_error, digits)})"
    if show == "conf_int":
        return f"[{format_number(row.conf_low, digits)}, {format_number(row.conf_high, digits)}]"
    if not has_p:
        return ""
    if show == "statistic":
        return f"({format_number(row.statistic, digits)})"
    return f"({format_pvalue(row.p_value, digits)})"


def _ordered_terms(columns) -> list:
    """Row keys in first-seen order across models, each estimate above its second line."""
    seen = []
    for cells in columns.values():
        for key in cells:
            if key not in seen:
                seen.append(key)
    return seen
