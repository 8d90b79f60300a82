"""Input checks: the public face of every check statcore and mlcore make, and their messages.

Each check names the argument, says what was expected and shows what came. Array checks return
float64 C-contiguous *copies*, so nothing the user passed in is ever modified. mlcore and code
that extends either package use these checks, so that one wrong input reads the same everywhere::

    from statcore.validation import check_positive_int, check_random_state

    n_steps = check_positive_int(n_steps, name="n_steps")
    rng = check_random_state(random_state)  # None, an int, a SeedSequence or a Generator
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import pandas as pd

ALTERNATIVES = ("two-sided", "less", "greater")
_KIND_NAMES = {numbers.Real: "a real number", numbers.Integral: "an integer"}


def describe(value) -> str:
    """A short rendering of what came, for the "got ..." part of an error message."""
    if isinstance(value, np.ndarray | pd.Series | pd.DataFrame):
        return f"{type(value).__name__} of shape {value.shape}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_float_array(
    x,
    *,
    name: str,
    ndim: int | Sequence[int] | None = None,
    allow_nan: bool = False,
    allow_inf: bool = False,
    min_rows: int = 0,
) -> np.ndarray:
    """Return ``x`` as a float64, C-contiguous copy after checking dimension and finiteness.

    Parameters
    ----------
    x : array_like
        Anything numpy can turn into a numeric array (lists, arrays, Series, DataFrames).
    name : str
        The argument's name, used in every message.
    ndim : int or sequence of int, optional
        Accepted numbers of dimensions.
    allow_nan, allow_inf : bool
        Whether NaN or infinite entries are accepted.
    min_rows : int
        Smallest accepted length of the first axis.
    """
    if x is None:
        raise TypeError(f"`{name}` must be numeric array-like; got None")
    _refuse_non_real(x, name=name)
    try:
        arr = np.array(x, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be numeric array-like; got {describe(x)} ({exc})") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(
                f"`{name}` must be {want}; got a {arr.ndim}-D array of shape {arr.shape}"
            )
    if arr.ndim:
        check_n_rows(arr.shape[0], name=name, minimum=min_rows)
    if not allow_nan and np.isnan(arr).any():
        where = np.argwhere(np.isnan(arr))[0].tolist()
        raise ValueError(
            f"`{name}` must not contain NaN; found {int(np.isnan(arr).sum())} "
            f"(first at index {tuple(where)})"
        )
    if not allow_inf and np.isinf(arr).any():
        where = np.argwhere(np.isinf(arr))[0].tolist()
        raise ValueError(
            f"`{name}` must be finite; found {int(np.isinf(arr).sum())} infinite "
            f"value(s) (first at index {tuple(where)})"
        )
    return arr


def _refuse_non_real(x, *, name: str) -> None:
    """Refuse what a float conversion would silently change: complex numbers (numpy drops the
    imaginary part) and text (``"1"`` would become 1.0). Object arrays are checked entry by
    entry, since pandas frames of mixed numeric and boolean columns arrive as object arrays."""
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError):
        return  # ragged or not array-like: the float conversion reports it
    kind = raw.dtype.kind
    if kind == "c":
        raise TypeError(
            f"`{name}` must be real; got complex values ({describe(x)}); pass `.real` or "
            "`abs()` explicitly"
        )
    if kind in "USVMm":
        raise TypeError(
            f"`{name}` must be numeric array-like; got {describe(x)} (dtype {raw.dtype})"
        )
    if kind == "O":
        for value in raw.flat:
            if isinstance(value, str | bytes) or (
                isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real)
            ):
                raise TypeError(
                    f"`{name}` must be numeric array-like with real entries; got the entry "
                    f"{value!r} ({type(value).__name__})"
                )


def check_n_rows(n: int, *, name: str, minimum: int = 2) -> int:
    """At least ``minimum`` rows (observations) in the argument ``name``; returns ``n``.

    One row or none cannot identify a fit: say so, before a later check blames the columns
    (every column of one row is constant) or a solver divides by zero.
    """
    if n < minimum:
        want = "1 row" if minimum == 1 else f"{minimum} rows"
        got = {0: "no rows", 1: "one row"}.get(n, str(n))
        raise ValueError(f"`{name}` needs at least {want}; got {got}")
    return n


def _clearly_full_rank(X: np.ndarray) -> bool:
    """A cheap sufficient check: the Gram matrix's eigenvalues (10x faster than an SVD of a tall
    X) decide only when the condition number is far from the rank threshold, since squaring
    the condition number loses half the digits; otherwise the SVD decides."""
    gram_eigenvalues = np.linalg.eigvalsh(X.T @ X)
    return bool(np.all(np.isfinite(gram_eigenvalues))) and (
        gram_eigenvalues[0] > 1e-8 * gram_eigenvalues[-1] > 0
    )


def check_design(X: np.ndarray, names: Sequence[str]) -> None:
    """A design matrix that identifies its coefficients: columns, more rows than columns and
    full column rank (a solver would otherwise fail deep inside with a LinAlgError)."""
    n, p = X.shape
    if p == 0:
        raise ValueError("the design has no columns: nothing to estimate")
    if n <= p:
        raise ValueError(f"the design needs more rows than columns; got {n} rows, {p} columns")
    rank = p if _clearly_full_rank(X) else np.linalg.matrix_rank(X)
    if rank < p:
        raise ValueError(
            f"the design matrix is singular (rank {rank} < {p} columns {list(names)}); "
            "drop collinear terms"
        )


def check_same_length(**arrays) -> int:
    """Check that all given arrays share the length of their first axis; return it."""
    lengths = {key: len(value) for key, value in arrays.items() if value is not None}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"`{k}` has {v}" for k, v in lengths.items())
        raise ValueError(f"arguments must have the same number of rows; {shown}")
    return next(iter(lengths.values()), 0)


def align_rows(**arrays) -> tuple:
    """Pair row-matched inputs by their pandas index, never silently by position.

    Of the arguments that are pandas Series or DataFrames, every index must hold the same
    labels, without repeats; all of them are then put in the first one's row order (copies:
    nothing passed in is reordered). Arrays and lists are paired by position, as given. A
    pandas input next to a plain array is paired by position too (an array has no labels).

    Parameters
    ----------
    **arrays
        The inputs by argument name, in the order of the signature.

    Returns
    -------
    tuple
        The inputs, in the order given, pandas ones aligned.

    Raises
    ------
    ValueError
        Naming the two arguments, for indexes with different labels or a repeated label.
    """
    frames = {k: v for k, v in arrays.items() if isinstance(v, pd.Series | pd.DataFrame)}
    if len(frames) < 2:
        return tuple(arrays.values())
    (first, reference), *others = frames.items()
    for key, value in frames.items():
        if not value.index.is_unique:
            raise ValueError(f"`{key}` has a repeated index label; rows cannot be paired by it")
    aligned = dict(arrays)
    for key, value in others:
        if value.index.equals(reference.index):
            continue
        if len(value.index) != len(reference.index) or not value.index.isin(reference.index).all():
            raise ValueError(
                f"`{first}` and `{key}` must index the same rows: their pandas indexes hold "
                "different labels (pass arrays to pair rows by position)"
            )
        aligned[key] = value.loc[reference.index]
    return tuple(aligned.values())


def check_scalar(
    value,
    *,
    name: str,
    kind: type | tuple[type, ...] = numbers.Real,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
):
    """Check a scalar's type and range; return it (as float for reals, int for integrals)."""
    if isinstance(value, bool) or not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        want = " or ".join(_KIND_NAMES.get(k, k.__name__) for k in kinds)
        raise TypeError(f"`{name}` must be {want}; got {describe(value)}")
    if isinstance(value, np.generic):
        value = value.item()  # messages show 2.0, not np.float64(2.0)
    if isinstance(value, numbers.Real) and not np.isfinite(value):
        raise ValueError(f"`{name}` must be finite; got {value!r}")
    below = low is not None and (value < low if low_inclusive else value <= low)
    above = high is not None and (value > high if high_inclusive else value >= high)
    if below or above:
        left = "[" if low_inclusive else "("
        right = "]" if high_inclusive else ")"
        lo = "-inf" if low is None else _format_bound(low)
        hi = "inf" if high is None else _format_bound(high)
        raise ValueError(f"`{name}` must lie in {left}{lo}, {hi}{right}; got {value!r}")
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value)


