"""Real and "generated" digits, and the small digits CNN whose units DNA reads.

The study of :mod:`mlcore.analysis.forgery` (its tests and vignette) needs images that share
their content and differ only by a generator trace, and a trained backbone that was never told
about generated images. Both come from scikit-learn's 8x8 digits, so nothing is downloaded.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from mlcore._checks import check_tensor
from mlcore._toy_training import train_toy_classifier
from statcore.validation import as_class_labels, check_positive_int, check_random_state

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


__all__ = ["digit_backbone", "upsampled_digits"]
