"""Fréchet means: first-order condition, closed-form cases, convergence record, errors."""

import numpy as np
import pytest
from _manifold_helpers import concentrated_sample

from statcore.exceptions import ConvergenceWarning
from statcore.manifold import SPD, Euclidean, Sphere, frechet_mean


def test_gradient_vanishes_at_the_mean(manifold, rng):
    Y, _ = concentrated_sample(manifold, 40, rng)
    res = frechet_mean(Y, manifold)
    assert res.converged and res.grad_norm < 1e-10
    # the mean minimises the Fréchet function: nudging it raises the variance
    C = manifold.log_coords(res.mean, Y)
    np.testing.assert_allclose(np.linalg.norm(C.mean(0)), res.grad_norm, atol=1e-15)
    nudged = manifold.exp(res.mean, manifold.from_tangent_coords(res.mean, 0.05 * C[:1])[0])
    assert np.mean(manifold.dist(nudged[None], Y) ** 2) > res.variance
    assert res.glance()["grad_norm"].iloc[0] == res.grad_norm


def test_spd_two_point_affine_mean_is_the_geometric_midpoint():
    # the geomstats #1010 case: mean of diag(e^2, 1) and I is diag(e, 1)
    Y = np.array([np.diag([np.e**2, 1.0]), np.eye(2)])
    res = frechet_mean(Y, SPD(2))
    np.testing.assert_allclose(res.mean, np.diag([np.e, 1.0]), atol=1e-10)
    # general pair: the midpoint A # B = A^1/2 (A^-1/2 B A^-1/2)^1/2 A^1/2
    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    B = np.array([[1.0, -0.3], [-0.3, 3.0]])
    w, Q = np.linalg.eigh(A)
    Ah, Aih = (Q * np.sqrt(w)) @ Q.T, (Q / np.sqrt(w)) @ Q.T
    wm, Qm = np.linalg.eigh(Aih @ B @ Aih)
    mid = Ah @ ((Qm * np.sqrt(wm)) @ Qm.T) @ Ah
    np.testing.assert_allclose(frechet_mean(np.array([A, B]), SPD(2)).mean, mid, atol=1e-10)


def test_log_euclidean_mean_is_closed_form(rng):
    M = SPD(3, metric="log_euclidean")
    Y = M.random_point(30, rng)
    w, Q = np.linalg.eigh(Y)
    mean_log = np.mean((Q * np.log(w)[:, None, :]) @ np.swapaxes(Q, 1, 2), axis=0)
    wl, Ql = np.linalg.eigh(mean_log)
    np.testing.assert_allclose(frechet_mean(Y, M).mean, (Ql * np.exp(wl)) @ Ql.T, atol=1e-10)


def test_sphere_symmetric_configuration_has_the_pole_as_mean():
    # four points at colatitude 0.7 spread evenly in longitude: the mean is the north pole
    phi = np.arange(4) * np.pi / 2 + 0.3
    Y = np.column_stack(
        [np.sin(0.7) * np.cos(phi), np.sin(0.7) * np.sin(phi), np.full(4, np.cos(0.7))]
    )
    res = frechet_mean(Y, Sphere(2))
    np.testing.assert_allclose(res.mean, [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(res.variance, 0.49, atol=1e-12)


def test_euclidean_mean_is_the_average(rng):
    Y = rng.normal(size=(10, 3))
    np.testing.assert_allclose(frechet_mean(Y, Euclidean(3)).mean, Y.mean(0), atol=1e-15)


def test_non_convergence_warns_and_is_recorded(rng):
    Y, _ = concentrated_sample(SPD(3), 30, rng, scale=1.0)
    with pytest.warns(ConvergenceWarning, match="maxiter=1"):
        res = frechet_mean(Y, SPD(3), maxiter=1, init=np.eye(3) * 10)
    assert res.converged is False and res.n_iter == 1
    assert "NOT converged" in repr(res)
    assert res.iterations.status == "maxiter" and len(res.iterations.history) == 1


def test_iteration_record_and_history(rng):
    Y, _ = concentrated_sample(SPD(3), 30, rng, scale=1.0)
    res = frechet_mean(Y, SPD(3), init=np.eye(3) * 10)
    record = res.iterations
    assert record.converged and record.function == "frechet_mean" and record.tol == 1e-10
    history = record.history
    assert list(history.columns) == ["iteration", "step", "grad_norm", "variance"]
    assert len(history) == res.n_iter and history["grad_norm"].iloc[-1] == res.grad_norm
    assert history["variance"].iloc[-1] == pytest.approx(res.variance)


def test_points_outside_any_open_hemisphere_are_rejected():
    Y = np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 1.0, 0], [0, -1.0, 0]])
    with pytest.raises(ValueError, match="open hemisphere"):
        frechet_mean(Y, Sphere(2))
    # within a hemisphere, though the extrinsic mean test alone fails, the LP accepts it
    ok = np.array([[1.0, 0, 0], [0, 1.0, 0], [-0.6, 0.8, 0], [0.6, -0.8, 0.0]])
    ok = np.vstack([ok[:3], [0.0, 0.6, 0.8]])
    assert frechet_mean(ok, Sphere(2)).converged


def test_bad_arguments():
    with pytest.raises(TypeError, match="`manifold` must be a statcore.manifold"):
        frechet_mean(np.ones((3, 2)), "sphere")
    with pytest.raises(ValueError, match="`tol` must lie in"):
        frechet_mean(np.eye(3), Sphere(2), tol=0)
