"""Synthetic token sequences with a known dependency range (for positional-embedding studies)."""

from __future__ import annotations

import numpy as np
import torch

from statcore.validation import check_positive_int, check_random_state, check_scalar


def local_copy_sequences(
    n, length, vocab, window, noise=0.1, random_state=None, *, device=None
) -> torch.Tensor:
    """Sequences whose next token copies one of the previous ``window`` tokens.

    The first ``window`` tokens are uniform; then, with probability ``1 - noise``, token ``t``
    copies token ``t - j`` with ``j`` uniform on ``1 .. window``, and otherwise is uniform.
    The dependency is local and smooth over a range of ``window`` tokens, the kind of
    structure a place field of matching width describes.

    Parameters
    ----------
    n, length, vocab, window : int
        Number of sequences, their length (> window), vocabulary size, dependency range.
    noise : float
        Probability in [0, 1] of a uniform token instead of a copy.
    random_state : None, int, SeedSequence or Generator
    device : optional
        Where the returned tensor lives.

    Returns
    -------
    Tensor
        int64 (n, length).

    References
    ----------
    Zhou, S. and Chen, G. The hippocampal place field gradient: a bio-inspired framework
    building multiscale representation for better sample efficiency. *ICML 2026*.
    """
    n = check_positive_int(n, name="n")
    window = check_positive_int(window, name="window")
    length = check_positive_int(length, name="length", minimum=window + 1)
    vocab = check_positive_int(vocab, name="vocab", minimum=2)
    noise = check_scalar(noise, name="noise", low=0.0, high=1.0)
    rng = check_random_state(random_state)
    x = rng.integers(0, vocab, size=(n, length))
    copy = rng.random((n, length)) >= noise
    lag = rng.integers(1, window + 1, size=(n, length))
    rows = np.arange(n)
    for t in range(window, length):
        x[:, t] = np.where(copy[:, t], x[rows, t - lag[:, t]], x[:, t])
    return torch.as_tensor(x, dtype=torch.int64, device=device)
