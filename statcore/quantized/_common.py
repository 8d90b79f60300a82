"""Constants and input checks shared by the quantized-data models."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from statcore.quantized.mixing import MIXING_BOUNDS, POSITIVE, mixing_bounds
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive,
    check_scalar,
    describe,
)

#: how the covariance of the estimates is obtained (``fit(cov_type=...)``)
COV_TYPES = ("louis", "hessian", "bootstrap")
#: families the multivariate (box) fits support
MULTIVARIATE_FAMILIES = ("gaussian", "t")
#: where the location of a ``QuantizedCovariance`` comes from
MEAN_OPTIONS = ("zero", "free")
#: ``missing=`` of the formula doors
MISSING = ("raise", "drop")
#: tolerance of the refits behind bootstrap standard errors (their spread dwarfs it)
BOOTSTRAP_TOL = 1e-7


class IdentifiabilityWarning(UserWarning):
    """The quantized data do not identify every parameter (e.g. 1-bit codes, one threshold)."""


def check_cov_type(cov_type, options=COV_TYPES):
    """``cov_type`` as given: None (no standard errors) or one of ``options``."""
    if cov_type is None:
        return None
    return check_option(cov_type, name="cov_type", options=options)


def check_cells(lower, upper):
    """Cell edges as float arrays of matching shape; refuses NaN, empty data and lower >= upper."""
    lo = as_float_array(lower, name="lower", ndim=(1, 2), allow_inf=True)
    hi = as_float_array(upper, name="upper", ndim=(1, 2), allow_inf=True)
    if lo.shape != hi.shape:
        raise ValueError(
            f"`lower` and `upper` must have the same shape; got {lo.shape} and {hi.shape}"
        )
    if lo.shape[0] == 0:
        raise ValueError("`lower` is empty: there is nothing to fit")
    bad = ~(lo < hi)
    if bad.any():
        first = np.argwhere(bad)[0]
        raise ValueError(
            f"`lower` must be < `upper` in every cell; found {int(bad.sum())} cell(s) with "
            "lower >= upper "
            f"(first at index {tuple(first.tolist())}: lower={lo[tuple(first)]}, "
            f"upper={hi[tuple(first)]})"
        )
    if np.isposinf(lo).any() or np.isneginf(hi).any():
        raise ValueError("`lower` must be < +inf and `upper` > -inf")
    return lo, hi


def dedup_cells(lo, hi):
    """Unique cells (rows) and their counts."""
    stacked = np.concatenate([lo.reshape(len(lo), -1), hi.reshape(len(hi), -1)], axis=1)
    uniq, inverse, counts = np.unique(stacked, axis=0, return_inverse=True, return_counts=True)
    d = stacked.shape[1] // 2
    return (
        np.ascontiguousarray(uniq[:, :d]),
        np.ascontiguousarray(uniq[:, d:]),
        counts.astype(float),
        inverse.ravel(),
    )


def n_finite_edges(lo, hi):
    """Number of distinct finite cell edges (fewer than two leave the scale unidentified)."""
    edges = np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)]])
    return len(np.unique(edges))


def check_fix(fix, allowed, *, family: str = "gaussian", shapes=None):
    """``fix`` as a dict over the ``allowed`` names, each value range-checked by name (see
    :func:`check_named`)."""
    return check_named(fix, allowed, name="fix", family=family, shapes=shapes)


def check_start(start, allowed, *, family: str = "gaussian", shapes=None):
    """``start`` as a dict over the ``allowed`` names, each value range-checked by name (see
    :func:`check_named`)."""
    return check_named(start, allowed, name="start", family=family, shapes=shapes)


def check_named(values, allowed, *, name: str, family: str, shapes=None) -> dict:
    """Parameter values by name (``fix=``, ``start=``), each checked where it is given.

    Scalars must be finite real numbers; the scale ``sigma`` must be > 0 and the mixing
    parameters must lie in their family's bounds (``nu``, ``alpha_bar`` and the VG's ``lam``
    are positive). Names in ``shapes`` are arrays of that shape (or one number, broadcast);
    ``Sigma`` must be symmetric positive definite. A value out of range would otherwise send
    the ECM to NaN after ``maxiter`` iterations.

    Returns
    -------
    dict
        Floats for scalars, float arrays for the names in ``shapes``.
    """
    values = {} if values is None else values
    if not isinstance(values, Mapping):
        raise TypeError(
            f"`{name}` must be a dict of parameter values by name ({', '.join(allowed)}); got "
            f"{describe(values)}"
        )
    unknown = set(values) - set(allowed)
    if unknown:
        raise ValueError(
            f"`{name}` may hold {', '.join(allowed)}; got unknown name(s) {sorted(unknown)}"
        )
    shapes = shapes or {}
    checked = {}
    for key, value in values.items():
        label = f"{name}['{key}']"
        if key in shapes:
            checked[key] = _check_vector(value, label, shapes[key])
        elif key in MIXING_BOUNDS:
            lo, hi = mixing_bounds(family, key)
            if is_log_scale(family, key):
                lo = max(lo, 0.0)
            checked[key] = check_scalar(value, name=label, low=lo, high=hi)
        elif is_log_scale(family, key):
            checked[key] = check_positive(value, name=label)
        else:
            checked[key] = check_scalar(value, name=label)
    return checked


def _check_vector(value, label: str, shape: tuple) -> np.ndarray:
    arr = as_float_array(value, name=label, ndim=(0, len(shape)))
    if arr.ndim and arr.shape != tuple(shape):
        raise ValueError(f"`{label}` must have shape {tuple(shape)}; got {arr.shape}")
    arr = np.broadcast_to(arr, shape).copy()
    if label.endswith("['Sigma']"):
        if not np.allclose(arr, arr.T) or np.linalg.eigvalsh(0.5 * (arr + arr.T)).min() <= 0:
            raise ValueError(f"`{label}` must be symmetric positive definite")
    return arr


def fixed_note(fix):
    """The summary note naming the parameters held known."""

    def show(v):
        return f"{v:g}" if np.ndim(v) == 0 else str(np.round(v, 6))

    return "Held fixed: " + ", ".join(f"{k} = {show(v)}" for k, v in fix.items()) + "."


def is_log_scale(family, name):
    """Whether a parameter is positive, and so optimised on the log scale."""
    return name in POSITIVE or (family == "vg" and name == "lam")


def free_vcov(sub, names, free):
    """The covariance over all ``names``: ``sub`` on the free parameters, NaN where held fixed."""
    full = np.full((len(names), len(names)), np.nan)
    idx = [names.index(p) for p in free]
    full[np.ix_(idx, idx)] = sub
    return pd.DataFrame(full, index=names, columns=names)


def formula_columns(formula, data, *, missing: str = "raise"):
    """The columns of codes a one-sided formula names: ``"~ x1 + x2"`` -> ``data[["x1", "x2"]]``.

    Codes are labels of cells, not numbers to transform, so the formula may only name columns
    (joined by ``+``; a name with spaces in backticks). Returns the frame of those columns and
    the number of rows dropped for missing codes (``missing="drop"``).
    """
    check_option(missing, name="missing", options=MISSING)
    if not isinstance(formula, str) or not formula.strip().startswith("~"):
        raise ValueError(
            f"`formula` must be a one-sided string '~ x1 + x2' naming columns of codes; got "
            f"{formula!r}"
        )
    names = [term.strip().strip("`") for term in formula.strip()[1:].split("+")]
    if not all(names) or len(set(names)) != len(names):
        raise ValueError(f"`formula` must name distinct columns joined by '+'; got {formula!r}")
    if isinstance(data, dict):
        data = pd.DataFrame(data)
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"`data` must be a pandas DataFrame or a dict of columns; got {describe(data)}"
        )
    absent = [name for name in names if name not in data.columns]
    if absent:
        raise ValueError(
            f"`formula` names column(s) {absent} that `data` does not have; its columns are "
            f"{[str(c) for c in data.columns]}"
        )
    frame = data[names]
    incomplete = frame.isna().any(axis=1)
    if incomplete.any() and missing == "raise":
        raise ValueError(
            f"`data` has missing codes in {int(incomplete.sum())} row(s); pass missing='drop' "
            "to drop them"
        )
    return frame[~incomplete], int(incomplete.sum())
