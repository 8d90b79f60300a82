"""Drawing graphs from latent space parameters: O(edges) envelope thinning, dense fallback."""

from __future__ import annotations

import numpy as np

from statcore.compat import renamed_keywords
from statcore.network import _kernels
from statcore.network.graph import to_networkx
from statcore.validation import check_random_state

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


@renamed_keywords(rng="random_state")
def sample_edge_arrays(Z, alpha, rho, random_state=None, method="auto"):
    """Edge endpoints ``(rows, cols)``, rows < cols, of one draw; and the method used.

    ``Z``, ``alpha`` are float64 C-contiguous arrays; ``random_state`` (None, int or Generator;
    ``rng=`` is its old spelling, warning ``FutureWarning``) supplies every draw.

    ``method="blocks"`` thins a Poisson process over a block-wise rank-one envelope (exact,
    work O(n + blocks^2 + proposals), proposals a small multiple of the edges; see
    ``_sample_blocks``); ``"envelope"`` thins one global rank-one Chung-Lu envelope
    (exact, O(n + proposals), but its proposals grow like ``exp(|z_i|^2 / 2)`` with the
    latent norms); ``"dense"`` draws every pair (O(n^2) work, O(block) memory); ``"auto"``
    takes the global envelope, else the blocks, whichever first has expected proposals below
    5% of all pairs, else dense.
    """
    rng = check_random_state(random_state)
    n = Z.shape[0]
    n_pairs = n * (n - 1) / 2
    if method == "auto":
        # the global envelope's numba pass is ~6x cheaper per proposal than the blocks' numpy
        # one, so it goes first; the blocks take over where large latent norms loosen it
        proposals = expected_proposals(Z, alpha, rho)
        if proposals < ENVELOPE_SHARE * n_pairs:
            return (*_sample_envelope(Z, alpha, rho, rng, proposals), "envelope")
        envelope = _BlockEnvelope(Z, alpha, rho)
        if envelope.proposals < ENVELOPE_SHARE * n_pairs:
            return (*_sample_blocks(envelope, rng), "blocks")
        method = "dense"
    if method == "blocks":
        return (*_sample_blocks(_BlockEnvelope(Z, alpha, rho), rng), "blocks")
    if method == "envelope":
        proposals = expected_proposals(Z, alpha, rho)
        return (*_sample_envelope(Z, alpha, rho, rng, proposals), "envelope")
    return (*_sample_dense(Z, alpha, rho, rng), "dense")


def _partition(Z, leaf):
    """Node order and block boundaries of a median k-d split of the latent positions.

    Blocks are split on their widest coordinate at the median until they hold at most
    ``leaf`` nodes, so nearby positions share a block and block radii shrink with n.
    """
    pending = [np.arange(Z.shape[0])]
    done = []
    while pending:
        block = pending.pop()
        if len(block) <= leaf:
            done.append(block)
            continue
        points = Z[block]
        axis = int(np.argmax(points.max(axis=0) - points.min(axis=0)))
        half = len(block) // 2
        split = np.argpartition(points[:, axis], half)
        pending += [block[split[:half]], block[split[half:]]]
    order = np.concatenate(done)
    bounds = np.cumsum([0] + [len(b) for b in done])
    return order, bounds


