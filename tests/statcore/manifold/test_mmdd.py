"""The MMDD estimator, mmdd_test and dcov_test: twins, identities, invariances, API and errors."""

import importlib

import dcor
import numpy as np
import pandas as pd
import pytest
from _manifold_helpers import brute_double_centre, brute_mmdd, brute_u_centre, concentrated_sample

from statcore.exceptions import NotApplicableWarning
from statcore.manifold import (
    SPD,
    Euclidean,
    MMDDTestResult,
    Sphere,
    dcov_test,
    frechet_mean,
    mmdd,
    mmdd_test,
    simulate,
)

mmdd_module = importlib.import_module("statcore.manifold.mmdd")


@pytest.mark.parametrize("p", [1, 3])
@pytest.mark.parametrize("statistic", ["u", "v"])
def test_mmdd_matches_brute_force_on_every_manifold(manifold, rng, p, statistic):
    Y, _ = concentrated_sample(manifold, 40, rng)
    X = rng.normal(size=(40, p))
    X[:6] = X[0]  # ties, which the sorted scalar route must handle
    mu = frechet_mean(Y, manifold).mean
    V = manifold.log_coords(mu, Y)
    # same sums of O(1) terms in another order (and O(n) running sums for p=1): 1e-12
    assert abs(mmdd(Y, X, manifold, statistic=statistic) - brute_mmdd(V, X, statistic)) < 1e-12


def test_sorted_distance_products_match_cdist_with_ties(rng):
    x = np.round(rng.normal(size=80), 1)  # many ties
    x -= np.median(x)
    xs = np.sort(x)
    Z = np.column_stack([np.ones(80), rng.normal(size=(80, 2))])
    # prefix sums of 80 O(1) terms against a direct sum: 1e-12 absolute on O(10) sums
    np.testing.assert_allclose(
        mmdd_module._sorted_matmul(xs, Z), np.abs(xs[:, None] - xs[None]) @ Z, atol=1e-12
    )


def test_flat_case_is_the_mdd_of_shao_and_zhang(rng):
    X = rng.normal(size=(50, 2))
    Y = X[:, :1] ** 2 + rng.normal(size=(50, 3))
    a = dcor.distances.pairwise_distances(X)
    b = 0.5 * dcor.distances.pairwise_distances(Y) ** 2
    # MDD^2(Y|X) is the U-centred product of |X - X'| and |Y - Y'|^2 / 2 (Shao and Zhang 2014)
    expected = dcor.u_product(dcor.u_centered(a), dcor.u_centered(b))
    assert abs(mmdd(Y, X, Euclidean(3)) - expected) < 1e-12
    # direct double-sum formula of the V-version: -n^-2 sum a^_kl <Y_k - Ybar, Y_l - Ybar>
    Yc = Y - Y.mean(0)
    direct = -np.sum(brute_double_centre(a) * (Yc @ Yc.T)) / 50**2
    assert abs(mmdd(Y, X, Euclidean(3), statistic="v") - direct) < 1e-12


def test_log_euclidean_spd_is_mdd_of_vech_logm(rng):
    M = SPD(3, metric="log_euclidean")
    Y = M.random_point(30, rng)
    X = rng.normal(size=30)
    L = M.log_coords(np.eye(3), Y)  # vech(logm Y), sqrt(2) off the diagonal
    assert abs(mmdd(Y, X, M) - mmdd(L, X, Euclidean(6))) < 1e-12


def test_u_centring_identity_half_squared_distance(rng):
    V = rng.normal(size=(30, 4))
    half = 0.5 * ((V[:, None] - V[None]) ** 2).sum(-1)
    inner = -(V @ V.T)
    # U-centring removes the row and column terms |V_k|^2 / 2: equal to rounding, 1e-13
    np.testing.assert_allclose(brute_u_centre(half), brute_u_centre(inner), atol=1e-13)


