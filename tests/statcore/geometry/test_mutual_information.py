"""KSG mutual information, its permutation test and the ground-truth designs."""

import numpy as np
import pytest
from scipy import special

from statcore.geometry.mi_designs import (
    correlated_bernoulli_mi,
    correlated_bernoulli_sample,
    gaussian_copula_mi,
    gaussian_copula_sample,
    shared_poisson_mi,
    shared_poisson_sample,
)
from statcore.geometry.mutual_information import (
    MutualInformationResult,
    ksg_independence_test,
    ksg_mutual_information,
)


def brute_force_ksg(x, y, k):
    """KSG estimator 1 straight from Kraskov et al. (2004, eq. 8), in numpy."""
    n = len(x)
    dx = np.abs(x[:, None, :] - x[None, :, :]).max(-1)
    dy = np.abs(y[:, None, :] - y[None, :, :]).max(-1)
    dz = np.maximum(dx, dy)
    np.fill_diagonal(dz, np.inf)
    eps = np.sort(dz, axis=1)[:, k - 1]
    np.fill_diagonal(dx, np.inf)
    np.fill_diagonal(dy, np.inf)
    nx = (dx < eps[:, None]).sum(1)
    ny = (dy < eps[:, None]).sum(1)
    return (
        special.digamma(k)
        + special.digamma(n)
        - np.mean(special.digamma(nx + 1) + special.digamma(ny + 1))
    )


def test_designs_reproduce_the_infoatlas_ground_truths():
    # the closed-form values of the InfoAtlas code (evaluate_sync.py), 4 decimals
    assert [round(gaussian_copula_mi(r, d), 4) for r, d in [(0.5, 1), (0.8, 1), (0.2, 5), (0.5, 5)]] == [
        0.1438, 0.5108, 0.1021, 0.7192,
    ]  # fmt: skip
    assert [round(correlated_bernoulli_mi(q), 4) for q in (0.6, 0.75, 0.9)] == [
        0.0201,
        0.1308,
        0.3681,
    ]
    assert [round(shared_poisson_mi(lam0), 4) for lam0 in (1, 2, 4)] == [0.0580, 0.1423, 0.2924]


def test_shared_poisson_mi_matches_the_empirical_plug_in():
    # plug-in MI of 200k draws: its bias is (cells - 1)^2 / 2n ~ 1e-3 here, its sd ~ 2e-3
    x, y = shared_poisson_sample(200_000, lam0=2.0, random_state=0)
    pairs, counts = np.unique(np.c_[x, y], axis=0, return_counts=True)
    p = counts / counts.sum()
    px = {v: np.mean(x[:, 0] == v) for v in np.unique(x)}
    py = {v: np.mean(y[:, 0] == v) for v in np.unique(y)}
    plug = sum(pi * np.log(pi / (px[a] * py[b])) for (a, b), pi in zip(pairs, p, strict=True))
    assert plug == pytest.approx(shared_poisson_mi(2.0), abs=0.01)


def test_ksg_equals_a_brute_force_numpy_ksg():
    x, y = gaussian_copula_sample(150, rho=0.6, dim=2, marginals="gaussian", random_state=3)
    res = ksg_mutual_information(x, y, k=3, scale="none")
    # the kernel's digamma series stops at x^-8 (for x >= 6): truncation error < 2e-10 per term
    assert res.estimate == pytest.approx(brute_force_ksg(x, y, 3), abs=1e-9)


def test_ksg_agrees_with_scikit_learn():
    sklearn = pytest.importorskip("sklearn.feature_selection")
    x, y = gaussian_copula_sample(2000, rho=0.8, marginals="gaussian", random_state=0)
    ours = ksg_mutual_information(x, y).estimate
    theirs = sklearn.mutual_info_regression(x, y[:, 0], n_neighbors=3, random_state=0)[0]
    # scikit-learn adds 1e-10-scale jitter before the same KSG-1 estimator: the two agree far
    # inside the estimator's own sd (~0.02)
    assert ours == pytest.approx(theirs, abs=2e-3)


