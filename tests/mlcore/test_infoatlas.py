"""mlcore.mi: the InfoAtlas estimator (shipped checkpoint), its DV head, and the baselines."""

import math
from importlib import resources

import numpy as np
import pytest
import torch
from scipy import stats

from mlcore.mi import (
    InfoAtlas,
    critic_mutual_information,
    dv_readout,
    independence_test,
    mutual_information,
)
from mlcore.mi.infoatlas import gaussian_log_ratio
from statcore.geometry.mi_designs import (
    correlated_bernoulli_mi,
    correlated_bernoulli_sample,
    crossed_mixture_mi,
    crossed_mixture_sample,
    gaussian_copula_mi,
    gaussian_copula_sample,
    shared_poisson_mi,
    shared_poisson_sample,
    squared_noise_mi,
    squared_noise_sample,
    student_t_mi,
    student_t_sample,
)
from statcore.results import TestResult


@pytest.fixture(scope="module")
def atlas():
    return InfoAtlas.pretrained()


def _mean_estimate(atlas, sampler, seeds=3):
    return np.mean(
        [atlas.estimate(*sampler(s), n_resamples=0, random_state=s).estimate for s in range(seeds)]
    )


def test_checkpoint_is_small_and_loads():
    ref = resources.files("mlcore.mi").joinpath("infoatlas_small.pt")
    with resources.as_file(ref) as path:
        assert path.stat().st_size < 2**20  # "a few MB at most"; it is ~0.2 MB
        blob = torch.load(path, weights_only=True)
    assert blob["settings"]["random_state"] == 0
    assert blob["config"]["max_dim"] == 5


def test_dv_head_returns_the_true_mi_with_the_true_density_ratio():
    rho, n = 0.8, 20_000
    x, y = gaussian_copula_sample(n, rho=rho, marginals="gaussian", random_state=0)
    z = torch.as_tensor(np.c_[x, y], dtype=torch.float64).unsqueeze(0)

    def true_log_ratio(w):
        a, b = w[..., 0], w[..., 1]
        quad = (rho**2 * a**2 - 2 * rho * a * b + rho**2 * b**2) / (2 * (1 - rho**2))
        return -0.5 * math.log(1 - rho**2) - quad

    est = float(dv_readout(true_log_ratio, z, 1, 10, torch.Generator().manual_seed(0)))
    # with the true ratio, mean T estimates MI (sd ~ sqrt(var T / n) = 0.008) and the log mean
    # exp of the product term is ~0 (sd ~ 0.01): 0.03 is ~2.5 sd of their difference
    assert est == pytest.approx(gaussian_copula_mi(rho), abs=0.03)


def test_gaussian_head_is_the_exact_gaussian_ratio():
    # for a population correlation matrix the head's quadratic form is the Gaussian log ratio
    rho = 0.6
    r = torch.tensor([[1.0, rho], [rho, 1.0]], dtype=torch.float64)
    z = torch.linalg.cholesky(r).T.unsqueeze(0) * math.sqrt(2)  # z'z / n = R exactly (n = 2)
    q = gaussian_log_ratio(z, 1, ridge=0.0)[0]
    expected = -0.5 * (torch.linalg.inv(r) - torch.eye(2))
    assert torch.allclose(q, expected, atol=1e-12)


# Shipped checkpoint vs the notes' ground truths, mean of 3 seeds at n = 2000, Gaussian head
# off. Measured errors (this checkpoint, these seeds): copulas -0.011 / -0.014 / -0.009 /
# +0.001, Bernoulli +0.002 / -0.002 / -0.000, Poisson -0.007 / -0.001 / -0.007. The tolerances
# are those of the previous checkpoint (its errors rounded up plus ~3 sd of a 3-seed mean), kept
# so that a retrained checkpoint at least as good passes.
@pytest.mark.parametrize(
    ("rho", "dim", "tol"), [(0.5, 1, 0.03), (0.8, 1, 0.04), (0.2, 5, 0.05), (0.5, 5, 0.08)]
)
def test_pretrained_on_gaussian_copulas(atlas, rho, dim, tol):
    est = _mean_estimate(
        atlas, lambda s: gaussian_copula_sample(2000, rho=rho, dim=dim, random_state=s)
    )
    assert est == pytest.approx(gaussian_copula_mi(rho, dim), abs=tol)


@pytest.mark.parametrize(("q", "tol"), [(0.6, 0.03), (0.75, 0.03), (0.9, 0.12)])
def test_pretrained_on_correlated_bernoulli(atlas, q, tol):
    est = _mean_estimate(atlas, lambda s: correlated_bernoulli_sample(2000, q=q, random_state=s))
    assert est == pytest.approx(correlated_bernoulli_mi(q), abs=tol)
    assert est > 0.0


