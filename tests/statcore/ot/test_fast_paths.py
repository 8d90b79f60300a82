"""The fast paths of sinkhorn_points: vectorised exp, threaded kernels, matrix-free plan sums,
over-relaxed sweeps and epsilon-scaling, each against an independent reference."""

import numpy as np
import ot
import pytest
from scipy.spatial.distance import cdist
from scipy.special import logsumexp

from statcore.ot import _costs, _kernels, sinkhorn, sinkhorn_points
from statcore.ot import solver as ot_solver


def test_polynomial_exp_matches_numpy():
    t = np.concatenate([np.linspace(-699.9, 0.0, 200_001), -np.geomspace(1e-300, 1.0, 1001)])
    out, powers = np.empty(len(t)), np.empty(len(t), np.int64)
    _kernels._exp_shifted(t, 0.0, out, powers)
    # Cody-Waite reduction + degree-13 Taylor: a couple of ulp (observed 2.2e-16)
    np.testing.assert_allclose(out, np.exp(t), rtol=1e-15, atol=0)
    _kernels._exp_shifted(np.array([-701.0, -np.inf]), 0.0, out[:2], powers[:2])
    assert np.all(out[:2] == 0.0)  # below e^-700 a term counts as 0, never as garbage


def test_coarse_exp_is_below_float32_rounding():
    t = np.linspace(-699.9, 0.0, 200_001)
    out, powers = np.empty(len(t)), np.empty(len(t), np.int64)
    _kernels._exp_shifted_coarse(t, 0.0, out, powers)
    # degree-7 Taylor on |r| <= ln(2)/2: r^8/8! < 5.3e-9, under float32's 6e-8 half-ulp
    np.testing.assert_allclose(out, np.exp(t), rtol=1e-8, atol=0)


def test_point_cost_blocks_are_the_same_bits_serial_and_parallel(rng):
    x, y = rng.normal(size=(300, 7)), rng.normal(size=(260, 7))
    for code in range(5):
        serial = _kernels.pairwise_points(x, y, code)
        parallel = _kernels.pairwise_points_parallel(x, np.ascontiguousarray(y.T), code)
        # both sum the coordinates in the same order: identical, not merely close
        assert np.array_equal(serial, parallel)


def test_annealing_is_anchored_at_epsilon():
    stages = ot_solver._schedule(300.0, 1.0, 0.25, 10_000)
    # epsilon / 4^k up to the start: the last stage a whole factor above epsilon
    np.testing.assert_allclose(stages, [256.0, 64.0, 16.0, 4.0])
    assert ot_solver._schedule(300.0, 1.0, 0.25, 3) == [16.0, 4.0]  # maxiter - 1 closest
    assert ot_solver._schedule(3.0, 1.0, 0.25, 10) == []


def test_dense_kernels_serial_equal_parallel(rng):
    cost, h = rng.uniform(size=(70, 45)), rng.normal(size=45)
    h[3] = -np.inf  # a zero weight drops its column
    serial, parallel = np.empty(70), np.empty(70)
    _kernels.softmin_dense(cost, h, 0.07, serial)
    _kernels.softmin_dense_parallel(cost, h, 0.07, parallel)
    np.testing.assert_array_equal(serial, parallel)  # same row code, same bits
    twin = -0.07 * logsumexp((h - cost) / 0.07, axis=1)
    np.testing.assert_allclose(serial, twin, rtol=1e-13)


@pytest.mark.parametrize("want_plan", [False, True])
def test_matrix_free_plan_sums_equal_blocked(rng, want_plan):
    x, y = rng.normal(size=(53, 3)), rng.normal(size=(41, 3))
    ly, lt = rng.normal(size=(53, 2)), rng.normal(size=(41, 2))
    cost, labels = _costs.PointCost(x, y, "euclidean"), _costs.PointCost(ly, lt, "cityblock")
    fa, gb = rng.normal(size=53) - 3.0, rng.normal(size=41) - 3.0
    sums, cols, plan = cost.plan_sums(fa, gb, 0.4, aux=labels, want_plan=want_plan)
    # the reference: the dense plan from scipy's distances, summed by numpy
    dense = np.exp((fa[:, None] + gb[None, :] - cdist(x, y)) / 0.4)
    np.testing.assert_allclose(sums[:, 0], dense.sum(1), rtol=1e-13)
    np.testing.assert_allclose(sums[:, 1], (dense * cdist(x, y)).sum(1), rtol=1e-13)
    np.testing.assert_allclose(sums[:, 2], (dense * cdist(ly, lt, "cityblock")).sum(1), rtol=1e-13)
    np.testing.assert_allclose(cols, dense.sum(0), rtol=1e-13)
    blocked = _costs.blocked_plan_sums(cost, fa, gb, 0.4, aux=labels, want_plan=want_plan)
    np.testing.assert_allclose(sums, blocked[0], rtol=1e-13)
    if want_plan:
        np.testing.assert_allclose(plan, dense, rtol=1e-13)
    else:
        assert plan is None


