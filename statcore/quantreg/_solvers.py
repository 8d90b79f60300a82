"""The solvers behind ``QuantReg.fit(method=...)`` for one quantile level.

``fn`` runs the Frisch-Newton kernel on column-scaled data and then moves to the optimal vertex
the interior point is converging to (solving the p basic equations exactly), so that its
check loss equals the linear program's minimum to rounding; ``pfn`` first shrinks the problem
by Portnoy and Koenker's preprocessing and then does the same, with the same solution;
``highs`` is scipy's LP solver on the primal problem (the reference); ``conquer`` minimises
the convolution-smoothed loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, sparse

from statcore.quantreg._kernels import (
    _x_dot,
    _xt_dot,
    check_loss,
    conquer,
    frisch_newton,
    leverage_band,
)
from statcore.results import IterationRecord

#: Default tolerances: relative duality gap (fn), max |gradient| (conquer); HiGHS keeps its own.
DEFAULT_TOL = {"fn": 1e-10, "pfn": 1e-10, "conquer": 1e-8, "highs": None}
DEFAULT_MAXITER = {"fn": 100, "pfn": 100, "conquer": 1000, "highs": 100_000}

#: What each solver compares with ``tol``.
CRITERIA = {
    "fn": "relative duality gap (or the optimal vertex found)",
    "pfn": "relative duality gap of the reduced problem (or the optimal vertex found)",
    "conquer": "max |gradient| of the smoothed loss",
    "highs": "HiGHS status",
}

#: HiGHS (scipy ``linprog``) status of an iteration limit; other failures are numerical.
_HIGHS_ITERATION_LIMIT = 1


@dataclass(frozen=True)
class Preprocessing:
    """How Portnoy-Koenker preprocessing went at one level.

    ``subsample``: the final subsample size m; ``reduced``: rows of the last reduced problem
    (globs included); ``fixups``: rounds of moving wrongly globbed observations back;
    ``resamples``: times m was doubled because too many were wrong.
    """

    subsample: int
    reduced: int
    fixups: int
    resamples: int


@dataclass(frozen=True)
class LevelFit:
    """One level's solution and how its solver stopped (a record that does not warn)."""

    beta: np.ndarray
    record: IterationRecord
    unique: bool | None = None
    extra_zeros: int = 0
    smoothing: float | None = None
    preprocessing: Preprocessing | None = None

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
    if method == "pfn":
        return _solve_pfn(X, y, tau, tol, maxiter)
    if method == "highs":
        return _solve_highs(X, y, tau, tol, maxiter)
    return _solve_conquer(X, y, tau, tol, maxiter, smoothing)


def _column_scale(X):
    scale = np.abs(X).max(axis=0)
    return np.where(scale > 0, scale, 1.0)


def _interior_point(X, y, tau, tol, maxiter):
    """The Frisch-Newton kernel on column-scaled data: ``beta, n_iter, rel_gap``."""
    scale = _column_scale(X)
    Xs = np.ascontiguousarray(X / scale)
    beta_s, _, n_iter, rel_gap = frisch_newton(Xs, np.ascontiguousarray(y), tau, tol, maxiter)
    return beta_s / scale, n_iter, rel_gap


def _finish(X, y, tau, beta, method, n_iter, maxiter, tol, rel_gap, **extra) -> LevelFit:
    """Move ``beta`` to the optimal vertex of the full problem when there is one."""
    vertex = optimal_vertex(X, y, tau, beta)
    # an optimal vertex is the exact LP solution, whatever gap the interior point stopped at
    met = vertex is not None or bool(rel_gap <= tol)
    record = _level_record(method, n_iter, maxiter, tol, rel_gap, met)
    if vertex is None:
        return LevelFit(beta=beta, record=record, **extra)
    beta_v, unique, extra_zeros = vertex
    return LevelFit(beta=beta_v, record=record, unique=unique, extra_zeros=extra_zeros, **extra)


def _solve_fn(X, y, tau, tol, maxiter) -> LevelFit:
    beta, n_iter, rel_gap = _interior_point(X, y, tau, tol, maxiter)
    return _finish(X, y, tau, beta, "fn", n_iter, maxiter, tol, rel_gap)


def pfn_subsample_size(n: int, p: int) -> int:
    """Rows of the pilot subsample: R quantreg's ``rq.fit.pfn`` rule ``round(sqrt(p) n^(2/3))``."""
    return int(round(np.sqrt(p) * n ** (2 / 3)))


#: Pilot fits only locate the band of observations near the quantile plane (R uses 1e-6).
_PILOT_TOL = 1e-6
#: Share of the subsample size kept between the two globs (R's ``Mm.factor``).
_KEEP_FACTOR = 0.8
#: Fix-up rounds before the subsample is doubled (R's ``max.bad.fixups``).
_MAX_FIXUPS = 3
#: The subsample is drawn from this fixed seed: it changes the time taken, never the solution.
_PFN_SEED = 20_250_917


