"""The augmenter API and the ``tsaug``-style baselines: jitter, scaling, time warp.

An augmenter transforms whole windows, lookback and horizon together, so that an augmented
target stays the continuation of its augmented input. ``fit`` learns what the augmenter needs
from the training windows (here only their scale) and returns an :class:`AugmenterResult`,
whose ``generate`` returns new windows.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from mlcore._device import as_numpy, torch_generator
from mlcore.augment.forecasters import check_windows
from statcore.base import Estimator
from statcore.compat import renamed_attribute
from statcore.results import Results
from statcore.validation import (
    check_bool,
    check_positive,
    check_positive_int,
    check_random_state,
)

__all__ = ["Augmenter", "AugmenterResult", "Jitter", "Scaling", "TimeWarp"]


def within_window_scale(W: torch.Tensor) -> torch.Tensor:
    """Pooled within-window standard deviation per channel of windows (n, T, C): the size of
    the local variation, which a trend across windows would inflate in a global std."""
    centred = W - W.mean(dim=1, keepdim=True)
    scale = centred.pow(2).mean(dim=(0, 1)).sqrt()
    return torch.where(scale > 0, scale, torch.ones_like(scale))


def split_windows(W: torch.Tensor, lookback: int):
    """Joint windows (n, lookback + horizon, C) back into contiguous inputs and targets."""
    return W[:, :lookback].contiguous(), W[:, lookback:].contiguous()


def _warn_model_level(cls_name: str, name: str) -> None:
    warnings.warn(
        f"{cls_name}.{name} on the augmenter is deprecated: `fit` now returns a results object; "
        f"use `res = aug.fit(X, Y)` and `res.{name}`. The old form will be removed in the next "
        "release",
        FutureWarning,
        stacklevel=3,
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class AugmenterResult(Results):
    """A fitted window augmenter: what :meth:`Augmenter.fit` learned, and ``generate``.

    Parameters
    ----------
    scale : ndarray (channels,)
        Pooled within-window standard deviation per channel of the training windows (the unit
        of the baselines' noise).
    lookback : int
        Input length of the training windows.
    model : Augmenter
        The augmenter that was fitted (its settings draw the augmentations).
    """

    scale: np.ndarray = field(repr=False)
    lookback: int

    scale_ = renamed_attribute("scale_", "scale")

    def generate(self, X, Y, *, n_copies: int = 1, random_state=None):
        """Augmented copies of the windows.

        Parameters
        ----------
        X, Y : Tensor (n, lookback, C), (n, horizon, C)
        n_copies : int
            Augmented copies per window.
        random_state : None, int or numpy Generator

        Returns
        -------
        X_aug, Y_aug : Tensor (n_copies * n, lookback, C), (n_copies * n, horizon, C)
        """
        check_windows(X, Y)
        if self.model is None:
            raise RuntimeError(
                "this result was stripped of its augmenter, which draws the augmentations; "
                "generate from the unstripped result"
            )
        n_copies = check_positive_int(n_copies, name="n_copies")
        rng = check_random_state(random_state)
        W = torch.cat([X, Y], dim=1).repeat(n_copies, 1, 1)
        scale = torch.as_tensor(self.scale, dtype=W.dtype, device=W.device)
        with torch.no_grad():
            out = self.model.transform_windows(W, scale=scale, random_state=rng)
        return split_windows(out, X.shape[1])

    def glance(self) -> pd.DataFrame:
        """``method, nobs, lookback, channels``."""
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "lookback": self.lookback,
                    "channels": int(self.scale.size),
                }
            ]
        )

    def tidy(self) -> pd.DataFrame:
        """One row per channel: ``channel, scale``."""
        return pd.DataFrame({"channel": np.arange(self.scale.size), "scale": self.scale})


class Augmenter(Estimator):
    """Base class of the window augmenters of :mod:`mlcore.augment`.

    The constructor takes the augmentation's settings; :meth:`fit` takes the training windows
    and returns an :class:`AugmenterResult` (the pooled within-window standard deviation per
    channel that the noise scales are relative to), whose ``generate`` draws new windows.
    Subclasses implement :meth:`transform_windows` on joint windows ``W`` (n, T, C) with
    ``T = lookback + horizon``.
    """

    @property
    def nobs(self) -> None:
        """None: an augmenter holds settings only; the windows come to :meth:`fit`."""
        return None

    def fit(self, X, Y, *, random_state=None, progress: bool = False) -> AugmenterResult:
        """Learn the windows' scale; returns a new :class:`AugmenterResult`.

        Parameters
        ----------
        X, Y : Tensor (n, lookback, C), (n, horizon, C)
        random_state : None, int or numpy Generator
            Unused by the baselines (they learn no random quantity); taken for the common
            signature.
        progress : bool
            Unused by the baselines; taken for the common signature.
        """
        check_windows(X, Y)
        check_random_state(random_state)
        check_bool(progress, name="progress")
        result = AugmenterResult(
            method=type(self).__name__,
            nobs=int(X.shape[0]),
            model=self,
            scale=as_numpy(within_window_scale(torch.cat([X, Y], dim=1)), name="scale"),
            lookback=int(X.shape[1]),
        )
        self._remember(result)
        return result

    def transform_windows(self, W, *, scale, random_state=None) -> torch.Tensor:
        """Augment joint windows ``W`` (n, T, C) given the per-channel ``scale`` (C,)."""
        raise NotImplementedError(f"{type(self).__name__} does not define transform_windows()")

    def _remember(self, result) -> None:
        # only for the deprecated model-level `generate` / attributes, removed with them
        self._last_fit = result

    def _fitted(self, name: str):
        _warn_model_level(type(self).__name__, name)
        fitted = getattr(self, "_last_fit", None)
        if fitted is None:
            raise RuntimeError(f"{type(self).__name__} is not fitted; call `fit(X, Y)` first")
        return fitted

    def generate(self, X, Y, *, n_copies: int = 1, random_state=None):
        """Deprecated (``FutureWarning``): ``aug.fit(X, Y).generate(...)`` instead."""
        return self._fitted("generate").generate(X, Y, n_copies=n_copies, random_state=random_state)

    @property
    def scale_(self):
        """Deprecated (``FutureWarning``): the fit's ``scale``, as a tensor."""
        return torch.as_tensor(self._fitted("scale_").scale)

    def _noise(self, shape, rng, W):
        gen = torch_generator(rng)
        return torch.randn(shape, generator=gen, dtype=W.dtype).to(W.device)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


class Jitter(Augmenter):
    """Add independent Gaussian noise to every value (tsaug ``AddNoise``; Um et al. 2017).

    Parameters
    ----------
    sigma : float
        Noise standard deviation in units of the within-window scale ``scale_``.

    References
    ----------
    Um et al. (2017), "Data augmentation of wearable sensor data for Parkinson's disease
    monitoring using convolutional neural networks", ICMI; tsaug (arundo/tsaug) ``AddNoise``.
    """

    def __init__(self, sigma: float = 0.1):
        self.sigma = check_positive(sigma, name="sigma")

    def transform_windows(self, W, *, scale, random_state=None):
        rng = check_random_state(random_state)
        return W + self.sigma * scale * self._noise(W.shape, rng, W)


class Scaling(Augmenter):
    """Multiply each window's deviation from its mean by a random factor ``N(1, sigma²)`` per
    channel (Um et al. 2017).

    The factor applies about the window mean, not zero, so a series far from zero (CO₂ at
    320 ppm) is not moved to another level.

    Parameters
    ----------
    sigma : float
        Standard deviation of the factor.

    References
    ----------
    Um et al. (2017), ICMI.
    """

    def __init__(self, sigma: float = 0.1):
        self.sigma = check_positive(sigma, name="sigma")

    def transform_windows(self, W, *, scale, random_state=None):
        rng = check_random_state(random_state)
        factor = 1 + self.sigma * self._noise((W.shape[0], 1, W.shape[2]), rng, W)
        mean = W.mean(dim=1, keepdim=True)
        return mean + factor * (W - mean)


class TimeWarp(Augmenter):
    """Resample each window along a random, smoothly varying time speed (tsaug ``TimeWarp``).

    The speed takes ``n_speed_change + 1`` random values in ``[1, max_speed_ratio]`` at evenly
    spaced knots, is interpolated linearly in between, and its cumulative sum, rescaled to the
    window, gives the warped sampling times; values are linearly interpolated there.

    Parameters
    ----------
    n_speed_change : int
    max_speed_ratio : float
        Largest ratio of the fastest to the slowest speed (> 1).

    References
    ----------
    tsaug (arundo/tsaug) ``TimeWarp``; Um et al. (2017), ICMI.
    """

    def __init__(self, n_speed_change: int = 3, max_speed_ratio: float = 1.5):
        self.n_speed_change = check_positive_int(n_speed_change, name="n_speed_change")
        self.max_speed_ratio = check_positive(max_speed_ratio, name="max_speed_ratio")
        if self.max_speed_ratio <= 1:
            raise ValueError(f"`max_speed_ratio` must be > 1; got {max_speed_ratio}")

    def transform_windows(self, W, *, scale, random_state=None):
        rng = check_random_state(random_state)
        n, T, C = W.shape
        knots = np.linspace(0, T - 1, self.n_speed_change + 1)
        speed = rng.uniform(1.0, self.max_speed_ratio, size=(n, knots.size))
        grid = np.arange(T)
        # the speed at every step, linear between the knots: one hat function per knot
        hats = np.stack([np.interp(grid, knots, row) for row in np.eye(knots.size)])
        s = speed @ hats
        t = np.concatenate([np.zeros((n, 1)), np.cumsum(s[:, :-1], axis=1)], axis=1)
        t *= (T - 1) / t[:, -1:]
        # linear interpolation of every window and channel at its warped times
        lo = np.clip(np.floor(t).astype(np.int64), 0, T - 2)
        frac = np.clip(t - lo, 0.0, 1.0)[..., None]
        values = W.detach().cpu().double().numpy()
        rows = np.arange(n)[:, None]
        out = values[rows, lo] * (1 - frac) + values[rows, lo + 1] * frac
        return torch.as_tensor(out, dtype=W.dtype, device=W.device)