class _BlockEnvelope:
    """Block-wise rank-one bound of the Poisson rates ``log(1 + e^Theta_ij)``.

    With nodes grouped into blocks of centre c_B and radius r_B, Cauchy-Schwarz bounds
    ``z_i'z_j <= U_BC = c_B'c_C + r_B |c_C| + r_C |c_B| + r_B r_C`` for i in B, j in C, and
    ``log(1 + e^x) <= e^x`` gives ``lambda_ij = log(1 + e^Theta_ij) <= Lambda_ij =
    e^(rho + U_BC) a_i a_j`` with ``a_i = e^alpha_i``: rank one within each block pair.
    """

    def __init__(self, Z, alpha, rho):
        n = Z.shape[0]
        # about n / 64 blocks, at most 512 (131,000 block pairs): block radii shrink with n
        # while the block-pair loop stays negligible beside the proposals
        n_blocks = int(np.clip(n // 64, 1, 512))
        order, bounds = _partition(Z, max(1, -(-n // n_blocks)))
        self.Z, self.alpha, self.rho = Z, alpha, rho
        self.order, self.bounds = order, bounds
        Zs = Z[order]
        sizes = np.diff(bounds)
        block_of = np.repeat(np.arange(len(sizes)), sizes)
        centres = np.add.reduceat(Zs, bounds[:-1], axis=0) / sizes[:, None]
        radii = np.zeros(len(sizes))
        np.maximum.at(radii, block_of, np.linalg.norm(Zs - centres[block_of], axis=1))
        norms = np.linalg.norm(centres, axis=1)
        upper = (
            centres @ centres.T
            + radii[:, None] * norms[None, :]
            + norms[:, None] * radii[None, :]
            + radii[:, None] * radii[None, :]
        )
        # weights relative to the largest alpha keep e^alpha finite
        top = float(alpha.max())
        self.weights = np.exp(alpha[order] - top)
        self.cumulative = np.cumsum(self.weights)
        totals = np.add.reduceat(self.weights, bounds[:-1])
        self.log_scale = rho + 2.0 * top
        first, second = np.triu_indices(len(sizes))
        rates = np.exp(self.log_scale + upper[first, second]) * totals[first] * totals[second]
        # a block with itself: ordered draws (i, j) and (j, i) both land on the pair {i, j}
        rates[first == second] *= 0.5
        self.first, self.second, self.rates, self.upper = first, second, rates, upper
        self.proposals = float(rates.sum())


def _sample_blocks(envelope, rng):
    """Exact draw by thinning a Poisson process of rate Lambda_ij on the pairs.

    The Poisson process with rate ``lambda_ij = log(1 + e^Theta_ij) = -log(1 - P_ij)`` puts at
    least one point on pair (i, j) with probability exactly ``P_ij``, independently over
    pairs. It is drawn by thinning one of rate ``Lambda_ij >= lambda_ij``: per block pair a
    Poisson number of points, endpoints drawn in each block with probability proportional to
    ``a_i``, each point kept with probability ``lambda_ij / Lambda_ij``; pairs with a kept point
    are the edges. Work O(n + blocks^2 + proposals).
    """
    e = envelope
    counts = rng.poisson(e.rates)
    which = np.repeat(np.arange(len(counts)), counts)
    b, c = e.first[which], e.second[which]

    def endpoints(blocks):
        start = e.bounds[blocks]
        before = np.where(start > 0, e.cumulative[np.maximum(start - 1, 0)], 0.0)
        span = e.cumulative[e.bounds[blocks + 1] - 1] - before
        position = np.searchsorted(e.cumulative, before + rng.random(len(blocks)) * span, "right")
        return np.clip(position, start, e.bounds[blocks + 1] - 1)

    pi, pj = endpoints(b), endpoints(c)
    i, j = e.order[pi], e.order[pj]
    distinct = i != j
    i, j, b, c = i[distinct], j[distinct], b[distinct], c[distinct]
    theta = e.alpha[i] + e.alpha[j] + e.rho + np.einsum("ij,ij->i", e.Z[i], e.Z[j])
    log_envelope = e.alpha[i] + e.alpha[j] + e.rho + e.upper[b, c]
    # lambda / Lambda = [log(1 + e^theta) / e^theta] e^(theta - log Lambda), both factors <= 1
    keep_probability = np.logaddexp(0.0, theta) * np.exp(-theta) * np.exp(theta - log_envelope)
    kept = rng.random(len(theta)) < keep_probability
    low, high = np.minimum(i[kept], j[kept]), np.maximum(i[kept], j[kept])
    n = e.Z.shape[0]
    keys = np.unique(low.astype(np.int64) * n + high)
    return keys // n, keys % n


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
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    rows, cols, _ = sample_edge_arrays(Z, alpha, float(rho), random_state, method=method)
    return to_networkx(Z.shape[0], rows, cols)
