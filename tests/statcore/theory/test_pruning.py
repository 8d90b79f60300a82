"""statcore.theory pruning tools: the closed forms against independent references (quadrature, Owen's
T, brute-force Monte Carlo) and the simulators against the closed forms."""

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

from statcore.theory import (
    ConditionalPerceptron,
    EarlyExitResults,
    MagnitudePruning,
    PrunedReLUNetwork,
    compute_gap,
    depth_correlations,
    depth_fixed_point,
    early_exit_mass,
    excess_error,
    excess_error_exponent,
    fit_exponent,
    kappa_for_alignment,
    local_exponent,
    magnitude_prune,
    pruning_alignment,
    pruning_alignment_sd,
    relu_correlation,
    sign_disagreement,
)

# --- m(kappa) and its concentration -------------------------------------------------------------


def test_alignment_matches_published_four_decimal_values():
    # reference values to four decimals: agreement to half a unit of the last one
    assert np.allclose(pruning_alignment([0.1, 0.3, 0.5]), [0.4393, 0.7833, 0.9287], atol=5e-5)
    assert pruning_alignment(1.0) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "law, abs_law",
    [("gaussian", stats.halfnorm), ("laplace", stats.expon), ("uniform", stats.uniform)],
)
def test_alignment_closed_forms_equal_the_kept_energy_by_quadrature(law, abs_law):
    for kappa in (0.05, 0.3, 0.8):
        t = abs_law.isf(kappa)
        kept = integrate.quad(lambda x: x * x * abs_law.pdf(x), t, abs_law.support()[1])[0]
        # quad is accurate to ~1e-10 here; 1e-8 leaves room for the quantile's rounding
        assert pruning_alignment(kappa, weight_law=law) == pytest.approx(
            kept / abs_law.moment(2), abs=1e-8
        )


def test_realised_alignment_concentrates_at_the_predicted_d_to_the_minus_half_rate():
    kappas = [0.1, 0.3, 0.5]
    spreads = {}
    for d in (500, 8000):
        res = MagnitudePruning(d=d).simulate(kappas, n_reps=60, n_inputs=10, random_state=d)
        reps = res.replicates[res.replicates["quantity"] == "alignment"]
        sd_hat = reps.groupby("kappa")["value"].std().to_numpy()
        sd = pruning_alignment_sd(kappas, d)
        # the sample sd of 60 replicates is within ~ +-18 % (1/sqrt(2 * 59)) of the truth:
        # a 45 % band is over 2.5 of those standard errors on each of the six cells
        assert np.all(np.abs(sd_hat / sd - 1) < 0.45), (d, sd_hat, sd)
        mean = reps.groupby("kappa")["value"].mean().to_numpy()
        # the mean of 60 draws is within 4 standard errors of m (the O(1/d) bias of the
        # order statistic is far below that)
        assert np.all(np.abs(mean - pruning_alignment(kappas)) < 4 * sd / np.sqrt(60))
        spreads[d] = sd_hat
    # 16 times the dimension, a quarter of the spread (the same +-18 % noise on each side)
    ratio = spreads[500] / spreads[8000]
    assert np.all((ratio > 2.5) & (ratio < 6.4)), ratio


def test_alignment_sd_is_the_brute_force_spread():
    rng = np.random.default_rng(1)
    d, kappa = 4000, 0.2
    k = round(kappa * d)
    draws = []
    for _ in range(400):
        energy = np.sort(rng.standard_normal(d) ** 2)[::-1]
        draws.append(energy[:k].sum() / energy.sum())
    # 400 draws estimate an sd to +-3.5 %; 12 % is over 3 of those
    assert np.std(draws, ddof=1) == pytest.approx(pruning_alignment_sd(kappa, d), rel=0.12)


# --- sign disagreement ----------------------------------------------------------------------------


def test_disagreement_follows_the_realised_alignment():
    # a concentration check at d = 1000, kappa = 0.2
    res = MagnitudePruning(d=1000).simulate(0.2, n_reps=4, n_inputs=20_000, random_state=0)
    row = res.tidy().set_index("term").loc["disagreement"]
    p = row["theory_realised"]
    # 80,000 inputs: binomial standard error sqrt(p(1 - p) / n) ~ 1.4e-3; allow 4 of them
    assert abs(row["estimate"] - p) < 4 * np.sqrt(p * (1 - p) / 80_000)
    assert sign_disagreement(np.sqrt(pruning_alignment(0.2))) == pytest.approx(0.2016, abs=5e-5)


