"""DataShifts: zero shift, known covariate shift, pure concept shift, bound coverage, bootstrap."""

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from statcore.exceptions import ConvergenceWarning
from statcore.ot import sinkhorn, sinkhorn_divergence
from statcore.shift import DataShifts, DataShiftsResults, ShiftBoundResults, simulate


def fit(sample, **kwargs):
    fit_options = {k: kwargs.pop(k) for k in ("n_resamples", "random_state", "tol") if k in kwargs}
    model = DataShifts(
        sample["x_source"], sample["y_source"], sample["x_target"], sample["y_target"], **kwargs
    )
    return model.fit(random_state=fit_options.pop("random_state", 0), **fit_options)


def test_estimator_matches_dense_twin(rng):
    """The estimate equals the paper's formula rebuilt from dense-matrix Sinkhorn solves."""
    sample = simulate.linear_shift(60, dim=2, mean_shift=1.0, random_state=3)
    res = fit(sample, epsilon=0.1, random_state=5, tol=1e-5)
    xs, xt = sample["x_source"], sample["x_target"]
    split = np.random.default_rng(5)
    s_order, t_order = split.permutation(60), split.permutation(60)
    halves = {
        "s1": xs[np.sort(s_order[:30])],
        "s2": xs[np.sort(s_order[30:])],
        "t1": xt[np.sort(t_order[:30])],
        "t2": xt[np.sort(t_order[30:])],
    }

    def ot_value(p, q):
        return sinkhorn(None, None, cdist(p, q), 0.1, tol=1e-5, maxiter=100_000).objective

    def divergence(p, q):
        return ot_value(p, q) - 0.5 * (ot_value(p, p) + ot_value(q, q))

    h = halves
    squared = 0.5 * (
        divergence(h["s1"], h["t1"]) ** 2
        + divergence(h["s2"], h["t2"]) ** 2
        - divergence(h["s1"], h["s2"]) ** 2
        - divergence(h["t1"], h["t2"]) ** 2
    )
    # each OT term is solved to an L1 marginal error of 1e-5: errors ~1e-5
    assert res.covariate_shift == pytest.approx(np.sqrt(abs(squared)), abs=1e-4)
    full = sinkhorn(None, None, cdist(xs, xt), 0.1, tol=1e-6)
    label_cost = np.abs(sample["y_source"][:, None] - sample["y_target"][None, :])
    assert res.concept_shift == pytest.approx((full.plan * label_cost).sum(), abs=1e-4)
    assert divergence(h["s1"], h["t1"]) == pytest.approx(
        sinkhorn_divergence(h["s1"], h["t1"], epsilon=0.1, tol=1e-6).divergence, abs=1e-5
    )


def test_identical_samples_give_zero_concept_shift(rng):
    x = rng.normal(size=(150, 5))
    y = x @ rng.normal(size=5) + rng.normal(size=150)
    # eps = 0.02 is far below the nearest-neighbour distance (~1 at d=5): the plan is the identity
    res = DataShifts(x, y, x, y, epsilon=0.02).fit(random_state=0)
    assert res.concept_shift <= 1e-3 * y.std()


def test_mean_shift_recovered_and_concept_unchanged():
    shifts = {}
    for delta in (0.0, 2.0):
        sample = simulate.linear_shift(300, dim=2, mean_shift=delta, random_state=11)
        # labels independent of x: the concept shift is E|e - e'| whatever the covariates do
        noise = np.random.default_rng(12)
        sample["y_source"] = noise.normal(size=300)
        sample["y_target"] = noise.normal(size=300)
        shifts[delta] = fit(sample, epsilon=0.05)
    # d=2, N=300: the paper's estimator subtracts the within-sample noise as if it added in
    # quadrature, which over-corrects when the shift dominates the noise: 1.84 here (the spec
    # measured 2.89 for 3 at d=10). A 10% tolerance keeps that known bias and fails a wrong scale
    assert shifts[2.0].covariate_shift == pytest.approx(2.0, rel=0.1)
    assert shifts[0.0].covariate_shift < 0.2
    # E|e - e'| = 2 / sqrt(pi) = 1.128 for standard normal noise; both within sampling error
    for res in shifts.values():
        assert res.concept_shift == pytest.approx(2 / np.sqrt(np.pi), abs=0.1)
    assert abs(shifts[2.0].concept_shift - shifts[0.0].concept_shift) < 0.1


