"""Each numba kernel of statcore.manifold against an independent numpy/scipy twin."""

import numpy as np
import pytest
from _manifold_helpers import brute_double_centre, brute_u_centre
from scipy.spatial.distance import cdist

from statcore.manifold import _kernels


@pytest.fixture
def data(rng):
    X = rng.normal(size=(37, 2))
    V = rng.normal(size=(37, 3))
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
    return a, b, (X, V, a.sum(1), a.sum(), b.sum(1), b.sum(), c1, c2, keep)


def test_dist_row_sums_matches_cdist(data):
    X, _ = data
    # identical sums of the same n terms up to summation order: 1e-12 relative
    np.testing.assert_allclose(_kernels.dist_row_sums(X), cdist(X, X).sum(1), rtol=1e-12)


@pytest.mark.parametrize("statistic", ["u", "v"])
def test_centred_product_block_and_rows_match_numpy(data, statistic):
    X, V = data
    a, b, args = _centring_args(X, V, statistic)
    centre = brute_u_centre if statistic == "u" else brute_double_centre
    K = centre(a) * centre(b)
    out = np.empty((10, len(X)))
    block = _kernels.centred_product_block(*args, 20, out)
    # entrywise the same few flops in another order: 1e-12 absolute on O(1) entries
    np.testing.assert_allclose(block, K[20:30], atol=1e-12)
    np.testing.assert_allclose(_kernels.centred_product_rows(*args), K.sum(1), atol=1e-11)


def test_abs_dist_matvec_matches_dense_product_with_ties(rng):
    x = np.round(rng.normal(size=60), 1)  # many ties
    x -= np.median(x)
    order = np.argsort(x, kind="stable")
    Z = rng.normal(size=(4, 60))
    dense = np.abs(x[:, None] - x[None, :]) @ Z.T
    got = _kernels.abs_dist_matvec(np.ascontiguousarray(x[order]), order, Z)
    # running sums of 60 O(1) terms: 1e-12 absolute
    np.testing.assert_allclose(got, dense.T, atol=1e-12)


def test_permuted_product_sums_matches_fancy_indexing(rng):
    A = rng.normal(size=(15, 15))
    B = rng.normal(size=(15, 15))
    perms = np.array([rng.permutation(15) for _ in range(5)])
    expected = [np.sum(A[np.ix_(p, p)] * B) for p in perms]
    np.testing.assert_allclose(_kernels.permuted_product_sums(A, B, perms), expected, atol=1e-12)
