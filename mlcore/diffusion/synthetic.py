"""The few-step synthetic task of IMDM: pairs (a, a), where one-step masked diffusion fails."""

from __future__ import annotations

import math

import numpy as np
import torch

from mlcore._device import as_numpy
from statcore.validation import check_positive_int, check_random_state


def paired_tokens(n: int, n_tokens: int = 8, random_state=None, *, device=None) -> torch.Tensor:
    """``n`` sequences (a, a) with ``a`` uniform on ``0 .. n_tokens - 1`` (int64 (n, 2)).

    The two positions are perfectly dependent (mutual information ``log K``), yet each is
    uniform: a one-step masked-diffusion model, which samples positions independently from
    their marginals, is valid with probability ``1/K`` only.

    References
    ----------
    Infinite Mask Diffusion Model (IMDM). arXiv:2605.10518, *ICML 2026*.
    """
    n = check_positive_int(n, name="n")
    n_tokens = check_positive_int(n_tokens, name="n_tokens", minimum=2)
    a = check_random_state(random_state).integers(0, n_tokens, size=n)
    return torch.as_tensor(np.stack([a, a], axis=1), dtype=torch.int64, device=device)


def _pairs(samples, n_tokens=None):
    """Token pairs as an int64 array; with ``n_tokens``, ids must lie in [0, n_tokens)."""
    x = as_numpy(samples, name="samples")
    if x.ndim != 2 or x.shape[1] != 2:
        raise ValueError(f"`samples` must be (n, 2) token pairs; got shape {x.shape}")
    if x.dtype != np.int64:
        raise TypeError(f"`samples` must hold integer token ids; got dtype {x.dtype}")
    if not len(x):
        raise ValueError("`samples` must hold at least one pair; got shape (0, 2)")
    # an id past the vocabulary would be counted as a new token (or index past the table)
    if n_tokens is not None and (x.min() < 0 or x.max() >= n_tokens):
        raise ValueError(
            f"`samples` must hold token ids in [0, {n_tokens - 1}]; got ids from {x.min()} to "
            f"{x.max()}"
        )
    return x


def pair_validity(samples) -> float:
    """Fraction of sampled pairs that are valid (both tokens equal)."""
    x = _pairs(samples)
    return float(np.mean(x[:, 0] == x[:, 1]))


def marginal_entropy(samples, n_tokens: int) -> float:
    """Entropy (nats) of the tokens' empirical marginal over all positions; ``log K`` at most."""
    n_tokens = check_positive_int(n_tokens, name="n_tokens")
    x = _pairs(samples, n_tokens)
    counts = np.bincount(x.ravel(), minlength=n_tokens)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def pair_kl_to_data(samples, n_tokens: int) -> float:
    """KL (nats) from the sampled joint distribution of pairs to the data's (uniform on valid).

    Infinite where a sampled pair is invalid, so it is computed the other way round, as
    :math:`KL(data \\| samples)` with additive smoothing of half a count per cell.
    """
    k = check_positive_int(n_tokens, name="n_tokens")
    x = _pairs(samples, k)
    joint = np.full((k, k), 0.5)
    np.add.at(joint, (x[:, 0], x[:, 1]), 1.0)
    joint /= joint.sum()
    return float(np.mean([math.log((1 / k) / joint[a, a]) for a in range(k)]))
