"""SelfDistilledRidgeResults: prediction, reporting, the risk surface, plots, formula input."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from statcore.ridge import SelfDistilledRidge, SelfDistilledRidgeResults, paper_design

DESIGN = paper_design(20, random_state=4)
X, Y = DESIGN.sample(150, random_state=5)
FRAME = pd.DataFrame(X, columns=[f"x{i}" for i in range(20)]).assign(y=Y)


def test_results_fields_and_reporting():
    res = SelfDistilledRidge(Y, X, penalty=0.3).fit()
    assert isinstance(res, SelfDistilledRidgeResults)
    assert res.null_value is None and res.tvalues is None
    assert res.xi == res.xi_hat
    assert list(res.risk_estimate.index) == ["teacher", "student"]
    assert res.risk_estimate["student"] <= res.risk_estimate["teacher"]
    assert {"statistic", "p_value"}.isdisjoint(res.tidy().columns)
    row = res.glance().iloc[0]
    assert row["penalty"] == 0.3 and row["xi_hat"] == res.xi_hat
    text = res.summary().as_text()
    assert "Self-distilled ridge" in text and "x19" in text
    # least-squares noise variance: residual sum of squares over n - p - 1
    Xc = X - X.mean(0)
    resid = (Y - Y.mean()) - Xc @ np.linalg.lstsq(Xc, Y - Y.mean(), rcond=None)[0]
    assert res.noise_variance == pytest.approx(resid @ resid / (150 - 21), rel=1e-10)


def test_predict_and_strip():
    res = SelfDistilledRidge.from_formula("y ~ .", FRAME, penalty=[0.1, 1.0]).fit()
    arrays = SelfDistilledRidge(Y, X, penalty=[0.1, 1.0]).fit()
    np.testing.assert_allclose(res.params.to_numpy(), arrays.params.to_numpy(), atol=1e-12)
    new = FRAME.iloc[:7]
    expected = res.params.loc["Intercept"].to_numpy() + new.drop(columns="y").to_numpy() @ (
        res.params.drop("Intercept").to_numpy()
    )
    np.testing.assert_allclose(res.predict(new).to_numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(res.strip().predict(new).to_numpy(), expected, atol=1e-12)
    assert list(res.predict(new).columns) == [0.1, 1.0]


def test_risk_surface_is_the_quadratic_of_fixed_xi_fits():
    model = SelfDistilledRidge(Y, X, penalty=[0.05, 0.5, 5.0])
    auto = model.fit()
    surface = auto.risk_surface([-1.0, 0.0, 2.0])
    for xi in (-1.0, 0.0, 2.0):
        fixed = model.fit(xi=xi)
        np.testing.assert_allclose(surface[xi].to_numpy(), fixed.risk_curve["student"], rtol=1e-12)
    # the one-shot weight minimises the estimated quadratic
    np.testing.assert_allclose(
        auto.risk_curve["student"], auto.risk_curve["optimal_student"], rtol=1e-12
    )
    assert np.all(surface.min(axis=1).to_numpy() >= auto.risk_curve["optimal_student"] - 1e-12)


def test_oracle_risk_matches_direct_computation():
    res = SelfDistilledRidge(Y, X, penalty=0.4).fit(xi=0.7)
    rng = np.random.default_rng(0)
    a = rng.normal(size=(20, 20))
    cov0 = a @ a.T / 20
    o = res.oracle_risk(DESIGN.beta, cov0).iloc[0]
    e = res.params.drop("Intercept").to_numpy() - DESIGN.beta
    assert o["student"] == pytest.approx(e @ cov0 @ e, rel=1e-12)
    grid = np.linspace(-5, 5, 20001)
    t = res.teacher_params.drop("Intercept").to_numpy()
    d = res.distilled_params.drop("Intercept").to_numpy() - t
    risks = [(t + g * d - DESIGN.beta) @ cov0 @ (t + g * d - DESIGN.beta) for g in grid[::50]]
    assert grid[::50][np.argmin(risks)] == pytest.approx(o["xi_star"], abs=0.03)
    with pytest.raises(ValueError, match="`beta` must have 20 entries"):
        res.oracle_risk(DESIGN.beta[:3], cov0)


def test_plots_return_axes():
    res = SelfDistilledRidge(Y, X, penalty=0.3).fit()
    ax = res.plot()
    assert len(ax.lines) == 3 and ax.get_xscale() == "log"
    assert res.plot("xi").get_ylabel() == "xi_hat"


def test_high_dimensional_fit_without_noise_variance_notes_it():
    Xw, yw = paper_design(80, random_state=1).sample(40, random_state=2)
    res = SelfDistilledRidge(yw, Xw, penalty=0.5).fit()
    assert np.isnan(res.risk_estimate["teacher"])
    assert np.isfinite(res.risk_curve["teacher_mse"]).all()
    assert any("noise variance" in note for note in res.notes)
    given = SelfDistilledRidge(yw, Xw, penalty=0.5).fit(noise_variance=1.0)
    assert given.risk_estimate["teacher"] == pytest.approx(
        given.risk_curve.loc[0.5, "teacher_mse"] - 1.0
    )
    assert len(res.plot().lines) == 3
