"""Local and global intrinsic dimension against oracles of known dimension (n = 4000 uniform
points in [0, 1]^d, randomly rotated into R^D) and scikit-dimension."""

import numpy as np
import pytest
from scipy.stats import ortho_group

from statcore.geometry import GlobalID, LocalID

skdim = pytest.importorskip("skdim")


def manifold(d, D, n=4000, seed=0):
    rng = np.random.default_rng(seed)
    Q = ortho_group.rvs(D, random_state=seed)[:d]
    return rng.uniform(size=(n, d)) @ Q


@pytest.fixture(scope="module")
def flat2():
    return manifold(2, 10)


def test_two_dimensional_plane_in_r10_within_015(flat2):
    res = LocalID(flat2).fit(k=20, n_resamples=0)
    # acceptance tolerance for d = 2 (all three aggregates and both global counts)
    for value in res.estimates:
        assert abs(value - 2) <= 0.15
    glob = GlobalID(flat2).fit()
    assert abs(glob.estimates["participation_ratio"] - 2) <= 0.15
    assert abs(glob.estimates["twonn"] - 2) <= 0.15
    assert glob.estimates["pca"] == 2


@pytest.mark.parametrize(
    ("d", "D", "mle_mean", "mle_sd", "twonn_mean", "twonn_sd"),
    [(5, 20, 4.811, 0.029, 4.702, 0.075), (10, 50, 8.707, 0.030, 8.703, 0.097)],
)
def test_known_downward_bias_within_three_sd_of_reference_runs(
    d, D, mle_mean, mle_sd, twonn_mean, twonn_sd
):
    X = manifold(d, D)
    lid = LocalID(X).fit(k=20, n_resamples=0).estimates["mean"]
    twonn = GlobalID(X).fit().estimates["twonn"]
    # 5-seed means and sds of reference runs (n = 4000, k = 20); tolerance 3 sd
    assert abs(lid - mle_mean) <= 3 * mle_sd
    assert abs(twonn - twonn_mean) <= 3 * twonn_sd
    assert lid < d - 0.1  # the MLE's known downward bias in higher dimension


def test_global_twonn_equals_scikit_dimension(flat2):
    ours = GlobalID(flat2).fit().estimates["twonn"]
    # same linear fit on the same ratios: only the kNN rounding differs (far below 1e-3)
    assert ours == pytest.approx(skdim.id.TwoNN().fit(flat2).dimension_, abs=1e-3)


def test_harmonic_aggregate_equals_scikit_dimension_mle(flat2):
    res = LocalID(flat2).fit(k=20, n_resamples=0)
    ref = skdim.id.MLE().fit(flat2, n_neighbors=20).dimension_
    # skdim's MLE pools by MacKay-Ghahramani's harmonic mean of the per-point k-NN MLEs
    assert res.estimates["harmonic"] == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("method", ["mle", "twonn", "gride"])
def test_invariant_under_isometry_and_scaling(flat2, method):
    Q = ortho_group.rvs(10, random_state=3)
    a = LocalID(flat2).fit(method=method, k=15, n_resamples=0).pointwise
    b = LocalID(5.0 * flat2 @ Q + 7.0).fit(method=method, k=15, n_resamples=0).pointwise
    # distances agree to rounding, so the per-point values agree to ~1e-9
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_local_twonn_and_gride_recover_dimension(flat2):
    for method in ("twonn", "gride"):
        med = LocalID(flat2).fit(method=method, k=20, n_resamples=0).estimates["median"]
        # neighbourhood estimators over 21 ratios: sd of each about d / sqrt(21); the median
        # over 4000 points lies well within 0.2 of 2
        assert abs(med - 2) <= 0.2


def test_gride_with_n1_1_is_twonn(flat2):
    twonn = LocalID(flat2).fit(method="twonn", k=10, n_resamples=0).pointwise
    gride = LocalID(flat2).fit(method="gride", k=10, n1=1, n_resamples=0).pointwise
    np.testing.assert_allclose(twonn, gride, rtol=1e-12)


def test_duplicates_never_divide_by_zero(flat2):
    X = np.vstack([flat2[:1000], flat2[:50], flat2[:50]])
    for method in ("mle", "twonn", "gride"):
        res = LocalID(X).fit(method=method, k=10, n_resamples=0)
        assert np.all(np.isfinite(res.pointwise))
        assert res.n_duplicates == 100
        # copies inherit their distinct row's estimate
        np.testing.assert_array_equal(res.pointwise[1000:1050], res.pointwise[:50])
    assert np.isfinite(GlobalID(X).fit().estimates["twonn"])


def test_bootstrap_interval_covers_estimate_and_is_seeded(flat2):
    a = LocalID(flat2).fit(k=20, n_resamples=100, random_state=1)
    b = LocalID(flat2).fit(k=20, n_resamples=100, random_state=1)
    table = a.tidy()
    assert list(table["term"]) == ["mean", "median", "harmonic"]
    assert np.all(table["conf_low"] < table["estimate"])
    assert np.all(table["estimate"] < table["conf_high"])
    np.testing.assert_array_equal(table["conf_low"], b.tidy()["conf_low"])
    assert a.fit_options["k"] == 20
    assert "Levina-Bickel" in repr(a)


def test_input_not_modified_and_bad_input_names_argument(flat2):
    X = flat2[:200].copy()
    before = X.copy()
    LocalID(X).fit(k=5, n_resamples=0)
    np.testing.assert_array_equal(X, before)
    with pytest.raises(ValueError, match="`k`"):
        LocalID(X).fit(k=200)
    with pytest.raises(ValueError, match="`k`"):
        LocalID(np.repeat(X[:5], 3, axis=0)).fit(k=5)  # 5 distinct points only
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="`X`.*NaN"):
        LocalID(bad)
    with pytest.raises(ValueError, match="`method`"):
        LocalID(X).fit(method="pca")
    with pytest.raises(ValueError, match="`variance_share`"):
        GlobalID(X).fit(variance_share=1.5)