def test_rotation_congruence_and_affine_x_invariance(rng):
    S = Sphere(2)
    Y, X = simulate.draw("sphere", "mean_shift", 60, random_state=3)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    t = mmdd_test(Y, X, S, n_resamples=199, random_state=4)
    assert (
        abs(mmdd_test(Y @ Q.T, X, S, n_resamples=199, random_state=4).statistic - t.statistic)
        < 1e-12
    )
    # X -> cX + b scales T_n by |c| and keeps the p-value for the same multipliers
    t2 = mmdd_test(Y, -2.5 * X + 7, S, n_resamples=199, random_state=4)
    np.testing.assert_allclose(t2.statistic, 2.5 * t.statistic, rtol=1e-10)
    assert t2.pvalue == t.pvalue
    P = SPD(2)
    Ys, Xs = simulate.draw("spd", "mean_shift", 40, random_state=5)
    G = rng.normal(size=(2, 2)) + 2 * np.eye(2)
    # affine-invariant metric: Y -> G Y G' is an isometry; Fréchet mean iterations to 1e-10
    np.testing.assert_allclose(mmdd(G @ Ys @ G.T, Xs, P), mmdd(Ys, Xs, P), rtol=1e-8)


def test_wild_bootstrap_draws_match_the_dense_quadratic_form(rng):
    S = Sphere(2)
    Y, X = simulate.draw("sphere", "iid", 30, random_state=1)
    res = mmdd_test(Y, X, S, n_resamples=50, multiplier="normal", random_state=9)
    V = S.log_coords(res.base_point, Y)
    a = np.abs(X[:, None] - X[None])
    K = brute_u_centre(a) * brute_u_centre(-(V @ V.T))
    # rebuild the multipliers exactly as the implementation seeds them
    gen = np.random.default_rng(9)
    seed = np.random.SeedSequence(int(gen.integers(2**63))).spawn(1)[0]
    E = np.random.default_rng(seed).standard_normal((30, 50))
    expected = np.einsum("kb,kl,lb->b", E, K, E) / 27
    np.testing.assert_allclose(res.null_distribution, expected, atol=1e-12)
    assert res.statistic == pytest.approx(30 * mmdd(Y, X, S), abs=1e-14)
    # and the general panelled GEMM route gives the same draws as the sorted scalar route, up
    # to its single-precision products (about 1e-6 of the draws' scale, see below)
    c_fast = mmdd_module._centred(X[:, None], V, "u")
    c_slow = mmdd_module._centred(X[:, None], V, "u", fast=False)
    fast = mmdd_module._quadratic_forms(c_fast, E)
    np.testing.assert_allclose(
        mmdd_module._quadratic_forms(c_slow, E), fast, atol=1e-5 * np.abs(fast).max()
    )
    # the statistic of the general route, from A V, in double precision
    assert mmdd_module._statistic(c_slow, "u") == pytest.approx(mmdd(Y, X, S), abs=1e-14)


def _reference_multipliers(rng, kind, shape):
    """The multiplier laws written out with numpy's own samplers."""
    if kind == "rademacher":
        return 2.0 * rng.integers(0, 2, size=shape) - 1.0
    if kind == "normal":
        return rng.standard_normal(shape)
    s5 = np.sqrt(5.0)
    return np.where(rng.random(shape) < (s5 + 1) / (2 * s5), -(s5 - 1) / 2, (s5 + 1) / 2)


