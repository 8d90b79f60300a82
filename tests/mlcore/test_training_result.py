"""TrainingResult from a real (tiny) torch training loop."""

import time

import matplotlib
import numpy as np
import pandas as pd
import pytest
import torch

from mlcore import TrainingResult, seed_everything

matplotlib.use("Agg")

N_STEPS = 50


@pytest.fixture(scope="module")
def run():
    """Linear regression y = 2x - 1 + noise, fitted by SGD for 50 steps on the CPU."""
    seed_everything(0)
    x = torch.randn(128, 1)
    y = 2.0 * x - 1.0 + 0.1 * torch.randn(128, 1)
    x_val, y_val = x[:32], y[:32]
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
    records = []
    start = time.perf_counter()
    for step in range(N_STEPS):
        optimizer.zero_grad()
        pred = model(x)
        loss = torch.nn.functional.mse_loss(pred, y)
        loss.backward()
        lr = scheduler.get_last_lr()[0]
        optimizer.step()
        scheduler.step()
        with torch.no_grad():
            val_loss = torch.nn.functional.mse_loss(model(x_val), y_val)
        records.append(
            {
                "step": step,
                "epoch": step // 10,
                "lr": lr,
                "loss": loss,  # requires grad: from_records goes through as_numpy
                "mae": (pred - y).abs().mean(),
                "val_loss": val_loss,
            }
        )
    return TrainingResult.from_records(
        records,
        method="SGD linear regression",
        nobs=128,
        wall_time_s=time.perf_counter() - start,
        device="cpu",
        converged=True,
        n_iter=N_STEPS,
    )


def test_history_columns_and_values(run):
    assert list(run.history.columns) == ["step", "epoch", "lr", "loss", "mae", "val_loss"]
    assert run.metrics == ["loss", "mae", "val_loss"]
    assert run.n_steps == N_STEPS
    assert run.history["loss"].dtype == np.float64
    assert run.history["lr"].iloc[0] == 0.1 and run.history["lr"].iloc[-1] == 0.025
    assert run.history["loss"].iloc[-1] < 0.05 < run.history["loss"].iloc[0]  # it learned


def test_tidy_is_long_history(run):
    long = run.tidy()
    assert list(long.columns) == ["step", "epoch", "metric", "value"]
    assert long.shape == (N_STEPS * 3, 4)
    wide = long.pivot(index="step", columns="metric", values="value")
    pd.testing.assert_frame_equal(
        wide[run.metrics].reset_index(drop=True),
        run.history[run.metrics],
        check_names=False,
    )


def test_glance_final_and_best(run):
    row = run.glance().iloc[0]
    last = run.history.iloc[-1]
    for metric in run.metrics:
        assert row[f"final_{metric}"] == last[metric]
    best_index = run.history["loss"].to_numpy().argmin()
    assert run.best_step == run.history["step"].iloc[best_index] == row["best_step"]
    assert row["best_value"] == run.history["loss"].min()
    assert row["n_steps"] == N_STEPS and row["device"] == "cpu"
    assert row["converged"] and row["n_iter"] == N_STEPS and row["wall_time_s"] > 0


def test_monitor_a_validation_metric_and_max_mode(run):
    by_val = TrainingResult(method="m", history=run.history, monitor="val_loss")
    assert by_val.best_step == run.history["step"][run.history["val_loss"].idxmin()]
    history = run.history.assign(acc=np.linspace(0.2, 0.9, N_STEPS))
    by_acc = TrainingResult(method="m", history=history, monitor="acc", monitor_mode="max")
    assert by_acc.best_step == N_STEPS - 1
    assert TrainingResult(method="m", history=run.history, best_step=7).best_step == 7


def test_summary_lists_metrics(run):
    summary = run.summary()
    table = summary.tables["metrics"]
    assert list(table.index) == run.metrics
    assert list(table.columns) == ["final", "best", "min", "max"]
    assert table.loc["loss", "min"] == run.history["loss"].min()
    text = summary.as_text()
    for metric in run.metrics:
        assert metric in text
    assert "SGD linear regression" in text and "best_step" in text
    assert "final_loss" not in text  # the table shows the final values, not the header
    assert repr(run).startswith("<TrainingResult: SGD linear regression, nobs=128, converged>")


