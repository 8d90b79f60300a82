"""CP gradient flow: exact series, NTK limit, spectral characteristics, regimes, bad input."""

import numpy as np
import pandas as pd
import pytest

from statcore.theory import CPGradientFlow, solve_characteristics
from statcore.theory.cp_regimes import REGIMES


@pytest.mark.parametrize(
    ("symmetric", "target"), [(False, "identity"), (False, "modular"), (True, "modular")]
)
def test_gradient_matches_central_differences(symmetric, target):
    flow = CPGradientFlow(3, 3, 5, symmetric=symmetric, target=target, init_scale=0.7)
    U = flow.initial_state(2, random_state=1)
    E = np.random.default_rng(2).standard_normal(U.shape)
    h = 1e-6
    fd = (flow.loss(U + h * E) - flow.loss(U - h * E)) / (2 * h)
    exact = (flow.gradient(U) * E).reshape(2, -1).sum(axis=1)
    # central differences of a polynomial: error O(h^2 * third derivative) ~ 1e-10 here, plus
    # rounding of L (~30) / h ~ 1e-9
    np.testing.assert_allclose(fd, exact, rtol=1e-6)


@pytest.mark.parametrize(
    ("symmetric", "target"), [(False, "identity"), (False, "modular"), (True, "identity")]
)
def test_taylor_series_matches_the_simulated_flow(symmetric, target):
    flow = CPGradientFlow(3, 4, 16, symmetric=symmetric, target=target)
    tay = flow.taylor(16, n_seeds=3, random_state=0)
    # L'(0) = -||grad L||^2: two independent computations (series recursion and the einsum
    # gradient) agreeing to rounding
    np.testing.assert_allclose(tay.coefficients[:, 1], -tay.grad_norm2, rtol=1e-12)
    np.testing.assert_allclose(tay.derivatives[:, 2], 2 * tay.coefficients[:, 2])
    # the series converges within a radius ~ |c_s / c_{s+1}| (ratio test on the last terms);
    # at a tenth of it the 17th term is ~1e-17 of L, so the truncation error is negligible
    c = np.abs(tay.coefficients)
    radius = np.min(c[:, -2] / c[:, -1])
    t = np.array([0.0, 0.02, 0.05, 0.1]) * radius
    sim = flow.simulate(t, n_seeds=3, random_state=0, tol=1e-13)
    np.testing.assert_array_equal(sim.loss[:, 0], flow.loss(flow.initial_state(3, random_state=0)))
    # DOP853 at rtol 1e-13 is accurate to ~1e-12 relative; 1e-8 is the bound
    np.testing.assert_allclose(tay.evaluate(t), sim.loss, rtol=1e-8)


def test_ntk_limit_error_shrinks_with_rank():
    t = np.linspace(0, 1, 11)
    errors = []
    for H in (64, 256, 1024):
        flow = CPGradientFlow(3, 4, H, output_scale="ntk", init_scale=1.0)
        assert np.isclose(flow.kernel_rate, 3.0)  # alpha^2 H nu sigma^(2(nu-1)) = nu
        res = flow.simulate(t, n_seeds=6, random_state=0, tol=1e-6)
        errors.append(res.relative_error().max())
        np.testing.assert_allclose(res.prediction, res.loss[:, 0].mean() * np.exp(-6 * t))
    # measured 4.6 / 1.4 / 0.31; the error falls like
    # ~1/H once the kernel concentrates, so a factor 2 per step is a loose, seed-robust bound
    assert errors[1] < errors[0] / 2 and errors[2] < errors[1] / 2, errors
    assert errors[2] < 0.6


def test_scalar_logistic_solution_by_characteristics():
    # H = p = 1, nu = 2, balanced init: w = u1 u2 follows w' = 2 w (y - w). Its flow map
    # F(x, t) = w(t; w(0) = x) solves F_t - 2 x (y - x) F_x = 0 with F(x, 0) = x
    y, w0 = 1.5, 0.1
    t = np.linspace(0, 2, 9)
    sol = solve_characteristics(
        lambda x, F: -2 * x * (y - x),
        lambda x, F: 0 * F,
        lambda x: x,
        np.linspace(1e-3, 1.499, 4000),
        t,
        tol=1e-12,
    )
    predicted = np.array([sol.at(w0, i) for i in range(len(t))])
    logistic = y / (1 + (y / w0 - 1) * np.exp(-2 * y * t))
    # linear interpolation between characteristics 4e-4 apart: error ~ spacing^2 * F'' ~ 1e-6
    np.testing.assert_allclose(predicted, logistic, rtol=1e-5)
    # the simulator on the symmetric p = H = 1 model: w = u^2 obeys w' = 4 w (y - w), the
    # same logistic at twice the rate
    flow = CPGradientFlow(2, 1, 1, symmetric=True, target=np.array([[y]]), output_scale=1.0)
    w_start = flow.initial_state(1, random_state=5)[0, 0, 0] ** 2
    res = flow.simulate(t, n_seeds=1, random_state=5, tol=1e-12)
    w = y / (1 + (y / w_start - 1) * np.exp(-4 * y * t))
    np.testing.assert_allclose(res.loss[0], 0.5 * (w - y) ** 2, rtol=1e-8, atol=1e-14)


