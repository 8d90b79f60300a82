"""Entropic optimal transport by log-domain Sinkhorn iterations, iterated to a marginal tolerance.

The problem solved, for weights ``a`` (n) and ``b`` (m) and a cost ``C``, is

    min_P <C, P> + epsilon KL(P | a b^T)   over plans P >= 0 with P 1 = a, P^T 1 = b,

whose solution is ``P_ij = a_i b_j exp((f_i + g_j - C_ij) / epsilon)`` for the dual potentials
``f``, ``g``. The Sinkhorn updates ``f_i = -eps log sum_j b_j exp((g_j - C_ij)/eps)`` (and the
mirror one for ``g``) are carried out in the log domain, stable at any ``epsilon``. An
``epsilon``-scaling phase (one iteration at each of the geometrically shrinking values
``max C * s^k`` down to ``epsilon``) gives the final iterations a warm start.

Besides the public entry points, the solver layer other areas build on (``statcore.shift``) is
public here: ``solve_potentials``, ``solve_self``, ``plan_statistics``, ``dual_value`` and the
cost providers ``point_cost`` and ``as_points``.
"""

from __future__ import annotations

import numpy as np

from statcore.ot._costs import DenseCost, as_points, point_cost
from statcore.ot.results import SinkhornDivergenceResult, SinkhornResult
from statcore.results import IterationRecord
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_scalar,
    check_weights,
    describe,
)

__all__ = [
    "as_points",
    "check_solver_options",
    "dual_value",
    "plan_statistics",
    "point_cost",
    "sinkhorn",
    "sinkhorn_divergence",
    "sinkhorn_points",
    "solve_potentials",
    "solve_self",
]

METHODS = ("log", "standard")
#: sweeps over which the error's decay rate is measured; the largest over-relaxation used;
#: growth of the error over its smallest value that lowers the relaxation
_WINDOW, _MAX_OMEGA, _GROWTH = 20, 1.98, 100.0
#: largest plan (entries) that sinkhorn_points returns without being asked: 8 MiB
SMALL_PLAN = 1 << 20
_CRITERION = "L1 marginal error"
_REMEDY = "raise `maxiter` or `epsilon`"


def check_solver_options(*, maxiter, tol, epsilon_scaling) -> dict:
    """The solver options of every Sinkhorn entry, checked: ``maxiter`` an integer >= 1,
    ``tol`` > 0, ``epsilon_scaling`` None or a factor in (0, 1) (1 would never reach
    ``epsilon``, 0 or above 1 would skip the annealing). Returns them as a dict."""
    if epsilon_scaling is not None:
        epsilon_scaling = check_scalar(
            epsilon_scaling,
            name="epsilon_scaling",
            low=0.0,
            high=1.0,
            low_inclusive=False,
            high_inclusive=False,
        )
    return {
        "maxiter": check_positive_int(maxiter, name="maxiter"),
        "tol": check_positive(tol, name="tol"),
        "epsilon_scaling": epsilon_scaling,
    }


def _check_options(epsilon, maxiter, tol, epsilon_scaling):
    epsilon = check_positive(epsilon, name="epsilon")
    options = check_solver_options(maxiter=maxiter, tol=tol, epsilon_scaling=epsilon_scaling)
    return epsilon, options["maxiter"], options["tol"], options["epsilon_scaling"]


def _schedule(start: float, epsilon: float, scaling, maxiter: int) -> list[float]:
    """The annealing values ``epsilon / s^k``, k >= 1, from the largest at most ``start`` down
    (none without scaling, or when ``start / epsilon < 1 / s``).

    Anchored at ``epsilon``, so that the last stage is a full factor above it (a stage just
    above ``epsilon`` would cost a kernel rebuild and sweeps for almost no gain). At most
    ``maxiter - 1`` of them, the last ones (closest to ``epsilon``), so that ``maxiter`` caps
    the iterations of a solve, annealing included, and leaves one at ``epsilon``.
    """
    if scaling is None or start <= epsilon:
        return []
    # the tiny margin keeps a ratio that is an exact power of 1/s from losing its stage
    count = int(np.floor(np.log(start / epsilon) / -np.log(scaling) + 1e-9))
    return [epsilon / scaling**k for k in range(min(count, maxiter - 1), 0, -1)]