def test_ksg_within_0_02_of_the_bivariate_gaussian_at_n_2000():
    # acceptance check (e); the mean over 5 seeds has sd ~0.009 (per-seed sd ~0.02)
    est = [
        ksg_mutual_information(
            *gaussian_copula_sample(2000, rho=0.8, marginals="gaussian", random_state=s)
        ).estimate
        for s in range(5)
    ]
    assert abs(np.mean(est) - 0.5108) < 0.02
    assert abs(est[0] - 0.5108) < 0.02


@pytest.mark.parametrize(
    ("rho", "dim", "tol"), [(0.5, 1, 0.04), (0.8, 1, 0.04), (0.2, 5, 0.06), (0.5, 5, 0.25)]
)
def test_ksg_on_gaussian_copulas_with_non_gaussian_marginals(rho, dim, tol):
    # rank scaling makes KSG see the Gaussian copula itself. Tolerances: 3 sd of a 3-seed mean
    # in d = 1 (sd ~0.012); in d = 5 KSG's known downward bias in 10 joint dimensions
    # (measured ~-0.04 at MI 0.10 and ~-0.17 at MI 0.72, n = 2000) sets them, and the estimate
    # must stay below the truth plus noise
    truth = gaussian_copula_mi(rho, dim)
    est = np.mean(
        [
            ksg_mutual_information(
                *gaussian_copula_sample(2000, rho=rho, dim=dim, random_state=s), scale="rank"
            ).estimate
            for s in range(3)
        ]
    )
    assert abs(est - truth) < tol
    assert est < truth + 0.03


def test_ksg_is_invariant_to_monotone_maps_with_rank_scaling():
    x, y = gaussian_copula_sample(500, rho=0.7, marginals="gaussian", random_state=1)
    a = ksg_mutual_information(x, y, scale="rank").estimate
    b = ksg_mutual_information(np.exp(x), y**3 + 2 * y, scale="rank").estimate
    assert a == pytest.approx(b, abs=1e-12)


@pytest.mark.parametrize("q", [0.6, 0.75, 0.9])
def test_ksg_on_correlated_bernoulli(q):
    # every point has >= k copies: Gao et al.'s rule, a plug-in estimate with psi in place of
    # log; sd at n = 2000 is ~sqrt(var/n) <= 0.01, so 0.02 is 2 sd plus the psi offset (~1e-3)
    x, y = correlated_bernoulli_sample(2000, q=q, random_state=0)
    assert ksg_mutual_information(x, y).estimate == pytest.approx(
        correlated_bernoulli_mi(q), abs=0.02
    )


@pytest.mark.parametrize("lam0", [1.0, 2.0, 4.0])
def test_ksg_on_shared_poisson(lam0):
    # mixed regime (rare cells fall back to KSG counts on the lattice); measured bias is
    # -0.01 to -0.02 at n = 2000 and seed sd ~0.01: tolerance 0.04
    x, y = shared_poisson_sample(2000, lam0=lam0, random_state=0)
    assert ksg_mutual_information(x, y).estimate == pytest.approx(shared_poisson_mi(lam0), abs=0.04)


def test_ksg_near_zero_on_independent_data_and_interval_covers():
    x, y = gaussian_copula_sample(1000, rho=0.0, dim=2, random_state=4)
    res = ksg_mutual_information(x, y)
    assert isinstance(res, MutualInformationResult)
    # KSG is nearly unbiased at independence; 0.03 is ~3 sd at n = 1000
    assert abs(res.estimate) < 0.03
    assert res.conf_low < res.estimate < res.conf_high
    assert list(res.tidy()["term"]) == ["mutual_information"]
    assert res.conf_int().loc["mutual_information", "upper"] == res.conf_high
    # a narrower level from the same standard error
    assert res.conf_int(0.2).loc["mutual_information", "upper"] < res.conf_high


