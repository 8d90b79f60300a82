"""The bad-input harness: one table row per public entry, every kind of bad input per argument.

A row says how to call an entry with good inputs and what kind each argument is; the harness
replaces one argument at a time by a bad value of its kind (drawn by hypothesis: where the NaN
sits, how short the array is, which wrong type comes) and asserts a *clear* error: a
``ValueError`` or ``TypeError`` whose message names the argument in backticks. A raw numpy,
torch or scipy message ("index 3 is out of bounds", "mat1 and mat2 shapes cannot be
multiplied") names no argument and fails, as does a call that returns.

The completeness check walks the ``__all__`` of every area in the table and fails for a public
function or estimator without a row (or a reasoned exemption), so a new entry cannot skip it.
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: Argument kinds and the bad values each gets. A kind is a contract the entry promises: a
#: "matrix" is a finite real 2-D array with at least one row, a "fraction" a real in (0, 1),
#: a "unit_interval" one in [0, 1], "fraction_or_one" (0, 1], "fraction_or_zero" [0, 1), ...
KINDS = (
    "matrix",
    "vector",
    "labels",
    "positive_int",
    "nonneg_int",
    "positive",
    "fraction",
    "unit_interval",
    "fraction_or_one",
    "fraction_or_zero",
    "option",
    "random_state",
    "tensor",
    "bool",
)


def _with_value(base: np.ndarray, value, where: int) -> np.ndarray:
    out = np.array(base, dtype=float, copy=True)
    out.flat[where % out.size] = value
    return out


def bad_values(kind: str, good) -> st.SearchStrategy:
    """A hypothesis strategy of ``(label, bad value)`` pairs for an argument of ``kind``.

    ``good`` is the argument's good value in the row: arrays are spoiled from it (a NaN in one
    cell, a dimension dropped, no rows) so that the error can only come from the spoiled part.
    """
    if kind in ("matrix", "vector", "labels"):
        base = np.asarray(good)
        cells = st.integers(0, max(base.size - 1, 0))
        wrong_ndim = base[:, 0] if base.ndim == 2 else base[:, None, None]
        spoiled = [
            st.just(("empty", base[:0])),
            st.just(("wrong ndim", wrong_ndim)),
            st.just(("strings", base.astype(str))),
            st.just(("complex", base.astype(complex) + 1j)),
        ]
        if kind != "labels":
            spoiled += [
                cells.map(lambda i: ("nan", _with_value(base, math.nan, i))),
                cells.map(lambda i: ("inf", _with_value(base, -math.inf, i))),
            ]
        else:
            spoiled.append(cells.map(lambda i: ("negative label", _with_value(base, -1, i))))
        return st.one_of(spoiled)
    if kind == "tensor":
        import torch

        base = torch.as_tensor(good)
        cells = st.integers(0, max(base.numel() - 1, 0))

        def spoil(value):
            def at(i):
                out = base.detach().clone().float()
                out.view(-1)[i % out.numel()] = value
                return out

            return at

        return st.one_of(
            st.just(("empty", base[:0])),
            st.just(("wrong ndim", base.reshape(-1)[0])),
            cells.map(lambda i: ("nan", spoil(math.nan)(i))),
            cells.map(lambda i: ("inf", spoil(math.inf)(i))),
            st.just(("numpy strings", np.asarray(base.detach().cpu().numpy()).astype(str))),
        )
    scalars = {
        "positive_int": [0, -3, 2.5, "4", np.array([2, 3]), True],
        "nonneg_int": [-1, 1.5, "2", np.array([1, 2])],
        "positive": [0.0, -1.0, math.nan, math.inf, "1.0", np.array([1.0, 2.0]), 1j],
        "fraction": [0.0, 1.0, -0.2, 1.5, math.nan, "0.5", np.array([0.1, 0.2])],
        "unit_interval": [-0.2, 1.5, math.nan, "0.5", np.array([0.1, 0.2])],
        "fraction_or_one": [0.0, -0.2, 1.5, math.nan, "0.5", np.array([0.1, 0.2])],
        "fraction_or_zero": [1.0, -0.2, 1.5, math.nan, "0.5", np.array([0.1, 0.2])],
        "option": ["no-such-option", 3, None],
        "random_state": ["seed", -1, 1.5, [1, 2]],
        "bool": ["yes", 2, None],
    }
    if kind not in scalars:
        raise KeyError(f"unknown kind {kind!r}; known: {KINDS}")
    return st.sampled_from([(f"{kind}={v!r}", v) for v in scalars[kind]])


@dataclass(frozen=True)
class Row:
    """One public entry: how to call it with good inputs, and the kind of each argument.

    ``call(**overrides)`` runs the entry (a ``fit`` included, for an estimator) with good
    values except the overridden ones; ``args`` maps each argument to check to its kind and
    good value. ``skip`` maps ``(argument, label)`` to the reason a bad value is legitimate
    there (e.g. an ``option`` that takes None).
    """

    call: Callable
    args: Mapping[str, tuple[str, object]]
    skip: Mapping[tuple[str, str], str] = field(default_factory=dict)


def assert_clear_error(row: Row, name: str, label: str, value) -> None:
    """The call with ``name=value`` raises ValueError/TypeError naming `name`."""
    if (name, label) in row.skip:
        return
    try:
        row.call(**{name: value})
    except (ValueError, TypeError) as err:
        message = str(err)
        assert re.search(rf"`{re.escape(name)}[`\[.]", message), (
            f"{name} = {label}: the error does not name `{name}`: {type(err).__name__}: {message}"
        )
        return
    except Exception as err:  # noqa: BLE001 - any other type is the finding itself
        raise AssertionError(
            f"{name} = {label}: {type(err).__name__} instead of a ValueError/TypeError naming "
            f"`{name}`: {err}"
        ) from err
    raise AssertionError(f"{name} = {label}: accepted without an error")


def public_entries(area: str) -> dict[str, object]:
    """The public functions and estimators (classes with a ``fit``) of an area's ``__all__``."""
    module = importlib.import_module(area)
    out = {}
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name)
        if inspect.isfunction(obj) or (
            inspect.isclass(obj) and callable(getattr(obj, "fit", None))
        ):
            out[f"{area}.{name}"] = obj
    return out