def _log(w: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(w)


def solve_potentials(
    provider, a, b, epsilon, *, maxiter, tol, epsilon_scaling, init=None, stage_tol=None
):
    """Log-domain Sinkhorn to an L1 marginal tolerance; the solver behind every entry point.

    Returns ``f, g, marginal_error, n_iter, converged``, where the columns of the plan of
    ``(f, g)`` are exact and ``marginal_error`` is the L1 error of its rows. ``init`` is a pair
    of potentials to start from (only ``g`` is used; the annealing phase is then skipped).

    ``stage_tol``: None runs one sweep per annealing stage; a number iterates each stage until
    its L1 row error is at most ``stage_tol``, the accuracy from which the next stage (at half
    the ``epsilon``, a potential error of a fraction of it) starts in its fast, linear regime.
    """
    log_a, log_b = _log(a), _log(b)
    if init is None:
        g = np.zeros(provider.m)
        stages = _schedule(provider.max_cost(), epsilon, epsilon_scaling, maxiter)
        n_iter = 0
        for eps in stages:
            f = provider.softmin_rows(g + eps * log_b, eps)
            while True:
                g = provider.softmin_cols(f + eps * log_a, eps)
                n_iter += 1
                if stage_tol is None or n_iter >= maxiter - 1:
                    break
                f_next = provider.softmin_rows(g + eps * log_b, eps)
                error, f = _row_error(a, f_next, f, eps), f_next
                if error <= stage_tol:
                    break
    else:
        g = np.array(init[1], dtype=np.float64)
        n_iter = 0
    return _iterate(provider, a, b, log_a, log_b, g, epsilon, maxiter, tol, n_iter)


def _row_error(w, new, old, epsilon):
    # the masses of a plan whose potential is `old` where the exact update gives `new` are
    # w_i exp((old_i - new_i) / eps)
    return float(np.sum(w * np.abs(np.expm1((old - new) / epsilon))))


def _relaxation(rate: float, omega: float) -> float:
    """The plain Sinkhorn rate implied by the observed ``rate`` of sweeps relaxed by ``omega``.

    Young's relation ``(r + omega - 1)^2 = r omega^2 rho`` between the rate ``r`` of
    successive over-relaxation and the rate ``rho`` of plain Gauss-Seidel sweeps holds for
    two-block systems such as the linearised Sinkhorn map (Lehmann et al. 2021).
    """
    return min(1.0, (rate + omega - 1.0) ** 2 / (rate * omega**2))


def _iterate(provider, a, b, log_a, log_b, g, epsilon, maxiter, tol, n_iter):
    """Sinkhorn sweeps at ``epsilon``, over-relaxed by an ``omega`` learnt from the error decay.

    Each sweep gives the marginal errors of its own iterates for free (the exact update of a
    potential is what the sweep computes before relaxing it). Every ``_WINDOW`` sweeps the
    error's decay rate gives, through Young's relation, an estimate of the plain rate
    ``rho`` (kept as the largest seen: early, transient rates understate it), and
    ``omega = 2 / (1 + sqrt(1 - rho))``, the optimal relaxation, capped at ``_MAX_OMEGA``. The
    error of relaxed sweeps oscillates on its way down, so only an error ``_GROWTH`` times its
    smallest value halves ``omega - 1`` (and the cap with it). Plain sweeps stop on their exact
    error; relaxed ones, once their error estimate is below ``tol``, are confirmed by one plain
    sweep.
    """
    f = provider.softmin_rows(g + epsilon * log_b, epsilon)
    omega, rho, cap, best, errors = 1.0, 0.0, _MAX_OMEGA, np.inf, []
    while n_iter < maxiter:
        g_exact = provider.softmin_cols(f + epsilon * log_a, epsilon)
        col_error = 0.0 if omega == 1.0 else _row_error(b, g_exact, g, epsilon)
        g = g_exact if omega == 1.0 else g + omega * (g_exact - g)
        f_exact = provider.softmin_rows(g + epsilon * log_b, epsilon)
        error = _row_error(a, f_exact, f, epsilon)
        n_iter += 1
        if omega == 1.0 and error <= tol:
            # (f, g) has exact columns and rows `error` away from a
            return f, g, error, n_iter, True
        f = f_exact if omega == 1.0 else f + omega * (f_exact - f)
        if omega != 1.0 and error + col_error <= tol and n_iter < maxiter:
            g = provider.softmin_cols(f + epsilon * log_a, epsilon)
            f_exact = provider.softmin_rows(g + epsilon * log_b, epsilon)
            error = _row_error(a, f_exact, f, epsilon)
            n_iter += 1
            if error <= tol:
                return f, g, error, n_iter, True
            f, errors = f_exact, []
            continue
        errors.append(error + col_error)
        best = min(best, errors[-1])
        if errors[-1] > _GROWTH * best:
            # far from the linear regime the relaxation can run away: lower it for good
            omega = cap = 1.0 + 0.5 * (omega - 1.0)
            best, errors = errors[-1], errors[-1:]
        elif len(errors) > _WINDOW:
            rate = (errors[-1] / errors[0]) ** (1.0 / _WINDOW)
            # a window whose error grew a little is the oscillation of a relaxed transient
            if rate < 1.0:
                rho = max(rho, _relaxation(rate, omega))
                omega = min(cap, 2.0 / (1.0 + np.sqrt(1.0 - rho)))
            errors = errors[-1:]
    g = provider.softmin_cols(f + epsilon * log_a, epsilon)
    error = _row_error(a, provider.softmin_rows(g + epsilon * log_b, epsilon), f, epsilon)
    return f, g, error, n_iter, error <= tol


def solve_self(provider, a, epsilon, *, maxiter, tol, epsilon_scaling, init=None):
    """Symmetric Sinkhorn for ``OT_eps(a, a)``: the averaged update ``f <- (f + T f) / 2``.

    Returns ``f, objective, marginal_error, n_iter, converged``; the plan ``a_i a_j
    exp((f_i + f_j - C_ij)/eps)`` has the rows (and columns) ``a_i exp((f_i - T f_i)/eps)``.
    """
    log_a = _log(a)
    if init is None:
        f = np.zeros(provider.n)
        stages = _schedule(provider.max_cost(), epsilon, epsilon_scaling, maxiter)
    else:
        f, stages = np.array(init, dtype=np.float64), []
    for eps in stages:
        f = 0.5 * (f + provider.softmin_rows(f + eps * log_a, eps))
    n_iter = len(stages)
    converged = False
    while True:
        f_next = provider.softmin_rows(f + epsilon * log_a, epsilon)
        rows = a * np.exp((f - f_next) / epsilon)
        error = float(np.sum(np.abs(rows - a)))
        if error <= tol or n_iter >= maxiter:
            converged = error <= tol
            break
        f = 0.5 * (f + f_next)
        n_iter += 1
    objective = float(2.0 * f @ rows - epsilon * (rows.sum() - 1.0))
    return f, objective, error, n_iter, converged


def plan_statistics(provider, a, b, f, g, epsilon, *, aux=None, want_plan=False):
    """Row and column masses, ``<C, P>``, ``<aux, P>`` and optionally ``P``, without storing
    more than a block of costs (none for point costs)."""
    fa = f + epsilon * _log(a)
    gb = g + epsilon * _log(b)
    sums, cols, plan = provider.plan_sums(fa, gb, epsilon, aux=aux, want_plan=want_plan)
    return {
        "rows": sums[:, 0].copy(),
        "cols": cols,
        "transport_cost": float(sums[:, 1].sum()),
        "aux": float(sums[:, 2].sum()),
        "plan": plan,
    }


def dual_value(provider, a, b, f, g, epsilon) -> float:
    """``OT_eps`` of potentials whose columns are exact, as ``solve_potentials`` returns them.

    The plan's rows are ``a_i exp((f_i - f_next_i) / eps)`` with ``f_next`` the exact update of
    ``f``: the value is ``<f, rows> + <g, b> - eps (mass - 1)``.
    """
    f_next = provider.softmin_rows(g + epsilon * _log(b), epsilon)
    rows = a * np.exp((f - f_next) / epsilon)
    return float(f @ rows + g @ b - epsilon * (rows.sum() - 1.0))


def _result(provider, a, b, f, g, epsilon, *, method, want_plan, **run) -> SinkhornResult:
    """The result of one solve; ``run`` holds the record's ``function, n_iter, maxiter, tol,
    met`` (the record warns for the caller of the public function)."""
    stats = plan_statistics(provider, a, b, f, g, epsilon, want_plan=want_plan)
    rows, cols = stats["rows"], stats["cols"]
    # primal objective <C,P> + eps KL(P | ab^T) written through the potentials and actual masses
    objective = float(f @ rows + g @ cols - epsilon * (rows.sum() - 1.0))
    marginal_error = float(np.abs(rows - a).sum() + np.abs(cols - b).sum())
    record = IterationRecord.from_run(
        criterion=_CRITERION, last_value=marginal_error, remedy=_REMEDY, **run
    )
    return SinkhornResult(
        method=method,
        nobs=provider.n + provider.m,
        plan=stats["plan"],
        transport_cost=stats["transport_cost"],
        objective=objective,
        f=f,
        g=g,
        a=a,
        b=b,
        epsilon=epsilon,
        marginal_error=marginal_error,
        iterations=record,
    )


def _standard(cost, a, b, epsilon, maxiter, tol):
    """Matrix scaling ``u = a / K v``, ``v = b / K^T u`` with ``K = exp(-C / eps)``."""
    kernel = np.exp(-cost / epsilon)
    u, v = np.ones(len(a)), np.ones(len(b))
    error, n_iter = np.inf, 0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        while n_iter < maxiter:
            v = b / (kernel.T @ u)
            u_next = a / (kernel @ v)
            n_iter += 1
            error = float(np.abs(a - u * (kernel @ v)).sum())
            if not np.isfinite(error) or error <= tol:
                break
            u = u_next
        f, g = epsilon * np.log(u / a), epsilon * np.log(v / b)
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(g))):
        raise FloatingPointError(
            f"the scaling Sinkhorn under- or overflowed at epsilon={epsilon:g} (exp(-C/eps) is "
            "0 or inf); use method='log'"
        )
    return f, g, n_iter, error <= tol