def test_symmetric_order_two_spectral_prediction_is_exact_and_characteristics_agree():
    flow = CPGradientFlow(2, 6, 10, symmetric=True, output_scale="mean_field", init_scale=0.5)
    t = np.linspace(0, 1, 11) * flow.rank  # the flow's rate is 4 alpha = 4 / H
    res = flow.simulate(t, n_seeds=4, random_state=3, tol=1e-10)
    # exact at every size (eigenvalues follow independent logistic flows): solver accuracy
    np.testing.assert_allclose(res.loss.mean(axis=0), res.prediction, rtol=1e-7)
    one = flow.characteristics(t, initial="empirical", random_state=3)
    np.testing.assert_allclose(one.loss, res.loss[0], rtol=1e-7)
    # the base records the call's options, defaults filled in, for every result-making method
    assert one.fit_options["initial"] == "empirical" and one.fit_options["random_state"] == 3
    assert "tol" in one.fit_options
    assert dict(flow.taylor(3, n_seeds=2).fit_options) == {
        "order": 3,
        "n_seeds": 2,
        "random_state": None,
    }


def test_under_parameterised_loss_floor():
    # p > H: p - H eigenvalues of alpha U U^T are 0 for ever, the loss cannot go below (p-H)/2
    flow = CPGradientFlow(2, 12, 4, symmetric=True, output_scale="mean_field")
    t = np.array([0.0, 10.0, 40.0]) * flow.rank
    res = flow.simulate(t, n_seeds=2, random_state=0)
    assert np.all(res.loss >= 4.0 - 1e-9)
    np.testing.assert_allclose(res.loss[:, -1], 4.0, atol=1e-6)  # e^(-160) from the floor
    lim = flow.characteristics(t)
    np.testing.assert_allclose(lim.loss[-1], 4.0, atol=1e-6)


def test_loss_self_averages_along_a_mean_field_ray():
    ratios, errors = [], []
    for p in (4, 16, 48):
        flow = CPGradientFlow(2, p, 2 * p, symmetric=True, output_scale="mean_field")
        t = np.linspace(0, 0.5, 6) * flow.rank
        loss = flow.simulate(t, n_seeds=16, random_state=0).loss
        ratios.append(np.max(loss.var(axis=0, ddof=1) / loss.mean(axis=0) ** 2))
        limit = flow.predict(t)
        errors.append(np.max(np.abs(loss.mean(axis=0) - limit) / limit))
    # Var L / (E L)^2 ~ 1/p^2 for a linear spectral statistic (factors 16 and 9 expected);
    # measured 0.56 / 0.039 / 0.0063: a factor 3 per step leaves room for the 16-seed
    # variance estimates (relative error ~ sqrt(2 / 15) = 37 % each)
    assert ratios[1] < ratios[0] / 3 and ratios[2] < ratios[1] / 3, ratios
    # the Marchenko-Pastur characteristics predict the mean within seed noise at p = 48
    # (seed standard error of the mean ~ sqrt(0.006 / 16) = 2 %; finite-p bias O(1/p))
    assert errors[-1] < 0.1, errors


def test_relative_movement_vanishes_on_lazy_rays_and_not_on_mean_field_rays():
    t_lazy = np.array([0.0, 1.0])
    lazy = [
        CPGradientFlow(3, 4, H).simulate(t_lazy, n_seeds=3, random_state=0).movement[:, -1].mean()
        for H in (64, 256, 1024)
    ]
    # ||Delta u|| / ||u0|| ~ H^(-1/2): measured 0.15 / 0.08 / 0.04
    assert lazy[0] > 1.6 * lazy[1] > 2.5 * lazy[2], lazy
    rich = []
    for H in (64, 256, 1024):
        flow = CPGradientFlow(2, 4, H, symmetric=True, output_scale="mean_field", init_scale=0.5)
        res = flow.simulate(np.array([0.0, 1.0]) * H, n_seeds=3, random_state=0)
        rich.append(res.movement[:, -1].mean())
    # each u_h roughly doubles (eigenvalues 0.25 -> ~1): ~0.95 at every H
    assert min(rich) > 0.5 and max(rich) / min(rich) < 1.3, rich


