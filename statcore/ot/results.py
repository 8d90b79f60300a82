"""``SinkhornResult`` (an entropic transport plan, its costs, potentials and convergence record)
and ``SinkhornDivergenceResult`` (the debiased divergence and its three solves)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.results import Results
from statcore.results.plotting import plot_matrix


def plot_plan(
    results,
    ax=None,
    *,
    rows: str = "source point i",
    columns: str = "target point j",
    title: str = "entropic plan",
    **kwargs,
):
    """The transport plan of an entropic OT result as an image: the mass row i moves to column j.

    Parameters
    ----------
    results : SinkhornResult or BoxSinkhornResult
        A result that holds its ``plan`` and ``epsilon``.
    ax : matplotlib Axes, optional
    rows, columns : str
        Axis labels.
    title : str
        The title, to which ``epsilon`` is added.
    **kwargs
        Passed to :func:`statcore.results.plotting.plot_matrix`.

    Returns
    -------
    matplotlib Axes
    """
    if results.plan is None:
        raise ValueError("this result holds no plan; solve with `plan=True` to draw it")
    return plot_matrix(
        results.plan,
        ax,
        xlabel=columns,
        ylabel=rows,
        label="mass",
        title=f"{title} (epsilon = {results.epsilon:g})",
        **kwargs,
    )


class PlanResultMixin:
    """What every entropic-plan result (``f``, ``g``, ``epsilon``, ``transport_cost``,
    ``objective``, ``marginal_error``) reports the same way: ``potentials`` and the ``glance``
    columns. ``_size_columns`` names the glance columns of the row and column counts."""

    _size_columns: ClassVar[tuple[str, str]] = ("n_rows", "n_columns")

    @property
    def potentials(self) -> tuple[np.ndarray, np.ndarray]:
        """``(f, g)``."""
        return self.f, self.g

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        rows, columns = self._size_columns
        row[rows] = len(self.f)
        row[columns] = len(self.g)
        for name in ("epsilon", "transport_cost", "objective", "marginal_error"):
            row[name] = getattr(self, name)
        return row


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class SinkhornResult(PlanResultMixin, Results):
    """The solution of an entropic optimal transport problem.

    Parameters
    ----------
    plan : ndarray or None
        The plan ``P_ij = a_i b_j exp((f_i + g_j - C_ij) / epsilon)`` (None when not formed).
    transport_cost : float
        ``<C, P>``.
    objective : float
        ``<C, P> + epsilon KL(P | a b^T)``, the entropic OT value (equal to ``<a, f> + <b, g>``
        at convergence).
    f, g : ndarray
        Dual potentials of the source and target points (defined up to ``f + c, g - c``).
    a, b : ndarray
        The normalised weights.
    epsilon : float
        The regularisation.
    marginal_error : float
        ``|P 1 - a|_1 + |P^T 1 - b|_1`` of the returned plan.
    """

    plan: np.ndarray | None
    transport_cost: float
    objective: float
    f: np.ndarray
    g: np.ndarray
    a: np.ndarray
    b: np.ndarray
    epsilon: float
    marginal_error: float

    _plots: ClassVar[dict] = {"plan": plot_plan}
    _size_columns: ClassVar[tuple[str, str]] = ("n_source", "n_target")

    def tidy(self) -> pd.DataFrame:
        """``term, estimate``: transport cost, objective and marginal error."""
        return pd.DataFrame(
            {
                "term": ["transport_cost", "objective", "marginal_error"],
                "estimate": [self.transport_cost, self.objective, self.marginal_error],
            }
        )

    def _repr_lines(self) -> list[str]:
        return [
            f"transport_cost={self.transport_cost:.6g}, objective={self.objective:.6g}, "
            f"epsilon={self.epsilon:g}, marginal_error={self.marginal_error:.2g}, "
            f"n_iter={self.n_iter}"
        ]


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class SinkhornDivergenceResult(Results):
    """The debiased Sinkhorn divergence ``OT_eps(a, b) - (OT_eps(a, a) + OT_eps(b, b)) / 2``.

    ``float(result)`` is the divergence. ``iterations`` reports the three solves together
    (``n_iter``: the most any of them took; converged when all three are).

    Parameters
    ----------
    divergence : float
        The divergence.
    ot_xy, ot_xx, ot_yy : float
        The entropic objectives of the cross problem and the two self problems.
    epsilon : float
        The regularisation.
    marginal_error : float
        Largest L1 marginal error of the three plans.
    records : dict of str to IterationRecord
        The record of each solve, under ``"xy"``, ``"xx"`` and ``"yy"``.
    """

    divergence: float
    ot_xy: float
    ot_xx: float
    ot_yy: float
    epsilon: float
    marginal_error: float
    records: dict = field(default_factory=dict, repr=False)

    def __float__(self) -> float:
        return float(self.divergence)

    def tidy(self) -> pd.DataFrame:
        """``term, estimate``: the divergence and the three OT objectives behind it."""
        return pd.DataFrame(
            {
                "term": ["divergence", "ot_xy", "ot_xx", "ot_yy"],
                "estimate": [self.divergence, self.ot_xy, self.ot_xx, self.ot_yy],
            }
        )

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["divergence"] = self.divergence
        row["epsilon"] = self.epsilon
        row["marginal_error"] = self.marginal_error
        return row

    def _repr_lines(self) -> list[str]:
        return [
            f"divergence={self.divergence:.6g} (OT(x,y)={self.ot_xy:.6g}, "
            f"OT(x,x)={self.ot_xx:.6g}, OT(y,y)={self.ot_yy:.6g}), epsilon={self.epsilon:g}, "
            f"marginal_error={self.marginal_error:.2g}"
        ]