def sinkhorn(
    a,
    b,
    cost,
    epsilon,
    *,
    maxiter: int = 10_000,
    tol: float = 1e-9,
    method: str = "log",
    epsilon_scaling: float | None = 0.5,
) -> SinkhornResult:
    """Entropic optimal transport between weights ``a`` and ``b`` for a cost matrix.

    Parameters
    ----------
    a, b : array_like or None, shape (n,) and (m,)
        Non-negative weights (normalised to sum to 1); None for uniform weights.
    cost : array_like, shape (n, m)
        Ground cost ``C_ij``.
    epsilon : float
        Entropic regularisation, in the units of the cost.
    maxiter : int
        Most Sinkhorn iterations, annealing included (when the annealing would take
        ``maxiter`` or more, only its last ``maxiter - 1`` stages run).
    tol : float
        Stop when the L1 error of the plan's marginals, ``|P 1 - a|_1 + |P^T 1 - b|_1``, is at
        most ``tol``.
    method : {"log", "standard"}
        ``"log"``: log-domain updates of the potentials (stable for small ``epsilon``);
        ``"standard"``: the classical matrix scaling (faster per iteration, fails once
        ``exp(-C/epsilon)`` underflows).
    epsilon_scaling : float in (0, 1) or None
        Annealing factor of the ``"log"`` method: one iteration at each of
        ``max C * s^k`` above ``epsilon`` before iterating at ``epsilon``. None: no annealing.
        Checked by :func:`check_solver_options`, as in every entry that takes it.

    Returns
    -------
    SinkhornResult
        ``plan``, ``transport_cost`` (``<C, P>``), ``objective`` (``<C, P> + epsilon
        KL(P | a b^T)``), the potentials ``f``, ``g``, ``marginal_error``, and the iteration
        record ``iterations`` (``converged``, ``n_iter``).

    Warns
    -----
    ConvergenceWarning
        When the tolerance is not met in ``maxiter`` iterations.

    References
    ----------
    Cuturi, M. (2013). Sinkhorn distances: lightspeed computation of optimal transport. NeurIPS.

    Lehmann, T., von Renesse, M.-K., Sambale, A. and Uschmajew, A. (2021). A note on
    overrelaxation in the Sinkhorn algorithm. Optim. Lett. 16, 2209-2220.

    Schmitzer, B. (2019). Stabilized sparse scaling algorithms for entropy regularized transport
    problems. SIAM J. Sci. Comput. 41(3), A1443-A1481 (log domain, epsilon-scaling).

    Chen, H. and Xia, L. C. (2025). General and estimable learning bound unifying covariate and
    concept shifts. arXiv:2506.12829 (the entropic coupling used by :mod:`statcore.shift`).
    """
    cost = as_float_array(cost, name="cost", ndim=2, allow_inf=False)
    n, m = cost.shape
    if n == 0 or m == 0:
        raise ValueError(f"`cost` must have at least one row and column; got shape {cost.shape}")
    a, b = check_weights(a, n, name="a"), check_weights(b, m, name="b")
    epsilon, maxiter, tol, epsilon_scaling = _check_options(epsilon, maxiter, tol, epsilon_scaling)
    check_option(method, name="method", options=METHODS)
    provider = DenseCost(cost)
    if method == "standard":
        f, g, n_iter, converged = _standard(cost, a, b, epsilon, maxiter, tol)
        label = "Sinkhorn (matrix scaling)"
    else:
        f, g, _, n_iter, converged = solve_potentials(
            provider, a, b, epsilon, maxiter=maxiter, tol=tol, epsilon_scaling=epsilon_scaling
        )
        label = "Sinkhorn (log domain)"
    return _result(
        provider,
        a,
        b,
        f,
        g,
        epsilon,
        method=label,
        want_plan=True,
        function="sinkhorn",
        n_iter=n_iter,
        maxiter=maxiter,
        tol=tol,
        met=converged,
    )