@pytest.mark.parametrize(("lam0", "tol"), [(1.0, 0.03), (2.0, 0.04), (4.0, 0.05)])
def test_pretrained_on_shared_poisson(atlas, lam0, tol):
    est = _mean_estimate(atlas, lambda s: shared_poisson_sample(2000, lam0=lam0, random_state=s))
    assert est == pytest.approx(shared_poisson_mi(lam0), abs=tol)


NON_GAUSSIAN = {
    "squared 0.3": (lambda: squared_noise_mi(0.3), squared_noise_sample, {"sigma": 0.3}),
    "squared 0.5": (lambda: squared_noise_mi(0.5), squared_noise_sample, {"sigma": 0.5}),
    "squared 1.0": (lambda: squared_noise_mi(1.0), squared_noise_sample, {"sigma": 1.0}),
    "crossed 0.9": (lambda: crossed_mixture_mi(0.9), crossed_mixture_sample, {"rho": 0.9}),
    "student 0.5/3": (lambda: student_t_mi(0.5, 3), student_t_sample, {"rho": 0.5, "dof": 3}),
    "student 0.8/2": (lambda: student_t_mi(0.8, 2), student_t_sample, {"rho": 0.8, "dof": 2}),
}


@pytest.mark.parametrize("design", list(NON_GAUSSIAN))
def test_learned_critic_alone_on_non_gaussian_dependence(atlas, design):
    """The issue's criterion: the learned critic, Gaussian head off, within 0.15 nats of the
    truth at n = 5000 (mean of 3 seeds) where a correlation sees little or nothing.

    Measured, shipped checkpoint (estimate minus truth): y = x^2 + s e with s = 0.3 / 0.5 / 1.0:
    -0.046 / -0.031 / -0.032; crossed mixture rho = 0.9: -0.137; bivariate t (0.5, 3 dof):
    -0.031, (0.8, 2 dof): -0.038. KSG (k = 3) on the same: within 0.02 of each. Out of reach:
    y = x^2 + 0.1 e (MI 1.99) comes out 0.28 low, a sharper ridge than the 32-cell grids hold.
    """
    truth_of, sampler, params = NON_GAUSSIAN[design]
    truth = truth_of()
    est = _mean_estimate(atlas, lambda s: sampler(5000, random_state=s, **params))
    assert est == pytest.approx(truth, abs=0.15)
    # a critic that only saw the correlation would report the Gaussian-copula MI of the
    # normal scores: for the squared and crossed designs that is near 0, far from the truth
    if design.startswith(("squared", "crossed")):
        x, y = sampler(5000, random_state=0, **params)
        scores = stats.norm.ppf(stats.rankdata(np.c_[x, y], axis=0) / 5001)
        gaussian = -0.5 * np.log1p(-(np.corrcoef(scores.T)[0, 1] ** 2))
        assert gaussian < 0.1 < truth - 0.15


def test_gaussian_head_is_optional_and_reported(atlas):
    x, y = student_t_sample(2000, rho=0.5, dof=3, random_state=0)
    off = atlas.estimate(x, y, n_resamples=0, random_state=0)
    on = atlas.estimate(x, y, n_resamples=0, random_state=0, gaussian_head=True)
    assert "Gaussian head" in on.method and "Gaussian head" not in off.method
    assert on.fit_options["gaussian_head"] and not off.fit_options["gaussian_head"]
    assert on.estimate != off.estimate
    with pytest.raises(TypeError, match="`gaussian_head`"):
        atlas.estimate(x, y, gaussian_head="yes")
    with pytest.raises(ValueError, match="`folds`"):
        atlas.estimate(x, y, folds=1)


def test_invariant_to_monotone_marginal_maps(atlas):
    x, y = gaussian_copula_sample(1000, rho=0.7, dim=2, marginals="gaussian", random_state=1)
    a = atlas.estimate(x, y, n_resamples=0, random_state=3).estimate
    b = atlas.estimate(np.exp(x), y**3 + y, n_resamples=0, random_state=3).estimate
    # the network sees only ranks, and the same seed draws the same padding and permutations
    assert a == pytest.approx(b, abs=1e-5)


def test_invariant_to_padding_with_independent_columns(atlas):
    x, y = gaussian_copula_sample(2000, rho=0.8, random_state=2)
    noise = np.random.default_rng(0).standard_normal((2000, 2))
    a = _mean_estimate(atlas, lambda s: (x, y))
    b = _mean_estimate(atlas, lambda s: (np.c_[x, noise], y))
    # the padded input is what the network sees anyway, up to which noise: MC noise only
    assert a == pytest.approx(b, abs=0.03)


