"""What users see from bad input to the manifold area: points off the manifold, vectors that are
not tangent, wrong shapes, impossible options; constant samples; the ``check=False`` escape."""

import importlib

import numpy as np
import pytest
from _manifold_helpers import concentrated_sample

from statcore.exceptions import NotApplicableWarning
from statcore.manifold import (
    SO3,
    SPD,
    Euclidean,
    Hyperbolic,
    Sphere,
    dcov_test,
    frechet_mean,
    mmdd,
    mmdd_test,
    simulate,
)
from statcore.manifold.interface import Manifold

mmdd_module = importlib.import_module("statcore.manifold.mmdd")

S, H, P, R, E = Sphere(2), Hyperbolic(2), SPD(2), SO3(), Euclidean(2)
I2, I3, O = np.eye(2), np.eye(3), np.eye(3)[0]
Y, X = simulate.draw("sphere", "mean_shift", 20, random_state=0)

# the examples and their siblings: each map names the argument and the defect
MAP_CASES = {
    "sphere dist off": (
        lambda: S.dist([2, 0, 0], [0, 1, 0]),
        r"`a` is not on Sphere\(2\): \|a\| = 2",
    ),
    "spd not symmetric": (
        lambda: P.dist([[1.0, 2.0], [0.0, 1.0]], I2),
        r"`a` is not on SPD\(2, metric='affine'\): not symmetric",
    ),
    "spd not definite": (lambda: P.log(I2, np.diag([1.0, -1.0])), "`y` is not on .*smallest eig"),
    "hyperbolic off": (lambda: H.dist([1.0, 1.0, 0.0], O), r"<a, a>_L = 0, not -1"),
    "hyperbolic lower sheet": (lambda: H.dist(O, -O), r"`b` is not on .*b\[0\] = -1"),
    "so3 scaled": (lambda: R.dist(2 * I3, I3), r"`a` is not on SO3\(\): not orthogonal"),
    "so3 reflection": (lambda: R.log(I3, np.diag([1.0, 1.0, -1.0])), "det y = -1"),
    "sphere exp not tangent": (
        lambda: S.exp([1, 0, 0], [1, 0, 0]),
        r"`v` is not tangent to Sphere\(2\) at `base_point`: <base_point, v> = 1",
    ),
    "hyperbolic exp not tangent": (lambda: H.exp(O, [1.0, 0, 0]), "`v` is not tangent"),
    "spd exp not symmetric": (lambda: P.exp(I2, [[0.0, 1.0], [0.0, 0.0]]), "`v` is not tangent"),
    "so3 exp not skew": (lambda: R.exp(I3, I3), "`v` is not tangent to SO3"),
    "log base off": (lambda: S.log([0, 0, 2], [0, 0, 1]), r"`base_point` is not on Sphere\(2\)"),
    "batch names the row": (
        lambda: S.log([0, 0, 1], [[1, 0, 0], [0, 2, 0]]),
        r"`y` has 1 point\(s\) off Sphere\(2\), first at y\[1\]: \|y\[1\]\| = 2",
    ),
    "log_coords": (lambda: S.log_coords([0, 0, 1], [[0, 0, 3]]), r"`Y` has 1 point\(s\) off"),
    "to_tangent_coords": (lambda: S.to_tangent_coords([0, 0, 1], [0, 0, 1]), "`V` is not tangent"),
    "inner": (lambda: S.inner([0, 0, 1], [1, 0, 0], [0, 0, 1]), "`v` is not tangent"),
    "inner batches": (
        lambda: E.inner([0, 0], np.ones((2, 2)), np.ones((3, 2))),
        "`u` and `v` must hold the same number of points",
    ),
    "from_tangent_coords": (lambda: S.from_tangent_coords([0, 0, 1], [1, 2, 3]), "`C` must hold 2"),
    "dist batches": (lambda: S.dist(Y[:2], Y[:3]), "`a` and `b` must hold the same number"),
    "wrong point shape": (lambda: P.dist(np.eye(3), I2), r"`a` must be an array \(\.\.\., 2, 2\)"),
    "base batch": (
        lambda: S.exp(Y[:2], np.zeros(3)),
        r"`base_point` must be one point of shape \(3,\)",
    ),
    "nan": (lambda: S.dist([np.nan, 0, 1], [0, 0, 1]), "`a` must not contain NaN"),
    "strings": (lambda: H.log(O, "abc"), "`y` must be numeric array-like"),
}


@pytest.mark.parametrize("case", list(MAP_CASES), ids=list(MAP_CASES))
def test_maps_reject_points_off_the_manifold_and_non_tangent_vectors(case):
    call, fragment = MAP_CASES[case]
    with pytest.raises((ValueError, TypeError), match=fragment):
        call()