def test_permutation_test_size_and_power():
    x, y = gaussian_copula_sample(200, rho=0.0, random_state=5)
    null = ksg_independence_test(x, y, n_resamples=99, random_state=0)
    assert null.pvalue > 0.05
    x, y = gaussian_copula_sample(200, rho=0.5, random_state=5)
    alt = ksg_independence_test(x, y, n_resamples=99, random_state=0)
    assert alt.pvalue == pytest.approx(0.01)  # the smallest p-value of 99 permutations
    assert alt.null_distribution.shape == (99,)
    again = ksg_independence_test(x, y, n_resamples=99, random_state=0)
    assert np.array_equal(again.null_distribution, alt.null_distribution)


def test_inputs_are_not_modified_and_bad_inputs_are_named():
    x, y = gaussian_copula_sample(50, rho=0.5, random_state=0)
    x0, y0 = x.copy(), y.copy()
    ksg_mutual_information(x, y, scale="rank")
    assert np.array_equal(x, x0) and np.array_equal(y, y0)
    with pytest.raises(ValueError, match="`x`.*`y`|same"):
        ksg_mutual_information(x, y[:-1])
    with pytest.raises(ValueError, match="`k`"):
        ksg_mutual_information(x, y, k=50)
    bad = x.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="`x`"):
        ksg_mutual_information(bad, y)
    with pytest.raises(ValueError, match="`scale`"):
        ksg_mutual_information(x, y, scale="minmax")


def test_non_gaussian_truths_agree_with_monte_carlo_on_the_exact_densities():
    """Each design's MI against an independent Monte Carlo mean of its log density ratio.

    The densities are written out here (scipy's normal and t densities; the squared design's
    p(y) by adaptive quadrature at each draw), not taken from the quadrature behind the truth.
    """
    from scipy import integrate, stats

    from statcore.geometry.mi_designs import (
        crossed_mixture_mi,
        crossed_mixture_sample,
        squared_noise_mi,
        squared_noise_sample,
        student_t_mi,
        student_t_sample,
    )

    x, y = crossed_mixture_sample(100_000, rho=0.9, random_state=0)
    x, y, s = x[:, 0], y[:, 0], np.sqrt(1 - 0.81)
    cond = 0.5 * (stats.norm.pdf(y, 0.9 * x, s) + stats.norm.pdf(y, -0.9 * x, s))
    ratio = np.log(cond) - stats.norm.logpdf(y)
    # MC standard error of the mean log ratio: ~0.002; 5 of them
    assert crossed_mixture_mi(0.9) == pytest.approx(ratio.mean(), abs=5 * ratio.std() / 316)

    x, y = student_t_sample(100_000, rho=0.5, dof=3.0, random_state=1)
    joint = stats.multivariate_t(np.zeros(2), [[1, 0.5], [0.5, 1]], df=3).logpdf(np.c_[x, y])
    ratio = joint - stats.t.logpdf(x[:, 0], 3) - stats.t.logpdf(y[:, 0], 3)
    assert student_t_mi(0.5, 3.0) == pytest.approx(ratio.mean(), abs=5 * ratio.std() / 316)

    x, y = squared_noise_sample(400, sigma=0.5, random_state=2)

    def marginal(v):
        return integrate.quad(lambda a: stats.norm.pdf(a) * stats.norm.pdf(v, a * a, 0.5),
                              -9, 9, points=[0.0], limit=200)[0]  # fmt: skip

    ratio = stats.norm.logpdf(y[:, 0], x[:, 0] ** 2, 0.5) - np.log([marginal(v) for v in y[:, 0]])
    # 400 draws: standard error ~0.04; 5 of them
    assert squared_noise_mi(0.5) == pytest.approx(ratio.mean(), abs=5 * ratio.std() / 20)