@pytest.mark.parametrize("multiplier", ["rademacher", "normal", "mammen"])
@pytest.mark.parametrize("p", [1, 3])
def test_fast_bootstrap_draws_equal_the_dense_quadratic_forms(monkeypatch, p, multiplier):
    S = Sphere(2)
    n, R, seed = 300, 99, 11
    Y, x = simulate.draw("sphere", "mean_shift", n, beta=0.1, random_state=6)
    # shifted and scaled X (p = 3: extra noise columns) and a base point off the data's mean,
    # so the centring of x and V is exercised
    X = (
        3.0 * x + 10.0
        if p == 1
        else np.column_stack([x, np.random.default_rng(7).normal(size=(n, p - 1))]) + 10.0
    )
    base = S.exp(np.array([0.0, 0.0, 1.0]), np.array([0.3, -0.2, 0.0]))
    # small batches, tasks of two batches and panels of 64 rows (with a partial last one), so
    # the batching, the grouping and the panelled triangle all take part at a small n
    width = 1 if p > 1 else 3
    monkeypatch.setattr(mmdd_module, "_BLOCK_DOUBLES", 40 * n * width)
    monkeypatch.setattr(mmdd_module, "_TASK_DOUBLES", 80 * n)
    monkeypatch.setattr(mmdd_module, "_PANEL_FLOATS", 64 * n)
    res = mmdd_test(
        Y, X, S, n_resamples=R, multiplier=multiplier, base_point=base, random_state=seed
    )
    V = S.log_coords(base, Y)
    Xm = X.reshape(n, -1)
    a = np.sqrt(((Xm[:, None] - Xm[None]) ** 2).sum(-1))
    K = brute_u_centre(a) * brute_u_centre(-(V @ V.T))
    # the multipliers as the implementation seeds them: one generator per batch of 40
    sizes = [40, 40, 19]
    seeds = np.random.SeedSequence(int(np.random.default_rng(seed).integers(2**63))).spawn(3)
    E = np.concatenate(
        [
            _reference_multipliers(np.random.default_rng(s), multiplier, (n, b))
            for s, b in zip(seeds, sizes, strict=True)
        ],
        axis=1,
    )
    expected = np.einsum("kb,kl,lb->b", E, K, E) / (n - 3)
    # Both sides add the same O(n^2) O(1) terms, regrouped: low-rank running sums in double
    # precision for p = 1 (measured discrepancy below 1e-13 of the draws' scale, tolerance
    # 1e-9); for p = 3 panels of K rounded to float32 and multiplied in single precision,
    # whose relative rounding of 6e-8 per entry and per partial sum leaves about 1e-6 of the
    # scale (measured 3e-7 here, 1e-6 at n = 2000), tolerance 1e-5. A single draw can be
    # arbitrarily close to 0, so the tolerance is relative to that scale, not entrywise.
    tol = 1e-9 if p == 1 else 1e-5
    np.testing.assert_allclose(
        res.null_distribution, expected, rtol=tol, atol=tol * np.abs(expected).max()
    )
    assert res.statistic == pytest.approx(K.sum() / (n - 3), rel=1e-9)


def test_result_fields_and_reproducibility(rng):
    Y, X = simulate.draw("hyperbolic", "mean_shift", 50, random_state=2)
    H = simulate.make_manifold("hyperbolic")
    res = mmdd_test(Y, pd.DataFrame({"x": X}), H, n_resamples=99, random_state=1)
    assert isinstance(res, MMDDTestResult)
    assert res.alternative == "greater" and res.n_resamples == 99
    assert res.null_distribution.shape == (99,)
    assert res.statistic == pytest.approx(50 * res.estimate)
    assert H.belongs(res.base_point)
    stat, p = res
    assert 1 / 100 <= p <= 1
    again = mmdd_test(Y, X, H, n_resamples=99, random_state=1)
    np.testing.assert_array_equal(again.null_distribution, res.null_distribution)
    threaded = mmdd_test(Y, X, H, n_resamples=99, random_state=1, backend="threads")
    np.testing.assert_allclose(threaded.null_distribution, res.null_distribution, atol=1e-12)
    for kind in ("mammen", "normal"):
        draws = mmdd_test(Y, X, H, n_resamples=99, multiplier=kind, random_state=1)
        assert draws.distribution.startswith(f"wild bootstrap ({kind}")
    assert "MMDD test" in str(res) and res.tidy()["p_value"].iloc[0] == p


def test_mammen_multipliers_have_unit_variance_and_third_moment():
    e = mmdd_module._multipliers(np.random.default_rng(0), "mammen", 400_000)
    # Monte Carlo error of the moments at 4e5 draws is below 0.01
    assert abs(e.mean()) < 0.01 and abs(e.var() - 1) < 0.01 and abs(np.mean(e**3) - 1) < 0.02