def _solve_pfn(X, y, tau, tol, maxiter) -> LevelFit:
    """Portnoy and Koenker's (1997) preprocessing before Frisch-Newton, after R's
    ``rq.fit.pfn``.

    A pilot fit on a subsample of m rows predicts where the full fit lies; observations far
    above (``su``) or below (``sl``) the pilot plane, relative to the plane's standard error
    ``band_i = sqrt(x_i' (X_s'X_s)^-1 x_i)``, are replaced by one "glob" row each (the sums of
    their rows and responses), keeping about ``0.8 m`` rows near the plane. Because
    ``rho_tau`` is sublinear, the reduced objective is never above the full one and equals it
    at any ``b`` that leaves every globbed observation on its glob's side; so when the reduced
    solution does, it is the full solution. Observations on the wrong side are put back and
    the reduced problem solved again (at most 3 rounds), and when more than ``0.1 m`` are
    wrong the subsample is doubled.
    """
    X = np.ascontiguousarray(X)
    n, p = X.shape
    rng = np.random.default_rng(_PFN_SEED)
    m = pfn_subsample_size(n, p)
    fixups = resamples = 0
    while m < n:
        rows = np.sort(rng.choice(n, size=m, replace=False))
        Xs, ys = np.ascontiguousarray(X[rows]), y[rows]
        beta, _, _ = _interior_point(Xs, ys, tau, _PILOT_TOL, maxiter)
        try:
            chol = np.linalg.cholesky(Xs.T @ Xs)
        except np.linalg.LinAlgError:
            m *= 2
            resamples += 1
            continue
        band = np.maximum(leverage_band(X, np.linalg.inv(chol).T), 1e-6)
        resid = y - _x_dot(X, beta)
        keep = _KEEP_FACTOR * m
        lo_q = max(1 / n, tau - keep / (2 * n))
        hi_q = min(tau + keep / (2 * n), (n - 1) / n)
        kappa_lo, kappa_hi = np.quantile(resid / band, [lo_q, hi_q])
        below = resid < band * kappa_lo
        above = resid > band * kappa_hi
        for _ in range(_MAX_FIXUPS):
            fixups += 1
            Xr, yr = _reduced_problem(X, y, below, above)
            beta, n_iter, rel_gap = _interior_point(Xr, yr, tau, tol, maxiter)
            resid = y - _x_dot(X, beta)
            wrong_above = above & (resid < 0)
            wrong_below = below & (resid > 0)
            n_wrong = int(wrong_above.sum() + wrong_below.sum())
            if n_wrong == 0:
                info = Preprocessing(m, len(yr), fixups, resamples)
                return _finish(
                    X, y, tau, beta, "pfn", n_iter, maxiter, tol, rel_gap, preprocessing=info
                )
            if n_wrong > 0.1 * keep:
                break
            above &= ~wrong_above
            below &= ~wrong_below
        m *= 2
        resamples += 1
    beta, n_iter, rel_gap = _interior_point(X, y, tau, tol, maxiter)
    info = Preprocessing(n, n, fixups, resamples)
    return _finish(X, y, tau, beta, "pfn", n_iter, maxiter, tol, rel_gap, preprocessing=info)


def _reduced_problem(X, y, below, above):
    """The rows of neither glob, then one glob row per non-empty glob."""
    middle = np.flatnonzero(~(below | above))
    Xr, yr = [X.take(middle, axis=0)], [y[middle]]
    for glob in (below, above):
        if glob.any():
            weights = glob.astype(float)
            Xr.append(_xt_dot(X, weights)[None, :])
            yr.append(np.array([y @ weights]))
    return np.ascontiguousarray(np.concatenate(Xr)), np.concatenate(yr)


def optimal_vertex(X, y, tau, beta):
    """The vertex through the p observations nearest the fit ``beta``, if it is optimal.

    Optimality (and uniqueness) of a vertex with basic set ``h`` is read off the subgradient
    condition (Koenker 2005, Thm 2.1): ``g = -X_h'^-1 sum_{i not in h} psi_tau(r_i) x_i`` must
    lie in ``[tau - 1, tau]^p``; the solution is unique when it lies strictly inside.
    Returns ``(beta, unique, extra zero residuals)`` or None when the vertex is not optimal.
    """
    n, p = X.shape
    X = np.ascontiguousarray(X)
    # numba row loops: single-threaded BLAS-free passes, steady on a busy machine
    resid = y - _x_dot(X, beta)
    basis = smallest(np.abs(resid), p)
    Xh = X[basis]
    try:
        beta_v = np.linalg.solve(Xh, y[basis])
    except np.linalg.LinAlgError:
        return None
    resid_v = y - _x_dot(X, beta_v)
    resid_v[basis] = 0.0
    scale = 1.0 + np.max(np.abs(y))
    loss_v = check_loss(resid_v, tau)
    loss_ipm = check_loss(resid, tau)
    if not np.isfinite(loss_v) or loss_v > loss_ipm + 1e-12 * (1.0 + abs(loss_ipm)):
        return None
    nonbasic = np.ones(n, dtype=bool)
    nonbasic[basis] = False
    zero = nonbasic & (np.abs(resid_v) <= 1e-10 * scale)
    psi = np.where(nonbasic & ~zero, np.where(resid_v < 0, tau - 1.0, tau), 0.0)
    g = -np.linalg.solve(Xh.T, _xt_dot(X, psi))
    slack = 1e-9
    if np.any(g < tau - 1 - slack) or np.any(g > tau + slack):
        # zero residuals off the basis (ties) make psi ambiguous; the loss comparison decided
        return (beta_v, None, int(zero.sum())) if zero.any() else None
    unique = bool(np.all((g > tau - 1 + slack) & (g < tau - slack))) and not zero.any()
    return beta_v, unique, int(zero.sum())


def smallest(values, k):
    """Indices of the ``k`` smallest values, ties to the lower index (a stable argsort's first
    ``k``) in O(n)."""
    if k >= len(values):
        return np.argsort(values, kind="stable")
    kth = np.partition(values, k - 1)[k - 1]
    below = np.flatnonzero(values < kth)
    ties = np.flatnonzero(values == kth)[: k - len(below)]
    chosen = np.concatenate([below, ties])
    return chosen[np.lexsort((chosen, values[chosen]))]


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
