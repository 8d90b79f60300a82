"""Seeded simulations: size, the dCov contrast, power, multipliers, unbiasedness, null quantile.

Replicate counts are chosen for a Monte Carlo standard error that makes each check decisive
while keeping this file at about a minute on two cores.
"""

import importlib

import numpy as np
from scipy import stats

from statcore.distributed import MonteCarloStudy
from statcore.manifold import Euclidean, Sphere, frechet_mean, mmdd, mmdd_test, simulate

mmdd_module = importlib.import_module("statcore.manifold.mmdd")


def _study(grid, n_rep, seed):
    return MonteCarloStudy(simulate.replicate, grid, n_rep=n_rep, random_state=seed).run()


def test_size_on_the_heteroscedastic_sphere_null_and_uniform_pvalues():
    # R = 1000, B = 199: the rejection rate has MC sd 0.0069; [0.029, 0.071] is +-3 sd (a
    # +-2 sd band fails one seed in 20 for an exact test; this seed gives 0.067, two other
    # seeds gave 0.056 and 0.045)
    res = _study(
        {"manifold": "sphere", "design": "heteroscedastic", "n": 100, "n_resamples": 199}, 1000, 11
    )
    pvalues = res.replicates["pvalue"].to_numpy()
    rate = np.mean(pvalues <= 0.05)
    assert 0.029 <= rate <= 0.071, rate
    # p-values on a grid of 1/200: KS against U(0, 1) with a jitter inside each cell
    jitter = pvalues - np.random.default_rng(0).uniform(0, 1 / 200, len(pvalues))
    assert stats.kstest(jitter, "uniform").pvalue > 0.01


def test_dcov_over_rejects_where_mmdd_holds_its_level():
    # R = 200 per cell: sd <= 0.035; dCov's rate (about 0.55) is far above 0.40, MMDD's near 0.05
    res = _study(
        {
            "manifold": "sphere",
            "design": "heteroscedastic",
            "n": 100,
            "test": ["mmdd", "dcov"],
            "n_resamples": 199,
        },
        200,
        12,
    )
    rates = res.rejection_rate(alpha=0.05).set_index("test")["estimate"]
    assert rates["dcov"] >= 0.40 and rates["mmdd"] <= 0.09, rates


def test_power_under_mean_shift_on_three_manifolds_and_monotone_in_n():
    # R = 100: a rate of 0.95 has sd 0.022
    res = _study(
        {
            "manifold": ["sphere", "spd", "hyperbolic"],
            "design": "mean_shift",
            "n": [30, 100],
            "n_resamples": 199,
        },
        100,
        13,
    )
    rates = res.rejection_rate(alpha=0.05).set_index(["manifold", "n"])["estimate"]
    for name in ("sphere", "spd", "hyperbolic"):
        assert rates[(name, 100)] >= 0.95, rates
        assert rates[(name, 30)] <= rates[(name, 100)]
    assert rates[("sphere", 30)] < 0.95  # the grid is informative: n = 30 is not saturated


def test_multiplier_laws_agree_and_uniform_multipliers_break_the_size():
    rng = np.random.default_rng(14)
    S = Sphere(2)
    reject = {"rademacher": [], "normal": [], "uniform": []}
    for _ in range(200):
        Y, X = simulate.draw("sphere", "iid", 100, random_state=rng)
        V = S.log_coords(frechet_mean(Y, S).mean, Y)
        c = mmdd_module._centred(X[:, None], V, "u")
        T = 100 * mmdd_module._statistic(c, "u")
        laws = {
            "rademacher": mmdd_module._multipliers(rng, "rademacher", (100, 199)),
            "normal": rng.standard_normal((100, 199)),
            # the non-centred U(0, 1) draws of the jeffjyan/MDD bug
            "uniform": rng.random((100, 199)),
        }
        for name, E in laws.items():
            draws = mmdd_module._quadratic_forms(c, E) / 97
            reject[name].append((1 + np.sum(draws >= T)) / 200 <= 0.05)
    rates = {k: np.mean(v) for k, v in reject.items()}
    # the same 200 data sets: the paired difference has sd about 0.012
    assert abs(rates["rademacher"] - rates["normal"]) < 0.03, rates
    # uniform multipliers reject far too often (0.23 in a pilot run; sd of 0.05 is 0.013)
    assert rates["uniform"] > 0.12, rates


def test_u_statistic_unbiased_and_v_statistic_positive_under_independence():
    rng = np.random.default_rng(15)
    E = Euclidean(2)
    u, v = [], []
    for _ in range(2000):
        Y, X = rng.normal(size=(20, 2)), rng.normal(size=20)
        u.append(mmdd(Y, X, E))
        v.append(mmdd(Y, X, E, statistic="v"))
    se_u = np.std(u) / np.sqrt(2000)
    # the U-statistic's mean is 0 (flat: the estimated mean does not bias it) within 3 SE
    assert abs(np.mean(u)) < 3 * se_u
    assert np.mean(v) > 10 * np.std(v) / np.sqrt(2000)


def test_bootstrap_quantile_matches_the_monte_carlo_null():
    rng = np.random.default_rng(16)
    E = Euclidean(2)
    n = 100
    null = [n * mmdd(rng.normal(size=(n, 2)), rng.normal(size=n), E) for _ in range(2000)]
    truth = np.quantile(null, 0.95)
    boot = []
    for seed in range(15):
        Y, X = rng.normal(size=(n, 2)), rng.normal(size=n)
        res = mmdd_test(Y, X, E, n_resamples=999, random_state=seed)
        boot.append(np.quantile(res.null_distribution, 0.95))
    # median over 15 data sets of the bootstrap quantile: within 10% of the MC quantile
    # (whose own MC error at 2000 draws is about 3%)
    assert abs(np.median(boot) / truth - 1) < 0.10, (np.median(boot), truth)


def test_estimated_frechet_mean_keeps_the_size_of_the_oracle_on_curved_nulls():
    # The bootstrap treats the estimated Fréchet mean as known. On the heteroscedastic null of
    # each curved manifold at n = 30, the test at the estimated mean and the oracle test at the
    # true mean mu0 see the same data and multipliers (paired): the estimated-mean size stays in
    # the +-3 MC sd band of an exact test (R = 300: sd 0.0126, band [0.012, 0.088]), and the two
    # tests' decisions differ in almost no replicate (measured: none of 300 on each manifold;
    # at most 3 allowed), so their rates differ by at most 0.01. A size effect of the estimate
    # as large as one MC sd (0.0126) would need about 4 replicates to flip, all one way.
    R, B, n = 300, 99, 30
    for name in simulate.MANIFOLDS:
        rng = np.random.default_rng([17, len(name)])
        space, mu0 = simulate.make_manifold(name), simulate.centre(name)
        estimated, oracle = [], []
        for _ in range(R):
            Y, X = simulate.draw(name, "heteroscedastic", n, random_state=rng)
            seed = int(rng.integers(2**31))
            estimated.append(mmdd_test(Y, X, space, n_resamples=B, random_state=seed).pvalue)
            oracle.append(
                mmdd_test(Y, X, space, n_resamples=B, base_point=mu0, random_state=seed).pvalue
            )
        est, orc = np.array(estimated) <= 0.05, np.array(oracle) <= 0.05
        assert 0.012 <= est.mean() <= 0.088, (name, est.mean())
        assert np.sum(est != orc) <= 3, (
            name,
            est.mean(),
            orc.mean(),
            np.sum(est != orc),
        )
