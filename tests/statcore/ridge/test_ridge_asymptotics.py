"""Deterministic equivalents of teacher and student risk: fixed point, derivatives, isotropic
closed forms (Marchenko-Pastur), sign rule, and agreement with Monte Carlo."""

import numpy as np
import pytest
from scipy import integrate, optimize

from statcore.ridge import (
    SelfDistilledRidge,
    asymptotic_risk,
    optimal_xi,
    paper_design,
    solve_kappa,
)
from statcore.ridge.asymptotics import cross_risk

AR1 = paper_design(200, covariance="ar1", rho=0.5, random_state=2025)


@pytest.mark.parametrize("gamma", [0.2, 0.5, 1.0, 2.0, 5.0])
def test_fixed_point_residual_below_1e12(gamma):
    lam = np.geomspace(1e-4, 1e3, 40)
    for spectrum in (AR1.eigenvalues, np.ones(50), np.r_[np.zeros(20), np.geomspace(0.01, 30, 80)]):
        kappa, residual = solve_kappa(lam, gamma, spectrum)
        direct = np.abs(
            lam - kappa * (1 - gamma * np.mean(spectrum / (spectrum + kappa[:, None]), 1))
        )
        assert np.all(kappa > 0)
        assert np.all(direct <= 1e-12 * np.maximum(1.0, lam))
        np.testing.assert_allclose(residual, direct, atol=1e-15)


def test_solve_kappa_reports_its_iteration():
    lam = np.geomspace(1e-3, 10, 5)
    kappa, residual, record = solve_kappa(lam, 0.5, AR1.eigenvalues, return_record=True)
    plain = solve_kappa(lam, 0.5, AR1.eigenvalues)
    np.testing.assert_array_equal(kappa, plain[0])
    np.testing.assert_array_equal(residual, plain[1])
    assert record.converged and record.function == "solve_kappa"
    assert record.last_value <= 1e-12 and record.n_iter == len(record.history) - 1
    assert asymptotic_risk(lam, 0.0, 0.5, AR1.eigenvalues, AR1.signal, 1.0).iterations.converged


def test_solve_kappa_at_maxiter_is_not_converged():
    from statcore.exceptions import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="solve_kappa reached maxiter=1") as caught:
        *_, record = solve_kappa([1e-3], 5.0, AR1.eigenvalues, maxiter=1, return_record=True)
    assert len(caught) == 1
    assert record.status == "maxiter" and not record.converged and record.n_iter == 1


def _mp_moment(gamma, lam, power_x, power_res):
    """Integral of x^power_x / (x + lam)^power_res against the Marchenko-Pastur law of ratio gamma
    (unit variance), by quadrature of its closed-form density plus the atom at 0 when gamma > 1."""
    a, b = (1 - np.sqrt(gamma)) ** 2, (1 + np.sqrt(gamma)) ** 2

    def density(x):
        return np.sqrt((b - x) * (x - a)) / (2 * np.pi * gamma * x)

    value = integrate.quad(
        lambda x: x**power_x / (x + lam) ** power_res * density(x),
        a,
        b,
        epsabs=1e-13,
        epsrel=1e-12,
        limit=200,
    )[0]
    if gamma > 1 and power_x == 0:
        value += (1 - 1 / gamma) / lam**power_res
    return value


