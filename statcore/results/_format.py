"""Number formatting shared by every renderer: one look for every table statcore prints."""

from __future__ import annotations

import numbers

import numpy as np

P_VALUE_COLUMNS = frozenset({"p_value", "pvalue"})


def format_number(value, digits: int = 4) -> str:
    """Fixed ``digits`` decimals in the usual range, scientific notation outside it."""
    if value is None:
        return ""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        x = float(value)
        if np.isnan(x):
            return "NaN"
        if np.isinf(x):
            return "Inf" if x > 0 else "-Inf"
        if x == 0.0:
            return f"{0.0:.{digits}f}"
        if x.is_integer() and abs(x) < 1e15:
            return f"{x:.{digits}f}" if abs(x) < 1e6 else f"{x:.{digits}e}"
        if 10.0 ** (-digits) <= abs(x) < 1e6:
            return f"{x:.{digits}f}"
        return f"{x:.{max(digits - 1, 1)}e}"
    return str(value)


def format_pvalue(value, digits: int = 4) -> str:
    """p-values below the printed resolution show as ``<0.0001`` (R's ``format.pval`` idea)."""
    if value is None or (isinstance(value, numbers.Real) and np.isnan(value)):
        return "NaN" if value is not None else ""
    floor = 10.0 ** (-digits)
    if value < floor:
        return f"<{floor:.{digits}f}"
    return f"{value:.{digits}f}"


def format_cell(value, column: str, digits: int = 4) -> str:
    if column in P_VALUE_COLUMNS:
        return format_pvalue(value, digits)
    return format_number(value, digits)


def format_level(value) -> str:
    """A level label (quantile, penalty, ...) to six significant digits.

    Levels are often computed (``0.1 * 0.144``) and carry binary noise (``0.014399999999``);
    six significant digits show what the user asked for and still tell levels apart.
    """
    if isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
        return f"{float(value):.6g}"
    return str(value)
