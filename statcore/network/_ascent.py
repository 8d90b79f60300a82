"""Projected ascent on the latent space objective: the step direction and the Armijo loop."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from statcore.network._objective import _centre_and_rotate

# a node parameter beyond this size (logits of order -50 or 2500) marks a likelihood that has
# no finite maximum
DIVERGENCE = 50.0
# largest Newton move of one node's (alpha_i, z_i) per unit step size (logit units)
MAX_NODE_STEP = 1.0
# Armijo constant: an accepted step gains at least this share of its first-order prediction
ARMIJO = 1e-4
# a step size below this has no ascent left at machine precision: the loop has stalled
MIN_STEP = 1e-10


@dataclass(frozen=True)
class _Ascent:
    """Where the ascent stopped and why."""

    state: object
    history: pd.DataFrame
    n_iter: int
    met: bool
    stalled: bool
    diverged: bool
    last_change: float


def ascent_direction(state, method, eta, degree_heterogeneity):
    """Ascent step (d_alpha, d_z, d_rho)."""
    n, r = state.Z.shape
    if method == "pgd":
        d_alpha = 2.0 * eta / (2.0 * n) * state.grad_alpha
        d_z = 2.0 * eta / (2.0 * (state.Z * state.Z).sum() / r) * state.grad_z
    else:
        grad = np.column_stack([state.grad_alpha, state.grad_z])
        hess = state.hess
        if not degree_heterogeneity:
            grad, hess = grad[:, 1:], hess[:, 1:, 1:]
        # a ridge of 1e-8 of the block's scale keeps nearly flat blocks solvable
        ridge = 1e-8 * np.einsum("ijj->i", hess)[:, None, None] * np.eye(hess.shape[1])
        system = hess + ridge + 1e-12 * np.eye(hess.shape[1])
        delta = eta * np.linalg.solve(system, grad[..., None])[..., 0]
        # a trust region per node: a node with a nearly flat likelihood (few edges, or
        # edges separable in latent space) would otherwise ask for a huge Newton step and,
        # through the one step size shared by all, stall every other node
        size = np.linalg.norm(delta, axis=1)
        delta *= np.minimum(1.0, eta * MAX_NODE_STEP / np.maximum(size, 1e-300))[:, None]
        if not degree_heterogeneity:
            delta = np.column_stack([np.zeros(n), delta])
        d_alpha, d_z = delta[:, 0], delta[:, 1:]
        # the common level of alpha is rho's: each Jacobi step assumes the other nodes fixed
        # and would move the level twice over
        d_alpha = d_alpha - d_alpha.mean()
    if not degree_heterogeneity:
        d_alpha = np.zeros(n)
    d_rho = min(eta, 1.0) * 0.5 * state.grad_alpha.sum() / max(state.info, 1e-12)
    return d_alpha, d_z, d_rho


def ascend(objective, state, *, method, step, maxiter, tol, bound, degree_heterogeneity, bar):
    """Climb ``objective`` from ``state`` until the relative gain falls below ``tol``.

    A step is accepted only when it gains at least ``ARMIJO`` of its first-order prediction and
    halved otherwise (rejected steps count as iterations); a step size under ``MIN_STEP`` stops
    the loop as stalled. Without a ``bound``, node parameters beyond ``DIVERGENCE`` stop it as
    diverged. ``bar`` advances once per iteration.
    """
    history = [(0, state.llf, state.objective, step)]
    met = stalled = diverged = False
    change = np.nan
    eta = step
    iteration = 0
    while iteration < maxiter:
        iteration += 1
        bar.update(1)
        d_alpha, d_z, d_rho = ascent_direction(state, method, eta, degree_heterogeneity)
        predicted = (
            state.grad_alpha @ d_alpha
            + (state.grad_z * d_z).sum()
            + 0.5 * state.grad_alpha.sum() * d_rho
        )
        new = objective(
            *_centre_and_rotate(
                state.Z + d_z, state.alpha + d_alpha, state.rho + d_rho, degree_heterogeneity
            )
        )
        if not new.objective >= state.objective + ARMIJO * max(predicted, 0.0):
            eta /= 2.0
            if eta < MIN_STEP:
                stalled = True
                break
            continue
        change = (new.objective - state.objective) / (abs(state.objective) + 1.0)
        state = new
        history.append((iteration, state.llf, state.objective, eta))
        if method == "newton":
            eta = min(1.0, 1.5 * eta)
        if change < tol:
            met = True
            break
        if bound is None and (
            np.abs(state.alpha).max() > DIVERGENCE or np.abs(state.Z).max() > DIVERGENCE
        ):
            diverged = True
            break
    return _Ascent(
        state=state,
        history=pd.DataFrame(history, columns=["iteration", "loglik", "objective", "step"]),
        n_iter=iteration,
        met=met,
        stalled=stalled,
        diverged=diverged,
        last_change=float(change),
    )
