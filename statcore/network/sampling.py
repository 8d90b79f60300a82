"""Drawing graphs from latent space parameters: O(edges) envelope thinning, dense fallback."""

from __future__ import annotations

import numpy as np

from statcore._validation import check_random_state
from statcore.network import _kernels
from statcore.network.graph import to_networkx

# the envelope pays off while its expected proposals stay below this share of all pairs
ENVELOPE_SHARE = 0.05
# pairs per block of the dense sampler (uniforms for one block: 80 MB)
DENSE_BLOCK = 10_000_000


def expected_proposals(Z, alpha, rho) -> float:
    """Upper bound of the envelope's expected number of candidate pairs, sum_{i<j} w_i w_j."""
    weights = _envelope_weights(Z, alpha, rho)
    total = weights.sum()
    return float(0.5 * (total * total - (weights * weights).sum()))


def _envelope_weights(Z, alpha, rho):
    return np.exp(alpha + 0.5 * rho + 0.5 * np.einsum("ij,ij->i", Z, Z))


def sample_edge_arrays(Z, alpha, rho, rng, method="auto"):
    """Edge endpoints ``(rows, cols)``, rows < cols, of one draw; and the method used.

    ``method="envelope"`` thins a rank-one Chung-Lu envelope (exact, work O(n + proposals),
    which is O(edges) when the latent norms are moderate); ``"dense"`` draws every pair (O(n^2)
    work, O(block) memory); ``"auto"`` picks the envelope when its expected proposals are below
    5% of all pairs.
    """
    n = Z.shape[0]
    n_pairs = n * (n - 1) / 2
    proposals = expected_proposals(Z, alpha, rho)
    if method == "auto":
        method = "envelope" if proposals < ENVELOPE_SHARE * n_pairs else "dense"
    if method == "envelope":
        return (*_sample_envelope(Z, alpha, rho, rng, proposals), "envelope")
    return (*_sample_dense(Z, alpha, rho, rng), "dense")


def _sample_envelope(Z, alpha, rho, rng, proposals):
    weights = _envelope_weights(Z, alpha, rho)
    order = np.argsort(-weights, kind="stable").astype(np.int64)
    sorted_weights = np.ascontiguousarray(weights[order])
    size = int(3 * proposals + 4 * Z.shape[0] + 1024)
    while True:
        uniforms = rng.random(size)
        rows = np.empty(size // 2 + 1, dtype=np.int64)
        cols = np.empty(size // 2 + 1, dtype=np.int64)
        count, used = _kernels.sample_envelope(
            Z, alpha, rho, order, sorted_weights, uniforms, rows, cols
        )
        if used >= 0:
            return rows[:count], cols[:count]
        # buffer too small: draw a larger one; the result stays a function of the stream
        size *= 2


def _sample_dense(Z, alpha, rho, rng):
    n = Z.shape[0]
    pieces_r, pieces_c = [], []
    first = 0
    while first < n - 1:
        last, pairs = first, 0
        while last < n - 1 and (pairs == 0 or pairs + (n - 1 - last) <= DENSE_BLOCK):
            pairs += n - 1 - last
            last += 1
        uniforms = rng.random(pairs)
        rows = np.empty(pairs, dtype=np.int64)
        cols = np.empty(pairs, dtype=np.int64)
        count = _kernels.sample_dense_rows(Z, alpha, rho, first, uniforms, rows, cols)
        pieces_r.append(rows[:count])
        pieces_c.append(cols[:count])
        first = last
    return np.concatenate(pieces_r), np.concatenate(pieces_c)


def sample_edges(Z, alpha, rho, random_state=None, method="auto"):
    """One networkx graph on nodes 0..n-1 with edge probabilities sigmoid(Theta_ij)."""
    rng = check_random_state(random_state)
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    rows, cols, _ = sample_edge_arrays(Z, alpha, float(rho), rng, method=method)
    return to_networkx(Z.shape[0], rows, cols)