def test_near_zero_on_independent_data(atlas):
    for dim in (1, 5):
        est = _mean_estimate(
            atlas, lambda s, d=dim: gaussian_copula_sample(2000, rho=0.0, dim=d, random_state=s)
        )
        # the bound is read on folds the critic was not decoded from: a noisy critic pulls it
        # slightly below 0 (measured -0.000 at d = 1, -0.014 at d = 5)
        assert abs(est) < 0.02


def test_interval_and_sliced_high_dimension(atlas):
    x, y = gaussian_copula_sample(500, rho=0.6, dim=1, random_state=0)
    res = atlas.estimate(x, y, n_resamples=10, random_state=0)
    assert res.conf_low < res.estimate < res.conf_high
    assert res.replicates.shape == (10,)
    x, y = gaussian_copula_sample(400, rho=0.5, dim=7, random_state=0)
    sliced = atlas.estimate(x, y, n_resamples=0, slices=4, random_state=0)
    assert "sliced" in sliced.method
    # k-sliced MI with k = 5 of 7 is positive and below the full MI
    assert 0.0 < sliced.estimate < gaussian_copula_mi(0.5, 7) + 0.05


def test_training_is_seeded_and_reproducible():
    kw = {"steps": 3, "batch_size": 2, "n_samples": (40, 50), "grid": 8, "channels": 4}
    a = InfoAtlas.train(random_state=7, **kw)
    b = InfoAtlas.train(random_state=7, **kw)
    for (name, p), q in zip(a.net.state_dict().items(), b.net.state_dict().values(), strict=True):
        assert torch.equal(p, q), name
    assert a.training_result.converged
    assert np.isfinite(a.training_result.history["loss"]).all()


def test_follows_the_inputs_device(atlas, device):
    x, y = gaussian_copula_sample(300, rho=0.7, random_state=0)
    xt = torch.as_tensor(x, device=device)
    yt = torch.as_tensor(y, device=device)
    model = InfoAtlas.pretrained(device=device)
    res = model.estimate(xt, yt, n_resamples=0, random_state=0)
    ref = atlas.estimate(x, y, n_resamples=0, random_state=0)
    # the same draws (made on the CPU); float32 kernels differ across devices by ~1e-6
    assert res.estimate == pytest.approx(ref.estimate, abs=1e-4)


@pytest.mark.parametrize("method", ["mine", "infonce", "smile"])
def test_trained_baselines_on_the_bivariate_gaussian(method):
    x, y = gaussian_copula_sample(1000, rho=0.8, random_state=0)
    res = critic_mutual_information(
        x, y, method=method, maxiter=300, hidden=32, batch_size=64, random_state=0
    )
    # short training (300 steps) on 500 rows, read on 500 held-out rows: measured errors are
    # within 0.1 of 0.51 for all three; held-out reads are lower bounds, so no big overshoot
    assert res.estimate == pytest.approx(0.5108, abs=0.15)
    assert res.estimate < 0.5108 + 0.08
    assert res.conf_low < res.estimate < res.conf_high


def test_api_dispatch_and_independence_tests(atlas):
    x, y = gaussian_copula_sample(300, rho=0.0, random_state=1)
    res = mutual_information(torch.as_tensor(x), torch.as_tensor(y), method="ksg")
    assert "KSG" in res.method
    null = independence_test(x, y, method="infoatlas", model=atlas, n_resamples=39, random_state=0)
    assert isinstance(null, TestResult) and null.pvalue > 0.05
    x, y = gaussian_copula_sample(300, rho=0.5, random_state=1)
    alt = independence_test(x, y, method="infoatlas", model=atlas, n_resamples=39, random_state=0)
    assert alt.pvalue == pytest.approx(1 / 40)  # the smallest p-value of 39 permutations
    crit = independence_test(
        x, y, method="smile", n_resamples=39, maxiter=150, hidden=16, batch_size=64, random_state=0
    )
    assert crit.pvalue < 0.05


def test_bad_inputs_are_named(atlas):
    x, y = gaussian_copula_sample(100, rho=0.5, random_state=0)
    x0 = x.copy()
    with pytest.raises(ValueError, match="`x`.*`y`|same"):
        mutual_information(x, y[:-1], model=atlas)
    bad = x.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="`x`"):
        mutual_information(bad, y, model=atlas)
    with pytest.raises(ValueError, match="`y`"):
        mutual_information(torch.as_tensor(x), torch.full((100, 1), math.nan), model=atlas)
    with pytest.raises(ValueError, match="`method`"):
        mutual_information(x, y, method="kde")
    mutual_information(x, y, model=atlas, n_resamples=0)
    assert np.array_equal(x, x0)