def test_label_flip_is_concept_shift_only():
    flipped = simulate.label_flip(300, threshold=0.5, random_state=4)
    clean = dict(flipped, y_target=(flipped["x_target"][:, 0] > 0).astype(float))
    res_flip = fit(flipped, y_metric="hamming", epsilon=0.05)
    res_clean = fit(clean, y_metric="hamming", epsilon=0.05)
    # same covariates: the covariate estimate is identical, the labels do not enter it
    assert res_flip.covariate_shift == pytest.approx(res_clean.covariate_shift, abs=1e-12)
    # the flipped share is P(x2 > 0.5) = 0.31; the 0/1 labels disagree across the boundary
    # x1 = 0 only where the coupling blurs it, a few percent at N = 300
    assert res_flip.concept_shift == pytest.approx(flipped["flip_share"], abs=0.06)
    assert res_clean.concept_shift < 0.08


def test_bound_holds_in_seeded_simulations():
    """eps_B(h) <= eps_A(h) + L_h S_cov + S_cpt for OLS under absolute loss (L_l = L'_l = 1)."""
    held, ratios = 0, []
    n_runs = 20
    for seed in range(n_runs):
        gen = np.random.default_rng(100 + seed)
        sample = simulate.linear_shift(
            150,
            dim=3,
            mean_shift=gen.uniform(0, 2),
            concept_shift=gen.uniform(0, 0.5),
            noise=0.5,
            random_state=seed,
        )
        xs, ys = sample["x_source"], sample["y_source"]
        design = np.column_stack([np.ones(len(xs)), xs])
        coef = np.linalg.lstsq(design, ys, rcond=None)[0]
        source_error = np.mean(np.abs(ys - design @ coef))
        xt = sample["x_target"]
        target_error = np.mean(np.abs(sample["y_target"] - coef[0] - xt @ coef[1:]))
        res = fit(sample, epsilon=0.1, random_state=seed)
        value = float(res.bound(source_error, np.linalg.norm(coef[1:]), 1.0))
        held += target_error <= value
        ratios.append(value / target_error)
    # the spec measured 30/30 with mean ratio 4.3; >= 95% of runs is the acceptance check
    assert held / n_runs >= 0.95
    assert np.mean(ratios) > 1.0


def test_bootstrap_interval_coverage():
    """90% intervals of the concept shift cover its known value in a small seeded study.

    Labels are noise independent of x, so every coupling gives the same concept shift,
    E|e - e'| = 2 / sqrt(pi): the truth is known exactly, whatever the covariate shift.
    """
    covered, n_runs, truth = 0, 12, 2 / np.sqrt(np.pi)
    for seed in range(n_runs):
        gen = np.random.default_rng(seed)
        xs, xt = gen.normal(size=(150, 2)), gen.normal(size=(150, 2)) + 0.5
        ys, yt = gen.normal(size=150), gen.normal(size=150)
        res = DataShifts(xs, ys, xt, yt, epsilon=0.1).fit(n_resamples=30, random_state=seed)
        lower, upper = res.conf_int(alpha=0.1).loc["concept_shift"]
        covered += lower <= truth <= upper
    # 12 runs: P(at most 8 covered | true coverage 0.9) = 0.026, so >= 9 detects a broken
    # interval (e.g. one that ignores the sampling noise) without flaking
    assert covered >= 9


def test_custom_metrics_and_classes(rng):
    x_s, x_t = rng.normal(size=(80, 2)), rng.normal(size=(80, 2)) + 0.5
    y_s, y_t = rng.integers(0, 3, 80), rng.integers(0, 3, 80)
    onehot_s, onehot_t = np.eye(3)[y_s], np.eye(3)[y_t]
    by_class = DataShifts(x_s, y_s, x_t, y_t, y_metric="hamming", epsilon=0.1).fit(random_state=1)
    by_onehot = DataShifts(x_s, onehot_s, x_t, onehot_t, epsilon=0.1).fit(random_state=1)
    # one-hot Euclidean distance is sqrt(2) times the 0-1 distance
    assert by_onehot.concept_shift == pytest.approx(np.sqrt(2) * by_class.concept_shift, rel=1e-8)

    def manhattan(p, q):
        return cdist(p, q, "cityblock")

    custom = DataShifts(
        x_s, y_s, x_t, y_t, x_metric=manhattan, y_metric=manhattan, epsilon=0.1
    ).fit(random_state=1, tol=1e-7)
    builtin = DataShifts(
        x_s, y_s, x_t, y_t, x_metric="cityblock", y_metric="cityblock", epsilon=0.1
    ).fit(random_state=1, tol=1e-7)
    # both solved to an L1 marginal error of 1e-7; the costs agree to rounding, the iterates not
    assert custom.params.to_numpy() == pytest.approx(builtin.params.to_numpy(), rel=1e-4)
    assert custom.x_metric == "manhattan"


