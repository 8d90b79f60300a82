"""QuantizedNVMM: ECM fixed point = direct maximisation, limits, Sheppard, guard, inference."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from statcore.quantized import IdentifiabilityWarning, QuantizedNVMM, Quantizer
from statcore.quantized.simulate import rnvmm


@pytest.fixture(scope="module")
def t4_sample():
    return rnvmm(5000, mu=0.3, sigma=1.0, family="t", nu=4.0, random_state=11)


@pytest.mark.parametrize(("step", "bits"), [(1.0, 2), (0.5, 3), (0.25, 4), (0.05, 8)])
def test_ecm_fixed_point_is_the_direct_mle(t4_sample, step, bits):
    q = Quantizer.uniform(step, bits)
    model = QuantizedNVMM.from_codes(q.quantize(t4_sample), q, family="t")
    res = model.fit(fix={"nu": 4.0}, cov_type=None)
    opt = optimize.minimize(
        lambda p: -model.loglike({"mu": p[0], "sigma": np.exp(p[1]), "nu": 4.0}),
        [0.0, 0.0],
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-12},
    )
    assert abs(res.mu - opt.x[0]) < 1e-4
    assert abs(res.sigma - np.exp(opt.x[1])) < 1e-4
    assert res.converged
    assert np.diff(res.history).min() >= -1e-9 * abs(res.llf)  # monotone
    assert res.llf == pytest.approx(model.loglike(res.params.to_dict()), rel=1e-12)


def test_fine_quantization_recovers_the_raw_data_mle(t4_sample):
    q = Quantizer.uniform(0.05, 8)
    res = QuantizedNVMM.from_codes(q.quantize(t4_sample), q, family="t").fit(
        fix={"nu": 4.0}, cov_type=None
    )
    _, loc, scale = stats.t.fit(t4_sample, f0=4.0)
    assert abs(res.mu - loc) < 5e-4 and abs(res.sigma - scale) < 5e-4
    x = rnvmm(5000, mu=0.2, random_state=3)
    res = QuantizedNVMM.from_codes(q.quantize(x), q).fit(cov_type=None)
    assert abs(res.mu - x.mean()) < 1e-3 and abs(res.sigma**2 - x.var()) < 1e-3


def test_sheppard_bias_of_midpoints_is_removed():
    x = rnvmm(200_000, mu=0.2, random_state=5)
    q = Quantizer.uniform(1.0, 8)
    codes = q.quantize(x)
    res = QuantizedNVMM.from_codes(codes, q).fit(cov_type=None)
    assert abs(res.sigma**2 - 1.0) < 0.01
    assert np.var(q.midpoints(codes)) == pytest.approx(1 + 1 / 12, abs=0.01)
    q2 = Quantizer.uniform(1.0, 2)  # saturation bias of midpoints at 2 bits
    res2 = QuantizedNVMM.from_codes(q2.quantize(x), q2).fit(cov_type=None)
    assert abs(res2.mu - 0.2) < 0.01 and abs(res2.sigma**2 - 1) < 0.02
    assert abs(np.mean(q2.midpoints(q2.quantize(x))) - 0.2) > 0.015


def test_free_nu_louis_matches_hessian_and_summary(t4_sample):
    q = Quantizer.uniform(0.5, 3)
    model = QuantizedNVMM.from_codes(q.quantize(t4_sample), q, family="t")
    louis = model.fit()
    hess = model.fit(cov_type="hessian")
    np.testing.assert_allclose(louis.bse, hess.bse, rtol=1e-4)
    assert 3.0 < louis.nu < 6.0
    assert list(louis.params.index) == ["mu", "sigma", "nu"]
    assert "Quantized NVMM (t)" in louis.summary().as_text()
    assert set(louis.tidy().columns) >= {"term", "estimate", "std_error", "conf_low"}
    assert louis.aic == pytest.approx(-2 * louis.llf + 6)
    # plain ECM reaches the same point as SQUAREM; nu's likelihood is flat, so the plain ECM's
    # linear crawl stops ~1e-4 short in nu at tol=1e-8: both run to 1e-11 to compare fixed points
    plain = model.fit(accelerate=False, cov_type=None, tol=1e-11)
    tight = model.fit(cov_type=None, tol=1e-11)
    np.testing.assert_allclose(plain.params, tight.params, rtol=2e-6)
    assert plain.n_iter > louis.n_iter


def test_fix_holds_parameters_and_their_errors_are_nan(t4_sample):
    q = Quantizer.uniform(0.5, 3)
    res = QuantizedNVMM.from_codes(q.quantize(t4_sample), q, family="t").fit(fix={"nu": 4})
    assert res.nu == 4.0 and np.isnan(res.bse["nu"]) and np.isfinite(res.bse["mu"])
    assert res.df_model == 2


def test_skew_t_ecm_matches_direct_maximisation():
    x = rnvmm(4000, mu=0.0, sigma=1.0, gamma=0.8, family="skew_t", nu=5.0, random_state=9)
    q = Quantizer.uniform(1.0, 3)
    model = QuantizedNVMM.from_codes(q.quantize(x), q, family="skew_t")
    res = model.fit(fix={"nu": 5.0}, cov_type="hessian")
    opt = optimize.minimize(
        lambda p: -model.loglike({"mu": p[0], "sigma": np.exp(p[1]), "gamma": p[2], "nu": 5.0}),
        [res.mu, np.log(res.sigma), res.gamma],
        method="Nelder-Mead",
        options={"xatol": 1e-9, "fatol": 1e-11},
    )
    assert -opt.fun - res.llf < 1e-6
    np.testing.assert_allclose(
        [res.mu, res.sigma, res.gamma], [opt.x[0], np.exp(opt.x[1]), opt.x[2]], atol=2e-4
    )
    louis = model.fit(fix={"nu": 5.0}, start=res.params.to_dict())
    np.testing.assert_allclose(louis.bse.dropna(), res.bse.dropna(), rtol=2e-3)


@pytest.mark.parametrize(
    ("family", "fix"),
    [("nig", {"alpha_bar": 1.5}), ("vg", {"lam": 2.0}), ("gh", {"lam": 1.0, "alpha_bar": 1.0})],
)
def test_gh_members_fit_monotonically(family, fix):
    # mixing parameters held (test_quantized_mixing.py frees them)
    x = rnvmm(3000, mu=0.0, sigma=1.0, gamma=0.5, family="skew_t", nu=6.0, random_state=4)
    q = Quantizer.uniform(0.5, 4)
    res = QuantizedNVMM.from_codes(q.quantize(x), q, family=family).fit(
        cov_type=None, tol=1e-7, fix=fix
    )
    assert res.converged and np.diff(res.history).min() >= -1e-9 * abs(res.llf)
    assert res.lam is not None and res.psi > 0
    # the fitted density integrates to one
    grid = np.linspace(-15, 25, 8001)
    assert np.trapezoid(res.pdf(grid), grid) == pytest.approx(1.0, abs=2e-3)


def test_identifiability_guard_for_one_bit_zero_threshold():
    x = rnvmm(2000, mu=0.0, random_state=1)
    q = Quantizer([0.0])
    with pytest.warns(IdentifiabilityWarning):
        model = QuantizedNVMM.from_codes(q.quantize(x), q)
    # the profile likelihood is flat in sigma at mu = 0
    assert (
        abs(model.loglike({"mu": 0.0, "sigma": 0.5}) - model.loglike({"mu": 0.0, "sigma": 2.0}))
        < 1e-10
    )
    with pytest.raises(ValueError, match="do not identify the scale"):
        model.fit()
    res = model.fit(fix={"sigma": 1.0})
    assert abs(res.mu) < 0.1
    # a known dither restores the scale
    u = np.random.default_rng(2).uniform(-1.5, 1.5, size=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentifiabilityWarning)
        dithered = QuantizedNVMM.from_codes(q.quantize(x, dither=u), q, dither=u).fit(cov_type=None)
    assert abs(dithered.sigma - 1.0) < 0.2


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="`lower` must be < `upper`"):
        QuantizedNVMM([0.0, 1.0], [1.0, 0.5])
    with pytest.raises(ValueError, match="NaN"):
        QuantizedNVMM([0.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="empty"):
        QuantizedNVMM(np.zeros(0), np.zeros(0))
    with pytest.raises(ValueError, match="family"):
        QuantizedNVMM([0.0], [1.0], family="cauchy")
    q = Quantizer([-0.5, 0.5])  # three cells cannot carry mu, sigma and nu
    x = rnvmm(100, random_state=0) + 0.3
    model = QuantizedNVMM.from_codes(q.quantize(x), q, family="t")
    with pytest.raises(ValueError, match="degrees of freedom"):
        model.fit()
    with pytest.raises(ValueError, match="`fix` may hold"):
        QuantizedNVMM.from_codes(q.quantize(x), q).fit(fix={"nu": 3})


def test_bootstrap_standard_errors_are_close_to_louis(t4_sample):
    q = Quantizer.uniform(0.5, 3)
    model = QuantizedNVMM.from_codes(q.quantize(t4_sample), q)
    boot = model.fit(cov_type="bootstrap", n_resamples=60, random_state=0)
    louis = model.fit()
    np.testing.assert_allclose(boot.bse, louis.bse, rtol=0.35)
    assert boot.cov_type.startswith("bootstrap")


def test_plots_draw(t4_sample):
    import matplotlib

    matplotlib.use("Agg")
    q = Quantizer.uniform(0.5, 3)
    res = QuantizedNVMM.from_codes(q.quantize(t4_sample), q, family="t").fit()
    assert res.plot().get_ylabel() == "density"
    assert res.plot("history") is not None
    assert isinstance(res.conf_int(), pd.DataFrame)
