"""numpy twins of the network kernels that had none: independent dense computations, small cases.

Each twin computes the same sums in another order (whole matrices instead of per-row loops), so
the two agree to rounding: 1e-10 relative leaves a margin of about a million ulps on sums of a
few hundred terms of order one, while any slip in a term (a missed pair, a wrong weight) is
off by far more.
"""

import numpy as np
import pytest
from scipy import sparse
from scipy.special import expit

from statcore.network import _kernels

TOL = 1e-10


@pytest.fixture
def small_case():
    gen = np.random.default_rng(11)
    n, r = 40, 2
    Z = gen.normal(scale=0.7, size=(n, r))
    alpha = gen.normal(scale=0.5, size=n)
    rho = -1.5
    upper = np.triu(gen.random((n, n)) < 0.15, 1)
    A = sparse.csr_matrix((upper | upper.T).astype(float))
    A.sort_indices()
    return Z, alpha, rho, A


def logits(Z, alpha, rho):
    return alpha[:, None] + alpha[None, :] + Z @ Z.T + rho


def csr(A):
    return A.indptr.astype(np.int64), A.indices.astype(np.int64)


def test_pair_sums_information_rows(small_case):
    # test_latent checks the other outputs of pair_sums; its row_info had no twin
    Z, alpha, rho, A = small_case
    n, r = Z.shape
    out = [np.empty((n, r)), np.empty(n), np.empty(n), np.empty(n), np.empty((n, r + 1, r + 1))]
    _kernels.pair_sums(Z, alpha, rho, *csr(A), *out)
    P = expit(logits(Z, alpha, rho))
    np.fill_diagonal(P, 0.0)
    np.testing.assert_allclose(out[3], (P * (1 - P)).sum(axis=1), rtol=TOL)


