"""The three solvers behind ``QuantReg.fit(method=...)`` for one quantile level.

``fn`` runs the Frisch-Newton kernel on column-scaled data and then moves to the optimal vertex
the interior point is converging to (solving the p basic equations exactly), so that its
check loss equals the linear program's minimum to rounding; ``highs`` is scipy's LP solver on
the primal problem (the reference); ``conquer`` minimises the convolution-smoothed loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, sparse

from statcore.quantreg._kernels import check_loss, conquer, frisch_newton
from statcore.results import IterationRecord

#: Default tolerances: relative duality gap (fn), max |gradient| (conquer); HiGHS keeps its own.
DEFAULT_TOL = {"fn": 1e-10, "conquer": 1e-8, "highs": None}
DEFAULT_MAXITER = {"fn": 100, "conquer": 1000, "highs": 100_000}

#: What each solver compares with ``tol``.
CRITERIA = {
    "fn": "relative duality gap (or the optimal vertex found)",
    "conquer": "max |gradient| of the smoothed loss",
    "highs": "HiGHS status",
}

#: HiGHS (scipy ``linprog``) status of an iteration limit; other failures are numerical.
_HIGHS_ITERATION_LIMIT = 1


@dataclass(frozen=True)
class LevelFit:
    """One level's solution and how its solver stopped (a record that does not warn)."""

    beta: np.ndarray
    record: IterationRecord
    unique: bool | None = None
    extra_zeros: int = 0
    smoothing: float | None = None

    @property
    def converged(self) -> bool:
        return self.record.converged

    @property
    def n_iter(self) -> int:
        return self.record.n_iter


def _level_record(method, n_iter, maxiter, tol, last_value, met, stalled=False):
    return IterationRecord.from_run(
        function=f"quantile solver {method!r}",
        n_iter=n_iter,
        maxiter=maxiter,
        tol=tol,
        criterion=CRITERIA[method],
        last_value=last_value,
        met=met,
        stalled=stalled,
        warn=False,
    )


def solve(X, y, tau, method, tol, maxiter, smoothing=None) -> LevelFit:
    if method == "fn":
        return _solve_fn(X, y, tau, tol, maxiter)
    if method == "highs":
        return _solve_highs(X, y, tau, tol, maxiter)
    return _solve_conquer(X, y, tau, tol, maxiter, smoothing)


def _column_scale(X):
    scale = np.abs(X).max(axis=0)
    return np.where(scale > 0, scale, 1.0)


def _solve_fn(X, y, tau, tol, maxiter) -> LevelFit:
    scale = _column_scale(X)
    Xs = np.ascontiguousarray(X / scale)
    beta_s, _, n_iter, rel_gap = frisch_newton(Xs, np.ascontiguousarray(y), tau, tol, maxiter)
    beta = beta_s / scale
    vertex = optimal_vertex(X, y, tau, beta)
    # an optimal vertex is the exact LP solution, whatever gap the interior point stopped at
    met = vertex is not None or bool(rel_gap <= tol)
    record = _level_record("fn", n_iter, maxiter, tol, rel_gap, met)
    if vertex is None:
        return LevelFit(beta=beta, record=record)
    beta_v, unique, extra = vertex
    return LevelFit(beta=beta_v, record=record, unique=unique, extra_zeros=extra)