def test_geomstats_adapter_checks_through_geomstats():
    from statcore.compat import import_geomstats

    import_geomstats()
    from geomstats.geometry.hypersphere import Hypersphere

    from statcore.manifold import from_geomstats

    gm = from_geomstats(Hypersphere(dim=2))
    with pytest.raises(ValueError, match="`a` is not on .*geomstats' `belongs` is False"):
        gm.dist([2.0, 0, 0], [1.0, 0, 0])
    with pytest.raises(ValueError, match="`v` is not tangent .*`is_tangent` is False"):
        gm.exp([1.0, 0, 0], [1.0, 0, 0])


def test_tolerance_is_relative_to_the_scale_of_the_input(rng):
    # rounding passes at any scale ...
    big = SPD(2).random_point(1, random_state=1)[0] * 1e8
    big[0, 1] += 1e-9 * abs(big[0, 1])
    assert np.isfinite(SPD(2).dist(big, big * 2))
    far = H.exp(O, [0.0, 9.0, 0.0])  # y0 ~ 4e3, where <y, y>_L carries rounding of ~1e-9
    assert abs(H.dist(O, far) - 9.0) < 1e-8
    assert np.isfinite(S.dist([0, 0, 1 + 1e-9], [0, 0, 1]))
    # ... a real defect fails at any scale
    skewed = big.copy()
    skewed[0, 1] *= 1.001
    with pytest.raises(ValueError, match="not symmetric"):
        SPD(2).dist(skewed, big)
    with pytest.raises(ValueError, match=r"\|a\| = 1.00001"):
        S.dist([0, 0, 1 + 1e-5], [0, 0, 1])


def test_check_false_skips_the_checks_and_gives_the_same_numbers(manifold, rng):
    Ys, centre = concentrated_sample(manifold, 12, rng)
    V = manifold.log(centre, Ys)
    C = manifold.to_tangent_coords(centre, V)
    pairs = [
        ("exp", (centre, V)),
        ("log", (centre, Ys)),
        ("dist", (Ys[:6], Ys[6:])),
        ("inner", (centre, V[:6], V[6:])),
        ("to_tangent_coords", (centre, V)),
        ("from_tangent_coords", (centre, C)),
        ("log_coords", (centre, Ys)),
    ]
    for method, args in pairs:
        checked = getattr(manifold, method)(*args)
        np.testing.assert_array_equal(getattr(manifold, method)(*args, check=False), checked)
    # the escape is for data already checked: it does not look
    assert S.dist([2.0, 0, 0], [0, 1.0, 0], check=False) == pytest.approx(np.pi)


def test_inner_loops_check_the_data_once(monkeypatch):
    calls = []
    original = Manifold._checked_points

    def counting(self, *args, **kwargs):
        calls.append(args[1])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Manifold, "_checked_points", counting)
    Ys, _ = concentrated_sample(S, 50, np.random.default_rng(1), scale=0.5)
    calls.clear()
    res = frechet_mean(Ys, S, tol=1e-14)
    assert res.iterations.n_iter > 3 and calls == ["Y"]
    calls.clear()
    mmdd_test(Ys, np.arange(50.0), S, n_resamples=9, random_state=0)
    assert calls == ["Y", "Y"]  # by mmdd_test, and by the frechet_mean it calls
    calls.clear()
    dcov_test(Ys, np.arange(50.0), S, n_resamples=9, random_state=0)
    assert calls == ["Y"]


def _constant_sample(seed, manifold=S, rounding=False):
    rng = np.random.default_rng(seed)
    point = manifold.random_point(1, random_state=seed)[0]
    Yc = np.repeat(point[None], 20, axis=0)
    if rounding:
        # the last bits of each coordinate differ, as after a computation
        Yc = Yc * (1.0 + 2e-16 * rng.choice([-1.0, 1.0], size=Yc.shape))
    return Yc, rng.normal(size=20)


@pytest.mark.parametrize("seed", range(20))
def test_constant_y_gives_nan_with_the_reason_for_every_seed(seed):
    # the exact comparison let the 1e-17 rounding of the log map through: p = 0.01 in 13 of 20
    for Yc, Xc, space, base in [
        (*_constant_sample(seed), S, None),
        (*_constant_sample(seed, rounding=True), S, None),
        (*_constant_sample(seed, SPD(3), rounding=True), SPD(3), None),
        (*_constant_sample(seed, H), H, O),  # constant, away from a given base point
    ]:
        with pytest.warns(NotApplicableWarning, match="`Y` is constant: its points are equal"):
            res = mmdd_test(Yc, Xc, space, base_point=base, n_resamples=19, random_state=seed)
        assert np.isnan(res.pvalue) and np.isnan(res.statistic)
        assert any("Not applicable: `Y` is constant" in note for note in res.notes)
    with pytest.warns(NotApplicableWarning, match="`Y` is constant"):
        assert np.isnan(dcov_test(Yc, Xc, space, n_resamples=19).pvalue)


