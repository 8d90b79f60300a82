"""The digits source model that test-time adaptation starts from.

Tent and CONGA adapt a trained network with batch normalisation to corrupted inputs; the
studies (tests and vignette) train that source on clean scikit-learn digits, here, once.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from mlcore._toy_training import train_toy_classifier
from statcore.validation import check_positive_int, check_random_state


def digits_split(
    n_train: int = 1000, random_state=0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's 1,797 8x8 digits in [0, 1], split at random into training and test rows.

    Parameters
    ----------
    n_train : int
        Training rows; the others are the test rows.
    random_state : None, int or numpy Generator
        Draws the split.

    Returns
    -------
    images : numpy.ndarray of shape (1797, 8, 8)
    labels : numpy.ndarray of shape (1797,)
    train, test : numpy.ndarray of int
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    n_train = check_positive_int(n_train, name="n_train")
    if n_train >= len(digits.target):
        raise ValueError(
            f"`n_train` must leave test rows: below {len(digits.target)}; got {n_train}"
        )
    order = check_random_state(random_state).permutation(len(digits.target))
    return digits.images / 16.0, digits.target, order[:n_train], order[n_train:]


def digits_source_model(
    inputs: torch.Tensor,
    targets: torch.Tensor,
    *,
    epochs: int = 30,
    batch_size: int = 100,
    lr: float = 1e-2,
    random_state=0,
) -> nn.Sequential:
    """A batch-normalised MLP (64-64-64-10) trained on clean digits: the model Tent adapts.

    Parameters
    ----------
    inputs : torch.Tensor of shape (n, 8, 8)
    targets : torch.Tensor of shape (n,)
        Class indices 0..9.
    epochs, batch_size, lr
        Adam on the cross-entropy.
    random_state : None, int, numpy Generator or torch.Generator
        Seeds the initial weights and the batch order (an int as it is); torch's global RNG is
        left as it was.

    Returns
    -------
    torch.nn.Sequential
        In eval mode, so that its batch-norm statistics are the source's until Tent adapts them.
    """
    if inputs.ndim != 3 or inputs.shape[1:] != (8, 8) or len(inputs) != len(targets):
        raise ValueError(
            "`inputs` must be (n, 8, 8) with one target each; got "
            f"{tuple(inputs.shape)} inputs and {tuple(targets.shape)} targets"
        )
    return train_toy_classifier(
        _bn_mlp,
        inputs,
        targets,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        random_state=random_state,
    )


def _bn_mlp() -> nn.Sequential:
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, 64),
        nn.BatchNorm1d(64),
        nn.ReLU(),
        nn.Linear(64, 64),
        nn.BatchNorm1d(64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


__all__ = ["digits_source_model", "digits_split"]