@pytest.mark.parametrize("gamma", [0.5, 2.0])
@pytest.mark.parametrize("lam", [0.05, 0.5, 3.0])
def test_isotropic_case_matches_marchenko_pastur(gamma, lam):
    # Sigma = I: every quadratic form of beta in the resolvent tends to ||beta||^2 times a moment
    # of the MP law, an independent route to teacher risk, its lambda-derivative and ||d beta||^2
    p, r2, sigma2 = 400, 1.7, 0.8
    signal = np.full(p, np.sqrt(r2 / p))
    res = asymptotic_risk(lam, 0.0, gamma, np.ones(p), signal, sigma2)
    teacher = r2 * lam**2 * _mp_moment(gamma, lam, 0, 2) + sigma2 * gamma * _mp_moment(
        gamma, lam, 1, 2
    )
    slope = (r2 * lam - sigma2 * gamma) * _mp_moment(gamma, lam, 1, 3)
    curvature = r2 * _mp_moment(gamma, lam, 2, 4) + sigma2 * gamma * _mp_moment(gamma, lam, 1, 4)
    # quadrature reaches ~1e-11 relative; the DE's own fixed point is solved to 1e-12
    np.testing.assert_allclose(res.teacher, teacher, rtol=1e-8)
    np.testing.assert_allclose(res.teacher_derivative, 2 * slope, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(res.cross_derivative, curvature, rtol=1e-8)
    np.testing.assert_allclose(res.xi_star, -slope / (lam * curvature), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(res.optimal_student, teacher - slope**2 / curvature, rtol=1e-8)


def test_isotropic_reference_values_and_zero_crossing():
    # values of an independent derivation, gamma = 0.5, sigma2 = r2 = 1
    p = 500
    signal = np.full(p, 1 / np.sqrt(p))
    res = asymptotic_risk([0.1, 0.25, 0.5, 1.0, 5.0], "optimal", 0.5, np.ones(p), signal, 1.0)
    np.testing.assert_allclose(res.xi_star, [1.8667, 0.7083, 0.0, -0.7083, -3.2932], atol=1e-4)
    np.testing.assert_allclose(res.teacher[[2, 3]] + 1, [1.4142, 1.4552], atol=1e-4)
    np.testing.assert_allclose(res.optimal_student[3] + 1, 1.4148, atol=1e-4)
    # the sign flips exactly at lambda_opt = gamma sigma2 / r2
    for gamma, r2, sigma2 in [(0.5, 1.0, 1.0), (2.0, 1.0, 1.0), (0.3, 2.5, 0.7)]:
        sig = np.full(p, np.sqrt(r2 / p))
        root = optimize.brentq(
            lambda lam, g=gamma, s=sig, v=sigma2: optimal_xi(lam, g, np.ones(p), s, v),
            1e-3,
            50,
            xtol=1e-14,
        )
        assert root == pytest.approx(gamma * sigma2 / r2, rel=1e-10)


def test_derivatives_match_finite_differences():
    lam = np.array([0.03, 0.3, 1.0, 4.0, 20.0])
    args = (1.5, AR1.eigenvalues, AR1.signal, 1.3)
    res = asymptotic_risk(lam, 0.0, *args)
    h = 1e-5 * lam
    up = asymptotic_risk(lam + h, 0.0, *args).teacher
    down = asymptotic_risk(lam - h, 0.0, *args).teacher
    # central differences: truncation O(h^2) ~ 1e-10 relative, rounding ~ eps / 1e-5 ~ 1e-11
    np.testing.assert_allclose(res.teacher_derivative, (up - down) / (2 * h), rtol=1e-6)
    for i, lv in enumerate(lam):
        # mixed second derivative of the off-diagonal surface, evaluated directly (no jets)
        hh = 1e-4 * lv
        mixed = (
            cross_risk(lv + hh, lv + hh, *args)
            - cross_risk(lv + hh, lv - hh, *args)
            - cross_risk(lv - hh, lv + hh, *args)
            + cross_risk(lv - hh, lv - hh, *args)
        ) / (4 * hh**2)
        assert res.cross_derivative[i] == pytest.approx(mixed, rel=1e-5)
        assert cross_risk(lv, lv, *args) == pytest.approx(res.teacher[i], rel=1e-13)


def test_sign_rule_strict_gain_and_no_gain_at_the_optimum():
    lam = np.geomspace(1e-3, 100, 200)
    args = (0.5, AR1.eigenvalues, AR1.signal, 1.0)
    res = asymptotic_risk(lam, "optimal", *args)
    moving = np.abs(res.teacher_derivative) > 1e-8
    assert np.all(np.sign(res.xi_star[moving]) == -np.sign(res.teacher_derivative[moving]))
    assert np.all(res.optimal_student[moving] < res.teacher[moving])
    assert np.all(res.optimal_student <= res.teacher)
    # an over-regularised teacher (lambda far above its optimum) wants a negative weight
    assert np.all(res.xi_star[lam > 5] < 0) and np.any(res.xi_star > 1)
    # at the stationary lambda there is nothing to gain
    star = optimize.brentq(
        lambda v: asymptotic_risk(v, 0.0, *args).teacher_derivative, 1e-3, 100, xtol=1e-14
    )
    at = asymptotic_risk(star, "optimal", *args)
    assert at.teacher - at.optimal_student <= 1e-12
    # xi_star minimises the quadratic: a brute-force grid does no better
    grid = np.linspace(-6, 6, 24001)
    brute = asymptotic_risk(np.full_like(grid, 2.0), grid, *args).student
    best = asymptotic_risk(2.0, "optimal", *args)
    assert grid[np.argmin(brute)] == pytest.approx(best.xi_star, abs=1e-3)
    assert best.optimal_student <= brute.min() + 1e-14


def _monte_carlo(design, n, lam, xi, reps, test_covariance=None):
    cov0 = design.covariance if test_covariance is None else test_covariance
    draws = []
    for seed in range(reps):
        X, y = design.sample(n, random_state=seed)
        fit = SelfDistilledRidge(y, X, penalty=lam, intercept=False).fit(xi=xi, curve_penalty=lam)
        oracle = fit.oracle_risk(design.beta, cov0)
        draws.append(np.c_[oracle["teacher"], oracle["student"]])
    draws = np.array(draws)
    return draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(reps)


@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_asymptotic_risk_agrees_with_monte_carlo(gamma):
    # p = 200 with n = 400 or 100, 30 seeds. The student is evaluated at the DE's fixed weight
    # xi*, so its Monte Carlo mean is an unbiased estimate of its expected risk and a band of 3
    # standard errors is the tolerance (observed |z| <= 1.1; the relative gaps are <= 2.4%)
    p = 200
    n = int(p / gamma)
    lam = np.array([0.05, 0.5, 2.0, 10.0])
    design = paper_design(p, random_state=2025)
    de = design.asymptotic_risk(lam, "optimal", n)
    mean, se = _monte_carlo(design, n, lam, de.xi_star, 30)
    assert np.all(np.abs(mean[:, 0] - de.teacher) <= 3 * se[:, 0])
    assert np.all(np.abs(mean[:, 1] - de.student) <= 3 * se[:, 1])
    assert np.all(de.optimal_student < de.teacher)


def test_out_of_distribution_risk_agrees_with_monte_carlo():
    # test covariance in the same eigenbasis with the eigenvalues reversed: energy moves to the
    # directions the training design saw least
    lam = np.array([0.05, 0.5, 2.0, 10.0])
    s0 = AR1.eigenvalues[::-1].copy()
    cov0 = (AR1.eigenvectors * s0) @ AR1.eigenvectors.T
    de = asymptotic_risk(lam, "optimal", 0.5, AR1.eigenvalues, AR1.signal, 1.0, test_spectrum=s0)
    in_dist = AR1.asymptotic_risk(lam, "optimal", 400)
    assert not np.allclose(de.xi_star, in_dist.xi_star, rtol=0.05)
    mean, se = _monte_carlo(AR1, 400, lam, de.xi_star, 30, test_covariance=cov0)
    assert np.all(np.abs(mean[:, 0] - de.teacher) <= 3 * se[:, 0])
    assert np.all(np.abs(mean[:, 1] - de.student) <= 3 * se[:, 1])


@pytest.mark.slow
def test_asymptotic_risk_at_n2000_p1000():
    # the size; 6 draws give a Monte Carlo standard error of about 1.5-2.5% of the risk,
    # so the check is against 3 standard errors and the relative error is also bounded by 5%
    design = paper_design(1000, random_state=7)
    lam = np.array([0.5, 2.0])
    de = design.asymptotic_risk(lam, "optimal", 2000)
    mean, se = _monte_carlo(design, 2000, lam, de.xi_star, 6)
    assert np.all(np.abs(mean[:, 0] - de.teacher) <= 3 * se[:, 0])
    assert np.all(np.abs(mean[:, 1] - de.student) <= 3 * se[:, 1])
    assert np.all(np.abs(mean[:, 1] / de.student - 1) < 0.05)


def test_optimal_xi_is_the_asymptotic_xi_star():
    lam = np.geomspace(0.01, 10, 7)
    args = (0.5, AR1.eigenvalues, AR1.signal, 1.0)
    np.testing.assert_array_equal(optimal_xi(lam, *args), asymptotic_risk(lam, 0, *args).xi_star)
    assert isinstance(optimal_xi(0.5, *args), float)


def test_bad_input_is_refused_with_clear_messages():
    s, w = AR1.eigenvalues, AR1.signal
    with pytest.raises(ValueError, match="`penalty` must be > 0"):
        asymptotic_risk(0.0, 0.0, 0.5, s, w, 1.0)
    with pytest.raises(ValueError, match="`signal` must have one coordinate"):
        asymptotic_risk(1.0, 0.0, 0.5, s, w[:-1], 1.0)
    with pytest.raises(ValueError, match="`gamma` must lie in"):
        asymptotic_risk(1.0, 0.0, -1.0, s, w, 1.0)
    with pytest.raises(ValueError, match="`spectrum` must not contain NaN"):
        asymptotic_risk(1.0, 0.0, 0.5, np.r_[s[:-1], np.nan], w, 1.0)
    with pytest.raises(ValueError, match="`xi` must be a number"):
        asymptotic_risk(1.0, "best", 0.5, s, w, 1.0)
    with pytest.raises(ValueError, match="`test_spectrum` must hold"):
        asymptotic_risk(1.0, 0.0, 0.5, s, w, 1.0, test_spectrum=s[:3])
