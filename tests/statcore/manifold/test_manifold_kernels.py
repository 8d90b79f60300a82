"""Each numba kernel of statcore.manifold against an independent numpy/scipy twin."""

import numpy as np
import pytest
from _manifold_helpers import brute_double_centre, brute_u_centre
from scipy.spatial.distance import cdist

from statcore.manifold import _kernels


@pytest.fixture
def data(rng):
    # longer than one row chunk of the general kernels, so chunk boundaries are crossed
    n = _kernels._CHUNK + 276
    X = rng.normal(size=(n, 2))
    V = rng.normal(size=(n, 3))
    return X, V


def _centring_args(X, V, statistic):
    """Row sums and constants computed the slow way, as the kernels expect them."""
    n = len(X)
    a = cdist(X, X)
    b = -(V @ V.T)
    if statistic == "u":
        np.fill_diagonal(b, 0.0)
        c1, c2, keep = 1 / (n - 2), 1 / ((n - 1) * (n - 2)), False
    else:
        c1, c2, keep = 1 / n, 1 / n**2, True
    args = (
        np.ascontiguousarray(X.T),
        np.ascontiguousarray(V.T),
        a.sum(1),
        a.sum(),
        b.sum(1),
        b.sum(),
        c1,
        c2,
        keep,
    )
    return a, b, args


def _dense_k(a, b, statistic):
    centre = brute_u_centre if statistic == "u" else brute_double_centre
    return centre(a) * centre(b)


def test_dist_matmul_matches_cdist(data, rng):
    X, V = data
    Z = np.column_stack([np.ones(len(X)), V, rng.normal(size=(len(X), 2))])
    # the same n O(1) products summed in another order: 1e-12 relative to their absolute sums
    scale = cdist(X, X) @ np.abs(Z)
    err = np.abs(
        _kernels.dist_matmul(np.ascontiguousarray(X.T), np.ascontiguousarray(Z.T)) - cdist(X, X) @ Z
    )
    assert np.all(err <= 1e-12 * scale)


@pytest.mark.parametrize("statistic", ["u", "v"])
def test_centred_product_block_and_panel_match_numpy(data, statistic):
    X, V = data
    a, b, args = _centring_args(X, V, statistic)
    K = _dense_k(a, b, statistic)
    n = len(X)
    # a tile straddling the diagonal and a row chunk boundary, and one off the diagonal
    for r0, c0, rows, cols in [(20, 10, 30, n - 10), (900, 0, 7, 300)]:
        out = np.empty((rows, cols))
        block = _kernels.centred_product_block(*args, r0, c0, out)
        # entrywise the same few flops in another order: 1e-12 absolute on O(1) entries
        np.testing.assert_allclose(block, K[r0 : r0 + rows, c0 : c0 + cols], atol=1e-12)
    # a panel of the upper triangle (crossing a row chunk): zero left of the diagonal, half
    # the diagonal on it, the rest of K rounded once to float32 (relative 6e-8 of each entry)
    r0, rows = 1000, 40
    panel = _kernels.centred_product_panel(*args, r0, np.empty((rows, n - r0), np.float32))
    expected = (
        np.triu(K[r0 : r0 + rows, r0:], 1)
        + 0.5 * np.eye(rows, n - r0) * np.diag(K)[r0 : r0 + rows, None]
    )
    np.testing.assert_allclose(panel, expected, rtol=1e-7, atol=1e-30)


@pytest.mark.parametrize("statistic", ["u", "v"])
def test_sorted_quadratic_forms_match_the_dense_forms_with_ties(rng, statistic):
    n = 157
    x = np.round(rng.normal(size=n), 1)  # many ties
    x -= np.median(x)
    V = rng.normal(size=(n, 2))
    a, b, args = _centring_args(x[:, None], V, statistic)
    K = _dense_k(a, b, statistic)
    _, _, a_row, a_tot, b_row, b_tot, c1, c2, keep = args
    if keep:
        d = np.zeros(n)
    else:
        d = (-2 * c1 * a_row + c2 * a_tot) * (
            -np.einsum("ij,ij->i", V, V) - 2 * c1 * b_row + c2 * b_tot
        )
    order = np.argsort(x, kind="stable")
    E = rng.normal(size=(n, 45)) + 0.3  # any vectors, not only centred multipliers
    sorted_args = (
        np.ascontiguousarray(x[order]),
        order,
        np.ascontiguousarray(V[order]),
        a_row[order],
        b_row[order],
        d[order],
        c1,
        c2,
        a_tot,
        b_tot,
    )
    got = _kernels.sorted_quadratic_forms(*sorted_args, E, 8)
    expected = np.einsum("kb,kl,lb->b", E, K, E)
    # running sums of n O(1) terms against a dense double sum: 1e-10 of the forms' scale
    np.testing.assert_allclose(got, expected, atol=1e-10 * np.abs(expected).max())
    # each column is computed alone: the block width changes nothing, to the last bit
    np.testing.assert_array_equal(_kernels.sorted_quadratic_forms(*sorted_args, E, 64), got)


@pytest.mark.parametrize("size", [1, 2, 7, 10_001])
def test_signs_from_bits_are_numpy_bounded_integers(size):
    # bit 31, then bit 63, of each raw word: the draws of Generator.integers(0, 2) of a fresh
    # generator, exactly
    raw = np.random.default_rng(size).bit_generator.random_raw((size + 1) // 2)
    expected = 2.0 * np.random.default_rng(size).integers(0, 2, size=size) - 1.0
    for dtype in (np.float64, np.float32):
        np.testing.assert_array_equal(
            _kernels.signs_from_bits(raw, np.empty(size, dtype)), expected
        )


def test_permuted_product_sums_matches_fancy_indexing(rng):
    A = rng.normal(size=(15, 15))
    B = rng.normal(size=(15, 15))
    perms = np.array([rng.permutation(15) for _ in range(5)])
    expected = [np.sum(A[np.ix_(p, p)] * B) for p in perms]
    np.testing.assert_allclose(_kernels.permuted_product_sums(A, B, perms), expected, atol=1e-12)
