"""The few-step synthetic task of IMDM: pairs (a, a), where one-step masked diffusion fails."""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from mlcore._device import as_numpy, torch_generator, torch_global_seed
from mlcore.diffusion.denoiser import TinyDenoiser
from mlcore.diffusion.imdm import imdm_elbo_loss
from statcore.validation import check_positive_int, check_random_state, check_scalar


def paired_tokens(n: int, n_tokens: int = 8, random_state=None, *, device=None) -> torch.Tensor:
    """``n`` sequences (a, a) with ``a`` uniform on ``0, ..., n_tokens - 1`` (int64 (n, 2)).

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


def train_paired_denoiser(
    n_tokens: int = 8, *, steps: int = 600, batch_size: int = 256, random_state: int = 0
) -> TinyDenoiser:
    """A :class:`~mlcore.diffusion.TinyDenoiser` trained on :func:`paired_tokens` by the ELBO.

    The starting point of the IMDM studies: Adam (lr 1e-3) on :func:`imdm_elbo_loss` for
    ``steps`` fresh batches (batch ``s`` drawn with seed ``s``), 8 noise dimensions and 128
    hidden units. Trained this way it is an ordinary masked-diffusion model, capped at
    validity ``1/K`` in one step.

    Parameters
    ----------
    n_tokens : int
        K, the vocabulary of the pairs.
    steps, batch_size : int
    random_state : int
        Seeds the initial weights (torch, as it is) and the ELBO's noise draws; torch's global
        RNG is left as it was.

    Returns
    -------
    TinyDenoiser
    """
    n_tokens = check_positive_int(n_tokens, name="n_tokens", minimum=2)
    steps = check_positive_int(steps, name="steps")
    batch_size = check_positive_int(batch_size, name="batch_size")
    seed = check_scalar(random_state, name="random_state", kind=numbers.Integral, low=0)
    noise = torch_generator(seed)
    with torch_global_seed(seed):  # nn.Module initialisers draw from the global RNG only
        model = TinyDenoiser(n_tokens, 2, noise_dim=8, hidden=128)
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    for step in range(steps):
        batch = paired_tokens(batch_size, n_tokens, random_state=step)
        loss = imdm_elbo_loss(model, batch, random_state=noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model
