"""The one door to formulaic: arrays, a DataFrame or a formula become a ``Design``.

Models never see formulaic; they see ``Design`` (float64 copies of ``y`` and ``X``, names, rows
kept and dropped) and results keep its data-free half, ``DesignSpec``, which re-applies the fitted
specification to new data: the same categorical levels and the same stateful transforms
(``center(x)`` keeps the training mean).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from statcore.validation import (
    as_float_array,
    check_n_rows,
    check_observation_weights,
    check_option,
    check_same_length,
)

MISSING = ("raise", "drop")
INTERCEPT = "Intercept"


@dataclass(frozen=True, eq=False)
class DesignSpec:
    """What a fitted design needs to rebuild ``X`` for new data; holds no data.

    Attributes
    ----------
    x_names : tuple of str
        Column names of ``X`` (term names of the estimates).
    y_name : str or None
        Name of the response.
    formula : str or None
        The formula, for formula-built designs.
    intercept : bool
        Whether an ``Intercept`` column was added to array input.
    input_names : tuple of str or None
        For array input: the user's exog column names (before the intercept), used to pick
        columns out of a new DataFrame.
    constant : str or None
        For array input that already held one constant column (``sm.add_constant``'s
        ``const``): its name. That column serves as the intercept, none is added, and new data
        carries it as the fitting data did (statsmodels' ``hasconst``).
    """

    x_names: tuple[str, ...]
    y_name: str | None
    formula: str | None = None
    intercept: bool = False
    input_names: tuple[str, ...] | None = None
    constant: str | None = None
    _rhs: Any = field(default=None, repr=False)
    _lhs: Any = field(default=None, repr=False)

    @property
    def intercept_term(self) -> str | None:
        """The term that plays the intercept: ``"Intercept"`` (added, or a formula's), the
        user's constant column, or None."""
        if INTERCEPT in self.x_names:
            return INTERCEPT
        return self.constant

    def exog(self, newdata, *, name: str = "newdata") -> tuple[np.ndarray, pd.Index]:
        """``X`` for ``newdata`` under the fitted specification, and the row labels.

        ``name`` is the argument the data came in as, for error messages.
        """
        if self._rhs is not None:
            frame = _as_frame(newdata, name=name)
            from formulaic.errors import FormulaicError
            from formulaic.transforms.contrasts import DataMismatchWarning

            with warnings.catch_warnings():
                warnings.simplefilter("error", DataMismatchWarning)
                try:
                    mm = self._rhs.get_model_matrix(frame, na_action="ignore")
                except DataMismatchWarning as exc:
                    raise ValueError(f"`{name}` does not match the fitted design: {exc}") from None
                except (FormulaicError, NameError, KeyError) as exc:
                    raise ValueError(
                        f"`{name}` lacks what the formula {self.formula!r} needs: {exc}"
                    ) from None
            return np.ascontiguousarray(mm.to_numpy(dtype=float)), mm.index
        index = newdata.index if isinstance(newdata, pd.Series | pd.DataFrame) else None
        if isinstance(newdata, pd.DataFrame) and self.input_names is not None:
            missing = [c for c in self.input_names if c not in newdata.columns]
            if missing:
                raise ValueError(f"`{name}` lacks the columns {missing} the model was fitted on")
            newdata = newdata[list(self.input_names)]
        n_inputs = len(self.x_names) - int(self.intercept)
        X = as_float_array(newdata, name=name, ndim=(1, 2), allow_nan=True)
        if X.ndim == 1:
            X = X.reshape(-1, 1) if n_inputs == 1 else X.reshape(1, -1)
        if X.shape[1] != n_inputs:
            raise ValueError(f"`{name}` must have {n_inputs} columns; got {X.shape[1]}")
        if self.intercept:
            X = np.column_stack([np.ones(len(X)), X])
        return np.ascontiguousarray(X), pd.RangeIndex(len(X)) if index is None else index

    def endog(self, data) -> np.ndarray | None:
        """The response in ``data`` when it is there (for residuals on new data), else None."""
        if not isinstance(data, pd.DataFrame):
            return None
        if self._lhs is not None:
            if not set(self._lhs.required_variables) <= set(data.columns):
                return None
            return self._lhs.get_model_matrix(data, na_action="ignore").to_numpy(dtype=float)[:, 0]
        if self.y_name in data.columns:
            return data[self.y_name].to_numpy(dtype=float)
        return None


@dataclass(frozen=True, eq=False)
class Design:
    """The data of a model: float64 C-contiguous copies of ``y`` and ``X`` and their labels.

    Attributes
    ----------
    y : ndarray of shape (n,) or None
    X : ndarray of shape (n, k)
    spec : DesignSpec
    row_labels : Index
        Labels of the rows kept.
    n_dropped : int
        Rows dropped for missing values (``missing="drop"``).
    source : DataFrame or None
        A copy of the kept rows of the user's data frame (formula input), for ``augment``.
    kept : ndarray of int or None
        Positions in the user's ``endog`` (array input) or data frame (formula input) of the
        rows kept, so that models can subset what they hold beside the design (a quantized
        response's cells, observation weights); None for a frame whose repeated index labels
        hide which rows were dropped.
    """

    y: np.ndarray | None
    X: np.ndarray
    spec: DesignSpec
    row_labels: pd.Index
    n_dropped: int = 0
    source: pd.DataFrame | None = field(default=None, repr=False)
    kept: np.ndarray | None = field(default=None, repr=False)

    @property
    def nobs(self) -> int:
        return self.X.shape[0]

    @property
    def x_names(self) -> tuple[str, ...]:
        return self.spec.x_names

    @property
    def y_name(self) -> str | None:
        return self.spec.y_name

    @property
    def formula(self) -> str | None:
        return self.spec.formula

    def frame(self) -> pd.DataFrame:
        """The user's view of the kept rows: their frame (formula input) or y and X columns."""
        if self.source is not None:
            return self.source.copy()
        start = int(self.spec.intercept)
        frame = pd.DataFrame(
            self.X[:, start:], columns=list(self.x_names[start:]), index=self.row_labels
        )
        if self.y is not None:
            frame.insert(0, self.y_name, self.y)
        return frame


def _as_frame(data, *, name: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, dict):
        return pd.DataFrame(data)
    raise TypeError(
        f"`{name}` must be a pandas DataFrame or a dict of columns; got {type(data).__name__}"
    )


def _names_and_values(obj, *, name: str, default: str):
    """Column names and a float copy of one array-like argument; non-numeric columns are refused."""
    if isinstance(obj, pd.DataFrame):
        bad = [
            c
            for c in obj.columns
            if not (pd.api.types.is_numeric_dtype(obj[c]) or pd.api.types.is_bool_dtype(obj[c]))
        ]
        if bad:
            raise TypeError(
                f"`{name}` has non-numeric columns {bad}; use `from_formula` with C(...) for "
                "categorical variables"
            )
        return (
            [str(c) for c in obj.columns],
            obj.index,
            as_float_array(obj, name=name, ndim=2, allow_nan=True),
        )
    if isinstance(obj, pd.Series):
        label = default if obj.name is None else str(obj.name)
        return [label], obj.index, as_float_array(obj, name=name, ndim=1, allow_nan=True)
    values = as_float_array(obj, name=name, ndim=(1, 2), allow_nan=True)
    if values.ndim == 1:
        return [default], None, values
    return [f"{default}{j}" for j in range(values.shape[1])], None, values


def _aligned(X: np.ndarray, x_index, y_index) -> np.ndarray:
    """Rows of ``X`` in the order of ``y``'s labels when both are pandas objects (statsmodels
    refuses what it cannot align; pairing by position would silently mismatch rows)."""
    if x_index is None or y_index is None or x_index.equals(y_index):
        return X
    if x_index.is_unique and y_index.is_unique and set(x_index) == set(y_index):
        return X[x_index.get_indexer(y_index)]
    differ = list(y_index.symmetric_difference(x_index)[:3]) or "duplicated labels"
    raise ValueError(
        f"`endog` and `exog` must carry the same index labels; they differ ({differ}): align "
        "them, or pass `.to_numpy()` to pair rows by position"
    )


def design_from_arrays(
    endog, exog=None, *, intercept: bool = True, missing: str = "raise"
) -> Design:
    """Build a ``Design`` from array-likes (numpy, pandas); names come from pandas labels.

    Parameters
    ----------
    endog : array_like of shape (n,)
        Response; a Series' name becomes ``y_name`` (default ``"y"``).
    exog : array_like of shape (n,) or (n, k), optional
        Regressors; DataFrame columns become term names (default ``x0, x1, ...``). When both
        ``endog`` and ``exog`` are pandas objects, rows are paired by index label (``exog`` is
        put in ``endog``'s order); indexes with different labels are refused.
    intercept : bool
        Add an ``Intercept`` column (to the copy). Input that already holds one constant,
        non-zero column (as ``sm.add_constant`` makes) keeps it as the intercept instead, under
        its own name, and adds none (statsmodels' ``hasconst``); several constant columns are
        refused (they are collinear).
    missing : {"raise", "drop"}
        NaN rows raise, or are dropped with the count recorded.
    """
    check_option(missing, name="missing", options=MISSING)
    if isinstance(endog, pd.DataFrame):
        if endog.shape[1] != 1:
            raise ValueError(f"`endog` must have one column; got {endog.shape[1]}")
        endog = endog.iloc[:, 0]
    y_names, y_index, y = _names_and_values(endog, name="endog", default="y")
    if y.ndim == 2:
        if y.shape[1] != 1:
            raise ValueError(f"`endog` must be 1-D or have one column; got shape {y.shape}")
        y = y[:, 0]
    if exog is None:
        if not intercept:
            raise ValueError("`exog` is None and `intercept=False`: the model has no regressors")
        x_names, x_index, X = [], None, np.empty((len(y), 0))
    else:
        x_names, x_index, X = _names_and_values(exog, name="exog", default="x")
        if X.ndim == 1:
            X = X.reshape(-1, 1)
    check_same_length(endog=y, exog=X)
    check_n_rows(len(y), name="endog")
    X = _aligned(X, x_index, y_index)
    if not np.isfinite(y[~np.isnan(y)]).all() or not np.isfinite(X[~np.isnan(X)]).all():
        which = "endog" if not np.isfinite(y[~np.isnan(y)]).all() else "exog"
        raise ValueError(f"`{which}` must be finite; found infinite values")
    keep = ~(np.isnan(y) | np.isnan(X).any(axis=1))
    n_dropped = int((~keep).sum())
    if n_dropped and missing == "raise":
        where = "endog" if np.isnan(y).any() else "exog"
        raise ValueError(
            f"`{where}` has missing values in {n_dropped} row(s); pass missing='drop' to drop them"
        )
    y, X = y[keep], X[keep]
    if n_dropped:
        check_n_rows(len(y), name="endog (after dropping missing rows)")
    index = y_index if y_index is not None else x_index
    row_labels = (pd.RangeIndex(len(keep)) if index is None else pd.Index(index))[keep]
    own_constant = None
    if intercept:
        constant = [
            name
            for name, col in zip(x_names, X.T, strict=True)
            if len(col) and np.ptp(col) == 0 and col[0] != 0
        ]
        if len(constant) > 1:
            raise ValueError(
                f"`exog` columns {constant} are all constant: they are collinear; keep one "
                "(it then serves as the intercept) or pass intercept=False"
            )
        if constant:
            own_constant = constant[0]
            intercept = False
        else:
            X = np.column_stack([np.ones(len(y)), X])
    spec = DesignSpec(
        x_names=tuple([INTERCEPT] * intercept + x_names),
        y_name=y_names[0],
        intercept=intercept,
        input_names=tuple(x_names),
        constant=own_constant,
    )
    return Design(
        y=np.ascontiguousarray(y),
        X=np.ascontiguousarray(X),
        spec=spec,
        row_labels=row_labels,
        n_dropped=n_dropped,
        kept=np.flatnonzero(keep),
    )


def design_from_formula(formula: str, data, *, missing: str = "raise", context=None) -> Design:
    """Build a ``Design`` from an R-style formula (``"y ~ x + C(g)"``) and a data frame.

    Parameters
    ----------
    formula : str
        formulaic syntax; ``- 1`` or ``0 +`` drops the intercept.
    data : DataFrame or dict
    missing : {"raise", "drop"}
    context : mapping, optional
        Namespace for names the formula uses (captured by the public entry point).
    """
    from formulaic import model_matrix
    from formulaic.errors import FormulaicError

    check_option(missing, name="missing", options=MISSING)
    if not isinstance(formula, str) or "~" not in formula:
        raise ValueError(f"`formula` must be a string 'response ~ terms'; got {formula!r}")
    frame = _as_frame(data, name="data")
    if len(frame) == 0:
        raise ValueError("`data` has no rows")
    try:
        matrices = model_matrix(formula, frame, na_action="drop", context=context or {})
    except (FormulaicError, NameError, KeyError, SyntaxError) as exc:
        raise ValueError(f"`formula` {formula!r} could not be evaluated on `data`: {exc}") from None
    if not hasattr(matrices, "lhs"):
        raise ValueError(
            f"`formula` {formula!r} has no response; this model needs one: write 'response ~ terms'"
        )
    lhs, rhs = matrices.lhs, matrices.rhs
    if lhs.shape[1] != 1:
        raise ValueError(f"`formula` must have one response column; got {list(lhs.columns)}")
    n_dropped = len(frame) - len(rhs)
    check_n_rows(len(rhs), name="data" + (" (after dropping missing rows)" if n_dropped else ""))
    if n_dropped and missing == "raise":
        variables = sorted(
            set(lhs.model_spec.required_variables) | set(rhs.model_spec.required_variables)
        )
        with_nan = [v for v in variables if v in frame.columns and frame[v].isna().any()]
        raise ValueError(
            f"`data` has missing values in {n_dropped} row(s) (variables {with_nan}); "
            "pass missing='drop' to drop them"
        )
    y = as_float_array(lhs.to_numpy(dtype=float)[:, 0], name="response", ndim=1)
    X = as_float_array(rhs.to_numpy(dtype=float), name="design matrix", ndim=2)
    spec = DesignSpec(
        x_names=tuple(str(c) for c in rhs.columns),
        y_name=str(lhs.columns[0]),
        formula=formula,
        _rhs=rhs.model_spec,
        _lhs=lhs.model_spec,
    )
    return Design(
        y=y,
        X=X,
        spec=spec,
        row_labels=rhs.index,
        n_dropped=n_dropped,
        source=frame.loc[rhs.index].copy(),
        kept=_kept_positions(frame.index, rhs.index, n_dropped),
    )


def _kept_positions(index: pd.Index, kept_labels: pd.Index, n_dropped: int):
    if not n_dropped:
        return np.arange(len(index))
    return index.get_indexer(kept_labels) if index.is_unique else None


def design_weights(weights, design: Design, *, name: str = "weights") -> np.ndarray | None:
    """Observation weights of the rows a ``design`` kept, checked (None stays None).

    ``weights`` is the name of a column of the formula's data, a pandas Series (paired with
    the rows by index label, never by position), or an array with one weight per row the user
    passed, dropped rows included (``missing="drop"`` drops their weights too). The weights
    must be finite and non-negative, with at least as many positive ones as the design has
    columns.
    """
    if weights is None:
        return None
    n_given = design.nobs + design.n_dropped
    if isinstance(weights, str):
        if design.source is None or weights not in design.source.columns:
            raise ValueError(
                f"`{name}`={weights!r} names a column, but the model has "
                + ("no data frame" if design.source is None else "no such column in its data")
            )
        values = design.source[weights]
    elif isinstance(weights, pd.Series):
        if not weights.index.is_unique:
            raise ValueError(f"`{name}` has a repeated index label; rows cannot be paired by it")
        missing = design.row_labels.difference(weights.index)
        if len(missing):
            raise ValueError(
                f"`{name}` must carry a weight for every row of the data; its index lacks "
                f"{list(missing[:3])} (pass an array to pair weights with rows by position)"
            )
        values = weights.loc[design.row_labels]
    else:
        values = as_float_array(weights, name=name, ndim=1)
        if len(values) != n_given:
            raise ValueError(
                f"`{name}` must have one weight per row of the data ({n_given}); got {len(values)}"
            )
        if design.n_dropped:
            if design.kept is None:
                raise ValueError(
                    f"`{name}` cannot be matched to the rows kept after dropping missing values: "
                    "the data's index repeats labels; pass the weights as a column name"
                )
            values = values[design.kept]
    return check_observation_weights(
        np.asarray(values), design.nobs, name=name, min_positive=design.X.shape[1]
    )


def capture_context(depth: int = 1):
    """The caller's namespace ``depth`` frames up, for names a formula uses."""
    from formulaic.utils.context import capture_context as _capture

    return _capture(depth + 1)


def linear_constraints(constraints, names) -> tuple[np.ndarray, np.ndarray, str]:
    """Parse linear restrictions ``R θ = q`` over ``names``; return ``R``, ``q`` and a text form.

    ``constraints`` is a formulaic constraint string (``"x1 = x2, x3 = 0"``) or a pair ``(R, q)``.
    """
    k = len(names)
    if isinstance(constraints, str):
        from formulaic.utils.constraints import LinearConstraints

        try:
            parsed = LinearConstraints.from_spec(constraints, variable_names=list(names))
        except Exception as exc:  # formulaic raises several exception types for bad specs
            raise ValueError(
                f"`constraints` {constraints!r} could not be parsed over the terms "
                f"{list(names)}: {exc}"
            ) from None
        R = np.asarray(parsed.constraint_matrix, dtype=float)
        q = np.asarray(parsed.constraint_values, dtype=float)
        return R, q, constraints
    try:
        R_in, q_in = constraints
    except (TypeError, ValueError):
        raise TypeError(
            f"`constraints` must be a string or a pair (R, q); got {type(constraints).__name__}"
        ) from None
    R = as_float_array(R_in, name="R", ndim=(1, 2))
    R = R.reshape(1, -1) if R.ndim == 1 else R
    q = as_float_array(q_in, name="q", ndim=(0, 1)).reshape(-1)
    if R.shape[1] != k:
        raise ValueError(f"`R` must have {k} columns (one per term); got {R.shape[1]}")
    if q.shape[0] != R.shape[0]:
        raise ValueError(f"`q` must have {R.shape[0]} entries (one per row of R); got {q.shape[0]}")
    return R, q, f"R theta = q ({R.shape[0]} restriction(s))"