def test_plot_draws_one_curve_per_metric(run):
    import matplotlib.pyplot as plt

    ax, lr_ax = run.plot()
    assert isinstance(ax, matplotlib.axes.Axes)
    assert [line.get_label() for line in ax.lines] == run.metrics
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), run.history["loss"])
    # the learning rate has an axis of its own, below the curves and sharing the step axis
    assert lr_ax.get_ylabel() == "learning rate" and lr_ax.get_xlabel() == "step"
    np.testing.assert_array_equal(lr_ax.lines[0].get_ydata(), run.history["lr"])
    assert lr_ax.get_shared_x_axes().joined(ax, lr_ax)
    assert "lr" not in [line.get_label() for line in ax.lines]
    # the legend sits beside the plotting area, not on the curves
    legend = ax.get_legend()
    assert legend._loc == 2 and legend.get_bbox_to_anchor().x0 > ax.get_window_extent().x1
    ax_one = run.plot(kind="curves", metrics="val_loss", lr=False)
    assert len(ax_one.lines) == 1 and ax_one.get_ylabel() == "val_loss"
    assert len(ax_one.figure.axes) == 1
    with pytest.raises(ValueError, match="`lr=True` but `history` logs no learning rate"):
        TrainingResult(method="m", history=pd.DataFrame({"step": [0], "loss": [1.0]})).plot(lr=True)
    with pytest.raises(ValueError, match="`metrics` must be one of"):
        run.plot(metrics=["nope"])
    plt.close("all")


def test_sparse_metric_final_is_last_logged_value():
    records = [{"step": s, "loss": 1.0 / (s + 1)} for s in range(10)]
    for s in (0, 4, 8):
        records[s]["val_acc"] = s / 10
    res = TrainingResult.from_records(records, method="sparse")
    assert np.isnan(res.history["val_acc"].iloc[-1])
    assert res.glance().iloc[0]["final_val_acc"] == 0.8
    assert np.isnan(res.history["epoch"]).all() and np.isnan(res.history["lr"]).all()
    ax = res.plot(metrics="val_acc")
    assert len(ax.lines[0].get_xdata()) == 3
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.parametrize(
    "history, kwargs, error, message",
    [
        (pd.DataFrame({"step": [0, 1], "acc": [0.1, 0.2]}), {}, ValueError, r"missing \['loss'\]"),
        (pd.DataFrame({"loss": [1.0]}), {}, ValueError, r"missing \['step'\]"),
        ({"step": [0], "loss": [1.0]}, {}, TypeError, "must be a pandas DataFrame"),
        (
            pd.DataFrame({"step": [0], "loss": [1.0]}),
            {"monitor": "acc"},
            ValueError,
            "`monitor` must be one of 'loss'",
        ),
        (
            pd.DataFrame({"step": [0], "loss": [1.0]}),
            {"best_step": 3},
            ValueError,
            "`best_step` must be one of the logged steps",
        ),
        (
            pd.DataFrame({"step": [0], "loss": [1.0]}),
            {"monitor_mode": "lowest"},
            ValueError,
            "`monitor_mode`",
        ),
        (pd.DataFrame({"step": [], "loss": []}), {}, ValueError, "at least 1 row; got no rows"),
    ],
)
def test_bad_history(history, kwargs, error, message):
    with pytest.raises(error, match=message):
        TrainingResult(method="m", history=history, **kwargs)


def test_from_records_rejects_non_scalars():
    with pytest.raises(ValueError, match=r"`records\[1\]\['loss'\]` must be a scalar"):
        TrainingResult.from_records(
            [{"step": 0, "loss": 1.0}, {"step": 1, "loss": torch.ones(3)}], method="m"
        )


def test_history_is_a_reordered_copy():
    history = pd.DataFrame(
        {"acc": [0.5, 0.6], "loss": [1.0, 0.5], "lr": [0.1, 0.1], "step": [0, 1]}
    )
    res = TrainingResult(method="m", history=history)
    assert list(res.history.columns) == ["step", "epoch", "lr", "loss", "acc"]
    history.loc[0, "loss"] = 99.0
    assert res.history["loss"].iloc[0] == 1.0
