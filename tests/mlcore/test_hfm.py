"""HFM and FMA in mlcore.adapt: the API, the K → 0 limit, the tangent velocity, bad input."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from mlcore.adapt import (
    FlowFitResult,
    FlowMatchingAdapter,
    FlowResult,
    HyperbolicFlowMatcher,
    crossing_pairs,
    entangled_features,
)
from mlcore.adapt import lorentz as L
from mlcore.results import TrainingResult

SMALL = {"epochs": 40, "width": 32, "n_blocks": 1}


@pytest.fixture(scope="module")
def task():
    return entangled_features(n_classes=5, dim=8, n_shot=8, n_query=20, overlap=1.5,
                              random_state=0)  # fmt: skip


def test_small_curvature_recovers_fma(task):
    # K → 0 with unit scales, no alignment and no path loss is FMA on the same features: the
    # same seed gives the same net, batches and times, and nearest-root by distance is cosine
    # for unit text features. K = 1e-4 perturbs the path by O(K) = 1e-4, far inside 1 point.
    fma = FlowMatchingAdapter(random_state=3, **SMALL)
    hfm = HyperbolicFlowMatcher(curvature=1e-4, learn_scale=False, lam_path=0.0,
                                random_state=3, **SMALL)  # fmt: skip
    fit_f = fma.fit(task.support_feats, task.support_labels, task.text_feats)
    fit_h = hfm.fit(task.support_feats, task.support_labels, task.text_feats)
    rf = fit_f.predict(task.query_feats, task.query_labels, steps=10)
    rh = fit_h.predict(task.query_feats, task.query_labels, steps=10)
    # One query in 100 is one point; float32 rounding can flip a borderline one.
    assert abs(rf.accuracy - rh.accuracy) <= 0.01 + 1e-12
    assert np.abs(rf.step_accuracy - rh.step_accuracy).max() <= 0.01 + 1e-12
    np.testing.assert_allclose(fit_f.history["loss"], fit_h.history["loss"], rtol=1e-2)


def test_fit_predict_result(task):
    model = HyperbolicFlowMatcher(random_state=0, **SMALL)
    history = model.fit(task.support_feats, task.support_labels, task.text_feats)
    assert isinstance(history, FlowFitResult) and isinstance(history, TrainingResult)
    assert {"flow", "path"} <= set(history.history.columns)
    assert history.iterations is not None and history.converged
    # Centripetal alignment: text roots end nearer the origin than image leaves.
    assert history.scale_text < history.scale_image
    assert (model.scale_image, model.scale_text) == (1.0, 1.0)  # the estimator is unchanged
    res = history.predict(task.query_feats, task.query_labels, steps=6, stop="diameter")
    assert isinstance(res, FlowResult)
    n = len(task.query_labels)
    assert res.trajectories.shape == (7, n, 9)
    assert res.logits.shape == (n, 5) and res.stop_steps.shape == (n,)
    assert ((res.stop_steps >= 0) & (res.stop_steps <= 6)).all()
    assert 0 < res.stop_radius < res.root_separation
    # Every point of every trajectory stays on the hyperboloid (float32: ~1e-4 relative).
    z = torch.as_tensor(res.trajectories, dtype=torch.float64)
    assert ((L.inner(z, z) + 1).abs() / z[..., 0] ** 2).max() < 1e-4
    # The reported prediction is the scores' argmax at each stopping step.
    np.testing.assert_array_equal(res.predictions, res.logits.argmax(1))
    assert res.accuracy == pytest.approx(np.mean(res.predictions == task.query_labels))
    tidy = res.tidy()
    assert list(tidy.columns) == ["step", "t", "accuracy", "mean_radius", "n_active"]
    assert tidy["n_active"].iloc[0] == n
    assert isinstance(res.glance(), pd.DataFrame)
    assert "stopping steps" in res.summary().tables
    # Fixed steps: stops at `steps`, and its accuracy is the last per-step accuracy.
    fixed = history.predict(task.query_feats, task.query_labels, steps=6)
    assert (fixed.stop_steps == 6).all()
    assert fixed.accuracy == pytest.approx(fixed.step_accuracy[-1])


def test_velocity_is_tangent(task):
    model = HyperbolicFlowMatcher(curvature=0.7, random_state=1, **SMALL)
    fitted = model.fit(
        task.support_feats.double(), task.support_labels, task.text_feats.double()
    )._transport
    z = fitted._lift_images(torch.nn.functional.normalize(task.query_feats.double(), dim=-1))
    v = fitted._velocity(z, torch.full((len(z), 1), 0.3, dtype=torch.float64))
    # float64 throughout: ⟨z, v⟩_L is a difference of O(|z||v|) products.
    assert L.inner(z, v).abs().max() < 1e-10 * (1 + v.abs().max())


def test_stopping_at_zero_steps_is_zero_shot(task):
    model = FlowMatchingAdapter(random_state=0, **SMALL)
    fit = model.fit(task.support_feats, task.support_labels, task.text_feats)
    res = fit.predict(task.query_feats, task.query_labels, steps=0)
    zero_shot = (task.query_feats @ task.text_feats.T).argmax(1).numpy()
    np.testing.assert_array_equal(res.predictions, zero_shot)


def test_crossing_pairs_counts_approaches():
    # Two classes on a line: pair (0, 2) meets at step 1, pair (1, 2) never comes within 0.5;
    # pair (0, 1) is same-class and ignored.
    traj = np.array([
        [[0.0, 0], [0.1, 0], [2.0, 0]],
        [[1.0, 0], [0.1, 0], [1.2, 0]],
    ])  # fmt: skip
    assert crossing_pairs(traj, np.array([0, 0, 1]), 0.5) == 1
    assert crossing_pairs(traj, np.array([0, 0, 1]), 0.05) == 0


def test_seeded_runs_repeat(task):
    runs = []
    for rs in (5, 5):
        m = HyperbolicFlowMatcher(random_state=rs, **SMALL)
        fit = m.fit(task.support_feats, task.support_labels, task.text_feats)
        runs.append(fit.predict(task.query_feats, steps=4).logits)
    np.testing.assert_array_equal(runs[0], runs[1])


def test_refit_repeats_and_leaves_global_rng(task):
    # each fit returns a new result and leaves the estimator as it was, so a second fit repeats
    # the first exactly and the first result is not overwritten; neither touches torch's
    # global generator.
    model = HyperbolicFlowMatcher(random_state=2, epochs=3, width=8, n_blocks=1, align_steps=20)
    state = torch.get_rng_state()
    first = model.fit(task.support_feats, task.support_labels, task.text_feats)
    assert torch.equal(torch.get_rng_state(), state)
    logits = first.predict(task.query_feats, steps=2).logits
    assert (first.scale_image, first.scale_text) != (1.0, 1.0)
    second = model.fit(task.support_feats, task.support_labels, task.text_feats)
    assert second is not first and second.net is not first.net
    assert (second.scale_image, second.scale_text) == (first.scale_image, first.scale_text)
    np.testing.assert_array_equal(second.predict(task.query_feats, steps=2).logits, logits)
    np.testing.assert_array_equal(first.predict(task.query_feats, steps=2).logits, logits)


def test_random_state_none_int_or_numpy_generator(task):
    def fit(random_state):
        model = FlowMatchingAdapter(random_state=random_state, epochs=2, width=8, n_blocks=1)
        return model.fit(task.support_feats, task.support_labels, task.text_feats).history

    assert np.isfinite(fit(None)["loss"]).all()
    a, b = fit(np.random.default_rng(4)), fit(np.random.default_rng(4))
    np.testing.assert_array_equal(a["loss"], b["loss"])
    assert not np.array_equal(a["loss"], fit(np.random.default_rng(5))["loss"])


def test_old_predict_on_the_estimator_warns_and_still_works(task):
    model = FlowMatchingAdapter(random_state=0, epochs=2, width=8, n_blocks=1)
    fit = model.fit(task.support_feats, task.support_labels, task.text_feats)
    with pytest.warns(FutureWarning, match="fit\\(\\)"):
        old = model.predict(task.query_feats, steps=2)
    np.testing.assert_array_equal(old.logits, fit.predict(task.query_feats, steps=2).logits)
    with pytest.warns(FutureWarning, match="history"):
        assert model.history is fit


def test_inputs_unmodified(task):
    feats, text = task.support_feats.clone(), task.text_feats.clone()
    labels = task.support_labels.copy()
    model = HyperbolicFlowMatcher(random_state=0, **SMALL)
    model.fit(feats, labels, text).predict(feats, labels, steps=2)
    assert torch.equal(feats, task.support_feats) and torch.equal(text, task.text_feats)
    np.testing.assert_array_equal(labels, task.support_labels)


def test_bad_input(task):
    x, y, t = task.support_feats, task.support_labels, task.text_feats
    with pytest.raises(ValueError, match="curvature"):
        HyperbolicFlowMatcher(curvature=0.0)
    with pytest.raises(ValueError, match="curvature"):
        HyperbolicFlowMatcher(curvature=-1.0)
    model = HyperbolicFlowMatcher(**SMALL)
    with pytest.raises(RuntimeError, match="not fitted"), pytest.warns(FutureWarning):
        model.predict(x)
    bad = x.clone()
    bad[0, 0] = math.nan
    with pytest.raises(ValueError, match="image_feats"):
        model.fit(bad, y, t)
    with pytest.raises(ValueError, match="text_feats"):
        model.fit(x, y, t[:, :3])
    with pytest.raises(ValueError, match="labels"):
        model.fit(x, y[:-1], t)
    with pytest.raises(ValueError, match="labels"):
        model.fit(x, np.full_like(y, 7), t)
    fit = model.fit(x, y, t)
    with pytest.raises(ValueError, match="stop"):
        fit.predict(x, stop="early")
    with pytest.raises(ValueError, match="image_feats"):
        fit.predict(x[:, :3])


def test_runs_on_device(device):
    task = entangled_features(n_classes=3, dim=4, n_shot=4, n_query=5, random_state=0)
    model = HyperbolicFlowMatcher(random_state=0, epochs=3, width=8, n_blocks=1)
    fit = model.fit(task.support_feats.to(device), task.support_labels, task.text_feats.to(device))
    res = fit.predict(task.query_feats.to(device), task.query_labels, steps=3, stop="diameter")
    assert np.isfinite(res.logits).all()
