"""The augmenter API and the ``tsaug``-style baselines: jitter, scaling, time warp.

An augmenter transforms whole windows, lookback and horizon together, so that an augmented
target stays the continuation of its augmented input. ``fit`` learns what the augmenter needs
from the training windows (here only their scale); ``generate`` returns new windows.
"""

from __future__ import annotations

import numpy as np
import torch

from mlcore.augment.forecasters import check_windows, torch_seed
from statcore.validation import check_positive, check_positive_int, check_random_state

__all__ = ["Augmenter", "Jitter", "Scaling", "TimeWarp"]


def within_window_scale(W: torch.Tensor) -> torch.Tensor:
    """Pooled within-window standard deviation per channel of windows (n, T, C): the size of
    the local variation, which a trend across windows would inflate in a global std."""
    centred = W - W.mean(dim=1, keepdim=True)
    scale = centred.pow(2).mean(dim=(0, 1)).sqrt()
    return torch.where(scale > 0, scale, torch.ones_like(scale))


class Augmenter:
    """Base class of the window augmenters of :mod:`mlcore.augment`.

    Subclasses implement ``_transform(W, rng)`` on joint windows ``W`` (n, T, C) with
    ``T = lookback + horizon``; ``fit`` stores ``scale_``, the pooled within-window standard
    deviation per channel that the noise scales are relative to.
    """

    #: Whether ``generate`` picks windows itself (ReAugment's anchors) or transforms all.
    selects_windows = False

    def fit(self, X, Y, *, random_state=None, progress: bool = False):
        """Learn the windows' scale; return self."""
        check_windows(X, Y)
        self.scale_ = within_window_scale(torch.cat([X, Y], dim=1))
        return self

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
        if not hasattr(self, "scale_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call `fit(X, Y)` first")
        n_copies = check_positive_int(n_copies, name="n_copies")
        rng = check_random_state(random_state)
        W = torch.cat([X, Y], dim=1).repeat(n_copies, 1, 1)
        with torch.no_grad():
            out = self._transform(W, rng)
        L = X.shape[1]
        return out[:, :L].contiguous(), out[:, L:].contiguous()

    def _noise(self, shape, rng, W):
        gen = torch.Generator().manual_seed(torch_seed(rng))
        return torch.randn(shape, generator=gen, dtype=W.dtype).to(W.device)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.endswith("_"))
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

    def _transform(self, W, rng):
        return W + self.sigma * self.scale_ * self._noise(W.shape, rng, W)


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

    def _transform(self, W, rng):
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

    def _transform(self, W, rng):
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