def _point_problem(x, y, a, b, epsilon, maxiter, tol, epsilon_scaling):
    """Checked points, weights, ``epsilon`` and the solver options of a point-cloud problem."""
    x, y = as_points(x, name="x"), as_points(y, name="y")
    a, b = check_weights(a, len(x), name="a"), check_weights(b, len(y), name="b")
    epsilon, maxiter, tol, epsilon_scaling = _check_options(epsilon, maxiter, tol, epsilon_scaling)
    return x, y, a, b, epsilon, {"maxiter": maxiter, "tol": tol, "epsilon_scaling": epsilon_scaling}


def sinkhorn_points(
    x,
    y,
    a=None,
    b=None,
    *,
    metric="euclidean",
    epsilon: float = 0.01,
    maxiter: int = 10_000,
    tol: float = 1e-9,
    epsilon_scaling: float | None = 0.5,
    plan: bool | None = None,
) -> SinkhornResult:
    """Entropic optimal transport between two point clouds, without the n x m cost matrix.

    The costs are recomputed from the coordinates inside numba kernels at every iteration, so
    memory is O(n + m) for the built-in metrics (a callable metric is evaluated on blocks of
    rows, about 2^20 costs at a time).

    Parameters
    ----------
    x, y : array_like, shape (n, d) and (m, d)
        The points (1-D input: points on the line).
    a, b : array_like, optional
        Non-negative weights of the points (normalised); uniform by default.
    metric : {"euclidean", "sqeuclidean", "cityblock", "chebyshev", "hamming"} or callable
        The ground cost. A callable gets two arrays of points ``A``, ``B`` and returns the
        ``(len(A), len(B))`` costs.
    epsilon : float
        Entropic regularisation, in the units of the cost (rescale the data first).
    maxiter, tol, epsilon_scaling
        As in :func:`sinkhorn`.
    plan : bool or None
        Return the dense plan; None: only when it has at most 2^20 entries.

    Returns
    -------
    SinkhornResult
        As :func:`sinkhorn`; ``plan`` is None unless asked for or small.

    Warns
    -----
    ConvergenceWarning
        When the tolerance is not met in ``maxiter`` iterations.

    References
    ----------
    Cuturi, M. (2013). Sinkhorn distances: lightspeed computation of optimal transport. NeurIPS.

    Schmitzer, B. (2019). Stabilized sparse scaling algorithms for entropy regularized transport
    problems. SIAM J. Sci. Comput. 41(3), A1443-A1481 (the log-domain, epsilon-scaled solver;
    :func:`sinkhorn` lists the over-relaxation it uses).
    """
    x, y, a, b, epsilon, options = _point_problem(
        x, y, a, b, epsilon, maxiter, tol, epsilon_scaling
    )
    if plan is not None and not isinstance(plan, bool | np.bool_):
        raise TypeError(f"`plan` must be None, True or False; got {describe(plan)}")
    provider = point_cost(x, y, metric)
    want_plan = len(x) * len(y) <= SMALL_PLAN if plan is None else bool(plan)
    f, g, _, n_iter, converged = solve_potentials(provider, a, b, epsilon, **options)
    name = metric if isinstance(metric, str) else "custom"
    return _result(
        provider,
        a,
        b,
        f,
        g,
        epsilon,
        method=f"Sinkhorn ({name} cost)",
        want_plan=want_plan,
        function="sinkhorn_points",
        n_iter=n_iter,
        maxiter=options["maxiter"],
        tol=options["tol"],
        met=converged,
    )


