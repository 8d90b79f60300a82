"""E-step kernels against independent references: scipy and adaptive quadrature."""

import numpy as np
import pytest
from scipy import integrate, special, stats

from statcore.quantized import _ecm, _kernels
from statcore.quantized._boxes import box_estep
from statcore.quantized.mixing import gig_moment, gig_nodes, gig_params, mixing_nodes


def random_cells(rng, n):
    a = rng.normal(scale=2.0, size=n)
    b = a + rng.exponential(1.0, size=n)
    a[rng.random(n) < 0.15] = -np.inf
    b[rng.random(n) < 0.15] = np.inf
    return np.ascontiguousarray(a), np.ascontiguousarray(b)


def test_log_ndtr_diff_and_ndtri_against_scipy(rng):
    a, b = random_cells(rng, 300)
    ref = np.log(special.ndtr(b) - special.ndtr(a))
    mine = np.array([_kernels.log_ndtr_diff(x, y) for x, y in zip(a, b, strict=True)])
    np.testing.assert_allclose(mine, ref, rtol=1e-10, atol=1e-12)
    # far tails, where the plain difference underflows
    assert _kernels.log_ndtr_diff(40.0, 41.0) == pytest.approx(special.log_ndtr(-40.0), rel=1e-6)
    assert _kernels.log_ndtr_diff(-41.0, -40.0) == pytest.approx(special.log_ndtr(-40.0), rel=1e-6)
    p = np.concatenate(
        [10.0 ** -np.arange(1, 300, 7), rng.random(50), 1 - 10.0 ** -np.arange(1, 15)]
    )
    mine = np.array([_kernels.ndtri(v) for v in p])
    np.testing.assert_allclose(mine, special.ndtri(p), rtol=1e-12, atol=1e-12)


