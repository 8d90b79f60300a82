"""Closed-form maps of every manifold: inverse pairs, metric consistency, membership, errors."""

import numpy as np
import pytest
from _manifold_helpers import concentrated_sample
from scipy.linalg import expm, logm

from statcore.manifold import SO3, SPD, Euclidean, Hyperbolic, Sphere


def test_exp_log_are_inverse_and_points_belong(manifold, rng):
    Y, centre = concentrated_sample(manifold, 25, rng)
    assert manifold.belongs(Y).all()
    V = manifold.log(centre, Y)
    # Exp(Log(y)) = y and Log(Exp(v)) = v; rounding of eigh/trig maps of O(1) data: 1e-10
    np.testing.assert_allclose(manifold.exp(centre, V), Y, atol=1e-10)
    np.testing.assert_allclose(manifold.log(centre, manifold.exp(centre, V)), V, atol=1e-10)
    assert manifold.belongs(manifold.random_point(10, rng)).all()


def test_distance_is_norm_of_log_and_coords_are_orthonormal(manifold, rng):
    Y, centre = concentrated_sample(manifold, 20, rng)
    V = manifold.log(centre, Y)
    C = manifold.to_tangent_coords(centre, V)
    assert C.shape == (20, manifold.dim)
    np.testing.assert_allclose(
        manifold.dist(centre[None], Y), np.linalg.norm(C, axis=1), atol=1e-10
    )
    # Riemannian inner products from the closed form agree with coordinate dot products
    np.testing.assert_allclose(
        manifold.inner(centre, V[:-1], V[1:]), np.sum(C[:-1] * C[1:], axis=1), atol=1e-10
    )
    np.testing.assert_allclose(manifold.from_tangent_coords(centre, C), V, atol=1e-10)
    np.testing.assert_allclose(manifold.log_coords(centre, Y), C, atol=1e-10)
    # distance symmetric, zero on the diagonal
    np.testing.assert_allclose(
        manifold.dist(Y[:5], Y[5:10]), manifold.dist(Y[5:10], Y[:5]), atol=1e-10
    )
    np.testing.assert_allclose(manifold.dist(Y, Y), 0.0, atol=1e-7)


def test_sphere_maps_against_textbook_formulas(rng):
    S = Sphere(2)
    p = np.array([0.0, 0.0, 1.0])
    y = np.array([1.0, 0.0, 0.0])
    np.testing.assert_allclose(S.log(p, y), [np.pi / 2, 0, 0], atol=1e-15)
    np.testing.assert_allclose(S.dist(p, y), np.pi / 2, atol=1e-15)
    # near-antipodal points keep full accuracy of the angle (atan2, not arccos)
    z = np.array([np.sin(1e-9), 0.0, -np.cos(1e-9)])
    assert abs(np.linalg.norm(S.log(p, z)) - (np.pi - 1e-9)) < 1e-12


def test_hyperbolic_against_poincare_distance(rng):
    H = Hyperbolic(2)
    Y = H.random_point(10, rng)
    # the Poincaré-disk image u = y_s / (1 + y0) has d = arccosh(1 + 2|u-v|^2/((1-|u|^2)(1-|v|^2)))
    u = Y[:, 1:] / (1 + Y[:, :1])
    a, b = u[:5], u[5:]
    poincare = np.arccosh(
        1 + 2 * np.sum((a - b) ** 2, 1) / ((1 - np.sum(a**2, 1)) * (1 - np.sum(b**2, 1)))
    )
    np.testing.assert_allclose(H.dist(Y[:5], Y[5:]), poincare, rtol=1e-10)


def test_spd_affine_matches_scipy_matrix_functions(rng):
    M = SPD(3)
    P, Y = M.random_point(2, rng)
    Ph = np.real(expm(0.5 * logm(P)))
    Pih = np.linalg.inv(Ph)
    expected = Ph @ np.real(logm(Pih @ Y @ Pih)) @ Ph
    # scipy's Schur-based logm vs our eigh route: agreement to 1e-10
    np.testing.assert_allclose(M.log(P, Y), expected, atol=1e-10)


def test_spd_metrics_agree_on_commuting_matrices(rng):
    # for simultaneously diagonal matrices both metrics reduce to |log a - log b|
    D = np.exp(rng.normal(size=(8, 3)))
    Y = np.einsum("ij,jk->ijk", D, np.eye(3))
    A, L = SPD(3), SPD(3, metric="log_euclidean")
    np.testing.assert_allclose(A.dist(Y[:4], Y[4:]), L.dist(Y[:4], Y[4:]), atol=1e-12)
    np.testing.assert_allclose(A.log_coords(Y[0], Y), L.log_coords(Y[0], Y), atol=1e-12)
    # at the identity the two metrics coincide for every tangent vector
    V = A.log(np.eye(3), A.random_point(5, rng))
    np.testing.assert_allclose(A.exp(np.eye(3), V), L.exp(np.eye(3), V), atol=1e-12)


def test_so3_log_near_pi_and_against_matrix_log(rng):
    G = SO3()
    R, S = G.random_point(2, rng)
    expected = R @ np.real(logm(R.T @ S))
    np.testing.assert_allclose(G.log(R, S), expected, atol=1e-8)
    angle = np.pi - 1e-7
    Q = expm(angle * np.array([[0, -1, 0], [1, 0, 0], [0, 0, 0.0]]))
    assert abs(G.dist(np.eye(3), Q) - angle) < 1e-9


@pytest.mark.parametrize(
    ("space", "bad"),
    [
        (Sphere(2), np.array([[1.0, 1.0, 0.0]])),
        (Hyperbolic(2), np.array([[-1.0, 0.0, 0.0]])),
        (SPD(2), np.array([[[1.0, 0.0], [0.0, -1.0]]])),
        (SO3(), -np.eye(3)[None]),
    ],
)
def test_points_off_the_manifold_are_rejected_by_name(space, bad):
    assert not space.belongs(bad).any()
    with pytest.raises(ValueError, match=r"`Y` has 1 point\(s\) off"):
        space.check_points(bad)


def test_shape_and_option_errors():
    with pytest.raises(ValueError, match=r"points of shape \(3,\)"):
        Sphere(2).check_points(np.ones((4, 4)))
    with pytest.raises(ValueError, match="must be 2-D"):
        Sphere(2).check_points(np.ones(3))
    with pytest.raises(ValueError, match="`metric` must be one of"):
        SPD(2, metric="bures")
    with pytest.raises(ValueError, match="`m` must lie in"):
        Euclidean(0)


def test_random_point_takes_random_state_and_the_old_rng_with_a_warning(manifold):
    draws = manifold.random_point(4, random_state=7)
    np.testing.assert_array_equal(manifold.random_point(4, 7), draws)
    with pytest.warns(FutureWarning, match="`rng=` is now spelled `random_state=`"):
        old = manifold.random_point(4, rng=7)
    np.testing.assert_array_equal(old, draws)
