"""The vector field of gradient flow on CP tensor models and the pieces its tools share.

The model is ``W(u) = alpha sum_h u_h^(1) (x) ... (x) u_h^(nu)`` (or its symmetric version), the
loss ``L = ||W - T||_F^2 / 2`` and the flow ``du/dt = -grad L(u)`` (Yarotsky, Golikov and Gusev
2026). :class:`statcore.theory.cp_simulator.CPGradientFlow` integrates it; the Taylor series, the
regime map and the characteristics are in :mod:`~statcore.theory.cp_taylor`,
:mod:`~statcore.theory.cp_regimes` and :mod:`~statcore.theory.cp_characteristics`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, stats

from statcore.validation import as_float_array

REFERENCE = (
    "Yarotsky, D., Golikov, E. and Gusev, Y. (2026). Gradient flow through diagram expansions: "
    "learning regimes and explicit solutions. arXiv:2602.04548."
)
TARGETS = ("identity", "modular")
#: einsum letters: one per tensor mode, after "s" (seed) and "h" (rank); caps the order
_MODE_LETTERS = "abcdefgijklm"
_MAX_ORDER = len(_MODE_LETTERS)


def _einsum_specs(order: int):
    """einsum strings of the model output and of each factor's contraction with the residual."""
    modes = _MODE_LETTERS[:order]
    factors = ",".join(f"sh{m}" for m in modes)
    output = f"{factors}->s{modes}"
    grads = []
    for k in range(order):
        others = ",".join(f"sh{m}" for j, m in enumerate(modes) if j != k)
        grads.append(f"s{modes},{others}->sh{modes[k]}")
    return output, grads


class _Field:
    """``L``, ``W`` and ``-grad L`` of a batch of CP models (one per seed).

    Non-symmetric states have shape ``(S, nu, H, p)`` (factor ``k`` of component ``h``);
    symmetric ones ``(S, H, p)``. Every contraction is a batched matrix product with a
    Khatri-Rao product of the other factors (``(S, H, p^(nu-1))``), so BLAS does the work;
    a general einsum over the same indices is several times slower at these sizes.
    """

    def __init__(self, order, symmetric, alpha, target):
        self.order, self.symmetric, self.alpha = order, symmetric, alpha
        self.target = target
        self.out_spec, self.grad_specs = _einsum_specs(order)

    def factors(self, U):
        return [U] * self.order if self.symmetric else [U[:, k] for k in range(self.order)]

    @staticmethod
    def _khatri_rao(facs):
        out = facs[0]
        S, H = out.shape[:2]
        for f in facs[1:]:
            out = (out[..., :, None] * f[..., None, :]).reshape(S, H, -1)
        return out

    def output(self, U):
        facs = self.factors(U)
        S, p = U.shape[0], U.shape[-1]
        flat = np.matmul(facs[0].transpose(0, 2, 1), self._khatri_rao(facs[1:]))
        return self.alpha * flat.reshape((S,) + (p,) * self.order)

    def residual(self, U):
        return self.output(U) - self.target

    def gradient(self, U, R=None):
        """Gradient of ``L = ||W - T||^2 / 2``: ``alpha`` times the residual contracted with
        every factor but one (summed over the ``nu`` slots a symmetric factor fills)."""
        if R is None:
            R = self.residual(U)
        S, p = U.shape[0], U.shape[-1]

        def unfolded(k):  # mode k first, the others in order: (S, p^(nu-1), p)
            return np.moveaxis(R, 1 + k, -1).reshape(S, -1, p)

        facs = self.factors(U)
        if self.symmetric:
            modes = sum(unfolded(k) for k in range(self.order))
            return self.alpha * np.matmul(self._khatri_rao(facs[1:]), modes)
        parts = [
            np.matmul(self._khatri_rao([f for j, f in enumerate(facs) if j != k]), unfolded(k))
            for k in range(self.order)
        ]
        return self.alpha * np.stack(parts, axis=1)

    def loss(self, U):
        R = self.residual(U)
        return 0.5 * np.sum(R.reshape(len(R), -1) ** 2, axis=1)

    def component_norms(self, U):
        """``alpha * prod_k ||u_h^(k)||``: the Frobenius norm of each rank-one term."""
        norms = np.linalg.norm(U, axis=-1)
        if self.symmetric:
            return self.alpha * norms**self.order
        return self.alpha * np.prod(norms, axis=1)


def _solve_chunk(task):
    """Integrate the flow of one batch of seeds (module level: process backends pickle it)."""
    field, U0, t_grid, tol = task
    shape = U0.shape

    def rhs(_t, y):
        return -field.gradient(y.reshape(shape)).ravel()

    sol = integrate.solve_ivp(
        rhs,
        (0.0, float(t_grid[-1])),
        U0.ravel(),
        method="DOP853",
        t_eval=t_grid,
        rtol=tol,
        atol=tol * 1e-3 * max(1.0, float(np.abs(U0).max())),
    )
    states = sol.y.T.reshape((len(sol.t), *shape)) if sol.status == 0 else None
    return states, sol.nfev, sol.status, sol.message


def _seed_band(values: np.ndarray, alpha: float) -> dict:
    """Across-seed mean with its Monte Carlo interval, and the central seed quantile band."""
    n = values.shape[0]
    mean = values.mean(axis=0)
    se = values.std(axis=0, ddof=1) / math.sqrt(n) if n > 1 else np.full_like(mean, np.nan)
    z = stats.norm.ppf(1 - alpha / 2)
    return {
        "mean": mean,
        "std_error": se,
        "conf_low": mean - z * se,
        "conf_high": mean + z * se,
        "seed_low": np.quantile(values, alpha / 2, axis=0),
        "seed_high": np.quantile(values, 1 - alpha / 2, axis=0),
    }


def _check_t_grid(t_grid) -> np.ndarray:
    t = as_float_array(t_grid, name="t_grid", ndim=1, min_rows=1)
    if t[0] < 0 or np.any(np.diff(t) <= 0):
        raise ValueError("`t_grid` must be non-negative and strictly increasing")
    if t[-1] == 0:
        raise ValueError("`t_grid` must reach beyond t = 0")
    return t


def named_target(name: str, dim: int, order: int) -> np.ndarray:
    """The identity (``T_{i...i} = 1``) or modular-addition target tensor of shape
    ``(dim,) * order``."""
    T = np.zeros((dim,) * order)
    if name == "identity":
        T[(np.arange(dim),) * order] = 1.0
    else:
        heads = np.indices((dim,) * (order - 1)).reshape(order - 1, -1)
        T[(*heads, heads.sum(axis=0) % dim)] = 1.0
    return T


__all__ = ["REFERENCE", "TARGETS", "named_target"]
