"""Exact power series of the loss of gradient flow on CP tensor models.

The loss is a polynomial in the parameters and so is the vector field (degree ``2 nu - 1``), so
the recursive power-series method for polynomial ODEs gives the exact series of ``u(t)``, and
the series of ``L(t)`` from it: the coefficients the diagrams of Yarotsky, Golikov and Gusev
(2026) sum, computed without the diagrams.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from statcore.results import Results
from statcore.theory.cp_field import _Field, _seed_band
from statcore.validation import as_float_array

#: the Taylor recursion sums over compositions of each order; beyond this it is slow and the
#: series of a polynomial flow is of no use anyway past its (finite) radius of convergence
MAX_TAYLOR_ORDER = 40


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class CPTaylorResults(Results):
    """Exact power-series coefficients of ``L(t)`` at ``t = 0``, per seed.

    Attributes
    ----------
    coefficients : ndarray of shape (n_seeds, order + 1)
        ``c_s`` with ``L(t) = sum_s c_s t^s``; ``c_s * s!`` is the derivative ``L^(s)(0)``.
    grad_norm2 : ndarray of shape (n_seeds,)
        ``||grad L(u_0)||^2`` (equals ``-c_1``).
    order : int

    Vocabulary: as :class:`~statcore.theory.cp_simulator.CPFlowResults` (here ``order`` is the
    highest power of ``t`` kept).
    """

    coefficients: np.ndarray
    grad_norm2: np.ndarray
    order: int = 1

    @property
    def derivatives(self) -> np.ndarray:
        """``L^(s)(0)`` per seed and order."""
        return self.coefficients * np.array([math.factorial(s) for s in range(self.order + 1)])

    def evaluate(self, t) -> np.ndarray:
        """The truncated series at times ``t``: array of shape (n_seeds, len(t))."""
        t = as_float_array(t, name="t", ndim=1)
        powers = t[None, :] ** np.arange(self.order + 1)[:, None]
        return self.coefficients @ powers

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per order: the mean derivative ``L^(s)(0)`` over seeds with its interval."""
        band = _seed_band(self.derivatives, alpha)
        return pd.DataFrame(
            {
                "term": [f"L^({s})(0)" for s in range(self.order + 1)],
                "estimate": band["mean"],
                "std_error": band["std_error"],
                "conf_low": band["conf_low"],
                "conf_high": band["conf_high"],
            }
        )


def taylor_coefficients(field: _Field, U0: np.ndarray, order: int) -> np.ndarray:
    """Coefficients ``c_s`` (``s = 0..order``) of ``L(t) = sum_s c_s t^s`` for each run of ``U0``.

    With ``u(t) = sum_s a_s t^s``, the flow gives ``(s + 1) a_{s+1} = -[grad L(u)]_s``, and the
    ``s``-th coefficient of the multilinear gradient is the sum, over the ways of writing ``s``
    as a sum of one order per argument, of the gradient evaluated on those coefficients (a
    Cauchy product). The residual's series ``R_s`` comes the same way from the output's, and
    ``L_s = sum_{i + j = s} <R_i, R_j> / 2``.
    """
    nu = field.order
    a = [U0]  # series coefficients of u
    R = []  # series coefficients of the residual

    def factor_series(s, k):
        return a[s] if field.symmetric else a[s][:, k]

    def output_coef(s):
        total = 0.0
        for comp in _compositions(s, nu):
            total = total + np.einsum(
                field.out_spec,
                *(factor_series(c, k) for k, c in enumerate(comp)),
                optimize=True,
            )
        return field.alpha * total

    for s in range(order):
        R.append(output_coef(s) - (field.target if s == 0 else 0.0))
        parts = []
        for k, spec in enumerate(field.grad_specs):
            total = 0.0
            others = [j for j in range(nu) if j != k]
            for comp in _compositions(s, nu):
                # comp[0] is the residual's order; the rest go to the other factors
                total = total + np.einsum(
                    spec,
                    R[comp[0]],
                    *(factor_series(c, j) for j, c in zip(others, comp[1:], strict=True)),
                    optimize=True,
                )
            parts.append(field.alpha * total)
        grad = sum(parts) if field.symmetric else np.stack(parts, axis=1)
        a.append(-grad / (s + 1))
    R.append(output_coef(order))
    S = len(U0)
    flat = [r.reshape(S, -1) for r in R]
    coef = np.zeros((S, order + 1))
    for s in range(order + 1):
        coef[:, s] = 0.5 * sum(np.einsum("si,si->s", flat[i], flat[s - i]) for i in range(s + 1))
    return coef


def _compositions(s: int, parts: int):
    """All tuples of ``parts`` non-negative integers summing to ``s``."""
    for cuts in itertools.combinations(range(s + parts - 1), parts - 1):
        bounds = (-1, *cuts, s + parts - 1)
        yield tuple(bounds[i + 1] - bounds[i] - 1 for i in range(parts))


__all__ = ["MAX_TAYLOR_ORDER", "CPTaylorResults", "taylor_coefficients"]
