"""Real and "generated" digits, the small digits CNN whose units DNA reads, and planted units.

The study of :mod:`mlcore.analysis.forgery` (its tests and vignette) needs images that share
their content and differ only by a generator trace, and a trained backbone that was never told
about generated images. Both come from scikit-learn's 8x8 digits, so nothing is downloaded.
:func:`planted_units` gives a layer's activations directly, with the trace in a known set of
units (or spread over all of them, the control under which the paper's claim should fail).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from mlcore._checks import check_tensor
from mlcore._toy_training import train_toy_classifier
from statcore.validation import (
    as_class_labels,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
)

#: A separable 3x3 smoothing kernel, made slightly anisotropic so that zero insertion followed
#: by it leaves the checkerboard a transposed convolution leaves in decoded images.
_SMOOTH = torch.tensor([[0.25, 0.5, 0.25], [0.5, 1.0, 0.5], [0.25, 0.5, 0.25]])
_ANISOTROPY = torch.tensor([[1.3, 0.7, 1.3], [0.7, 1.0, 0.7], [1.3, 0.7, 1.3]])


def upsampled_digits() -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """scikit-learn's 1,797 digits at 16x16, once "real" and once "generated".

    Real images are bilinear 2x upsamplings of the 8x8 digits; generated ones are the same digits
    upsampled by zero insertion and a fixed 3x3 kernel (a transposed convolution), whose faint
    checkerboard is the classic decoder trace. Content is shared; only the trace differs.

    Returns
    -------
    real, fake : torch.Tensor of shape (1797, 1, 16, 16)
        Pixels in [0, 1] (float32).
    labels : numpy.ndarray of shape (1797,)
        The digit of each image (the same for ``real[i]`` and ``fake[i]``).

    Notes
    -----
    Fidelity: a stand-in for the paper's generated-image benchmarks (Dou et al. 2026,
    arXiv:2601.22515), small enough for a CPU test; the kernel's constants are ours.
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    small = torch.tensor(digits.images / 16.0, dtype=torch.float32)[:, None]
    real = nn.functional.interpolate(small, scale_factor=2, mode="bilinear", align_corners=False)
    inserted = torch.zeros(len(small), 1, 16, 16)
    inserted[:, :, ::2, ::2] = small
    kernel = (_SMOOTH * _ANISOTROPY)[None, None]
    fake = nn.functional.conv2d(inserted, kernel, padding=1)
    return real, fake, digits.target


def digit_backbone(
    images: torch.Tensor,
    labels,
    *,
    n_train: int = 1200,
    epochs: int = 4,
    batch_size: int = 64,
    lr: float = 3e-3,
    random_state=0,
) -> tuple[nn.Sequential, np.ndarray, np.ndarray]:
    """A small CNN trained to classify 16x16 digits (the backbone DNA reads).

    Three convolutions with ReLU and two max-pools, then a linear layer over 10 classes; its
    ``nn.Sequential`` names ``"1"``, ``"3"``, ``"6"`` and ``"9"`` are the layers a study reads.
    Adam on the cross-entropy of ``n_train`` images drawn at random; the rest are the pool the
    study draws its shots and held-out images from.

    Parameters
    ----------
    images : torch.Tensor of shape (n, 1, 16, 16)
        The real images (:func:`upsampled_digits`).
    labels : array_like of shape (n,)
        Digits 0..9.
    n_train, epochs, batch_size, lr
        The training split's size and the optimiser's settings.
    random_state : None, int or numpy Generator
        Draws the split (numpy), the initial weights and the batch order (torch, seeded with an
        int as it is); torch's global RNG is left as it was.

    Returns
    -------
    net : torch.nn.Sequential
        In eval mode.
    train, pool : numpy.ndarray of int
        Indices of the training images and of the others.
    """
    check_tensor(images, name="images", dims=("n", "channel", "height", "width"),
                 sizes={"channel": 1, "height": 16, "width": 16}, kind="floating",
                 nonempty=True, finite=True)  # fmt: skip
    labels = as_class_labels(labels, name="labels", n=len(images))
    if labels.min() < 0 or labels.max() > 9:
        raise ValueError("`labels` must be digits 0..9")
    n_train = check_positive_int(n_train, name="n_train")
    if n_train >= len(labels):
        raise ValueError(f"`n_train` must leave a pool: below {len(labels)}; got {n_train}")
    rng = check_random_state(random_state)
    order = rng.permutation(len(labels))
    train, pool = order[:n_train], order[n_train:]
    net = train_toy_classifier(
        _digit_cnn,
        images[train],
        torch.as_tensor(labels[train]),
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        random_state=rng if random_state is None else random_state,
    )
    return net, train, pool