def test_magnitude_prune_keeps_the_largest_magnitudes_and_leaves_the_input_alone():
    w = np.array([[0.1, -3.0, 2.0, -0.5], [1.0, 0.2, -0.3, 4.0]])
    before = w.copy()
    out = magnitude_prune(w, 0.5)
    assert np.array_equal(out, [[0.0, -3.0, 2.0, 0.0], [1.0, 0.0, 0.0, 4.0]])
    assert np.array_equal(w, before)
    assert np.array_equal(magnitude_prune(w[0], 0.25), [0.0, -3.0, 0.0, 0.0])


# --- early exit --------------------------------------------------------------------------------


def test_excess_error_equals_plain_quadrature_and_owens_t():
    rho = 0.8
    sigma = np.sqrt(1 - rho**2)

    def integrand(s):
        return 2 * stats.norm.pdf(s / rho) / rho * stats.norm.sf(s / sigma)

    reference = integrate.quad(integrand, 1.0, np.inf, epsabs=0, epsrel=1e-12)[0]
    assert excess_error(1.0, rho) == pytest.approx(reference, rel=1e-9)
    assert excess_error(1.0, rho) == pytest.approx(3.845e-3, abs=5e-7)  # a 4-digit reference value
    # closed form (derived for this test): E = Phi_bar(a) - 2 T(a, rho / sigma), a = tau / rho;
    # it cancels catastrophically in the far tail, so it is used for moderate tau only
    for tau in (0.0, 0.5, 1.0, 2.0):
        a = tau / rho
        owen = stats.norm.sf(a) - 2 * special.owens_t(a, rho / sigma)
        assert excess_error(tau, rho) == pytest.approx(owen, rel=1e-8)
    assert excess_error(0.0, rho) == pytest.approx(sign_disagreement(rho), rel=1e-10)


def test_excess_error_and_exit_mass_agree_with_brute_force_monte_carlo():
    rng = np.random.default_rng(7)
    rho, tau, n = 0.8, 1.0, 2_000_000
    h_s = rho * rng.standard_normal(n)
    h = h_s + np.sqrt(1 - rho**2) * rng.standard_normal(n)
    early = np.abs(h_s) > tau
    for estimate, p in (
        (np.mean(early & (np.sign(h_s) != np.sign(h))), excess_error(tau, rho)),
        (np.mean(early), early_exit_mass(tau, rho)),
    ):
        # 4 binomial standard errors (4.4e-5 for E ~ 3.8e-3, 2.9e-4 for g ~ 0.21)
        assert abs(estimate - p) < 4 * np.sqrt(p * (1 - p) / n)


def test_conditional_perceptron_simulation_matches_the_theory_at_realised_alignment():
    model = ConditionalPerceptron(rho=0.8, d=400)
    assert pruning_alignment(model.kappa) == pytest.approx(0.64, rel=1e-10)
    res = model.simulate([0.5, 1.0, 1.5], n_reps=4, n_inputs=60_000, random_state=3)
    assert isinstance(res, EarlyExitResults)
    table = res.tidy()
    n = 4 * 60_000
    for _, row in table.iterrows():
        p = row["theory_realised"]
        scale = 1 - model.kappa if row["term"] == "compute_gap" else 1.0
        # the realised theory is exact given the weights (Gaussian inputs), so only the
        # binomial noise of n inputs remains: 4.5 of its standard errors (9 cells)
        assert abs(row["estimate"] - p) <= 4.5 * scale * np.sqrt(p / scale * (1 - p / scale) / n)
    # d = 400 moves the realised rho^2 by ~0.015 (pruning_alignment_sd), which moves E(1) by a
    # few per cent; 15 % bounds the asymptotic curve's distance to the simulated one
    e1 = table.set_index(["tau", "term"]).loc[(1.0, "excess_error")]
    assert e1["estimate"] == pytest.approx(3.845e-3, rel=0.15)
    assert res.fit_options["n_reps"] == 4 and res.fit_options["random_state"] == 3


