"""Small forecasters as plain modules, windowing, and the training loop they share.

Every forecaster maps a lookback window ``x`` of shape (batch, lookback, channels) to a forecast
of shape (batch, horizon, channels). Any ``nn.Module`` with that signature works in
:mod:`mlcore.augment`; these are the few-shot baselines of the ReAugment paper's kind
(linear / DLinear, MLP, GRU), small enough to train in a second on a CPU.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from mlcore._checks import check_tensor
from mlcore._device import seeded_torch, torch_generator
from mlcore._iterations import budget_result
from mlcore.results import TrainingResult
from statcore.progress import progress as progress_bar
from statcore.validation import (
    as_float_array,
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
    describe,
)

__all__ = [
    "DLinear",
    "GRUForecaster",
    "LinearForecaster",
    "MLPForecaster",
    "make_windows",
    "regime_windows",
    "train_forecaster",
]


def make_windows(series, lookback: int, horizon: int, *, stride: int = 1):
    """Cut a series into (lookback, horizon) training pairs.

    Parameters
    ----------
    series : array_like or Tensor (T,) or (T, channels)
        The observations in time order; a tensor keeps its device and floating dtype.
    lookback, horizon : int
        Input and forecast lengths.
    stride : int
        Step between window starts.

    Returns
    -------
    X : Tensor (n, lookback, channels)
    Y : Tensor (n, horizon, channels)
    """
    lookback = check_positive_int(lookback, name="lookback")
    horizon = check_positive_int(horizon, name="horizon")
    stride = check_positive_int(stride, name="stride")
    if isinstance(series, torch.Tensor):
        check_tensor(series, name="series", ndim=(1, 2), kind="floating", finite=True)
        values = series
    else:
        # as_float_array refuses complex and string values; the finite check words as above
        values = torch.as_tensor(
            as_float_array(series, name="series", ndim=(1, 2), allow_nan=True, allow_inf=True),
            dtype=torch.float32,
        )
        check_tensor(values, name="series", finite=True)
    if values.ndim == 1:
        values = values[:, None]
    need = lookback + horizon
    if values.shape[0] < need:
        raise ValueError(
            f"`series` must have at least lookback + horizon = {need} observations; "
            f"got {values.shape[0]}"
        )
    windows = values.unfold(0, need, stride).transpose(1, 2)
    return windows[:, :lookback].contiguous(), windows[:, lookback:].contiguous()


def regime_windows(
    n: int,
    lookback: int,
    *,
    odd_fraction: float = 0.05,
    phi: float = 0.8,
    burn_in: int = 50,
    random_state=None,
):
    """One-step AR(1) windows of two regimes: coefficient ``phi``, and ``-phi`` for an
    ``odd_fraction`` of them (the zoo-disagreement check of ReAugment).

    Each window is the last ``lookback + 1`` values of its own AR(1) path
    ``x_t = ±phi · x_{t-1} + e_t`` (``e_t ~ N(0, 1)``, ``x_0 = 0``) after ``burn_in`` steps.
    The horizon is one step: at even horizons the two regimes' forecasts ``phi^h x`` coincide.

    Parameters
    ----------
    n, lookback : int
        Windows and their input length.
    odd_fraction : float
        Fraction of windows in the ``-phi`` regime, in [0, 1).
    phi : float
        AR coefficient of the common regime, in (-1, 1).
    burn_in : int
        Steps before the window.
    random_state : None, int or numpy Generator

    Returns
    -------
    X : Tensor (n, lookback, 1), float32
    Y : Tensor (n, 1, 1), float32
    odd : ndarray of bool (n,)
        Which windows are of the ``-phi`` regime.
    """
    n = check_positive_int(n, name="n")
    lookback = check_positive_int(lookback, name="lookback")
    odd_fraction = check_scalar(
        odd_fraction, name="odd_fraction", low=0, high=1, high_inclusive=False
    )
    phi = check_scalar(phi, name="phi", low=-1, high=1, low_inclusive=False, high_inclusive=False)
    burn_in = check_positive_int(burn_in, name="burn_in", minimum=0)
    rng = check_random_state(random_state)
    length = lookback + 1 + burn_in
    odd = np.zeros(n, dtype=bool)
    odd[rng.choice(n, int(odd_fraction * n), replace=False)] = True
    coef = np.where(odd, -phi, phi)
    e = rng.standard_normal((n, length))
    x = np.zeros((n, length))
    for t in range(1, length):  # the recursion is sequential in time, vectorised over windows
        x[:, t] = coef * x[:, t - 1] + e[:, t]
    W = torch.tensor(x[:, -(lookback + 1) :], dtype=torch.float32)[..., None]
    return W[:, :lookback], W[:, lookback:], odd


class _LastValueNorm(nn.Module):
    """Subtract each window's last observed value and add it back to the forecast (NLinear):
    a level the training windows never reached then costs nothing, which is what a 10 % prefix
    of a trending series needs."""

    def __init__(self, normalize: bool):
        super().__init__()
        self.normalize = bool(normalize)

    def split(self, x):
        if not self.normalize:
            return x, 0.0
        last = x[:, -1:, :]
        return x - last, last


class LinearForecaster(nn.Module):
    """One linear map from the lookback to the horizon, shared by the channels (NLinear when
    ``normalize``).

    Parameters
    ----------
    lookback, horizon : int
    normalize : bool
        Forecast relative to the last observed value.

    References
    ----------
    Zeng, Chen, Zhang & Xu (2023), "Are transformers effective for time series forecasting?",
    AAAI (LTSF-Linear / NLinear).
    """

    def __init__(self, lookback: int, horizon: int, *, normalize: bool = True):
        super().__init__()
        self.lookback = check_positive_int(lookback, name="lookback")
        self.horizon = check_positive_int(horizon, name="horizon")
        self.norm = _LastValueNorm(normalize)
        self.linear = nn.Linear(self.lookback, self.horizon)

    def forward(self, x):
        z, level = self.norm.split(x)
        return self.linear(z.transpose(1, 2)).transpose(1, 2) + level


class DLinear(nn.Module):
    """DLinear: a moving-average trend and the seasonal remainder, each mapped linearly.

    Parameters
    ----------
    lookback, horizon : int
    kernel : int
        Moving-average width (odd; edges padded by repetition, as in the reference code).
    normalize : bool
        Forecast relative to the last observed value.

    References
    ----------
    Zeng, Chen, Zhang & Xu (2023), AAAI; code cure-lab/LTSF-Linear ``models/DLinear.py``.
    """

    def __init__(self, lookback: int, horizon: int, *, kernel: int = 13, normalize: bool = True):
        super().__init__()
        self.lookback = check_positive_int(lookback, name="lookback")
        self.horizon = check_positive_int(horizon, name="horizon")
        kernel = check_positive_int(kernel, name="kernel")
        if kernel % 2 == 0:
            raise ValueError(f"`kernel` must be odd (a centred moving average); got {kernel}")
        self.kernel = kernel
        self.norm = _LastValueNorm(normalize)
        self.trend = nn.Linear(self.lookback, self.horizon)
        self.seasonal = nn.Linear(self.lookback, self.horizon)

    def forward(self, x):
        z, level = self.norm.split(x)
        z = z.transpose(1, 2)
        half = self.kernel // 2
        padded = torch.cat(
            [z[..., :1].expand(-1, -1, half), z, z[..., -1:].expand(-1, -1, half)], -1
        )
        trend = nn.functional.avg_pool1d(
            padded.reshape(-1, 1, padded.shape[-1]), self.kernel, stride=1
        ).reshape(z.shape)
        out = self.trend(trend) + self.seasonal(z - trend)
        return out.transpose(1, 2) + level


class MLPForecaster(nn.Module):
    """A two-layer MLP on the (channel-independent) lookback.

    Parameters
    ----------
    lookback, horizon : int
    hidden : int
    normalize : bool
        Forecast relative to the last observed value.
    """

    def __init__(self, lookback: int, horizon: int, *, hidden: int = 64, normalize: bool = True):
        super().__init__()
        self.lookback = check_positive_int(lookback, name="lookback")
        self.horizon = check_positive_int(horizon, name="horizon")
        self.norm = _LastValueNorm(normalize)
        self.net = nn.Sequential(
            nn.Linear(self.lookback, check_positive_int(hidden, name="hidden")),
            nn.GELU(),
            nn.Linear(hidden, self.horizon),
        )

    def forward(self, x):
        z, level = self.norm.split(x)
        return self.net(z.transpose(1, 2)).transpose(1, 2) + level


class GRUForecaster(nn.Module):
    """A one-layer GRU over the lookback; its last state maps to the horizon.

    Parameters
    ----------
    channels, horizon : int
    hidden : int
    normalize : bool
        Forecast relative to the last observed value.
    """

    def __init__(self, channels: int, horizon: int, *, hidden: int = 32, normalize: bool = True):
        super().__init__()
        self.channels = check_positive_int(channels, name="channels")
        self.horizon = check_positive_int(horizon, name="horizon")
        self.norm = _LastValueNorm(normalize)
        self.gru = nn.GRU(
            self.channels, check_positive_int(hidden, name="hidden"), batch_first=True
        )
        self.head = nn.Linear(hidden, self.horizon * self.channels)

    def forward(self, x):
        z, level = self.norm.split(x)
        _, h = self.gru(z)
        return self.head(h[-1]).reshape(-1, self.horizon, self.channels) + level


def check_windows(X, Y, *, name_x: str = "X", name_y: str = "Y"):
    """Windows ``X`` (n, lookback, channels) and targets ``Y`` (n, horizon, channels)."""
    check_tensor(
        X,
        name=name_x,
        dims=("n", "lookback", "channels"),
        kind="floating",
        nonempty=True,
        finite=True,
    )
    check_tensor(
        Y,
        name=name_y,
        dims=("n", "horizon", "channels"),
        kind="floating",
        nonempty=True,
        finite=True,
        like=X,
        like_name=name_x,
    )
    if Y.shape[0] != X.shape[0] or Y.shape[2] != X.shape[2]:
        raise ValueError(
            f"`{name_y}` must have the windows and channels of `{name_x}` "
            f"({X.shape[0]}, horizon, {X.shape[2]}); got shape {tuple(Y.shape)}"
        )
    return X, Y


def new_model(make_model, random_state=None) -> nn.Module:
    """A fresh module from a factory (the user's forecaster, or the VMAE policy), its
    initialisation seeded from ``random_state`` (one draw of a numpy Generator) without
    changing torch's global generator."""
    with seeded_torch(random_state):
        model = make_model()
    if not isinstance(model, nn.Module):
        raise TypeError(f"`make_model()` must return an nn.Module; got {describe(model)}")
    return model


def train_forecaster(
    model: nn.Module,
    X,
    Y,
    *,
    epochs: int = 300,
    lr: float = 1e-2,
    batch_size: int | None = None,
    weight_decay: float = 0.0,
    random_state=None,
    progress: bool = False,
) -> TrainingResult:
    """Fit a forecaster to windows by Adam on the mean squared error; the model is trained in
    place (it is the object being fitted).

    Parameters
    ----------
    model : nn.Module
        Maps (n, lookback, channels) to (n, horizon, channels); moved to ``X``'s device.
    X, Y : Tensor
        Windows and targets.
    epochs : int
        Passes over the windows.
    lr, weight_decay : float
        Adam's settings.
    batch_size : int, optional
        Mini-batch size (default: the whole set, one step per epoch).
    random_state : None, int or numpy Generator
        Shuffling order.
    progress : bool
        Show a progress bar.

    Returns
    -------
    TrainingResult
        Training MSE per epoch.
    """
    check_windows(X, Y)
    epochs = check_positive_int(epochs, name="epochs")
    lr = check_positive(lr, name="lr")
    weight_decay = check_positive(weight_decay, name="weight_decay", strict=False)
    n = X.shape[0]
    batch_size = n if batch_size is None else check_positive_int(batch_size, name="batch_size")
    gen = torch_generator(random_state)
    model.to(X.device).train()
    # foreach: the per-tensor update's arithmetic in fewer calls (torch's default on CUDA only);
    # ReAugment's policy search trains ~200 small forecasters, where the Python loop is felt
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay, foreach=True)
    records = []
    start = time.perf_counter()
    for epoch in progress_bar(range(epochs), enabled=progress, desc="train_forecaster"):
        order = torch.randperm(n, generator=gen).to(X.device)
        total = 0.0
        for idx in order.split(batch_size):
            loss = nn.functional.mse_loss(model(X[idx]), Y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        records.append({"step": epoch, "epoch": epoch, "loss": total / n})
    model.eval()
    return budget_result(
        records,
        method="train_forecaster",
        function="train_forecaster",
        n_iter=epochs,
        maxiter=epochs,
        criterion="epochs",
        remedy="lower `lr`",
        wall_time_s=time.perf_counter() - start,
        device=str(X.device),
    )


@torch.no_grad()
def forecast_mse(model: nn.Module, X, Y) -> float:
    """Mean squared error of ``model`` on windows (no gradient, eval mode)."""
    model.eval()
    return float(nn.functional.mse_loss(model(X), Y))
