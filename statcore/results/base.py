"""``Results``: what every statcore and mlcore result shares (repr, summary, tidy, glance, plot)."""

from __future__ import annotations

import dataclasses
import functools
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from statcore.results._format import format_number
from statcore.results.iteration import IterationRecord
from statcore.results.summary import Summary


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class Results:
    """Base of every result: a frozen snapshot holding all it needs to report itself.

    Parameters
    ----------
    method : str
        Human-readable name of the procedure ("Quantile regression (Frisch-Newton)").
    nobs : int, optional
        Number of observations used.
    model : object, optional
        The model that produced the result (dropped by :meth:`strip`).
    design_spec : statcore.formula.DesignSpec, optional
        Term names and the formula specification, without data, so that ``predict(newdata)``
        works after :meth:`strip`.
    converged, n_iter : optional
        Whether an iterative procedure converged and its iteration count; read from
        ``iterations`` when that is given (passing both must agree).
    iterations : IterationRecord, optional
        How the iterative procedure stopped (status, tolerance, criterion, history).
    fit_options : mapping
        The options ``fit()`` was called with, defaults filled in (recorded by
        :class:`statcore.base.Estimator`).
    notes : tuple of str
        Remarks printed under the summary.
    random_state_used : int, optional
        The seed actually used, when known.
    """

    method: str
    nobs: int | None = None
    model: Any = field(default=None, repr=False)
    design_spec: Any = field(default=None, repr=False)
    converged: bool | None = None
    n_iter: int | None = None
    notes: tuple[str, ...] = ()
    random_state_used: int | None = None
    iterations: IterationRecord | None = field(default=None, repr=False)
    fit_options: Mapping[str, Any] = field(default_factory=dict, repr=False)

    #: kind -> function(results, ax=None, **kwargs); the first entry is the default kind. A
    #: subclass that sets it gets a ``plot`` whose docstring lists these kinds (each with the
    #: first line of its function's docstring), so that ``help(res.plot)`` shows them.
    _plots: ClassVar[dict] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_plots" in cls.__dict__ and "plot" not in cls.__dict__:

            def plot(self, kind: str | None = None, ax=None, **kwargs):
                return super(cls, self).plot(kind=kind, ax=ax, **kwargs)

            plot.__doc__ = _plot_doc(cls._plots)
            plot.__qualname__ = f"{cls.__qualname__}.plot"
            cls.plot = plot

    def __post_init__(self):
        record = self.iterations
        if record is None:
            return
        if not isinstance(record, IterationRecord):
            raise TypeError(f"`iterations` must be an IterationRecord; got {type(record).__name__}")
        for name in ("converged", "n_iter"):
            given, recorded = getattr(self, name), getattr(record, name)
            if given is not None and given != recorded:
                raise ValueError(
                    f"`{name}`={given!r} contradicts the iteration record ({recorded!r})"
                )
            object.__setattr__(self, name, recorded)

    def glance(self) -> pd.DataFrame:
        """One row of model-level facts."""
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "converged": self.converged,
                    "n_iter": self.n_iter,
                }
            ]
        )

    def tidy(self) -> pd.DataFrame:
        """One row per term, component or metric; the base result has none."""
        return pd.DataFrame()

    def summary(self, alpha: float = 0.05) -> Summary:
        """Report built from :meth:`glance` and :meth:`tidy`."""
        table = self.tidy()
        return Summary(
            title=self._title(),
            info=self._info(),
            tables={"results": table} if len(table) else {},
            notes=self.notes + self._convergence_notes(),
        )

    def plot(self, kind: str | None = None, ax=None, **kwargs):
        """Draw the result; ``kind`` picks one of the class's plots (its ``_plots`` keys).

        Returns the matplotlib Axes (an array of them for multi-panel kinds).
        """
        if not self._plots:
            raise NotImplementedError(f"{type(self).__name__} has no plot")
        if kind is None:
            kind = next(iter(self._plots))
        if kind not in self._plots:
            shown = ", ".join(repr(k) for k in self._plots)
            raise ValueError(f"`kind` must be one of {shown}; got {kind!r}")
        return self._plots[kind](self, ax=ax, **kwargs)

    def strip(self):
        """A copy without the model (and its data): small pickles that still report and predict."""
        return dataclasses.replace(self, model=None)

    def to_dict(self) -> dict:
        """JSON-safe scalars and small tables, for logging."""
        out = {key: _json_safe(value) for key, value in self.glance().iloc[0].items()}
        out["notes"] = list(self.notes)
        table = self.tidy()
        if len(table):
            out["tidy"] = [
                {k: _json_safe(v) for k, v in row.items()} for row in table.to_dict("records")
            ]
        return out

    def _title(self) -> str:
        """The method and what was modelled: the formula, or the response and its regressors
        for array input (``"Quantile regression: foodexp ~ income"``)."""
        spec = self.design_spec
        if spec is None:
            return self.method
        if spec.formula:
            return f"{self.method}: {spec.formula}"
        if not spec.y_name:
            return self.method
        inputs = [name for name in spec.x_names if name != spec.intercept_term]
        rhs = " + ".join(inputs)
        if len(rhs) > 60:
            rhs = f"{len(inputs)} regressors"
        return (
            f"{self.method}: {spec.y_name} ~ {rhs}" if inputs else f"{self.method}: {spec.y_name}"
        )

    def _info(self) -> tuple[tuple[str, str], ...]:
        """Formatted key/value pairs for the summary header, from :meth:`glance`."""
        row = self.glance().iloc[0]
        pairs = []
        for key, value in row.items():
            if key == "method" or value is None or (isinstance(value, float) and np.isnan(value)):
                continue
            pairs.append((key, value if isinstance(value, str) else format_number(value)))
        return tuple(pairs)

    def _convergence_notes(self) -> tuple[str, ...]:
        if self.iterations is not None and not self.iterations.converged:
            return (self.iterations.message() + ".",)
        if self.converged is False:
            return (f"Did not converge after {self.n_iter} iterations.",)
        return ()

    def _repr_lines(self) -> list[str]:
        return []

    def __repr__(self) -> str:
        head = f"<{type(self).__name__}: {self.method}"
        if self.nobs is not None:
            head += f", nobs={self.nobs}"
        if self.converged is not None:
            head += ", converged" if self.converged else ", NOT converged"
        return "\n".join([head + ">", *self._repr_lines()])

    def _repr_html_(self) -> str:
        return self.summary().as_html()


def _plot_doc(plots: dict) -> str:
    """The ``plot`` docstring of a class with these ``_plots``."""
    kinds = ", ".join(repr(k) for k in plots)
    default = next(iter(plots), None)
    lines = [
        "Draw the result; returns the matplotlib Axes (an array of them for multi-panel kinds).",
        "",
        "Parameters",
        "----------",
        f"kind : {{{kinds}}}, optional",
        f"    Which plot; default {default!r}:" if plots else "    This class has no plot.",
        "",
    ]
    for kind, function in plots.items():
        while isinstance(function, functools.partial):  # its own __doc__ describes partial
            function = function.func
        doc = (getattr(function, "__doc__", None) or "").strip()
        first = doc.split("\n\n")[0].replace("\n", " ") if doc else "(undocumented)"
        lines.append(f"    - ``{kind!r}``: {' '.join(first.split())}")
    lines += [
        "",
        "ax : matplotlib Axes, optional",
        "    Where to draw; a new figure when None.",
        "**kwargs",
        "    Passed to the plotting function of ``kind``.",
    ]
    return "\n".join(lines)


def _json_safe(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if value is None or isinstance(value, str | bool | numbers.Number):
        return value
    return str(value)