def test_regime_map_labels_the_canonical_rays():
    ntk = CPGradientFlow(3, 4, 64)
    assert ntk.regime({"rank": 1, "output": -0.5})["regime"] == "NTK"
    assert ntk.regime({"rank": 1, "output": 0.5})["regime"] == "free evolution"
    mf = CPGradientFlow(2, 4, 64, symmetric=True)
    assert mf.regime({"rank": 1, "output": -1})["regime"] == "over-parameterised mean field"
    under = mf.regime({"dim": 1, "rank": 0.5, "output": -0.5})
    assert under["regime"] == "under-parameterised mean field"
    assert mf.regime({"dim": 1, "rank": 1, "output": -1})["regime"] == "proportional mean field"
    assert set(REGIMES) >= {ntk.regime({"rank": r})["regime"] for r in (0, 1, 2)}
    # the NTK ray's kernel rate has exponent 0 (kappa = nu), its movement exponent -1/2
    row = ntk.regime({"rank": 1, "output": -0.5})
    assert row["kernel"] == 0 and row["movement"] == -0.5


def test_results_report_and_backends_agree():
    flow = CPGradientFlow(3, 3, 32, target="modular")
    t = np.linspace(0, 0.5, 5)
    serial = flow.simulate(t, n_seeds=4, random_state=0)
    threads = flow.simulate(t, n_seeds=4, random_state=0, backend="threads", n_chunks=2)
    # different chunkings take different adaptive steps: agreement to the solver tolerance
    np.testing.assert_allclose(threads.loss, serial.loss, rtol=1e-6)
    assert serial.converged and serial.n_iter > 0
    tidy = serial.tidy()
    assert set(tidy["term"]) == {"loss", "movement", "weight_norm"}
    assert {"estimate", "conf_low", "conf_high", "prediction"} <= set(tidy.columns)
    band = serial.band("loss")
    assert np.all(band["seed_low"] <= band["mean"]) and np.all(band["mean"] <= band["seed_high"])
    assert serial.component_norms.shape == (4, 5, 32)
    assert "NTK" in str(serial.summary()) and isinstance(serial.glance(), pd.DataFrame)
    assert serial.fit_options["n_seeds"] == 4
    import matplotlib

    matplotlib.use("Agg")
    for kind in ("loss", "movement", "components"):
        serial.plot(kind)


def test_bad_input_is_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="order"):
        CPGradientFlow(1, 3, 4)
    with pytest.raises(TypeError, match="dim"):
        CPGradientFlow(3, 2.5, 4)
    with pytest.raises(ValueError, match="init_scale"):
        CPGradientFlow(3, 3, 4, init_scale=0.0)
    with pytest.raises(ValueError, match="output_scale"):
        CPGradientFlow(3, 3, 4, output_scale="lazy")
    with pytest.raises(ValueError, match="target"):
        CPGradientFlow(3, 3, 4, target=np.ones((3, 3)))
    with pytest.raises(ValueError, match="target"):
        CPGradientFlow(3, 3, 4, target="parity")
    with pytest.raises(ValueError, match="target"):
        CPGradientFlow(2, 2, 4, target=[[1.0, np.nan], [0.0, 1.0]])
    flow = CPGradientFlow(3, 3, 4)
    with pytest.raises(ValueError, match="t_grid"):
        flow.simulate([0.0, 0.5, 0.2])
    with pytest.raises(ValueError, match="t_grid"):
        flow.simulate([-1.0, 1.0])
    with pytest.raises(ValueError, match="n_seeds"):
        flow.simulate([0.0, 1.0], n_seeds=0)
    with pytest.raises(ValueError, match="n_chunks"):
        flow.simulate([0.0, 1.0], n_seeds=2, n_chunks=3)
    with pytest.raises(ValueError, match="order"):
        flow.taylor(0)
    with pytest.raises(ValueError, match="characteristics"):
        flow.characteristics([0.0, 1.0])
    with pytest.raises(ValueError, match="unknown keys"):
        flow.regime({"width": 1})
    with pytest.raises(TypeError, match="mapping"):
        flow.regime([1, 2])
    with pytest.raises(ValueError, match="state"):
        flow.loss(np.zeros((2, 3, 4)))
    target = np.eye(3)
    CPGradientFlow(2, 3, 4, target=target)
    assert target.flags.writeable and np.array_equal(target, np.eye(3))  # not modified