@pytest.mark.parametrize("rho", [0.6, 0.8, 0.9])
def test_fitted_exponent_at_large_tau_is_one_over_one_minus_rho_squared(rho):
    taus = np.linspace(3.0, 6.0, 13)
    slope = fit_exponent(compute_gap(taus, rho, 0.3), excess_error(taus, rho))
    # the 10 %: polylogarithmic corrections still bend the curve at tau ~ 3-6
    assert slope == pytest.approx(excess_error_exponent(rho), rel=0.10)
    # the local slope converges from the side the tails predict and gets closer with tau
    local = local_exponent([2.0, 4.0, 8.0], rho)
    gaps = np.abs(local - excess_error_exponent(rho))
    assert gaps[0] > gaps[1] > gaps[2]


def test_exponent_diverges_as_alignment_tends_to_one():
    exps = excess_error_exponent([0.5, 0.9, 0.99, 0.999])
    assert np.all(np.diff(exps) > 0) and exps[-1] > 500


def test_results_exponent_from_theory_and_simulation():
    res = ConditionalPerceptron(rho=0.6, d=300).simulate(
        [0.5, 1.0, 1.5, 2.0], n_reps=3, n_inputs=40_000, random_state=5
    )
    theory = res.exponent(1.0, source="theory")
    # over tau in [1, 2] the theory's fitted slope is still ~5 % above its limit 1.5625
    assert theory == pytest.approx(1.5625, rel=0.10)
    # few early disagreements at tau = 2 (~100): the simulated slope is looser, 20 %
    assert res.exponent(1.0) == pytest.approx(theory, rel=0.20)


# --- depth -------------------------------------------------------------------------------------


def test_depth_recursion_matches_reference_values_and_its_fixed_point():
    c = depth_correlations(0.3, 60)
    assert np.allclose(c[:5], [0.885, 0.794, 0.728, 0.682, 0.652], atol=5e-4)
    assert np.all(np.diff(c) < 0)
    assert c[-1] == pytest.approx(depth_fixed_point(0.3), abs=1e-6)
    assert depth_fixed_point(1.0) == 1.0
    # k(c) against the Gaussian expectation it stands for (quadrature over one angle)
    for corr in (-0.5, 0.3, 0.9):

        def relu_product(theta, corr=corr):
            u, v = np.cos(theta), corr * np.cos(theta) + np.sqrt(1 - corr**2) * np.sin(theta)
            return max(u, 0) * max(v, 0) / (2 * np.pi)

        # E[relu(U) relu(V)] = E[R^2] * (angular mean) = 2 * (angular mean); E[relu^2] = 1/2
        value = 2 * integrate.quad(relu_product, 0, 2 * np.pi, limit=200)[0] / 0.5
        assert relu_correlation(corr) == pytest.approx(value, abs=1e-8)


def test_depth_recursion_within_002_of_a_width_2000_network():
    net = PrunedReLUNetwork(0.3, 5, width=2000)
    res = net.simulate(n_reps=3, n_inputs=4, random_state=11)
    table = res.tidy()
    # the 0.02: one width-2000 network's layer correlation fluctuates by ~0.01
    # (measured over 6 networks); the mean of 3 networks is ~0.006, so 0.02 is > 3 of those
    assert np.all(np.abs(table["estimate"] - table["theory"]) < 0.02), table
    assert list(table["layer"]) == [1, 2, 3, 4, 5]


def test_deep_early_exit_follows_the_single_neuron_law_at_the_layer_correlation():
    net = PrunedReLUNetwork(0.3, 4, width=1000)
    predicted = net.predict(0.5)
    # the exponent 1 / (1 - c_l^2) falls with depth: early exit gets harder as distortion grows
    assert np.all(np.diff(predicted["exponent"]) < 0)
    table = net.simulate(tau=0.5, n_reps=3, n_inputs=4, random_state=2).tidy().set_index("term")
    # a width-1000 network's layer correlation scatters by ~0.015 (sqrt 2 times the width-2000
    # value measured over 6 networks); through dE/dc ~ -0.12 and dg/dc ~ 0.63 at tau = 0.5 that
    # is ~0.002 in E and ~0.01 in g per network: 0.005 and 0.02 are > 4 standard errors of
    # the mean of 3 networks
    e, g = table.loc["excess_error"], table.loc["early_exit_mass"]
    assert np.all(np.abs(e["estimate"] - e["theory"]) < 0.005), e
    assert np.all(np.abs(g["estimate"] - g["theory"]) < 0.02), g


# --- results -----------------------------------------------------------------------------------