def sinkhorn_divergence(
    x,
    y,
    a=None,
    b=None,
    *,
    metric="euclidean",
    epsilon: float = 0.01,
    maxiter: int = 10_000,
    tol: float = 1e-9,
    epsilon_scaling: float | None = 0.5,
) -> SinkhornDivergenceResult:
    """The debiased Sinkhorn divergence ``OT_eps(a, b) - (OT_eps(a, a) + OT_eps(b, b)) / 2``.

    ``OT_eps`` is the entropic objective (``<C, P> + epsilon KL(P | a b^T)`` at the optimum),
    computed matrix-free as in :func:`sinkhorn_points`; the two self terms use the symmetric
    averaged update. The divergence is 0 for identical clouds and tends to the unregularised
    optimal transport cost as ``epsilon`` -> 0.

    Parameters
    ----------
    x, y, a, b, metric, epsilon, maxiter, tol, epsilon_scaling
        As in :func:`sinkhorn_points`.

    Returns
    -------
    SinkhornDivergenceResult
        ``divergence`` (also ``float(result)``), the three objectives ``ot_xy``, ``ot_xx``,
        ``ot_yy``, each solve's record in ``records`` and their joint record ``iterations``.

    Warns
    -----
    ConvergenceWarning
        Once, when any of the three solves misses the tolerance in ``maxiter`` iterations.

    References
    ----------
    Feydy, J. et al. (2019). Interpolating between optimal transport and MMD using Sinkhorn
    divergences. AISTATS.
    """
    x, y, a, b, epsilon, options = _point_problem(
        x, y, a, b, epsilon, maxiter, tol, epsilon_scaling
    )
    cross = point_cost(x, y, metric)
    f, g, error, n_iter, converged = solve_potentials(cross, a, b, epsilon, **options)
    values = {"xy": dual_value(cross, a, b, f, g, epsilon)}
    runs = {"xy": (error, n_iter, converged)}
    for key, points, w in (("xx", x, a), ("yy", y, b)):
        provider = point_cost(points, points, metric)
        _, values[key], err, it, conv = solve_self(provider, w, epsilon, **options)
        runs[key] = (err, it, conv)
    records = {
        key: IterationRecord.from_run(
            function=f"sinkhorn_divergence OT({key[0]}, {key[1]})",
            n_iter=it,
            maxiter=options["maxiter"],
            tol=options["tol"],
            criterion=_CRITERION,
            last_value=err,
            met=conv,
            warn=False,
        )
        for key, (err, it, conv) in runs.items()
    }
    marginal_error = max(err for err, _, _ in runs.values())
    record = IterationRecord.combine(
        list(records.values()),
        function="sinkhorn_divergence",
        labels=[f"OT({key[0]}, {key[1]})" for key in records],
        label="OT problem",
        remedy=_REMEDY,
    )
    name = metric if isinstance(metric, str) else "custom"
    return SinkhornDivergenceResult(
        method=f"Sinkhorn divergence ({name} cost)",
        nobs=len(x) + len(y),
        divergence=values["xy"] - 0.5 * (values["xx"] + values["yy"]),
        ot_xy=values["xy"],
        ot_xx=values["xx"],
        ot_yy=values["yy"],
        epsilon=epsilon,
        marginal_error=marginal_error,
        records=records,
        iterations=record,
    )
