"""EvaluationResult: per-example bootstrap of metrics, its intervals and their coverage."""

import pickle

import matplotlib
import numpy as np
import pandas as pd
import pytest
import torch

import mlcore.results
from mlcore import EvaluationResult

matplotlib.use("Agg")


@pytest.fixture
def correct():
    """A fixed 0/1 correctness vector: 280 of 400 examples right (accuracy 0.7)."""
    return np.random.default_rng(3).permutation(np.repeat([1, 0], [280, 120]))


def test_estimate_and_bootstrap_se_of_accuracy(correct):
    n_resamples = 2000
    ev = EvaluationResult.from_per_example(
        {"accuracy": correct}, n_resamples=n_resamples, random_state=1
    )
    p, n = 0.7, len(correct)
    assert ev.params["accuracy"] == pytest.approx(p)
    # The ideal bootstrap SE of a mean is the plug-in sqrt(p(1-p)/n). Its Monte Carlo estimate
    # from B replicates has relative standard deviation ~ 1/sqrt(2B) (near-normal replicates),
    # 0.016 for B = 2000; allow four of those.
    assert ev.bse["accuracy"] == pytest.approx(
        np.sqrt(p * (1 - p) / n), rel=4 / np.sqrt(2 * n_resamples)
    )
    assert ev.nobs == n and ev.resampling.n_resamples == n_resamples
    assert ev.inference == "bootstrap" and ev.null_value is None
    assert ev.pvalues is None and ev.tvalues is None


def test_tidy_has_no_p_values_and_percentile_intervals(correct):
    ev = EvaluationResult.from_per_example(
        {"accuracy": correct, "error": 1 - correct}, n_resamples=500, random_state=0
    )
    tidy = ev.tidy()
    assert list(tidy.columns) == ["term", "estimate", "std_error", "conf_low", "conf_high"]
    assert list(tidy["term"]) == ["accuracy", "error"]
    reps = ev.resampling.replicates["accuracy"].to_numpy()
    np.testing.assert_allclose(
        tidy.loc[0, ["conf_low", "conf_high"]].to_numpy(dtype=float),
        np.quantile(reps, [0.025, 0.975]),
    )
    # examples are resampled jointly: accuracy + error = 1 in every replicate
    np.testing.assert_allclose(ev.resampling.replicates.sum(axis=1), 1.0)
    text = ev.summary().as_text()
    assert "accuracy" in text and "percentile" in text and "p_value" not in text
    assert list(ev.summary().tables) == ["metrics"]
    assert "Metrics:" in repr(ev)


def test_percentile_interval_coverage():
    """Bernoulli(0.7), n = 200, 200 seeded replicates: 95% intervals cover 0.7 about 95% of
    the time. The Monte Carlo standard error of a coverage rate over R replicates is
    sqrt(0.95 * 0.05 / R) = 0.0154; the rate must lie within three of them of 0.95."""
    n_rep, n, p = 200, 200, 0.7
    rng = np.random.default_rng(20261202)
    samples = rng.random((n_rep, n)) < p
    seeds = rng.integers(0, 2**32, n_rep)
    covered = []
    for sample, seed in zip(samples, seeds, strict=True):
        ci = EvaluationResult.from_per_example(
            {"accuracy": sample}, n_resamples=500, random_state=int(seed)
        ).conf_int()
        covered.append(ci.loc["accuracy", "lower"] <= p <= ci.loc["accuracy", "upper"])
    rate = np.mean(covered)
    assert abs(rate - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / n_rep)


def test_same_random_state_same_intervals(correct):
    def fit(seed):
        return EvaluationResult.from_per_example(
            {"accuracy": correct}, n_resamples=300, random_state=seed
        )

    pd.testing.assert_frame_equal(fit(5).conf_int(), fit(5).conf_int())
    assert not fit(5).conf_int().equals(fit(6).conf_int())
    assert fit(5).random_state_used == 5
    generator = np.random.default_rng(5)
    assert fit(generator).random_state_used is None