def _digit_cnn() -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(256, 10),
    )


SPREADS = ("sparse", "dense")


def planted_units(
    n_real: int,
    n_fake: int,
    *,
    n_units: int = 256,
    n_signal: int = 8,
    shift: float = 1.5,
    spread: str = "sparse",
    n_classes: int = 5,
    content_dim: int = 10,
    random_state=None,
) -> tuple[torch.Tensor, torch.Tensor, np.ndarray, np.ndarray]:
    """A layer's pooled activations for real and generated images, the trace in known units.

    Each image has a content class (``n_classes``, drawn uniformly); its units are the class
    centre (``content_dim`` latent factors, centres ``N(0, 4 I)``, loaded onto the units by a
    ``N(0, 1/content_dim)`` matrix) plus ``N(0, I)`` noise. Generated images add a mean shift:

    - ``spread="sparse"``: ``shift`` (in noise standard deviations) on the first ``n_signal``
      units, the paper's premise of a few forgery-discriminative units;
    - ``spread="dense"``: ``shift * sqrt(n_signal / n_units)`` on every unit, the same squared
      length of the shift (so the same Bayes-optimal separability under the identity noise),
      spread thin: the control under which a probe on a few selected units should lose to one
      on the whole layer.

    Parameters
    ----------
    n_real, n_fake : int
        Rows of each group (take the shots and the held-out images from one call: they share
        the loadings).
    n_units, n_signal : int
        Layer width and planted units (``n_signal <= n_units``).
    shift : float > 0
    spread : {"sparse", "dense"}
    n_classes, content_dim : int
    random_state : None, int or numpy Generator

    Returns
    -------
    real, fake : torch.Tensor of shape (n_real, n_units), (n_fake, n_units)
        float32; fed through ``nn.Sequential(nn.Identity())`` they are layer ``"0"``'s output.
    real_labels, fake_labels : numpy.ndarray of int
        Content classes.

    Notes
    -----
    Fidelity: a simulation of this package's (the paper's premise as its abstract states it, a
    sparse set of units carrying the trace); not from the paper.
    """
    n_real = check_positive_int(n_real, name="n_real")
    n_fake = check_positive_int(n_fake, name="n_fake")
    n_units = check_positive_int(n_units, name="n_units")
    n_signal = check_positive_int(n_signal, name="n_signal")
    if n_signal > n_units:
        raise ValueError(f"`n_signal` must be at most `n_units` ({n_units}); got {n_signal}")
    shift = check_positive(shift, name="shift")
    spread = check_option(spread, name="spread", options=SPREADS)
    n_classes = check_positive_int(n_classes, name="n_classes", minimum=2)
    content_dim = check_positive_int(content_dim, name="content_dim")
    rng = check_random_state(random_state)
    centres = 2.0 * rng.normal(size=(n_classes, content_dim))
    loadings = rng.normal(size=(content_dim, n_units)) / np.sqrt(content_dim)
    labels = rng.integers(0, n_classes, size=n_real + n_fake)
    units = centres[labels] @ loadings + rng.normal(size=(n_real + n_fake, n_units))
    trace = np.zeros(n_units)
    if spread == "sparse":
        trace[:n_signal] = shift
    else:
        trace[:] = shift * np.sqrt(n_signal / n_units)
    units[n_real:] += trace
    units = torch.tensor(units, dtype=torch.float32)
    return units[:n_real], units[n_real:], labels[:n_real], labels[n_real:]


__all__ = ["digit_backbone", "planted_units", "upsampled_digits"]
