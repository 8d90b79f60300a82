"""Synthetic image corruptions for test-time-adaptation streams (a small "-C" benchmark)."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from statcore.validation import as_float_array, check_option, check_positive, check_random_state

CORRUPTIONS = ("gaussian_noise", "blur", "contrast", "shift")


def corrupt_images(images, kind: str, severity: float = 1.0, random_state=None) -> np.ndarray:
    """Corrupt images with values in [0, 1], in the spirit of ImageNet-C / CIFAR-C.

    Parameters
    ----------
    images : array_like of shape (n, height, width) or (n, channels, height, width)
    kind : {"gaussian_noise", "blur", "contrast", "shift"}
        - ``gaussian_noise``: add N(0, (0.15 severity)^2) noise;
        - ``blur``: Gaussian blur with standard deviation 0.6 severity pixels;
        - ``contrast``: shrink towards each image's mean by 1 / (1 + severity);
        - ``shift``: translate each image by a random offset of up to ``round(severity)``
          pixels per axis (zero fill).
    severity : float
        Strength (> 0).
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray
        The corrupted images, clipped to [0, 1] (float64, a new array).

    Raises
    ------
    ValueError
        For values outside [0, 1] (the clipping would silently flatten them: rescale first).

    References
    ----------
    Hendrycks, D. and Dietterich, T. (2019). Benchmarking neural network robustness to common
    corruptions and perturbations. *ICLR 2019*.
    """
    x = as_float_array(images, name="images", ndim=(3, 4))
    if x.size and (x.min() < 0.0 or x.max() > 1.0):
        raise ValueError(
            f"`images` must have values in [0, 1]; got values from {x.min():g} to {x.max():g}"
        )
    check_option(kind, name="kind", options=CORRUPTIONS)
    severity = check_positive(severity, name="severity")
    rng = check_random_state(random_state)
    spatial = (x.ndim - 2, x.ndim - 1)
    if kind == "gaussian_noise":
        x = x + rng.normal(scale=0.15 * severity, size=x.shape)
    elif kind == "blur":
        sigma = [0.0] * x.ndim
        for axis in spatial:
            sigma[axis] = 0.6 * severity
        x = ndimage.gaussian_filter(x, sigma=sigma)
    elif kind == "contrast":
        mean = x.mean(axis=spatial, keepdims=True)
        x = mean + (x - mean) / (1.0 + severity)
    else:
        reach = max(1, round(severity))
        out = np.zeros_like(x)
        for i, offset in enumerate(rng.integers(-reach, reach + 1, size=(len(x), 2))):
            out[i] = ndimage.shift(x[i], [0] * (x.ndim - 3) + list(offset), order=0, cval=0.0)
        x = out
    return np.clip(x, 0.0, 1.0)