def test_asymptotic_and_bootstrap_pvalues_agree_roughly():
    S = Sphere(2)
    diffs = []
    for seed in range(12):
        design = "mean_shift" if seed % 2 else "iid"
        Y, X = simulate.draw("sphere", design, 80, beta=0.15, random_state=seed)
        boot = mmdd_test(Y, X, S, n_resamples=499, random_state=seed).pvalue
        asym = mmdd_test(Y, X, S, method="asymptotic", n_resamples=499, random_state=seed)
        diffs.append(abs(boot - asym.pvalue))
        assert asym.distribution.startswith("asymptotic")
    # two approximations of the same null plus Monte Carlo error (sd <= 0.022 at 499 draws)
    assert max(diffs) < 0.1 and np.mean(diffs) < 0.04


def test_dcov_matches_dcor_in_the_flat_case(rng):
    X = rng.normal(size=(40, 2))
    Y = X[:, :1] + rng.normal(size=(40, 3))
    res = dcov_test(Y, X, Euclidean(3), n_resamples=99, random_state=0)
    # n times the V-statistic dCov^2 of Székely et al. (2007), as dcor computes it
    assert abs(res.statistic - 40 * dcor.distance_covariance_sqr(X, Y)) < 1e-12
    assert res.alternative == "greater" and res.null_distribution.shape == (99,)
    A = brute_double_centre(np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1)))
    B = brute_double_centre(np.sqrt(((Y[:, None] - Y[None]) ** 2).sum(-1)))
    perm = np.random.default_rng(0).permuted(np.tile(np.arange(40), (99, 1)), axis=1)
    twin = [np.sum(A[np.ix_(p, p)] * B) / 40 for p in perm]
    np.testing.assert_allclose(res.null_distribution, twin, atol=1e-12)


def test_bad_input_errors_name_the_argument(rng):
    S = Sphere(2)
    Y, X = simulate.draw("sphere", "iid", 20, random_state=0)
    with pytest.raises(ValueError, match="same number of rows"):
        mmdd(Y, X[:10], S)
    with pytest.raises(ValueError, match="at least 4 rows"):
        mmdd_test(Y[:3], X[:3], S)
    bad = Y.copy()
    bad[3] *= 2
    with pytest.raises(ValueError, match=r"`Y` has 1 point\(s\) off Sphere\(2\)"):
        mmdd_test(bad, X, S)
    Xn = X.copy()
    Xn[2] = np.nan
    with pytest.raises(ValueError, match="`X` must not contain NaN"):
        mmdd(Y, Xn, S)
    with pytest.raises(ValueError, match="`multiplier` must be one of"):
        mmdd_test(Y, X, S, multiplier="uniform")
    with pytest.raises(ValueError, match="`method` must be one of"):
        mmdd_test(Y, X, S, method="permutation")
    with pytest.raises(ValueError, match="`statistic` must be one of"):
        mmdd(Y, X, S, statistic="w")
    with pytest.raises(ValueError, match=r"`base_point` is not on Sphere\(2\): \|base_point\|"):
        mmdd(Y, X, S, base_point=np.ones(3))
    with pytest.raises(TypeError, match="`manifold` must be"):
        dcov_test(Y, X, None)


def test_constant_inputs_give_nan_with_reason():
    S = Sphere(2)
    Y, X = simulate.draw("sphere", "iid", 20, random_state=0)
    with pytest.warns(NotApplicableWarning, match="`X` is constant"):
        res = mmdd_test(Y, np.ones(20), S)
    assert np.isnan(res.statistic) and np.isnan(res.pvalue)
    assert any("constant" in note for note in res.notes)
    with pytest.warns(NotApplicableWarning, match="`Y` is constant"):
        res = mmdd_test(np.tile([0.0, 0.0, 1.0], (20, 1)), X, S)
    assert np.isnan(res.pvalue)
    with pytest.warns(NotApplicableWarning, match="`X` is constant"):
        assert np.isnan(dcov_test(Y, np.zeros(20), S).pvalue)