def test_extend_adds_replicates(correct):
    ev = EvaluationResult.from_per_example({"accuracy": correct}, n_resamples=300, random_state=0)
    more = ev.extend(200, random_state=1)
    assert isinstance(more, EvaluationResult)
    assert more.resampling.n_resamples == 500 and ev.resampling.n_resamples == 300
    pd.testing.assert_frame_equal(more.resampling.replicates.iloc[:300], ev.resampling.replicates)
    pd.testing.assert_frame_equal(
        more.resampling.replicates, ev.extend(200, random_state=1).resampling.replicates
    )
    assert more.params.equals(ev.params)
    restored = pickle.loads(pickle.dumps(ev))  # the stored resampler survives pickling
    assert restored.extend(10, random_state=0).resampling.n_resamples == 310
    no_replicates = EvaluationResult(method="m", params=ev.params, inference="normal")
    with pytest.raises(ValueError, match="no `resampling`"):
        no_replicates.extend(10)


def test_tensors_dataframes_and_other_statistics():
    rng = np.random.default_rng(0)
    loss = torch.rand(100, dtype=torch.float32, requires_grad=True) * 2
    hits = torch.rand(100) < 0.5
    ev = EvaluationResult.from_per_example(
        {"loss": loss, "accuracy": hits}, statistic=np.median, n_resamples=200, random_state=0
    )
    assert ev.params["loss"] == pytest.approx(np.median(loss.detach().double().numpy()))
    assert "median" in ev.resampling.method
    frame = pd.DataFrame({"a": rng.normal(size=50), "b": rng.normal(size=50)})
    from_frame = EvaluationResult.from_per_example(
        frame, n_resamples=200, random_state=0, ci_method="basic"
    )
    assert list(from_frame.params.index) == ["a", "b"]
    assert "basic" in from_frame.summary().as_text()
    import matplotlib.pyplot as plt

    # one panel per metric: each on its own scale
    axes = from_frame.plot()
    assert [ax.get_title() for ax in axes] == ["a", "b"]
    assert all(isinstance(ax, matplotlib.axes.Axes) for ax in axes)
    plt.close("all")


def test_chunked_draws_match_explicit_chunks(monkeypatch):
    values = np.random.default_rng(2).normal(size=(30, 2))
    monkeypatch.setattr(mlcore.results, "_CHUNK_ELEMENTS", 30 * 2 * 7)  # chunks of 7 resamples
    ev = EvaluationResult.from_per_example(
        {"x": values[:, 0], "y": values[:, 1]}, n_resamples=20, random_state=4
    )
    rng = np.random.default_rng(4)
    expected = np.vstack(
        [values[rng.integers(0, 30, size=(size, 30))].mean(axis=1) for size in (7, 7, 6)]
    )
    np.testing.assert_allclose(ev.resampling.replicates.to_numpy(), expected)


@pytest.mark.parametrize(
    "values, kwargs, error, message",
    [
        ([1, 0, 1], {}, TypeError, "`values` must be a mapping"),
        ({}, {}, ValueError, "at least one metric"),
        ({"a": [1, 0, 1], "b": [1, 0]}, {}, ValueError, "`a` has 3, `b` has 2"),
        ({"a": [[1, 0], [0, 1]]}, {}, ValueError, r"`values\['a'\]` must be 1-D"),
        ({"a": [1.0, np.nan, 0.0]}, {}, ValueError, "must not contain NaN"),
        ({"a": [1, 0, 1]}, {"n_resamples": 1}, ValueError, "`n_resamples`"),
        ({"a": [1, 0, 1]}, {"ci_method": "bca"}, ValueError, "`ci_method` must be one of"),
        ({"a": [1, 0, 1]}, {"random_state": -2}, ValueError, "`random_state`"),
    ],
)
def test_bad_input(values, kwargs, error, message):
    with pytest.raises(error, match=message):
        EvaluationResult.from_per_example(values, **kwargs)