def test_results_reporting_and_bound_intervals():
    sample = simulate.linear_shift(80, dim=2, mean_shift=1.0, random_state=2)
    res = fit(sample, epsilon=0.1, n_resamples=8, random_state=3)
    assert isinstance(res, DataShiftsResults) and res.null_value is None
    tidy = res.tidy()
    assert list(tidy["term"]) == ["covariate_shift", "concept_shift"]
    assert "p_value" not in tidy.columns and tidy["std_error"].notna().all()
    assert "ot terms" in res.summary().tables
    assert res.resampling.n_resamples == 8
    bound = res.bound(0.3, 2.0, (1.0, 0.5))
    assert isinstance(bound, ShiftBoundResults)
    expected = 0.3 + 2.0 * 0.5 * res.covariate_shift + res.concept_shift
    assert float(bound) == pytest.approx(expected)
    ci = bound.conf_int()
    assert ci.loc["source_error", "lower"] == pytest.approx(0.3)
    assert ci.loc["bound", "lower"] <= ci.loc["bound", "upper"]
    again = fit(sample, epsilon=0.1, n_resamples=8, random_state=3)
    pd.testing.assert_frame_equal(res.resampling.replicates, again.resampling.replicates)
    import matplotlib

    matplotlib.use("Agg")
    assert res.plot() is not None and bound.plot() is not None


def test_bad_input_messages(rng):
    x, y = rng.normal(size=(10, 2)), rng.normal(size=10)
    with pytest.raises(ValueError, match="`y_target` must have one label per covariate row"):
        DataShifts(x, y, x, y[:5])
    with pytest.raises(ValueError, match="`x_source` needs at least 4 rows"):
        DataShifts(x[:3], y[:3], x, y)
    with pytest.raises(ValueError, match="`y_metric` must be one of"):
        DataShifts(x, y, x, y, y_metric="cosine")
    with pytest.raises(ValueError, match="`n_resamples` must be 0 or at least 2"):
        DataShifts(x, y, x, y, epsilon=0.5).fit(n_resamples=1)
    res = DataShifts(x, y, x, y, epsilon=0.5).fit()
    with pytest.raises(TypeError, match="`lipschitz_loss` must be a number or a pair"):
        res.bound(0.1, 1.0, "one")


def test_from_formula_equals_the_array_path():
    sample = simulate.linear_shift(60, dim=2, mean_shift=1.0, random_state=3)
    frames = [
        pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "y": y})
        for x, y in (
            (sample["x_source"], sample["y_source"]),
            (sample["x_target"], sample["y_target"]),
        )
    ]
    weights = np.linspace(1.0, 2.0, 60)
    by_formula = DataShifts.from_formula(
        "y ~ x1 + x2", *frames, weights_target=weights, epsilon=0.1
    ).fit(random_state=5)
    by_arrays = fit(dict(sample), epsilon=0.1, weights_target=weights, random_state=5)
    pd.testing.assert_series_equal(by_formula.params, by_arrays.params)
    assert "formula='y ~ x1 + x2'" in repr(by_formula.model)
    # the source's terms are applied to the target; a missing row is refused or dropped
    frames[1].loc[0, "x1"] = np.nan
    with pytest.raises(ValueError, match="`target` has missing values in 1 row"):
        DataShifts.from_formula("y ~ x1 + x2", *frames)
    dropped = DataShifts.from_formula("y ~ x1 + x2", *frames, missing="drop")
    assert len(dropped.x_target) == 59 and dropped.x_target.shape[1] == 2
    with pytest.raises(ValueError, match="`target` lacks the response"):
        DataShifts.from_formula("y ~ x1 + x2", frames[0], frames[1].drop(columns="y"))
    with pytest.raises(ValueError, match=r"`target` lacks what the formula 'y ~ x1 \+ x2' needs"):
        DataShifts.from_formula("y ~ x1 + x2", frames[0], frames[1].drop(columns="x2"))


def test_estimator_conventions_and_iteration_record():
    sample = simulate.linear_shift(40, dim=2, mean_shift=1.0, random_state=1)
    model = DataShifts(
        sample["x_source"],
        sample["y_source"],
        sample["x_target"],
        sample["y_target"],
        epsilon=0.1,
    )
    assert repr(model).startswith("DataShifts(n_source=40, n_target=40") and model.nobs == 80
    res = model.fit(random_state=0, n_resamples=2, backend="threads")
    assert res.fit_options["backend"] == "threads" and res.fit_options["tol"] == "auto"
    # tol="auto" is 0.5 / sqrt(n) of the smaller sample
    assert res.tol == pytest.approx(0.5 / np.sqrt(40))
    assert res.iterations.converged and res.n_iter == res.components["n_iter"].sum()
    assert len(res.iterations.history) == res.components.index.str.startswith("OT").sum()
    with pytest.warns(ConvergenceWarning, match="DataShifts.fit reached maxiter=3") as caught:
        short = model.fit(random_state=0, maxiter=3)
    assert len(caught) == 1 and caught[0].filename == __file__
    assert short.converged is False and short.iterations.status == "maxiter"
