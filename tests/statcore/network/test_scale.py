"""Scale paths of stage 1: case-control non-edges, rho calibration, the block-envelope sampler."""

import numpy as np
import pytest
from scipy import sparse
from scipy.special import expit

from statcore.network import LatentSpaceModel, _kernels
from statcore.network.latent import _Objective
from statcore.network.sampling import _BlockEnvelope, sample_edge_arrays
from statcore.network.simulate import sparse_latent_design


def _graph(n, sparse_level, seed, scale=1.0):
    Z, alpha, rho = sparse_latent_design(n, 2, sparse_level=sparse_level, random_state=seed)
    Z = Z * scale
    rows, cols, _ = sample_edge_arrays(Z, alpha, rho, np.random.default_rng(seed + 1))
    A = sparse.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    return (A + A.T).tocsr(), (Z, alpha, rho)


def test_nonneighbour_draws_are_uniform_over_non_neighbours():
    A, _ = _graph(60, 0.3, 0)
    A.sort_indices()
    indptr, indices = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    k = 20_000
    draws = _kernels.draw_nonneighbours(
        indptr, indices, k, np.random.default_rng(1).random(60 * k), np.empty(60 * k, np.int64)
    )
    dense = A.toarray()
    for i in (0, 17, 59):
        row = draws[i * k : (i + 1) * k]
        allowed = np.flatnonzero(dense[i] == 0)
        allowed = allowed[allowed != i]
        assert set(np.unique(row)) == set(allowed)
        counts = np.bincount(row, minlength=60)[allowed]
        # multinomial counts of k draws over N cells: each within 5 sd of k / N
        sd = np.sqrt(k / len(allowed))
        assert np.abs(counts - k / len(allowed)).max() < 5 * sd


def test_case_control_objective_is_unbiased_and_its_gradient_exact():
    A, (Z, alpha, rho) = _graph(300, 0.4, 3)
    model = LatentSpaceModel(A, dim=2)
    exact = _Objective(model, 0.0, None, None)(Z, alpha, rho)
    llfs, grads = [], []
    for seed in range(60):
        sample = model._nonedge_sample(40, seed)
        state = _Objective(model, 0.0, None, sample)(Z, alpha, rho)
        llfs.append(state.llf)
        grads.append(state.grad_z.copy())
    # the average of 60 unbiased estimates: within 4 standard errors of the exact value
    se = np.std(llfs, ddof=1) / np.sqrt(len(llfs))
    assert abs(np.mean(llfs) - exact.llf) < 4 * se
    g_mean, g_se = np.mean(grads, axis=0), np.std(grads, axis=0, ddof=1) / np.sqrt(len(grads))
    z = (g_mean - exact.grad_z) / g_se
    # 600 approximately normal z's: none beyond 5, and their mean within 4 / sqrt(600)
    assert np.abs(z).max() < 5 and abs(z.mean()) < 4 / np.sqrt(z.size)
    # the row sums are the exact gradient of the sampled objective: central differences agree
    sample = model._nonedge_sample(40, 0)
    objective = _Objective(model, 0.0, None, sample)
    state = objective(Z, alpha, rho)
    h = 1e-6
    for i, k in ((0, 0), (123, 1), (299, 0)):
        up, down = Z.copy(), Z.copy()
        up[i, k] += h
        down[i, k] -= h
        numeric = (objective(up, alpha, rho).llf - objective(down, alpha, rho).llf) / (2 * h)
        # a smooth function of ~1e4 terms: central differences good to ~1e-6 relative
        assert numeric == pytest.approx(state.grad_z[i, k], rel=1e-5, abs=1e-5)


def test_rho_calibration_matches_the_edge_count():
    A, (Z, alpha, rho) = _graph(400, 0.4, 5)
    model = LatentSpaceModel(A, dim=2)
    calibrated = model._calibrate_rho(Z, alpha, rho + 3.0)
    P = expit(alpha[:, None] + alpha[None, :] + Z @ Z.T + calibrated)
    assert P[np.triu_indices(400, 1)].sum() == pytest.approx(model.n_edges, rel=1e-10)


def test_sampled_fit_recovers_the_logits_on_a_sparse_graph():
    n = 4000
    A, (Z, alpha, rho) = _graph(n, 0.65, 7)
    res = LatentSpaceModel(A, dim=2).fit(random_state=0)
    assert res.converged and "Case-control" in res.notes[0]
    Zh, ah, rh = res._arrays()
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, n, 50_000), rng.integers(0, n, 50_000)
    keep = i != j
    i, j = i[keep], j[keep]
    truth = alpha[i] + alpha[j] + (Z[i] * Z[j]).sum(1) + rho
    fitted = ah[i] + ah[j] + (Zh[i] * Zh[j]).sum(1) + rh
    # mean degree ~25 here: per-node errors ~1/sqrt(25) in each of 3 node parameters; observed
    # correlation 0.8 and logit RMSE 0.8 (an exact fit at this size does no better)
    assert np.corrcoef(fitted, truth)[0, 1] > 0.7
    assert np.sqrt(np.mean((fitted - truth) ** 2)) < 1.1
    # the expected edge count is calibrated exactly (n <= 20,000)
    assert res.edge_probabilities(np.arange(n)).to_numpy().sum() / 2 == pytest.approx(
        res.n_edges, rel=1e-8
    )


def test_block_sampler_matches_probabilities():
    rng = np.random.default_rng(5)
    n, draws = 25, 4000
    Z = rng.normal(scale=0.6, size=(n, 2))
    alpha = rng.normal(scale=0.5, size=n)
    counts = np.zeros((n, n))
    for _ in range(draws):
        rows, cols, used = sample_edge_arrays(Z, alpha, -1.0, rng, method="blocks")
        assert used == "blocks" and np.all(rows < cols)
        counts[rows, cols] += 1
    iu = np.triu_indices(n, 1)
    P = expit(alpha[:, None] + alpha[None, :] + Z @ Z.T - 1.0)[iu]
    z = (counts[iu] / draws - P) / np.sqrt(P * (1 - P) / draws)
    # 300 binomial frequencies: max |z| of 300 normals < 4.5 with probability > 0.999
    assert np.abs(z).max() < 4.5 and abs(z.mean()) < 4 / np.sqrt(len(z))


def test_block_sampler_work_is_proportional_to_edges():
    """Proposals stay a bounded multiple of the edges as n grows 10-fold (pairs: 100-fold)."""
    ratios = []
    for n in (5000, 50_000):
        Z, alpha, rho = sparse_latent_design(n, 2, sparse_level=0.8, random_state=1)
        envelope = _BlockEnvelope(Z, alpha, rho)
        rows, _, used = sample_edge_arrays(Z, alpha, rho, np.random.default_rng(0), method="blocks")
        ratios.append(envelope.proposals / len(rows))
        assert envelope.proposals < n * (n - 1) / 2 / 100
    # proposals per edge: observed 2.25 at n = 5,000 and 1.16 at 50,000 (block radii shrink
    # with n); O(n^2) work would multiply them by about 100 / 10.7 (pairs / edges growth)
    assert max(ratios) < 3 and ratios[1] < 1.2 * ratios[0]