def test_ill_conditioned_problem_relaxes_and_agrees_with_pot(rng, monkeypatch):
    x, y = rng.normal(size=(60, 4)), rng.normal(size=(60, 4)) + 0.3
    used = []
    relax = ot_solver._relaxation
    monkeypatch.setattr(ot_solver, "_relaxation", lambda r, w: used.append(w) or relax(r, w))
    # eps at 2% of the typical cost: plain Sinkhorn needs thousands of sweeps here
    res = sinkhorn_points(x, y, epsilon=0.05, tol=1e-10, plan=True)
    assert res.converged and max(used) > 1.5  # the over-relaxed path did the work
    w = np.full(60, 1 / 60)
    pot = ot.sinkhorn(
        w, w, cdist(x, y), 0.05, method="sinkhorn_log", stopThr=1e-14, numItermax=200_000
    )
    # both at ~1e-10 marginals of one strictly convex problem: entries (~1e-2) agree to 1e-8
    assert np.abs(res.plan - pot).max() < 1e-8
    assert res.transport_cost == pytest.approx((pot * cdist(x, y)).sum(), rel=1e-8)
    rows_cols = np.abs(res.plan.sum(1) - w).sum() + np.abs(res.plan.sum(0) - w).sum()
    assert rows_cols <= 1e-10


@pytest.mark.parametrize("scaling", [0.5, 0.9])
def test_epsilon_scaling_reaches_the_unscaled_solution(rng, scaling):
    x, y = rng.normal(size=(80, 2)), rng.normal(size=(70, 2)) + 1.0
    plain = sinkhorn_points(x, y, epsilon=0.02, tol=1e-11, epsilon_scaling=None, plan=True)
    scaled = sinkhorn_points(x, y, epsilon=0.02, tol=1e-11, epsilon_scaling=scaling, plan=True)
    assert plain.converged and scaled.converged
    # one optimum, both within 1e-11 of its marginals: plans agree far below their ~1e-4 size
    assert np.abs(plain.plan - scaled.plan).max() < 1e-10
    assert scaled.objective == pytest.approx(plain.objective, rel=1e-9)


def test_threaded_solver_equals_serial(rng, monkeypatch):
    x, y = rng.normal(size=(90, 3)), rng.normal(size=(80, 3))
    monkeypatch.setattr(_costs, "PARALLEL_PAIRS", 1 << 40)
    serial = sinkhorn_points(x, y, epsilon=0.1, tol=1e-10, plan=True)
    monkeypatch.setattr(_costs, "PARALLEL_PAIRS", 1)
    threaded = sinkhorn_points(x, y, epsilon=0.1, tol=1e-10, plan=True)
    np.testing.assert_array_equal(serial.f, threaded.f)  # row order fixed within a thread
    np.testing.assert_array_equal(serial.plan, threaded.plan)
    assert serial.n_iter == threaded.n_iter


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_threaded_kernel_passes_equal_serial_ones(rng, monkeypatch, dtype):
    # the cached-kernel soft-mins (DataShifts' path) pick threads by size; the same bits
    cost = cdist(rng.normal(size=(90, 2)), rng.normal(size=(70, 2)), "sqeuclidean")
    h_cols, h_rows = rng.normal(size=70), rng.normal(size=90)
    passes = {}
    for name, pairs in (("serial", 1 << 40), ("threaded", 1)):
        monkeypatch.setattr(_costs, "PARALLEL_PAIRS", pairs)
        kernel = _costs.KernelCost(cost, dtype=dtype)
        first = kernel.softmin_rows(h_cols, 0.5)  # builds the kernel
        again = kernel.softmin_rows(h_cols + 0.1, 0.5)  # kernel product
        cols = kernel.softmin_cols(h_rows, 0.5)  # transposed product
        passes[name] = (first, again, cols)
    for serial, threaded in zip(passes["serial"], passes["threaded"], strict=True):
        np.testing.assert_array_equal(serial, threaded)


def test_dense_and_points_agree_with_zero_weights(rng):
    x, y = rng.normal(size=(30, 2)), rng.normal(size=(25, 2))
    a, b = rng.uniform(size=30), rng.uniform(size=25)
    a[[2, 7]], b[5] = 0.0, 0.0
    points = sinkhorn_points(x, y, a, b, epsilon=0.1, tol=1e-11, plan=True)
    dense = sinkhorn(a, b, cdist(x, y), 0.1, tol=1e-11)
    assert np.all(points.plan[[2, 7]] == 0.0) and np.all(points.plan[:, 5] == 0.0)
    assert np.abs(points.plan - dense.plan).max() < 1e-12