def test_results_report_and_plot():
    import matplotlib

    matplotlib.use("Agg")
    res = MagnitudePruning(d=300).simulate([0.2, 0.6], n_reps=3, n_inputs=200, random_state=0)
    table = res.tidy(alpha=0.1)
    assert list(table.columns[:3]) == ["kappa", "term", "theory"]
    assert np.all(table["conf_low"] <= table["estimate"]) and np.all(
        table["estimate"] <= table["conf_high"]
    )
    assert "d" in res.glance().columns and "One-shot" in str(res.summary())
    assert len(res.plot()) == 2
    ee = ConditionalPerceptron(kappa=0.3, d=200).simulate(
        [0.5, 1.0], n_reps=2, n_inputs=2000, random_state=0
    )
    ee.plot("tradeoff")
    PrunedReLUNetwork(0.5, 2, width=50).simulate(n_reps=2, random_state=0).plot()
    assert isinstance(MagnitudePruning().predict(0.5), pd.DataFrame)
    assert repr(ConditionalPerceptron(kappa=0.3)).startswith("ConditionalPerceptron(kappa=0.3")


def test_same_seed_same_simulation():
    a = MagnitudePruning(d=200).simulate([0.3], n_reps=2, n_inputs=50, random_state=4)
    b = MagnitudePruning(d=200).simulate([0.3], n_reps=2, n_inputs=50, random_state=4)
    assert a.replicates.equals(b.replicates)


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pruning_alignment(0.0), r"`kappa` must lie in \(0, 1\]; got 0.0"),
        (lambda: pruning_alignment([0.2, 1.5]), r"`kappa` must lie in \(0, 1\]; got 1.5"),
        (lambda: pruning_alignment(0.2, weight_law="cauchy"), "`weight_law` must be one of"),
        (lambda: excess_error(1.0, 1.0), r"`rho` must lie in \(0, 1\); got 1.0"),
        (lambda: excess_error(1.0, -0.2), r"`rho` must lie in \(0, 1\)"),
        (lambda: excess_error(-1.0, 0.5), r"`tau` must lie in \[0, inf\]"),
        (lambda: excess_error(np.nan, 0.5), "`tau` must be finite"),
        (lambda: sign_disagreement(1.2), r"`rho` must lie in \[-1, 1\]"),
        (lambda: compute_gap(1.0, 0.5, 0.0), r"`kappa` must lie in \(0, 1\]"),
        (lambda: depth_correlations(0.3, 0), "`depth` must lie in"),
        (lambda: kappa_for_alignment(1.0), "`rho` must lie in"),
        (lambda: MagnitudePruning(d=1), "`d` must lie in"),
        (lambda: MagnitudePruning(d=100).simulate(0.001), "keeps no weight of `d`=100"),
        (lambda: MagnitudePruning().simulate(0.3, n_reps=1), "`n_reps` must lie in"),
        (lambda: ConditionalPerceptron(), "exactly one of `kappa` and `rho`"),
        (lambda: ConditionalPerceptron(kappa=0.3, rho=0.5), "exactly one of `kappa` and `rho`"),
        (lambda: ConditionalPerceptron(kappa=1.0), "`kappa` must be below 1"),
        (lambda: ConditionalPerceptron(rho=1.2), "`rho` must lie in"),
        (lambda: PrunedReLUNetwork(1.2, 3), r"`kappa` must lie in \(0, 1\]"),
        (lambda: PrunedReLUNetwork(0.3, 3, width=1), "`width` must lie in"),
        (lambda: PrunedReLUNetwork(1.0, 3).predict(0.5), "`tau` needs kappa < 1"),
        (lambda: PrunedReLUNetwork(0.3, 3).predict(-0.5), r"`tau` must lie in \[0, inf\]"),
        (lambda: fit_exponent([1.0, 0.5], [0.1, -0.1]), "`error` must be positive"),
        (lambda: magnitude_prune(np.ones((2, 2, 2)), 0.5), "`weights` must be 1-D or 2-D"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_kappa_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="`kappa` must be a real number"):
        PrunedReLUNetwork("0.3", 2)
    with pytest.raises(ValueError, match="`tau_min`=5 leaves fewer than 2 thresholds"):
        ConditionalPerceptron(kappa=0.3, d=100).simulate(
            [0.5, 1.0], n_reps=2, n_inputs=100, random_state=0
        ).exponent(5.0)
