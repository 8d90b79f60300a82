"""Sparsity, density and covariance estimators of quantile regression (iid, kernel, nid), and
rank-inversion confidence intervals.

Every estimator is written as a per-level matrix ``G_tau`` with ``sqrt(n)(b(tau) - beta(tau))``
having covariance ``(min(tau, tau') - tau tau') G_tau J G_tau'`` across levels, where
``J = X'X / n``: ``G = s(tau) J^-1`` under iid errors (Koenker and Bassett 1978) and
``G = H(tau)^-1`` with ``H = E[f(0 | x) x x']`` for the sandwich estimators (Powell 1991;
Hendricks and Koenker 1992).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from statcore.quantreg._kernels import weighted_gram
from statcore.quantreg._solvers import smallest, solve

BANDWIDTHS = ("hall-sheather", "bofinger", "chamberlain")


def _epanechnikov(u):
    return np.where(u * u < 5, 0.75 * (1 - u * u / 5) / np.sqrt(5), 0.0)


def _parzen(u):
    a = np.abs(u)
    return np.where(
        a <= 0.5, 4 / 3 - 8 * a**2 + 8 * a**3, np.where(a <= 1, 8 / 3 * (1 - a) ** 3, 0.0)
    )


#: Stata's kernels (``kdensity``'s names and formulas), functions of ``u = r / c``.
STATA_KERNELS = {
    "epanechnikov": _epanechnikov,
    "epan2": lambda u: np.where(np.abs(u) < 1, 0.75 * (1 - u * u), 0.0),
    "biweight": lambda u: np.where(np.abs(u) < 1, 15 / 16 * (1 - u * u) ** 2, 0.0),
    "cosine": lambda u: np.where(np.abs(u) < 0.5, 1 + np.cos(2 * np.pi * u), 0.0),
    "gaussian": stats.norm.pdf,
    "parzen": _parzen,
    "rectangle": lambda u: np.where(np.abs(u) < 1, 0.5, 0.0),
    "triangle": lambda u: np.where(np.abs(u) < 1, 1 - np.abs(u), 0.0),
}


#: the fit options that only some covariance estimators use, with their defaults
COV_OPTION_DEFAULTS = {"sparsity": "quantreg", "kernel": "epanechnikov", "bootstrap_method": "xy"}


def refit_options(fit_options, cov_type: str) -> dict:
    """``fit_options`` of an earlier fit with ``cov_type`` in place of its own, less the options
    only the old covariance estimator used (for anova and prediction intervals)."""
    options = {**fit_options, "cov_type": cov_type}
    keep = {"sparsity": cov_type == "iid", "bootstrap_method": cov_type == "bootstrap"}
    keep["kernel"] = keep["sparsity"] and options.get("sparsity") == "kernel"
    for name, default in COV_OPTION_DEFAULTS.items():
        if not keep[name] and name in options:
            options[name] = default
    return options


def raw_bandwidth(tau: float, n: int, rule: str = "hall-sheather", alpha: float = 0.05) -> float:
    """Bandwidth in quantile units, quantreg's ``bandwidth.rq``.

    Hall-Sheather: ``n^(-1/3) z^(2/3) [1.5 phi(x0)^2 / (2 x0^2 + 1)]^(1/3)``, ``z`` the normal
    ``1 - alpha/2`` quantile; Bofinger: ``n^(-1/5) [4.5 phi(x0)^4 / (2 x0^2 + 1)^2]^(1/5)``, with
    ``x0 = Phi^-1(tau)``; Chamberlain (Stata's third rule): ``z sqrt(tau (1 - tau) / n)``.
    """
    x0 = special.ndtri(tau)
    f0 = stats.norm.pdf(x0)
    if rule == "chamberlain":
        return float(special.ndtri(1 - alpha / 2) * np.sqrt(tau * (1 - tau) / n))
    if rule == "hall-sheather":
        z = special.ndtri(1 - alpha / 2)
        return float(n ** (-1 / 3) * z ** (2 / 3) * (1.5 * f0**2 / (2 * x0**2 + 1)) ** (1 / 3))
    return float(n ** (-0.2) * (4.5 * f0**4 / (2 * x0**2 + 1) ** 2) ** 0.2)


def bandwidth(tau: float, n: int, rule: str = "hall-sheather", alpha: float = 0.05) -> float:
    """:func:`raw_bandwidth` halved until ``tau +- h`` lies inside (0, 1), as quantreg's
    ``summary.rq`` does for ``se="nid"`` and ``"ker"``."""
    h = raw_bandwidth(tau, n, rule, alpha)
    while tau - h <= 0 or tau + h >= 1:
        h /= 2
    return h


def iid_sparsity(resid: np.ndarray, tau: float, p: int, rule: str, solve_median) -> float:
    """Sparsity ``1 / f(F^-1(tau))`` of iid errors as quantreg's ``summary.rq(se="iid")``.

    The ``h = max(p + 1, ceil(n h_tau))`` residuals next smallest in absolute value after the
    (structurally) zero ones of the basic observations, sorted, are regressed at the median on
    their ranks over ``n - p``; the slope is the sparsity: a local Siddiqui quotient of the
    residual quantile function, made robust by the median fit. ``h_tau`` is the bandwidth rule
    *without* the shrinking of :func:`bandwidth`, as in R. ``solve_median(X, y)`` is the exact
    median-regression solver.
    """
    n = len(resid)
    n_zero = int(np.sum(np.abs(resid) < np.sqrt(np.finfo(float).eps)))
    h = max(p + 1, int(np.ceil(n * raw_bandwidth(tau, n, rule))))
    ranks = np.arange(n_zero + 1, min(n, h + n_zero + 1) + 1)
    nearest = np.sort(resid[smallest(np.abs(resid), ranks[-1])][ranks - 1])
    design = np.column_stack([np.ones(len(ranks)), ranks / (n - p)])
    return float(solve_median(design, nearest)[1])


def kernel_sparsity(resid: np.ndarray, tau: float, h: float, kernel: str) -> float:
    """Sparsity ``1 / f(0)`` as Stata's ``qreg, vce(iid, kernel(K))``.

    ``f(0) = (1 / (n c)) sum_i K(r_i / c)`` over all n residuals (the zero residuals of the
    basic observations included, as Stata's stored results require), with the residual-scale
    bandwidth ``c = kappa [Phi^-1(tau + h) - Phi^-1(tau - h)]``, ``kappa = min(sd(r), IQR(r) /
    1.34)`` and the quartiles by Stata's percentile rule (the empirical inverse CDF, averaging
    two order statistics where ``n p`` is whole: numpy's ``averaged_inverted_cdf``).
    """
    q75, q25 = np.quantile(resid, [0.75, 0.25], method="averaged_inverted_cdf")
    kappa = min(np.std(resid, ddof=1), (q75 - q25) / 1.34)
    c = kappa * (special.ndtri(tau + h) - special.ndtri(tau - h))
    return float(len(resid) * c / STATA_KERNELS[kernel](resid / c).sum())


def powell_density_weights(resid: np.ndarray, tau: float, h: float) -> np.ndarray:
    """Gaussian kernel weights ``phi(r / c) / c`` of Powell's sandwich (quantreg ``se="ker"``).

    The bandwidth in residual units is ``c = kappa [Phi^-1(tau + h) - Phi^-1(tau - h)]`` with
    ``kappa = min(sd(r), IQR(r) / 1.34)``.
    """
    q75, q25 = np.quantile(resid, [0.75, 0.25])
    kappa = min(np.std(resid, ddof=1), (q75 - q25) / 1.34)
    c = kappa * (special.ndtri(tau + h) - special.ndtri(tau - h))
    return stats.norm.pdf(resid / c) / c


def nid_density_weights(X: np.ndarray, beta_hi: np.ndarray, beta_lo: np.ndarray, h: float):
    """Hendricks-Koenker densities ``2h / (x'(b(tau+h) - b(tau-h)))``, clipped at 0.

    Returns the weights and the number of observations where the two quantile planes cross.
    """
    dyhat = X @ (beta_hi - beta_lo)
    # R's summary.rq offset, .Machine$double.eps^(1/2)
    eps = np.sqrt(np.finfo(float).eps)
    return np.maximum(0.0, 2 * h / (dyhat - eps)), int((dyhat <= 0).sum())


def sandwich_bread(X: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``G = H^-1`` with ``H = X' diag(weights) X / n``."""
    n = X.shape[0]
    H = weighted_gram(np.ascontiguousarray(X), np.ascontiguousarray(weights)) / n
    return np.linalg.inv(H)


def gram(X: np.ndarray) -> np.ndarray:
    """``X'X`` by the blocked kernel (single-threaded: steady where BLAS threads contend)."""
    X = np.ascontiguousarray(X)
    return weighted_gram(X, np.ones(X.shape[0]))


def joint_covariance(J: np.ndarray, n: int, taus, breads) -> np.ndarray:
    """Covariance of the stacked (level, term) estimates: blocks ``(min - tt') G J G' / n``
    with ``J = X'X / n``."""
    p = J.shape[0]
    L = len(taus)
    cov = np.empty((L * p, L * p))
    for a in range(L):
        for b in range(a, L):
            weight = min(taus[a], taus[b]) - taus[a] * taus[b]
            block = weight * breads[a] @ J @ breads[b].T / n
            cov[a * p : (a + 1) * p, b * p : (b + 1) * p] = block
            cov[b * p : (b + 1) * p, a * p : (a + 1) * p] = block.T
    return cov


#: Smallest ``alpha`` whose rank-inversion intervals are stored (99.9% intervals).
RANK_ALPHA_MIN = 0.001
#: Candidate bases tried at a breakpoint with tied residuals.
_MAX_BASES = 500


@dataclass(frozen=True)
class RankInversion:
    """Rank-inversion confidence intervals of one level's coefficients (Koenker 1994).

    For each coefficient ``j`` the regression rank-score statistic of ``H0: beta_j = b``,
    ``T(b) = sum_i x_ij (a_i(b) - (1 - tau)) / sqrt(q_j tau (1 - tau))`` with ``a(b)`` the
    regression rank scores (dual solution) of the fit of ``y - b x_j`` on the other columns
    and ``q_j = 1 / [(X'X)^-1]_jj``, is a step function of ``b``. ``up[j]`` and ``down[j]``
    hold its breakpoints from the estimate outwards and its value just past each, until
    ``|T|`` reaches the ``1 - RANK_ALPHA_MIN / 2`` quantile of Student's t with ``df``.
    ``statistic[j]`` is ``T(0)``, the rank-score test of ``beta_j = 0``.
    """

    estimate: np.ndarray
    up: tuple
    down: tuple
    statistic: np.ndarray
    df: int

    def interval(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper ``1 - alpha`` bounds, interpolated between the breakpoints where
        ``|T|`` crosses the t critical value, as quantreg's ``rq.fit.br(ci=TRUE)``."""
        if alpha < RANK_ALPHA_MIN:
            raise ValueError(
                f"`alpha` must be at least {RANK_ALPHA_MIN} for rank-inversion intervals; "
                f"got {alpha}"
            )
        cutoff = stats.t.ppf(1 - alpha / 2, self.df)
        lower = [
            _crossing(b, *path, cutoff, -1.0)
            for b, path in zip(self.estimate, self.down, strict=True)
        ]
        upper = [
            _crossing(b, *path, cutoff, 1.0) for b, path in zip(self.estimate, self.up, strict=True)
        ]
        return np.array(lower), np.array(upper)


def _crossing(estimate, breaks, values, cutoff, direction) -> float:
    """Where ``|T|`` crosses ``cutoff``: linear interpolation between the last breakpoint with
    ``|T| < cutoff`` and the first with ``|T| >= cutoff`` (the estimate with ``T = 0`` before
    the first); infinite when the path never crosses."""
    b_prev, t_prev = estimate, 0.0
    for b, t in zip(breaks, values, strict=True):
        if abs(t) >= cutoff:
            if not np.isfinite(b):
                return direction * np.inf
            return b_prev + direction * abs(b - b_prev) * (cutoff - abs(t_prev)) / abs(t - t_prev)
        b_prev, t_prev = b, t
    return direction * np.inf


def rank_inversion(X: np.ndarray, y: np.ndarray, tau: float, beta: np.ndarray) -> RankInversion:
    """Rank-inversion intervals for every coefficient of the fit ``beta`` at ``tau``.

    Follows each coefficient's restricted fit by parametric linear programming from the
    estimate outwards (the path quantreg's ``rqbr`` Fortran walks with simplex pivots): on each
    interval between breakpoints the restricted fit keeps one basis of ``p - 1`` observations;
    at a breakpoint an observation's residual reaches zero and joins, and the observation that
    leaves is the one whose basis is dual feasible beyond it. The test uses the iid form of
    ``q_j`` (rq.fit.br's default ``iid=TRUE``) and Student's t with ``n - p`` degrees of
    freedom (``tcrit=TRUE``).
    """
    n, p = X.shape
    df = n - p
    cutoff = stats.t.ppf(1 - RANK_ALPHA_MIN / 2, df)
    q = 1.0 / np.diag(np.linalg.inv(gram(X)))
    resid = y - X @ beta
    start = list(np.argsort(np.abs(resid), kind="stable")[:p])
    above = resid > 0
    up, down, statistic = [], [], []
    for j in range(p):
        path = _RestrictedPath(X, y, j, tau, q[j])
        up.append(path.walk(beta[j], start, above, 1.0, cutoff))
        down.append(path.walk(beta[j], start, above, -1.0, cutoff))
        statistic.append(path.statistic_at(0.0))
    return RankInversion(
        estimate=np.asarray(beta, dtype=float).copy(),
        up=tuple(up),
        down=tuple(down),
        statistic=np.array(statistic),
        df=df,
    )


class _RestrictedPath:
    """The fits of ``y - b x_j`` on the other columns at ``tau``, as ``b`` moves."""

    def __init__(self, X, y, j, tau, q):
        self.Xr = np.ascontiguousarray(np.delete(X, j, axis=1))
        self.xj = X[:, j]
        self.y = y
        self.tau = tau
        self.norm = np.sqrt(q * tau * (1 - tau))
        self.target = (1 - tau) * self.Xr.sum(axis=0)
        self.scale = 1.0 + np.max(np.abs(y)) + np.max(np.abs(self.xj))

    def _line(self, basis):
        """Residuals ``u - b v`` of the fit through ``basis`` (None if singular)."""
        Xh = self.Xr[basis]
        try:
            g0 = np.linalg.solve(Xh, self.y[basis]) if len(basis) else np.zeros(0)
            g1 = np.linalg.solve(Xh, self.xj[basis]) if len(basis) else np.zeros(0)
        except np.linalg.LinAlgError:
            return None
        return self.y - self.Xr @ g0, self.xj - self.Xr @ g1

    def _statistic(self, a) -> float:
        return float(self.xj @ (a - (1 - self.tau)) / self.norm)

    def _enter(self, zero, b, direction, outside):
        """Of the ``p - 1``-subsets of the zero-residual set at ``b``, the basis that is dual
        feasible just past ``b`` (``direction`` 0: at ``b``): ``(basis, u, v, scores)``.

        ``outside`` holds the rank scores (0 or 1) of the observations off ``zero``, which keep
        their side across ``b``; each candidate costs O(p^3), the chosen one O(n p). With ties
        (more zero residuals than ``p``) the scores are not unique and only the first
        ``_MAX_BASES`` subsets are tried; the most feasible one is kept."""
        k = self.Xr.shape[1]
        scores = outside.astype(float)
        scores[zero] = 0.0
        free = self.target - self.Xr.T @ scores
        combos = [list(c) for c in itertools.islice(itertools.combinations(zero, k), _MAX_BASES)]
        leavings = [[i for i in zero if i not in c] for c in combos]
        try:
            candidates = self._candidates(combos, leavings, free, direction)
        except np.linalg.LinAlgError:
            # a singular subset: one at a time, skipping it
            candidates = []
            for basis, leaving in zip(combos, leavings, strict=True):
                try:
                    candidates += self._candidates([basis], [leaving], free, direction)
                except np.linalg.LinAlgError:
                    continue
        best = None
        for basis, leaving, a_leaving, a_basis in candidates:
            slack = min(a_basis.min(initial=1.0), 1.0 - a_basis.max(initial=0.0))
            if best is None or slack > best[0]:
                best = (slack, basis, leaving, a_leaving, a_basis)
        if best is None:
            return None
        _, basis, leaving, a_leaving, a_basis = best
        scores[leaving] = a_leaving
        scores[basis] = a_basis
        u, v = self._line(basis)
        return basis, u, v, scores

    def _candidates(self, combos, leavings, free, direction):
        """Scores of the leaving and basic observations for each candidate basis, solved as
        one batch (raises LinAlgError when some basis is singular)."""
        k = self.Xr.shape[1]
        if k == 0:
            return [
                ([], leaving, (-self.xj[leaving] * direction > 0).astype(float), np.zeros(0))
                for leaving in leavings
            ]
        C = np.array(combos, dtype=np.intp)
        L = np.array(leavings, dtype=np.intp).reshape(len(leavings), -1)
        Xh = self.Xr[C]
        g1 = np.linalg.solve(Xh, self.xj[C][..., None])[..., 0]
        # residuals at zero move off it with slope -v as b moves on
        v = self.xj[L] - np.einsum("mlj,mj->ml", self.Xr[L], g1)
        a_leaving = (-v * direction > 0).astype(float)
        rhs = free[None, :] - np.einsum("mlj,ml->mj", self.Xr[L], a_leaving)
        a_basis = np.linalg.solve(np.transpose(Xh, (0, 2, 1)), rhs[..., None])[..., 0]
        return list(zip(combos, leavings, a_leaving, a_basis, strict=True))

    def walk(self, estimate, zero, outside, direction, cutoff):
        """Breakpoints and statistics from ``estimate`` in ``direction`` until ``|T| >= cutoff``."""
        n = len(self.y)
        breaks, values = [], []
        b = estimate
        for _ in range(4 * n + 10):
            entered = self._enter(zero, b, direction, outside)
            if entered is None:
                break
            basis, u, v, outside = entered
            breaks.append(b)
            values.append(self._statistic(outside))
            if abs(values[-1]) >= cutoff:
                break
            with np.errstate(divide="ignore", invalid="ignore"):
                crossing = u / v
            ahead = (crossing - b) * direction > 1e-12 * (1.0 + abs(b))
            ahead[basis] = False
            if not ahead.any():
                breaks.append(direction * np.inf)
                values.append(direction * -np.inf)
                break
            candidates = np.flatnonzero(ahead)
            nxt = candidates[np.argmin(np.abs(crossing[candidates] - b))]
            b = float(crossing[nxt])
            tol = 1e-10 * self.scale * (1.0 + abs(b))
            at_zero = np.abs(u - b * v) <= tol
            at_zero[basis] = False
            zero = list(basis) + [int(i) for i in np.flatnonzero(at_zero)]
        return np.array(breaks), np.array(values)

    def statistic_at(self, b) -> float:
        """``T(b)`` from an exact restricted fit at ``b`` (the rank-score test of ``b``)."""
        k = self.Xr.shape[1]
        target = self.y - b * self.xj
        if k == 0:
            return self._statistic((target > 0).astype(float))
        fit = solve(self.Xr, target, self.tau, "fn", 1e-10, 100)
        resid = target - self.Xr @ fit.beta
        order = np.argsort(np.abs(resid), kind="stable")
        tol = 1e-10 * self.scale * (1.0 + abs(b))
        zero = list(order[: max(k, int(np.sum(np.abs(resid) <= tol)))])
        entered = self._enter(zero, b, 0.0, resid > 0)
        return np.nan if entered is None else self._statistic(entered[-1])