def test_constant_check_is_relative_so_tiny_units_are_not_constant(rng):
    Ye, Xe = rng.normal(size=(30, 2)), rng.normal(size=30)
    Ye[:, 0] += Xe
    ref = mmdd_test(Ye, Xe, E, n_resamples=99, random_state=1)
    tiny = mmdd_test(Ye * 1e-30, Xe, E, n_resamples=99, random_state=1)
    # MMDD is scale-equivariant in Euclidean Y: the same p-value at any unit
    assert tiny.pvalue == ref.pvalue < 0.05


BAD_INPUTS = {
    "frechet empty": (
        lambda: frechet_mean(np.empty((0, 3)), S),
        ValueError,
        "at least 1 row; got no rows",
    ),
    "frechet init off": (lambda: frechet_mean(Y, S, init=[2, 0, 0]), ValueError, "`init` is not"),
    "frechet maxiter": (lambda: frechet_mean(Y, S, maxiter=0), ValueError, "`maxiter` must"),
    "frechet manifold": (lambda: frechet_mean(Y, Sphere), TypeError, "`manifold` must be"),
    "frechet nan": (lambda: frechet_mean(np.full((3, 3), np.nan), S), ValueError, "NaN"),
    "mmdd one row": (lambda: mmdd(Y[:1], X[:1], S), ValueError, "at least 4 rows"),
    "mmdd mismatch": (lambda: mmdd(Y, X[:5], S), ValueError, "same number of rows"),
    "mmdd X 3-D": (lambda: mmdd(Y, X[:, None, None], S), ValueError, "`X` must be 1-D or 2-D"),
    "mmdd X inf": (lambda: mmdd(Y, np.r_[X[:-1], np.inf], S), ValueError, "`X` must be finite"),
    "mmdd Y points": (lambda: mmdd(Y[:, :2], X, S), ValueError, r"points of shape \(3,\)"),
    "mmdd statistic": (lambda: mmdd(Y, X, S, statistic=1), ValueError, "`statistic` must be"),
    "test method": (lambda: mmdd_test(Y, X, S, method="perm"), ValueError, "`method` must be"),
    "test n_resamples": (lambda: mmdd_test(Y, X, S, n_resamples=0), ValueError, "`n_resamples`"),
    "test Y strings": (lambda: mmdd_test([["a"] * 3] * 20, X, S), TypeError, "`Y` must be numeric"),
    "dcov Y off": (lambda: dcov_test(Y * 2, X, S), ValueError, r"`Y` has 20 point\(s\) off"),
    "dcov n_resamples": (lambda: dcov_test(Y, X, S, n_resamples=2.5), TypeError, "`n_resamples`"),
    "random_point n": (lambda: P.random_point(0), ValueError, "`n` must lie in"),
    "sphere m": (lambda: Sphere(1.5), TypeError, "`m` must be an integer"),
    "spd metric": (lambda: SPD(2, metric="bures"), ValueError, "`metric` must be one of"),
    "draw manifold": (lambda: simulate.draw("torus"), ValueError, "`manifold` must be one of"),
    "draw sigma": (lambda: simulate.draw(sigma=0), ValueError, "`sigma` must lie in"),
    "replicate test": (lambda: simulate.replicate(0, test="t"), ValueError, "`test` must be"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_gives_an_error_naming_the_argument(case):
    call, error, fragment = BAD_INPUTS[case]
    with pytest.raises(error, match=fragment):
        call()


@pytest.mark.parametrize(
    "call",
    [
        # a constant X returns before any random draw: the seed is still checked
        lambda rs: mmdd_test(Y, np.ones(20), S, random_state=rs),
        lambda rs: dcov_test(Y, np.ones(20), S, random_state=rs),
        lambda rs: mmdd_test(Y[:2], X[:2], S, random_state=rs),
        lambda rs: dcov_test(Y[:2], X[:2], S, random_state=rs),
        lambda rs: S.random_point(1, random_state=rs),
        lambda rs: simulate.draw(n=5, random_state=rs),
        lambda rs: simulate.replicate(rs, n=5),
    ],
    ids=[
        "mmdd_test",
        "dcov_test",
        "mmdd_test n<4",
        "dcov_test n<4",
        "random_point",
        "draw",
        "replicate",
    ],
)
@pytest.mark.parametrize("bad", ["seed", 1.5, -1])
def test_random_state_is_checked_on_entry_even_when_unused(call, bad):
    with pytest.raises((TypeError, ValueError), match="`random_state` must be"):
        call(bad)
