"""A seeded synthetic token corpus and random training windows of it."""

from __future__ import annotations

import numpy as np
import torch

from mlcore._checks import check_tensor
from statcore.validation import check_positive_int, check_random_state

__all__ = ["batches", "synthetic_corpus"]


def synthetic_corpus(
    n_tokens: int = 20_000, *, vocab_size: int = 32, random_state=0
) -> torch.Tensor:
    """A seeded second-order Markov "grammar": each pair of tokens has a few likely successors
    (Dirichlet(0.1) transition rows), so a small LM learns it in seconds and its perplexity is
    far below ``vocab_size``. Returns a 1-D int64 tensor."""
    n_tokens = check_positive_int(n_tokens, name="n_tokens", minimum=3)
    vocab_size = check_positive_int(vocab_size, name="vocab_size", minimum=2)
    rng = check_random_state(random_state)
    table = rng.dirichlet(np.full(vocab_size, 0.1), size=(vocab_size, vocab_size))
    cdf = table.cumsum(axis=-1)
    u = rng.random(n_tokens)
    out = np.empty(n_tokens, dtype=np.int64)
    out[:2] = rng.integers(vocab_size, size=2)
    for t in range(2, n_tokens):
        out[t] = min(np.searchsorted(cdf[out[t - 2], out[t - 1]], u[t]), vocab_size - 1)
    return torch.from_numpy(out)


def batches(corpus: torch.Tensor, *, seq_len: int, batch_size: int, n_batches: int, random_state=0):
    """``n_batches`` random windows ``(batch_size, seq_len + 1)`` of a 1-D token corpus."""
    check_tensor(corpus, name="corpus", ndim=1, kind="integer")
    seq_len = check_positive_int(seq_len, name="seq_len")
    if corpus.numel() <= seq_len + 1:
        raise ValueError(f"`corpus` has {corpus.numel()} tokens; windows need {seq_len + 2}")
    batch_size = check_positive_int(batch_size, name="batch_size")
    n_batches = check_positive_int(n_batches, name="n_batches")
    rng = check_random_state(random_state)
    offsets = torch.arange(seq_len + 1)
    out = []
    for _ in range(n_batches):
        starts = rng.integers(0, corpus.numel() - seq_len - 1, size=batch_size)
        out.append(corpus[torch.from_numpy(starts)[:, None] + offsets])
    return out
