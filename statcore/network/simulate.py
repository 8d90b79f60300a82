"""The SyNGLER paper's sparse latent-space simulation design."""

from __future__ import annotations

import numpy as np

from statcore.network.sampling import sample_edges
from statcore.validation import check_positive, check_positive_int, check_random_state


def sparse_latent_design(n: int = 500, dim: int = 2, sparse_level: float = 0.4, random_state=None):
    """True latents of the paper's sparse simulation.

    Z is a two-component clipped Gaussian mixture (N(0, I/r) clipped to +-2/sqrt(r), plus one of
    two centres drawn from U[-1, 1]^r), rescaled so that ``|Z Z'|_F = n``, then centred;
    ``alpha ~ U(-0.5, 0.5)`` centred; ``rho = -sparse_level * log(n)`` (expected degrees grow
    like ``n^(1 - sparse_level)``).

    Returns
    -------
    Z : ndarray (n, dim), alpha : ndarray (n,), rho : float

    References
    ----------
    Jiang, F. et al. (2026). SyNGLER: Synthetic network generation via latent embedding
    reconstruction. ICML 2026 (sparse simulation, appendix).
    """
    n = check_positive_int(n, name="n", minimum=3)
    dim = check_positive_int(dim, name="dim")
    sparse_level = check_positive(sparse_level, name="sparse_level", strict=False)
    rng = check_random_state(random_state)
    bound = 2.0 / np.sqrt(dim)
    noise = np.clip(rng.normal(scale=1.0 / np.sqrt(dim), size=(n, dim)), -bound, bound)
    centres = rng.uniform(-1.0, 1.0, size=(2, dim))
    Z = noise + centres[rng.integers(0, 2, size=n)]
    # |Z Z.T|_F = |Z.T Z|_F: the r x r Gram matrix gives the norm without an n x n array
    Z *= np.sqrt(n / np.linalg.norm(Z.T @ Z))
    Z -= Z.mean(axis=0)
    alpha = rng.uniform(-0.5, 0.5, size=n)
    alpha -= alpha.mean()
    return np.ascontiguousarray(Z), alpha, -sparse_level * np.log(n)


def sample_latent_graph(Z, alpha, rho, random_state=None):
    """One graph from the latent space model with the given parameters (a networkx Graph)."""
    return sample_edges(Z, alpha, rho, random_state=random_state)