def _format_bound(bound) -> str:
    return str(int(bound)) if isinstance(bound, numbers.Integral) else f"{bound:g}"


def check_positive(value, *, name: str, strict: bool = True) -> float:
    """A finite real number > 0 (``strict``) or >= 0."""
    return check_scalar(value, name=name, low=0.0, low_inclusive=not strict)


def check_positive_int(value, *, name: str, minimum: int = 1) -> int:
    """An integer >= ``minimum``."""
    return check_scalar(value, name=name, kind=numbers.Integral, low=minimum)


def check_probability(value, *, name: str) -> float:
    """A probability strictly inside (0, 1)."""
    return check_scalar(
        value, name=name, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
    )


def check_alpha(alpha) -> float:
    """The significance level, strictly inside (0, 1)."""
    return check_probability(alpha, name="alpha")


def check_option(value, *, name: str, options: Sequence[str]) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in options:
        shown = ", ".join(repr(o) for o in options)
        raise ValueError(f"`{name}` must be one of {shown}; got {describe(value)}")
    return value


def check_alternative(alternative) -> str:
    """``"two-sided"``, ``"less"`` or ``"greater"``."""
    return check_option(alternative, name="alternative", options=ALTERNATIVES)


def check_bool(value, *, name: str) -> bool:
    """``True`` or ``False`` (a numpy bool too), as a Python bool.

    Parameters
    ----------
    value : object
        The argument to check.
    name : str
        Its name in the error message.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        When ``value`` is anything else: a string or a number is a mistake, not a truth value.
    """
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"`{name}` must be True or False; got {describe(value)}")
    return bool(value)