def optimal_vertex(X, y, tau, beta):
    """The vertex through the p observations nearest the fit ``beta``, if it is optimal.

    Optimality (and uniqueness) of a vertex with basic set ``h`` is read off the subgradient
    condition (Koenker 2005, Thm 2.1): ``g = -X_h'^-1 sum_{i not in h} psi_tau(r_i) x_i`` must
    lie in ``[tau - 1, tau]^p``; the solution is unique when it lies strictly inside.
    Returns ``(beta, unique, extra zero residuals)`` or None when the vertex is not optimal.
    """
    n, p = X.shape
    resid = y - X @ beta
    basis = np.argsort(np.abs(resid), kind="stable")[:p]
    Xh = X[basis]
    try:
        beta_v = np.linalg.solve(Xh, y[basis])
    except np.linalg.LinAlgError:
        return None
    resid_v = y - X @ beta_v
    resid_v[basis] = 0.0
    scale = 1.0 + np.max(np.abs(y))
    loss_v = check_loss(resid_v, tau)
    loss_ipm = check_loss(resid, tau)
    if not np.isfinite(loss_v) or loss_v > loss_ipm + 1e-12 * (1.0 + abs(loss_ipm)):
        return None
    nonbasic = np.ones(n, dtype=bool)
    nonbasic[basis] = False
    zero = nonbasic & (np.abs(resid_v) <= 1e-10 * scale)
    psi = np.where(resid_v < 0, tau - 1.0, tau)[nonbasic & ~zero]
    g = -np.linalg.solve(Xh.T, X[nonbasic & ~zero].T @ psi)
    slack = 1e-9
    if np.any(g < tau - 1 - slack) or np.any(g > tau + slack):
        # zero residuals off the basis (ties) make psi ambiguous; the loss comparison decided
        return (beta_v, None, int(zero.sum())) if zero.any() else None
    unique = bool(np.all((g > tau - 1 + slack) & (g < tau - slack))) and not zero.any()
    return beta_v, unique, int(zero.sum())


def _solve_highs(X, y, tau, tol, maxiter) -> LevelFit:
    n, p = X.shape
    eye = sparse.identity(n, format="csr")
    A = sparse.hstack([sparse.csr_matrix(X), eye, -eye], format="csr")
    cost = np.concatenate([np.zeros(p), np.full(n, tau), np.full(n, 1.0 - tau)])
    bounds = [(None, None)] * p + [(0, None)] * (2 * n)
    opt = optimize.linprog(
        cost,
        A_eq=A,
        b_eq=y,
        bounds=bounds,
        method="highs",
        options={"maxiter": maxiter}
        | (
            {}
            if tol is None
            else {"primal_feasibility_tolerance": tol, "dual_feasibility_tolerance": tol}
        ),
    )
    if opt.x is None:
        raise RuntimeError(f"HiGHS found no solution at q={tau}: {opt.message}")
    record = _level_record(
        "highs",
        int(opt.nit),
        maxiter,
        tol,
        float(opt.status),
        met=opt.status == 0,
        stalled=opt.status != _HIGHS_ITERATION_LIMIT,
    )
    return LevelFit(beta=opt.x[:p], record=record)


def conquer_bandwidth(n: int, p: int, tau: float, resid_scale: float) -> float:
    """conquer's rule ``max(0.05, sqrt(tau(1-tau)) ((p + log n) / n)^(1/4))`` in residual
    standard units, times a robust residual scale (MAD of the least-squares residuals)."""
    rule = max(0.05, np.sqrt(tau * (1 - tau)) * ((p + np.log(n)) / n) ** 0.25)
    return float(rule * resid_scale)


def _solve_conquer(X, y, tau, tol, maxiter, smoothing) -> LevelFit:
    n, p = X.shape
    constant = np.ptp(X, axis=0) == 0
    has_constant = bool(constant.any())
    mean = np.where(constant | (not has_constant), 0.0, X.mean(axis=0))
    sd = np.where(constant, 1.0, X.std(axis=0))
    Z = np.ascontiguousarray((X - mean) / sd)
    start, *_ = np.linalg.lstsq(Z, y, rcond=None)
    if smoothing is None:
        resid = y - Z @ start
        mad = 1.4826 * np.median(np.abs(resid - np.median(resid)))
        smoothing = conquer_bandwidth(n, p, tau, mad if mad > 0 else np.std(resid))
    gamma, n_iter, g_norm = conquer(Z, np.ascontiguousarray(y), tau, smoothing, start, tol, maxiter)
    beta = gamma / sd
    if has_constant:
        j = int(np.flatnonzero(constant)[0])
        beta[j] = gamma[j] - np.sum(gamma * mean / sd) / X[0, j]
    record = _level_record("conquer", n_iter, maxiter, tol, g_norm, met=bool(g_norm <= tol))
    return LevelFit(beta=beta, record=record, smoothing=float(smoothing))
