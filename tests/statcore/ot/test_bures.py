"""Bures-Wasserstein barycentre, Gaussian maps and W2 (statcore.ot.bures)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from scipy.linalg import sqrtm
from scipy.stats import ortho_group

from statcore.exceptions import ConvergenceWarning
from statcore.ot.bures import (
    GaussianMap,
    bures_wasserstein_barycentre,
    bures_wasserstein_map,
    gaussian_w2,
)


def random_spd(rng, K, d, ridge=0.2):
    covs = np.empty((K, d, d))
    for k in range(K):
        A = rng.normal(size=(d, d))
        covs[k] = A @ A.T / d + ridge * np.eye(d)
    return covs


@pytest.fixture
def problem():
    rng = np.random.default_rng(1)
    K, d = 6, 12
    return rng.normal(size=(K, d)), random_spd(rng, K, d), rng.dirichlet(np.ones(K))


def rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def test_commuting_covariances_give_the_squared_mean_root():
    rng = np.random.default_rng(0)
    K, d = 5, 8
    Q = ortho_group.rvs(d, random_state=3)
    lam = rng.uniform(0.2, 5.0, size=(K, d))
    covs = np.stack([Q @ np.diag(v) @ Q.T for v in lam])
    means = rng.normal(size=(K, d))
    w = rng.dirichlet(np.ones(K))
    expected = Q @ np.diag((w @ np.sqrt(lam)) ** 2) @ Q.T
    res = bures_wasserstein_barycentre(means, covs, w)
    # the default start is this closed form computed from eigendecompositions of d = 8
    # matrices: only rounding separates them (a few eps times the condition number 25)
    assert rel(res.covariance, expected) < 1e-12
    np.testing.assert_allclose(res.mean, w @ means, rtol=0, atol=1e-14)
    # from a start that does not commute with them (a start that does, such as I, lands on
    # the answer in one step) the fixed point itself must find it; the residual tolerance
    # 1e-13 bounds the error at about the condition number (25) times it, below 1e-11
    start = random_spd(rng, 1, d)[0]
    cold = bures_wasserstein_barycentre(means, covs, w, init=start, tol=1e-13)
    assert cold.converged and cold.n_iter > 2
    assert rel(cold.covariance, expected) < 1e-11


def test_fixed_point_residual_for_general_spd(problem):
    means, covs, w = problem
    res = bures_wasserstein_barycentre(means, covs, w, tol=1e-10)
    assert res.converged
    # the residual recomputed on an independent route (scipy's Schur-based sqrtm); the
    # required 1e-6 leaves four orders for sqrtm's own error (~1e-12 here)
    S = res.covariance
    root = sqrtm(S).real
    image = sum(wk * sqrtm(root @ C @ root).real for wk, C in zip(w, covs, strict=True))
    assert np.linalg.norm(image - S) < 1e-6
    assert np.linalg.norm(image - S) / np.linalg.norm(S) < 1e-9
    assert np.linalg.eigvalsh(S)[0] > 0
    # the reported residual is the returned matrix's own
    assert res.residual == res.iterations.history["residual"].iloc[-1] <= 1e-10


def test_maps_push_each_gaussian_onto_the_barycentre(problem):
    means, covs, w = problem
    res = bures_wasserstein_barycentre(means, covs, w)
    for m, C in zip(means, covs, strict=True):
        T = bures_wasserstein_map(m, C, res.mean, res.covariance)
        A = T.matrix
        np.testing.assert_array_equal(A, A.T)
        assert np.linalg.eigvalsh(A)[0] > 0
        # A C A = S holds by construction up to rounding in two eighs of 12 x 12 matrices
        # with condition numbers < 100: 1e-12 leaves a factor ~10 over what is seen (1e-14)
        mean_out, cov_out = T.push(m, C)
        assert rel(cov_out, res.covariance) < 1e-12
        assert rel(A @ C @ A, res.covariance) < 1e-12
        np.testing.assert_allclose(mean_out, res.mean, rtol=0, atol=1e-12)


def test_partial_map_walks_the_geodesic(problem):
    means, covs, w = problem
    res = bures_wasserstein_barycentre(means, covs, w)
    for k in (0, 3):
        T = bures_wasserstein_map(means[k], covs[k], res.mean, res.covariance)
        full = gaussian_w2(means[k], covs[k], res.mean, res.covariance)
        for tau in (0.25, 0.5, 0.75):
            m_tau, c_tau = T.partial(tau).push(means[k], covs[k])
            # McCann: N_tau sits at distance tau W and (1 - tau) W from the ends; W2 is a
            # square root of a difference of traces O(10), so rounding leaves ~1e-14 relative
            near = gaussian_w2(means[k], covs[k], m_tau, c_tau)
            far = gaussian_w2(m_tau, c_tau, res.mean, res.covariance)
            assert abs(near - tau * full) < 1e-12 * full
            assert abs(far - (1 - tau) * full) < 1e-12 * full


def test_tau_zero_is_the_identity_and_tau_one_the_map(problem):
    means, covs, w = problem
    T = bures_wasserstein_map(means[0], covs[0], means[1], covs[1])
    X = np.random.default_rng(2).normal(size=(30, means.shape[1]))
    before = X.copy()
    out = T(X, tau=0.0)
    np.testing.assert_array_equal(out, X)
    assert out is not X
    np.testing.assert_allclose(T(X, tau=1.0), X @ T.matrix.T + T.bias, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(T.partial(0.3)(X), T(X, tau=0.3), rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(X, before)


def test_equals_pot(problem):
    ot = pytest.importorskip("ot")
    means, covs, w = problem
    res = bures_wasserstein_barycentre(means, covs, w, tol=1e-13)
    mb, cb = ot.gaussian.bures_wasserstein_barycenter(means, covs, w, eps=1e-13, num_iter=10_000)
    # both stop at a residual of 1e-13 (POT's absolute, ours relative to |S| ~ 4); the
    # fixed point is well conditioned here, so both are within ~1e-12 of it: 1e-8 is the
    # acceptance bound of the specification
    np.testing.assert_allclose(res.mean, mb, rtol=0, atol=1e-12)
    assert np.abs(res.covariance - cb).max() < 1e-8
    A, b = ot.gaussian.bures_wasserstein_mapping(means[0], mb, covs[0], cb)
    T = bures_wasserstein_map(means[0], covs[0], res.mean, res.covariance)
    assert np.abs(T.matrix - A).max() < 1e-8
    assert np.abs(T.bias - b.ravel()).max() < 1e-8


def test_one_distribution_is_its_own_barycentre(problem):
    means, covs, _ = problem
    res = bures_wasserstein_barycentre(means[:1], covs[:1])
    assert rel(res.covariance, covs[0]) < 1e-13
    T = bures_wasserstein_map(means[0], covs[0], res.mean, res.covariance)
    np.testing.assert_allclose(T.matrix, np.eye(len(T.matrix)), rtol=0, atol=1e-12)


def test_w2_in_one_dimension_and_symmetry(problem):
    # for 1-D Gaussians W2^2 = (m1 - m2)^2 + (s1 - s2)^2 exactly
    assert gaussian_w2([1.0], [[4.0]], [-2.0], [[9.0]], squared=True) == pytest.approx(
        9.0 + 1.0, rel=1e-14
    )
    means, covs, _ = problem
    a = gaussian_w2(means[0], covs[0], means[1], covs[1])
    b = gaussian_w2(means[1], covs[1], means[0], covs[0])
    assert a == pytest.approx(b, rel=1e-12)
    assert gaussian_w2(means[0], covs[0], means[0], covs[0]) < 1e-6  # sqrt of rounding


def test_non_convergence_warns_and_is_recorded(problem):
    means, covs, w = problem
    with pytest.warns(ConvergenceWarning, match="maxiter=1"):
        res = bures_wasserstein_barycentre(means, covs, w, init=np.eye(12), maxiter=1)
    assert not res.converged and res.n_iter == 1
    assert res.iterations.status == "maxiter"


def test_inputs_unmodified_and_results_report(problem):
    means, covs, w = problem
    copies = [a.copy() for a in (means, covs, w)]
    res = bures_wasserstein_barycentre(means, covs, w)
    for a, c in zip((means, covs, w), copies, strict=True):
        np.testing.assert_array_equal(a, c)
    assert "residual" in str(res.summary())
    assert list(res.tidy()["term"]) == ["residual", "trace", "logdet"]
    assert res.glance()["n_distributions"].iloc[0] == 6
    res.plot()
    plt.close("all")


def test_bad_input(problem):
    means, covs, w = problem
    bad = covs.copy()
    bad[2] = -bad[2]
    with pytest.raises(ValueError, match=r"`covs\[2\]` must be symmetric positive definite"):
        bures_wasserstein_barycentre(means, bad, w)
    asym = covs.copy()
    asym[1, 0, 1] += 1.0
    with pytest.raises(ValueError, match=r"`covs\[1\]` must be symmetric"):
        bures_wasserstein_barycentre(means, asym, w)
    nan = covs.copy()
    nan[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="`covs` must not contain NaN"):
        bures_wasserstein_barycentre(means, nan, w)
    with pytest.raises(ValueError, match="`means` must not contain NaN"):
        bures_wasserstein_barycentre(np.where(means > 1, np.nan, means), covs, w)
    with pytest.raises(ValueError, match="`covs` must be 11 x 11"):
        bures_wasserstein_barycentre(means[:, :11], covs, w)
    with pytest.raises(ValueError, match="one matrix per row of `means`"):
        bures_wasserstein_barycentre(means[:4], covs, w[:4])
    with pytest.raises(ValueError, match="`weights` must be non-negative"):
        bures_wasserstein_barycentre(means, covs, -w)
    with pytest.raises(ValueError, match="`cov_target` must be symmetric positive definite"):
        bures_wasserstein_map(means[0], covs[0], means[1], np.zeros((12, 12)))
    with pytest.raises(ValueError, match="`mean_source` must have length 12"):
        bures_wasserstein_map(means[0, :3], covs[0], means[1], covs[1])
    with pytest.raises(ValueError, match="`tau` must lie in"):
        GaussianMap(np.eye(2), np.zeros(2)).partial(1.5)