def check_callable(value, *, name: str):
    """A callable (a function, a class, an object with ``__call__``)."""
    if not callable(value):
        raise TypeError(f"`{name}` must be callable; got {describe(value)}")
    return value


def check_random_state(random_state) -> np.random.Generator:
    """Normalise ``random_state`` (None, int, SeedSequence or Generator) to a Generator.

    A Generator passed in is returned as is, so that a caller's stream continues; anything else
    seeds a new one.
    """
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"`random_state` must be a non-negative integer; got {random_state}")
        return np.random.default_rng(int(random_state))
    raise TypeError(
        "`random_state` must be None, a non-negative int, a numpy SeedSequence or a numpy "
        f"Generator; got {describe(random_state)}"
    )


def check_weights(weights, n: int, *, name: str) -> np.ndarray:
    """Non-negative weights of ``n`` points, normalised to sum to 1; None gives uniform weights.

    Parameters
    ----------
    weights : array_like of shape (n,) or None
    n : int
        Number of points the weights belong to.
    name : str
        The argument's name, used in every message.
    """
    if weights is None:
        return np.full(n, 1.0 / n)
    w = as_float_array(weights, name=name, ndim=1)
    if len(w) != n:
        raise ValueError(f"`{name}` must have one weight per point ({n}); got {len(w)}")
    if (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"`{name}` must be non-negative with a positive sum; got {w.min()=:g}")
    return w / w.sum()


