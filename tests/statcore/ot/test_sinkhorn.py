"""Sinkhorn against a dense numpy log-domain twin and POT; matrix-free equals dense."""

import subprocess
import sys

import numpy as np
import ot
import pytest
from scipy.spatial.distance import cdist
from scipy.special import logsumexp

from statcore.exceptions import ConvergenceWarning
from statcore.ot import _kernels, cost_matrix, sinkhorn, sinkhorn_divergence, sinkhorn_points


def numpy_sinkhorn_log(a, b, cost, eps, iters):
    """Independent dense twin: textbook log-domain Sinkhorn with scipy's logsumexp."""
    f, g = np.zeros(len(a)), np.zeros(len(b))
    for _ in range(iters):
        f = -eps * logsumexp((g[None, :] - cost) / eps, b=b[None, :], axis=1)
        g = -eps * logsumexp((f[:, None] - cost) / eps, b=a[:, None], axis=0)
    return a[:, None] * b[None, :] * np.exp((f[:, None] + g[None, :] - cost) / eps)


@pytest.fixture
def clouds(rng):
    x = rng.normal(size=(300, 2))
    y = rng.normal(size=(300, 2)) + [1.0, 0.5]
    cost = cdist(x, y, "sqeuclidean")
    # the usual normalisation of POT's examples: costs in [0, 1], eps relative to that scale
    return x, y, cost / cost.max(), np.sqrt(cost.max())


@pytest.mark.parametrize("eps", [0.1, 0.05])
def test_sinkhorn_matches_pot_and_numpy_twin(clouds, eps):
    x, y, cost, _ = clouds
    a = np.full(300, 1 / 300)
    res = sinkhorn(None, None, cost, eps, tol=1e-12)
    pot = ot.sinkhorn(a, a, cost, eps, method="sinkhorn_log", stopThr=1e-13, numItermax=100_000)
    twin = numpy_sinkhorn_log(a, a, cost, eps, 400)  # ours needs < 50 here
    assert res.converged
    # both solve the same strictly convex problem to ~1e-12 marginals: the plans agree to
    # rounding; 1e-8 is the tolerance (entries are ~1e-5, so this is relative ~1e-3 at
    # worst, and observed 1e-16)
    assert np.abs(res.plan - pot).max() < 1e-8
    assert np.abs(res.plan - twin).max() < 1e-8
    assert res.transport_cost == pytest.approx((pot * cost).sum(), rel=1e-8)
    assert res.marginal_error <= 1e-9
    assert np.abs(res.plan.sum(1) - a).sum() + np.abs(res.plan.sum(0) - a).sum() <= 1e-9
    # the entropic objective equals the dual value <a, f> + <b, g> at convergence
    assert res.objective == pytest.approx(a @ res.f + a @ res.g, abs=1e-10)
    kl = np.sum(pot * np.log(pot / np.outer(a, a)))
    assert res.objective == pytest.approx((pot * cost).sum() + eps * kl, rel=1e-8)


def test_standard_method_matches_pot(clouds):
    _, _, cost, _ = clouds
    a = np.full(300, 1 / 300)
    res = sinkhorn(a, a, cost, 0.1, tol=1e-12, method="standard")
    pot = ot.sinkhorn(a, a, cost, 0.1, stopThr=1e-13, numItermax=100_000)
    assert np.abs(res.plan - pot).max() < 1e-8


def test_unequal_weights_and_sizes(rng):
    cost = rng.uniform(size=(40, 25))
    a, b = rng.uniform(size=40), rng.uniform(size=25)
    res = sinkhorn(a, b, cost, 0.05, tol=1e-12)
    pot = ot.sinkhorn(a / a.sum(), b / b.sum(), cost, 0.05, method="sinkhorn_log", stopThr=1e-13)
    assert np.abs(res.plan - pot).max() < 1e-10
    assert res.plan.sum(1) == pytest.approx(a / a.sum(), abs=1e-11)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock", "chebyshev"])
def test_points_equal_dense_on_materialised_cost(rng, metric):
    x, y = rng.normal(size=(120, 3)), rng.normal(size=(90, 3)) + 0.5
    dense = sinkhorn(None, None, cdist(x, y, metric), 0.2, tol=1e-11)
    points = sinkhorn_points(x, y, metric=metric, epsilon=0.2, tol=1e-11, plan=True)
    assert np.abs(points.plan - dense.plan).max() < 1e-12
    assert points.transport_cost == pytest.approx(dense.transport_cost, rel=1e-10)
    assert points.objective == pytest.approx(dense.objective, rel=1e-10)


def test_callable_metric_and_blocking(rng, monkeypatch):
    from statcore.ot import _costs

    # tiny blocks force several row blocks per pass: the blocked path must equal the dense one
    monkeypatch.setattr(_costs, "BLOCK_ENTRIES", 100)
    x, y = rng.normal(size=(50, 2)), rng.normal(size=(60, 2))
    res = sinkhorn_points(x, y, metric=lambda p, q: cdist(p, q, "minkowski", p=3), epsilon=0.3)
    dense = sinkhorn(None, None, cdist(x, y, "minkowski", p=3), 0.3)
    assert np.abs(res.plan - dense.plan).max() < 1e-10


