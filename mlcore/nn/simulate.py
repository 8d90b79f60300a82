"""Synthetic token sequences with a known dependency range (for positional-embedding studies)."""

from __future__ import annotations

import numbers

import numpy as np
import torch

from mlcore._device import torch_generator, torch_global_seed
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


def local_copy_val_loss(
    pos: str,
    n_train: int,
    *,
    sigmas=None,
    vocab: int = 16,
    length: int = 32,
    window: int = 8,
    steps: int = 200,
    n_val: int = 256,
    val_seed: int = 99,
    random_state: int = 0,
) -> float:
    """Validation loss of a small :class:`~mlcore.nn.TinyTransformer` after a fixed budget.

    The sample-efficiency study of HIPE: a two-layer, two-head, width-32 language model with
    positional scheme ``pos`` is trained for ``steps`` AdamW steps (lr 3e-3, weight decay 0.1,
    batches of 16) on ``n_train`` :func:`local_copy_sequences`, then scored by its
    cross-entropy on the tokens after the first ``window`` of ``n_val`` fresh sequences.

    Parameters
    ----------
    pos : {"rope", "hipe", ...}
        As in :class:`~mlcore.nn.TinyTransformer`; ``sigmas`` are HIPE's place-field widths.
    n_train : int
        Training sequences.
    vocab, length, window
        As in :func:`local_copy_sequences`.
    steps, n_val, val_seed
        The training budget, and the size and seed of the validation set (fixed, so that runs
        with different ``random_state`` are scored on the same sequences).
    random_state : int
        Seeds the initial weights and the batches (torch, as it is) and the training sequences
        (``1000 + random_state``, apart from the validation seed); torch's global RNG is left
        as it was.

    Returns
    -------
    float
        Mean next-token cross-entropy in nats (``log(vocab)`` for a uniform predictor).

    References
    ----------
    Zhou, S. and Chen, G. The hippocampal place field gradient: a bio-inspired framework
    building multiscale representation for better sample efficiency. *ICML 2026*.
    """
    from torch.nn import functional as F

    from mlcore.nn.transformer import TinyTransformer

    seed = check_scalar(random_state, name="random_state", kind=numbers.Integral, low=0)
    n_train = check_positive_int(n_train, name="n_train")
    steps = check_positive_int(steps, name="steps")
    train = local_copy_sequences(n_train, length, vocab, window, random_state=1000 + seed)
    val = local_copy_sequences(n_val, length, vocab, window, random_state=val_seed)
    batches = torch_generator(seed)
    with torch_global_seed(seed):  # nn.Module initialisers draw from the global RNG only
        lm = TinyTransformer(vocab, 32, 2, 2, pos=pos, sigmas=sigmas)
    opt = torch.optim.AdamW(lm.parameters(), lr=3e-3, weight_decay=0.1)
    for _ in range(steps):
        batch = train[torch.randint(0, n_train, (16,), generator=batches)]
        loss = F.cross_entropy(lm(batch[:, :-1]).reshape(-1, vocab), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    lm.eval()
    with torch.no_grad():
        logits = lm(val[:, :-1])[:, window - 1 :]
        return float(F.cross_entropy(logits.reshape(-1, vocab), val[:, window:].reshape(-1)))
