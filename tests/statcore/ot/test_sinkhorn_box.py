"""Double-bounded OT (``sinkhorn_box``): its two limits against POT and the row softmax, the
active-box case with its KKT signs, optimality against feasible competitors, and bad input."""

import warnings

import numpy as np
import ot
import pytest

from statcore.exceptions import ConvergenceWarning
from statcore.ot import BoxSinkhornResult, sinkhorn_box

METHODS = ["sweeps", "newton"]


def entropic_objective(plan, cost, eps):
    """``<C, P> + eps sum P (log P - 1)`` of any plan (0 log 0 = 0): an independent twin."""
    logs = np.log(np.where(plan > 0, plan, 1.0))
    return float((plan * cost).sum() + eps * (plan * (logs - 1.0)).sum())


@pytest.fixture
def active_box():
    """Box-constrained check: 400 rows, 4 columns, column 0 cheaper by 0.5, bounds [0.2, 0.3]."""
    gen = np.random.default_rng(3)
    cost = gen.random((400, 4))
    cost[:, 0] -= 0.5
    return cost


@pytest.mark.parametrize("method", METHODS)
def test_equal_bounds_is_sinkhorn_and_matches_pot(rng, method):
    cost = rng.random((300, 5))
    a = np.full(300, 1 / 300)
    b = rng.dirichlet(np.full(5, 5.0))
    res = sinkhorn_box(a, cost, 0.05, lower=b, upper=b, tol=1e-14, method=method)
    pot = ot.sinkhorn(a, b, cost, 0.05, numItermax=100_000, stopThr=1e-15)
    assert res.converged
    # the same strictly convex problem solved to 1e-14 marginals on both sides: the plans
    # agree to rounding (observed ~1e-17); 1e-10 is the tolerance
    assert np.abs(res.plan - pot).max() < 1e-10
    assert np.abs(res.column_sums - b).max() < 1e-12
    assert res.objective == pytest.approx(entropic_objective(res.plan, cost, 0.05), abs=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_open_box_is_the_row_softmax(rng, method):
    cost = rng.random((200, 6)) * 3
    a = rng.dirichlet(np.ones(200))
    res = sinkhorn_box(a, cost, 0.1, method=method)
    softmax = np.exp(-cost / 0.1)
    softmax = a[:, None] * softmax / softmax.sum(axis=1, keepdims=True)
    # no bound binds: g = 0 and one row update is the exact solution (rounding only)
    assert np.abs(res.plan - softmax).max() < 1e-15
    assert np.all(res.g == 0.0) and res.n_iter == 1
    assert list(res.active) == ["interior"] * 6


@pytest.mark.parametrize("method", METHODS)
def test_active_upper_bound_and_kkt_signs(active_box, method):
    eps = 0.05
    res = sinkhorn_box(None, active_box, eps, lower=0.2, upper=0.3, method=method)
    cols = res.column_sums
    assert res.converged and isinstance(res, BoxSinkhornResult)
    # rows within the tolerance 1e-9 (L1); columns in the box by construction (rounding)
    assert np.abs(res.plan.sum(axis=1) - 1 / 400).sum() <= 1e-9
    assert np.all(cols >= 0.2 - 1e-15) and np.all(cols <= 0.3 + 1e-15)
    # the cheap column is held at its upper bound by a negative potential; the others are
    # interior with g = 0 (complementary slackness, exactly: the clip returns 0.0)
    assert cols[0] == pytest.approx(0.3, abs=1e-15) and res.g[0] < 0
    assert np.all(res.g[1:] == 0.0) and np.all((cols[1:] > 0.2) & (cols[1:] < 0.3))
    assert list(res.active) == ["upper", "interior", "interior", "interior"]
    assert cols.sum() == pytest.approx(1.0, abs=1e-9)


def test_active_lower_bound_and_kkt_signs(active_box):
    cost = active_box.copy()
    cost[:, 0] += 1.0  # column 0 now dearer than the rest by 0.5
    res = sinkhorn_box(None, cost, 0.05, lower=0.2, upper=0.3)
    assert res.column_sums[0] == pytest.approx(0.2, abs=1e-15) and res.g[0] > 0
    assert res.active[0] == "lower" and np.all(res.g[1:] == 0.0)


def test_plan_beats_every_feasible_competitor_and_closes_the_duality_gap(active_box):
    """Optimality without trusting the solver: the entropic plan of any other column marginal
    in the box (POT) costs more, and the dual value of (f, g) equals the primal value."""
    eps, lower, upper = 0.05, 0.2, 0.3
    a = np.full(400, 1 / 400)
    res = sinkhorn_box(a, active_box, eps, lower=lower, upper=upper, tol=1e-13)
    ours = entropic_objective(res.plan, active_box, eps)
    gen = np.random.default_rng(11)
    for _ in range(20):
        b = res.column_sums + gen.normal(scale=0.02, size=4)
        b -= (b.sum() - 1.0) / 4
        if np.any(b < lower) or np.any(b > upper):
            continue
        plan = ot.sinkhorn(a, b, active_box, eps, numItermax=100_000, stopThr=1e-14)
        # a strictly convex problem: any other feasible marginal is strictly worse; 1e-12
        # covers the rounding of both objectives
        assert entropic_objective(plan, active_box, eps) > ours - 1e-12
    box_term = np.where(res.g >= 0, res.g * lower, res.g * upper).sum()
    dual = res.f @ a + box_term - eps * res.plan.sum()
    # strong duality; the gap is of the order of the row error (1e-13) times the potentials
    assert dual == pytest.approx(ours, abs=1e-11)


def test_warm_start_and_per_column_bounds(active_box):
    lower = np.array([0.1, 0.25, 0.2, 0.2])
    upper = np.array([0.25, 0.4, np.inf, 0.3])
    cold = sinkhorn_box(None, active_box, 0.05, lower=lower, upper=upper, method="sweeps")
    warm = sinkhorn_box(
        None, active_box, 0.05, lower=lower, upper=upper, init=cold.potentials, method="sweeps"
    )
    assert warm.n_iter < cold.n_iter
    np.testing.assert_allclose(warm.plan, cold.plan, atol=1e-10)
    assert np.all(cold.column_sums >= lower - 1e-15) and np.all(cold.column_sums <= upper)


def test_newton_and_sweeps_agree_where_sweeps_are_slow(rng):
    # small epsilon against costs in [0, 1] with a binding bound: the sweeps' slow regime
    cost = rng.random((300, 8))
    cost[:, :2] -= 0.3
    options = dict(lower=0.08, upper=0.16, tol=1e-11, maxiter=200_000)
    newton = sinkhorn_box(None, cost, 0.02, method="newton", **options)
    sweeps = sinkhorn_box(None, cost, 0.02, method="sweeps", **options)
    assert newton.converged and sweeps.converged
    assert newton.n_iter < 30 < sweeps.n_iter
    np.testing.assert_allclose(newton.plan, sweeps.plan, atol=1e-11)


@pytest.mark.parametrize("method", METHODS)
def test_maxiter_warns_and_columns_stay_in_the_box(active_box, method):
    with pytest.warns(ConvergenceWarning, match="sinkhorn_box reached maxiter=2"):
        res = sinkhorn_box(None, active_box, 0.05, lower=0.2, upper=0.3, maxiter=2, method=method)
    assert not res.converged and res.iterations.function == "sinkhorn_box"
    assert res.n_iter == 2
    assert np.all(res.column_sums <= 0.3 + 1e-15) and np.all(res.column_sums >= 0.2 - 1e-15)


def test_inputs_are_not_modified_and_reports_work(active_box):
    cost, lower = active_box.copy(), np.full(4, 0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = sinkhorn_box(None, cost, 0.05, lower=lower, upper=0.3)
    assert np.array_equal(cost, active_box) and np.all(lower == 0.2)
    table = res.tidy()
    assert list(table.columns) == ["term", "estimate", "lower", "upper", "potential", "active"]
    assert table["active"].tolist()[0] == "upper"
    assert "DB-OT" in res.summary().as_text()
    assert res.glance()["objective"].iloc[0] == res.objective


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(lower=0.3, upper=0.2), ValueError, r"`upper` must be at least `lower`"),
        (dict(lower=0.3, upper=0.5), ValueError, r"infeasible: `lower` sums to 1\.2"),
        (dict(lower=0.0, upper=0.2), ValueError, r"infeasible: `upper` sums to 0\.8"),
        (dict(lower=-0.1), ValueError, r"`lower` must be non-negative"),
        (dict(lower=np.nan), ValueError, r"`lower` must not contain NaN"),
        (dict(upper=[0.5, 0.5]), ValueError, r"`upper` must hold one bound per column \(4\)"),
        (dict(lower=np.inf), ValueError, r"`lower` must be finite"),
        (dict(epsilon=-0.1), ValueError, r"`epsilon` must lie in"),
        (dict(epsilon=0.0), ValueError, r"`epsilon` must lie in"),
        (dict(method="lbfgs"), ValueError, r"`method` must be one of"),
        (dict(init=np.zeros(4)), TypeError, r"`init` must be a pair"),
        (dict(init=(None, np.zeros(3))), ValueError, r"`init\[1\]` must hold one potential"),
    ],
)
def test_bad_input_names_the_argument(active_box, kwargs, error, match):
    options = {"epsilon": 0.05, **kwargs}
    with pytest.raises(error, match=match):
        sinkhorn_box(None, active_box, **options)


def test_nan_cost_and_bad_weights_are_refused(active_box):
    cost = active_box.copy()
    cost[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"`cost` must not contain NaN"):
        sinkhorn_box(None, cost, 0.05)
    with pytest.raises(ValueError, match=r"`a` must have one weight per point \(400\)"):
        sinkhorn_box(np.ones(5), active_box, 0.05)