def test_kernels_match_numpy_twins(rng):
    x, y = rng.normal(size=(30, 4)), rng.normal(size=(20, 4))
    h = rng.normal(size=20)
    for name, code in _kernels.METRIC_CODES.items():
        xs, ys = (np.round(x), np.round(y)) if name == "hamming" else (x, y)
        cost = cdist(xs, ys, name)
        np.testing.assert_allclose(_kernels.pairwise_points(xs, ys, code), cost, atol=1e-12)
        yt = np.ascontiguousarray(ys.T)
        out, out_par = np.empty(30), np.empty(30)
        _kernels.softmin_points(xs, yt, h, 0.3, code, out)
        _kernels.softmin_points_parallel(xs, yt, h, 0.3, code, out_par)
        twin = -0.3 * logsumexp((h[None, :] - cost) / 0.3, axis=1)
        np.testing.assert_allclose(out, twin, rtol=1e-12)
        np.testing.assert_array_equal(out, out_par)
    dense_out = np.empty(30)
    _kernels.softmin_dense(cost, h, 0.3, dense_out)
    np.testing.assert_allclose(dense_out, -0.3 * logsumexp((h - cost) / 0.3, axis=1), rtol=1e-12)


def test_small_epsilon_is_stable(rng):
    x, y = rng.normal(size=(60, 2)), rng.normal(size=(60, 2))
    # exp(-C / 1e-3) underflows to 0 in the scaling form; the log form must stay finite
    res = sinkhorn_points(x, y, epsilon=1e-3, maxiter=20_000, tol=1e-4)
    assert np.isfinite(res.transport_cost) and res.converged
    # at eps << spacing the plan is nearly the assignment: cost close to exact EMD
    emd = ot.emd2(np.full(60, 1 / 60), np.full(60, 1 / 60), cdist(x, y))
    assert res.transport_cost == pytest.approx(emd, rel=1e-2)
    with pytest.raises(FloatingPointError, match="method='log'"):
        sinkhorn(None, None, 1e3 * cdist(x, y), 1e-3, method="standard")


def test_large_sizes_do_not_return_plan(rng):
    x = rng.normal(size=(1100, 2))
    res = sinkhorn_points(x, x + 0.1, epsilon=0.5, tol=1e-6)
    assert res.plan is None  # 1100^2 > 2^20 entries
    assert res.marginal_error <= 1e-6 and res.f.shape == (1100,)


def test_divergence_matches_pot_plans(rng):
    x, y = rng.normal(size=(80, 2)), rng.normal(size=(70, 2)) + 1
    eps = 0.2

    def pot_objective(p, q):
        a, b = np.full(len(p), 1 / len(p)), np.full(len(q), 1 / len(q))
        cost = cdist(p, q)
        plan = ot.sinkhorn(
            a, b, cost, eps, method="sinkhorn_log", stopThr=1e-13, numItermax=100_000
        )
        return (plan * cost).sum() + eps * np.sum(plan * np.log(plan / np.outer(a, b)))

    expected = pot_objective(x, y) - 0.5 * (pot_objective(x, x) + pot_objective(y, y))
    res = sinkhorn_divergence(x, y, epsilon=eps, tol=1e-12)
    assert res.divergence == pytest.approx(expected, abs=1e-8)
    assert abs(sinkhorn_divergence(x, x, epsilon=eps).divergence) < 1e-8
    # a results object that still reads as the number
    assert float(res) == res.divergence and res.converged
    assert set(res.records) == {"xy", "xx", "yy"}
    assert res.n_iter == sum(r.n_iter for r in res.records.values())
    assert "divergence=" in repr(res)


def test_non_convergence_warns_and_records(rng):
    x, y = rng.normal(size=(50, 2)), rng.normal(size=(50, 2))
    with pytest.warns(ConvergenceWarning, match="sinkhorn_points reached maxiter=3"):
        res = sinkhorn_points(x, y, epsilon=0.01, maxiter=3, epsilon_scaling=None)
    assert res.converged is False and res.n_iter == 3 and res.marginal_error > 1e-9
    assert res.iterations.status == "maxiter"
    with pytest.warns(ConvergenceWarning, match="sinkhorn_divergence reached maxiter=3") as caught:
        div = sinkhorn_divergence(x, y, epsilon=0.01, maxiter=3, epsilon_scaling=None)
    assert len(caught) == 1 and div.converged is False and div.iterations.status == "maxiter"
    assert div.n_iter == sum(r.n_iter for r in div.records.values())


def test_bad_input_messages(rng):
    cost = rng.uniform(size=(5, 4))
    with pytest.raises(ValueError, match="`a` must have one weight per point"):
        sinkhorn(np.ones(3), None, cost, 0.1)
    with pytest.raises(ValueError, match="`epsilon` must lie in"):
        sinkhorn(None, None, cost, -1.0)
    with pytest.raises(ValueError, match="`metric` must be one of"):
        sinkhorn_points(cost, cost, metric="cosine")
    with pytest.raises(ValueError, match="same number of columns"):
        sinkhorn_points(np.ones((3, 2)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="`method` must be one of"):
        sinkhorn(None, None, cost, 0.1, method="fast")


def test_result_reporting(rng):
    x = rng.normal(size=(20, 2))
    res = sinkhorn_points(x, x[::-1] + 1, epsilon=0.5)
    assert set(res.tidy()["term"]) == {"transport_cost", "objective", "marginal_error"}
    assert res.glance()["n_source"].iloc[0] == 20
    assert "transport_cost" in repr(res)
    np.testing.assert_allclose(cost_matrix(x, x), cdist(x, x))
    import matplotlib

    matplotlib.use("Agg")
    assert res.plot() is not None


def test_imports_under_optimised_bytecode():
    """``python -OO`` strips docstrings: nothing may build on them at import."""
    code = "import statcore.ot, statcore.shift; print(statcore.ot.sinkhorn.__doc__)"
    out = subprocess.run([sys.executable, "-OO", "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "None"