def test_sampled_pair_sums_match_a_dense_weighted_twin(small_case):
    Z, alpha, rho, A = small_case
    n, r = Z.shape
    k = 5
    gen = np.random.default_rng(12)
    dense = A.toarray()
    # k draws per node among its non-neighbours (any such draw will do for the sums)
    draws = np.concatenate(
        [gen.choice(np.flatnonzero((dense[i] == 0) & (np.arange(n) != i)), k) for i in range(n)]
    ).astype(np.int64)
    weights = gen.uniform(1.0, 5.0, size=n)
    ptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    in_ptr, in_idx = _kernels.incoming(draws, k, n)
    out = [np.empty((n, r)), np.empty(n), np.empty(n), np.empty(n), np.empty((n, r + 1, r + 1))]
    _kernels.sampled_pair_sums(Z, alpha, rho, *csr(A), ptr, draws, in_ptr, in_idx, weights, *out)
    # the twin: a weight matrix on the non-edges, each draw (i, j) adding weights[i] / 2 to
    # both (i, j) and (j, i); edges carry weight 1 with A_ij = 1
    M = np.zeros((n, n))
    owners = np.repeat(np.arange(n), k)
    np.add.at(M, (owners, draws), 0.5 * weights[owners])
    np.add.at(M, (draws, owners), 0.5 * weights[owners])
    theta = logits(Z, alpha, rho)
    P = expit(theta)
    W = dense + M
    R = dense * (1 - P) - M * P
    info = W * P * (1 - P)
    llf = dense * (theta - np.logaddexp(0.0, theta)) - M * np.logaddexp(0.0, theta)
    features = np.column_stack([np.ones(n), Z])
    np.testing.assert_allclose(out[0], R @ Z, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(out[1], R.sum(axis=1), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(out[2], llf.sum(axis=1), rtol=TOL)
    np.testing.assert_allclose(out[3], info.sum(axis=1), rtol=TOL)
    np.testing.assert_allclose(
        out[4], np.einsum("ij,jk,jl->ikl", info, features, features), rtol=TOL, atol=TOL
    )


def test_moments_match_dense_sums(small_case):
    Z, alpha, rho, A = small_case
    n = Z.shape[0]
    P = expit(logits(Z, alpha, rho))
    iu = np.triu_indices(n, 1)
    first, second = _kernels.pair_moments(Z, alpha, rho)
    assert first == pytest.approx(P[iu].sum(), rel=TOL)
    assert second == pytest.approx((P[iu] * (1 - P[iu])).sum(), rel=TOL)
    # the case-control estimate: edges i < j once, each drawn pair with weight weights[i] / 2
    k = 3
    owners = np.repeat(np.arange(n), k)
    draws = np.random.default_rng(13).integers(0, n, size=n * k)
    # any node but i itself will do for the sums
    draws[draws == owners] = (owners[draws == owners] + 1) % n
    draws = draws.astype(np.int64)
    weights = np.linspace(1.0, 2.0, n)
    ptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    est_first, est_second = _kernels.sampled_moments(Z, alpha, rho, *csr(A), ptr, draws, weights)
    edges = np.triu(A.toarray(), 1) > 0
    drawn_p = P[owners, draws]
    assert est_first == pytest.approx(
        P[edges].sum() + (0.5 * weights[owners] * drawn_p).sum(), rel=TOL
    )
    assert est_second == pytest.approx(
        (P[edges] * (1 - P[edges])).sum() + (0.5 * weights[owners] * drawn_p * (1 - drawn_p)).sum(),
        rel=TOL,
    )


def test_probabilities_of_pairs_match_expit(small_case):
    Z, alpha, rho, _ = small_case
    rows = np.array([0, 3, 39, 7], dtype=np.int64)
    cols = np.array([1, 3, 0, 20], dtype=np.int64)
    expected = expit(logits(Z, alpha, rho)[rows, cols])
    np.testing.assert_allclose(
        _kernels.probabilities_of_pairs(Z, alpha, rho, rows, cols), expected, rtol=TOL
    )


def test_dense_rows_keep_exactly_the_pairs_below_their_probability(small_case):
    Z, alpha, rho, _ = small_case
    n = Z.shape[0]
    first = 5
    iu = np.triu_indices(n, 1)
    pairs = iu[0] >= first  # row-major order of the pairs of rows first, first + 1, ...
    uniforms = np.random.default_rng(14).random(pairs.sum())
    rows = np.empty(len(uniforms), dtype=np.int64)
    cols = np.empty(len(uniforms), dtype=np.int64)
    count = _kernels.sample_dense_rows(Z, alpha, rho, first, uniforms, rows, cols)
    P = expit(logits(Z, alpha, rho))[iu][pairs]
    kept = uniforms < P
    # a draw is a comparison: exact agreement, except where u and P tie to rounding (none here)
    np.testing.assert_array_equal(rows[:count], iu[0][pairs][kept])
    np.testing.assert_array_equal(cols[:count], iu[1][pairs][kept])


def test_nonneighbour_draws_and_incoming_match_index_twins(small_case):
    _, _, _, A = small_case
    n = A.shape[0]
    k = 7
    uniforms = np.random.default_rng(15).random(n * k)
    draws = _kernels.draw_nonneighbours(*csr(A), k, uniforms, np.empty(n * k, dtype=np.int64))
    dense = A.toarray()
    for i in range(n):
        allowed = np.flatnonzero((dense[i] == 0) & (np.arange(n) != i))
        m = np.minimum((uniforms[i * k : (i + 1) * k] * len(allowed)).astype(int), len(allowed) - 1)
        np.testing.assert_array_equal(draws[i * k : (i + 1) * k], allowed[m])
    in_ptr, in_idx = _kernels.incoming(draws, k, n)
    np.testing.assert_array_equal(
        in_ptr, np.concatenate([[0], np.cumsum(np.bincount(draws, minlength=n))])
    )
    np.testing.assert_array_equal(in_idx, np.argsort(draws, kind="stable") // k)