def check_observation_weights(weights, n: int, *, name: str, min_positive: int = 1) -> np.ndarray:
    """Observation weights as given (not normalised): a float copy of ``n`` finite,
    non-negative numbers of which at least ``min_positive`` are positive.

    Parameters
    ----------
    weights : array_like of shape (n,)
    n : int
        Number of observations the weights belong to.
    name : str
        The argument's name, used in every message.
    min_positive : int
        Fewest positive weights that identify the model (its number of coefficients).
    """
    w = as_float_array(weights, name=name, ndim=1)
    if len(w) != n:
        raise ValueError(f"`{name}` must have one weight per observation ({n}); got {len(w)}")
    if (w < 0).any():
        raise ValueError(
            f"`{name}` must be non-negative; got {int((w < 0).sum())} negative value(s) "
            f"(smallest {w.min():g})"
        )
    positive = int((w > 0).sum())
    if positive == 0:
        raise ValueError(f"`{name}` are all zero: no observation would enter the fit")
    if positive < min_positive:
        raise ValueError(
            f"`{name}` has {positive} positive weight(s); the model's {min_positive} "
            "coefficients need at least as many observations with positive weight"
        )
    return w


def check_levels(q, *, name: str = "q") -> tuple[tuple[float, ...], bool]:
    """Quantile levels: one number in (0, 1) or a sequence of distinct ones.

    Returns the levels as a tuple of floats and whether ``q`` was a sequence (multi-level fits
    report per-level tables; a single level reports plain ones).
    """
    if isinstance(q, numbers.Real) and not isinstance(q, bool):
        return (check_probability(q, name=name),), False
    if isinstance(q, str) or not isinstance(q, Sequence | np.ndarray | pd.Index):
        raise TypeError(
            f"`{name}` must be a number in (0, 1) or a sequence of them; got {describe(q)}"
        )
    levels = tuple(check_probability(v, name=f"{name}[{i}]") for i, v in enumerate(q))
    if not levels:
        raise ValueError(f"`{name}` must hold at least one level; got an empty sequence")
    if len(set(levels)) != len(levels):
        raise ValueError(f"`{name}` must not repeat a level; got {list(levels)}")
    return levels, True


def check_penalty(penalty, *, name: str = "penalty") -> np.ndarray:
    """A penalty > 0, or a 1-D array of them (a path); returned as a 0-D or 1-D float array."""
    lam = as_float_array(penalty, name=name, ndim=(0, 1))
    if lam.size == 0 or np.any(lam <= 0):
        raise ValueError(
            f"`{name}` must be > 0 (one value, or a 1-D array for a path); got {describe(penalty)}"
        )
    return lam


def as_class_labels(labels, *, name: str, n: int | None = None) -> np.ndarray:
    """Class labels as a 1-D int64 copy: integers, or floats that are whole numbers.

    Refuses text, booleans, NaN and fractional values (a float label 2.5 would otherwise be
    truncated to class 2) and, given ``n``, a length other than ``n``.
    """
    _refuse_non_real(labels, name=name)
    raw = np.asarray(labels)
    if raw.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D class labels; got shape {raw.shape}")
    if n is not None and raw.shape[0] != n:
        raise ValueError(f"`{name}` must have {n} entries; got {raw.shape[0]}")
    if raw.dtype.kind == "b":
        raise TypeError(f"`{name}` must hold integer class labels; got booleans")
    values = as_float_array(raw, name=name, ndim=1)
    if not np.array_equal(values, np.round(values)):
        bad = values[values != np.round(values)][0]
        raise ValueError(f"`{name}` must hold integer class labels; got the value {bad!r}")
    return values.astype(np.int64)


__all__ = [
    "ALTERNATIVES",
    "align_rows",
    "as_class_labels",
    "as_float_array",
    "check_alpha",
    "check_alternative",
    "check_bool",
    "check_callable",
    "check_design",
    "check_levels",
    "check_n_rows",
    "check_observation_weights",
    "check_option",
    "check_penalty",
    "check_positive",
    "check_positive_int",
    "check_probability",
    "check_random_state",
    "check_same_length",
    "check_scalar",
    "check_weights",
    "describe",
]
