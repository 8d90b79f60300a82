"""The small supervised training the study generators share (digits backbones and sources).

Each generator builds a toy classifier and trains it with Adam on the cross-entropy; the
recipe and its seeding live here once, so that every study network is drawn the same way.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from mlcore._device import torch_generator, torch_global_seed
from statcore.validation import check_positive, check_positive_int


def train_toy_classifier(
    build: Callable[[], nn.Module],
    inputs: torch.Tensor,
    targets: torch.Tensor,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    random_state,
) -> nn.Module:
    """Build a classifier with ``build()`` and train it with Adam on the cross-entropy.

    Parameters
    ----------
    build : callable
        Returns the untrained ``nn.Module`` (its initialisers draw the initial weights).
    inputs, targets : torch.Tensor
        The training set; ``targets`` holds class indices.
    epochs, batch_size, lr
        Passes over the set, the mini-batch size, Adam's learning rate.
    random_state : None, int, numpy Generator or torch.Generator
        Seeds the initial weights and the batch order. An int seeds torch as it is
        (:func:`mlcore._device.torch_generator`'s rule); torch's global RNG is left as it was.

    Returns
    -------
    torch.nn.Module
        In eval mode.
    """
    epochs = check_positive_int(epochs, name="epochs")
    batch_size = check_positive_int(batch_size, name="batch_size")
    lr = check_positive(lr, name="lr")
    # nn.Module initialisers draw from the global RNG only
    with torch_global_seed(torch_generator(random_state).initial_seed()):
        net = build()
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        for _ in range(epochs):
            for idx in torch.randperm(len(targets)).split(batch_size):
                opt.zero_grad()
                nn.functional.cross_entropy(net(inputs[idx]), targets[idx]).backward()
                opt.step()
    return net.eval()