def test_gaussian_cell_moments_match_truncnorm(rng):
    a, b = random_cells(rng, 200)
    mu, sigma = 0.4, 1.3
    logp, out = _kernels.scalar_estep(a, b, np.full(200, mu), sigma, 0.0, np.ones(1), np.zeros(1))
    tn = stats.truncnorm((a - mu) / sigma, (b - mu) / sigma, loc=mu, scale=sigma)
    np.testing.assert_allclose(out[:, 3], tn.mean(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(out[:, 6], tn.var() + tn.mean() ** 2, rtol=1e-8)
    np.testing.assert_allclose(
        np.exp(logp), stats.norm.cdf(b, mu, sigma) - stats.norm.cdf(a, mu, sigma), rtol=1e-10
    )
    np.testing.assert_allclose(out[:, [0, 1]], 1.0)  # W = 1: the GH code reduces to the Gaussian


def quad_t_moments(lo, hi, mu, sigma, nu):
    f = lambda x: stats.t.pdf(x, nu, mu, sigma)  # noqa: E731
    u = lambda x: (nu + 1) / (nu + ((x - mu) / sigma) ** 2)  # noqa: E731 E[U | x]
    opts = {"epsabs": 0, "epsrel": 1e-12, "limit": 200}
    P = integrate.quad(f, lo, hi, **opts)[0]
    return (
        P,
        integrate.quad(lambda x: f(x) * u(x), lo, hi, **opts)[0] / P,
        integrate.quad(lambda x: f(x) * u(x) * x, lo, hi, **opts)[0] / P,
        integrate.quad(lambda x: f(x) * u(x) * x * x, lo, hi, **opts)[0] / P,
    )


def test_t_closed_form_against_adaptive_quadrature(rng):
    a, b = random_cells(rng, 120)
    mu, sigma, nu = 0.3, 0.9, 4.5
    logp, out = _ecm.t_estep(a, b, np.full(len(a), mu), sigma, nu)
    ref = np.array([quad_t_moments(x, y, mu, sigma, nu) for x, y in zip(a, b, strict=True)])
    np.testing.assert_allclose(np.exp(logp), ref[:, 0], rtol=1e-8)
    np.testing.assert_allclose(out[:, 0], ref[:, 1], rtol=1e-8)
    np.testing.assert_allclose(out[:, 4], ref[:, 2], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(out[:, 5], ref[:, 3], rtol=1e-8)


def test_gh_code_with_t_parameters_reduces_to_the_t_code(rng):
    a, b = random_cells(rng, 300)
    nu, mu, sigma = 4.0, -0.2, 1.1
    w, logwt = gig_nodes(-nu / 2, nu, 0.0)
    logp, out = _kernels.scalar_estep(a, b, np.full(300, mu), sigma, 0.0, w, logwt)
    logp_t, out_t = _ecm.t_estep(a, b, np.full(300, mu), sigma, nu)
    np.testing.assert_allclose(logp, logp_t, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(out[:, [0, 4, 5]], out_t[:, [0, 4, 5]], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    ("family", "mix"),
    [
        ("skew_t", {"nu": 6.0}),
        ("nig", {"alpha_bar": 1.5}),
        ("vg", {"lam": 2.0}),
        ("gh", {"lam": 1.5, "alpha_bar": 0.8}),
    ],
)
def test_gh_quadrature_moments_against_double_adaptive_quadrature(rng, family, mix):
    mu, sigma, gamma = 0.1, 0.8, 0.6
    lam, chi, psi = gig_params(family, mix)
    g = lambda w: np.exp(gig_logpdf_ref(w, lam, chi, psi))  # noqa: E731
    w, logwt = mixing_nodes(family, mix)
    cells = [(-np.inf, -0.5), (-0.5, 0.0), (0.3, 1.1), (2.0, np.inf), (4.0, 4.5)]
    lo = np.array([c[0] for c in cells])
    hi = np.array([c[1] for c in cells])
    logp, out = _kernels.scalar_estep(lo, hi, np.full(len(lo), mu), sigma, gamma, w, logwt)
    for i, (l, u) in enumerate(cells):

        def inner(wv, h, l=l, u=u):
            m, s = mu + wv * gamma, sigma * np.sqrt(wv)
            tn = stats.truncnorm((l - m) / s, (u - m) / s, loc=m, scale=s)
            p = stats.norm.cdf(u, m, s) - stats.norm.cdf(l, m, s)
            return g(wv) * p * h(wv, tn)

        opts = {"epsabs": 0, "epsrel": 1e-10, "limit": 400}
        P = integrate.quad(lambda v: inner(v, lambda wv, tn: 1.0), 0, np.inf, **opts)[0]
        Einv = integrate.quad(lambda v: inner(v, lambda wv, tn: 1 / wv), 0, np.inf, **opts)[0] / P
        EX = integrate.quad(lambda v: inner(v, lambda wv, tn: tn.mean()), 0, np.inf, **opts)[0] / P
        EW = integrate.quad(lambda v: inner(v, lambda wv, tn: wv), 0, np.inf, **opts)[0] / P
        assert np.exp(logp[i]) == pytest.approx(P, rel=1e-6)
        assert out[i, 0] == pytest.approx(Einv, rel=1e-6)
        assert out[i, 1] == pytest.approx(EW, rel=1e-6)
        assert out[i, 3] == pytest.approx(EX, rel=1e-6, abs=1e-8)


def gig_logpdf_ref(w, lam, chi, psi):
    """scipy's geninvgauss (p, b) with scale: GIG(lam, chi, psi) = geninvgauss(lam, sqrt(chi psi), scale=sqrt(chi/psi))."""
    if psi == 0.0:
        return stats.invgamma.logpdf(w, -lam, scale=chi / 2)
    if chi == 0.0:
        return stats.gamma.logpdf(w, lam, scale=2 / psi)
    return stats.geninvgauss.logpdf(w, lam, np.sqrt(chi * psi), scale=np.sqrt(chi / psi))


def test_gig_normalisation_and_index_shift_identity():
    lam, chi, psi = gig_params("gh", {"lam": -1.2, "alpha_bar": 0.9})
    assert gig_moment(1.0, lam, chi, psi) == pytest.approx(1.0, rel=1e-12)  # E W = 1
    # E[W^-1 1_C] = c_{-1} P_{GH(lam - 1)}(C), c_{-1} = E W^-1
    mu, sigma, gamma, lo, hi = 0.2, 1.0, 0.5, np.array([0.4]), np.array([1.3])
    w, logwt = gig_nodes(lam, chi, psi)
    logp, out = _kernels.scalar_estep(lo, hi, np.full(1, mu), sigma, gamma, w, logwt)
    w1, logwt1 = gig_nodes(lam - 1, chi, psi)
    logp1, _ = _kernels.scalar_estep(lo, hi, np.full(1, mu), sigma, gamma, w1, logwt1)
    lhs = out[0, 0] * np.exp(logp[0])
    assert lhs == pytest.approx(gig_moment(-1.0, lam, chi, psi) * np.exp(logp1[0]), rel=1e-8)


def test_bivariate_box_moments_against_scipy_and_nested_quadrature():
    mu = np.array([0.2, -0.1])
    S = np.array([[1.0, 0.6], [0.6, 1.5]])
    lo = np.array([[-np.inf, -1.0], [0.0, 0.5], [1.0, -np.inf]])
    hi = np.array([[0.0, 0.0], [1.0, np.inf], [2.0, 0.0]])
    logp, scal, ex_w, exx_w, ex = box_estep(lo, hi, mu, S, "gaussian", None)
    mvn = stats.multivariate_normal(mu, S)
    for i in range(len(lo)):
        P = stats.multivariate_normal.cdf(
            hi[i], mu, S, lower_limit=lo[i], abseps=1e-10, releps=1e-10
        )
        assert np.exp(logp[i]) == pytest.approx(P, rel=1e-6)

        def mom(fn, i=i):
            return integrate.dblquad(
                lambda y, x: mvn.pdf([x, y]) * fn(x, y),
                lo[i, 0],
                hi[i, 0],
                lo[i, 1],
                hi[i, 1],
                epsabs=1e-11,
                epsrel=1e-10,
            )[0]

        P2 = mom(lambda x, y: 1.0)
        np.testing.assert_allclose(
            ex[i], [mom(lambda x, y: x) / P2, mom(lambda x, y: y) / P2], rtol=1e-6, atol=1e-8
        )
        assert exx_w[i, 0, 1] == pytest.approx(mom(lambda x, y: x * y) / P2, rel=1e-6, abs=1e-8)
        assert exx_w[i, 1, 1] == pytest.approx(mom(lambda x, y: y * y) / P2, rel=1e-6)