def make_table_tests(rows: Mapping[str, Row], exempt: Mapping[str, str], areas):
    """The four tests of a table module: completeness per area, every bad input per argument,
    a control that every row's good call runs, and that the call leaves its inputs as they were.
    Bind them to ``test_`` names in the module.
    """

    @pytest.mark.parametrize("area", areas)
    def completeness(area):
        missing = sorted(set(public_entries(area)) - set(rows) - set(exempt))
        assert not missing, "rows missing for: " + ", ".join(missing)

    cases = [(entry, name) for entry, row in rows.items() for name in row.args]

    @pytest.mark.parametrize(("entry", "name"), cases, ids=[f"{e}:{n}" for e, n in cases])
    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def bad_input(entry, name, data):
        row = rows[entry]
        kind, good = row.args[name]
        label, value = data.draw(bad_values(kind, good), label=f"{name} ({kind})")
        assert_clear_error(row, name, label, value)

    @pytest.mark.parametrize("entry", sorted(rows))
    def good_row(entry):
        # a control: the good call must succeed, or every bad-input case passes vacuously
        rows[entry].call()

    @pytest.mark.parametrize("entry", sorted(rows))
    def unmodified(entry):
        # nothing the user passed in is modified: the good values compare equal after the call
        row = rows[entry]
        before = {name: _snapshot(good) for name, (_, good) in row.args.items()}
        row.call()
        for name, (_, good) in row.args.items():
            assert _same(before[name], good), f"`{name}` was modified by {entry}"

    return completeness, bad_input, good_row, unmodified


def _snapshot(value):
    import copy

    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    return copy.deepcopy(value)


def _same(a, b) -> bool:
    import torch

    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and torch.equal(a, b.detach())
    if isinstance(a, np.ndarray):
        nan_ok = a.dtype.kind in "fc"
        return (
            isinstance(b, np.ndarray)
            and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=nan_ok)
        )
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b or (a != a and b != b)
