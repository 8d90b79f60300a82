"""``SinkhornResult``: an entropic transport plan, its costs, potentials and convergence record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.results import Results
from statcore.results._plotting import get_ax


def _plot_plan(results, ax=None, **kwargs):
    if results.plan is None:
        raise ValueError("this result holds no plan; solve with `plan=True` to draw it")
    ax = get_ax(ax)
    image = ax.imshow(results.plan, aspect="auto", interpolation="nearest", **kwargs)
    ax.figure.colorbar(image, ax=ax, label="mass")
    ax.set_xlabel("target point j")
    ax.set_ylabel("source point i")
    ax.set_title(f"entropic plan (epsilon = {results.epsilon:g})")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class SinkhornResult(Results):
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

    _plots: ClassVar[dict] = {"plan": _plot_plan}

    @property
    def potentials(self) -> tuple[np.ndarray, np.ndarray]:
        """``(f, g)``."""
        return self.f, self.g

    def tidy(self) -> pd.DataFrame:
        """``term, estimate``: transport cost, objective and marginal error."""
        return pd.DataFrame(
            {
                "term": ["transport_cost", "objective", "marginal_error"],
                "estimate": [self.transport_cost, self.objective, self.marginal_error],
            }
        )

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["n_source"] = len(self.a)
        row["n_target"] = len(self.b)
        row["epsilon"] = self.epsilon
        row["transport_cost"] = self.transport_cost
        row["objective"] = self.objective
        row["marginal_error"] = self.marginal_error
        return row

    def _repr_lines(self) -> list[str]:
        return [
            f"transport_cost={self.transport_cost:.6g}, objective={self.objective:.6g}, "
            f"epsilon={self.epsilon:g}, marginal_error={self.marginal_error:.2g}, "
            f"n_iter={self.n_iter}"
        ]
