"""Agreement with geomstats 2.8 (imported only through statcore.compat.import_geomstats)."""

import numpy as np
import pytest
from _manifold_helpers import concentrated_sample

from statcore.compat import import_geomstats
from statcore.manifold import SPD, Hyperbolic, Sphere, frechet_mean, from_geomstats, mmdd

import_geomstats()
from geomstats.geometry.hyperboloid import Hyperboloid  # noqa: E402
from geomstats.geometry.hypersphere import Hypersphere  # noqa: E402
from geomstats.geometry.spd_matrices import SPDMatrices  # noqa: E402
from geomstats.learning.frechet_mean import FrechetMean  # noqa: E402


def test_sphere_frechet_mean_matches_geomstats(rng):
    S = Sphere(2)
    Y, _ = concentrated_sample(S, 50, rng, scale=0.5)
    ours = frechet_mean(Y, S).mean
    theirs = FrechetMean(Hypersphere(dim=2)).set(max_iter=500, epsilon=1e-14).fit(Y).estimate_
    # geomstats' gradient descent stops on a step-size rule, about 1e-7 short of the critical
    # point; ours is closer to it (smaller gradient norm), and the two agree to 1e-6
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
    grad = np.linalg.norm(S.log_coords(theirs, Y).mean(0))
    assert frechet_mean(Y, S).grad_norm <= grad


@pytest.mark.parametrize(
    ("ours", "space"),
    [
        (Sphere(2), lambda: Hypersphere(dim=2)),
        (SPD(2), lambda: SPDMatrices(n=2)),
        (Hyperbolic(2), lambda: Hyperboloid(dim=2)),
    ],
    ids=["sphere", "spd", "hyperbolic"],
)
def test_closed_forms_match_geomstats_and_the_adapter(ours, space, rng):
    gm = from_geomstats(space())
    Y, centre = concentrated_sample(ours, 12, rng, scale=0.5)
    assert gm.belongs(Y).all()
    np.testing.assert_allclose(gm.log(centre, Y), ours.log(centre, Y), atol=1e-8)
    np.testing.assert_allclose(gm.dist(Y[:6], Y[6:]), ours.dist(Y[:6], Y[6:]), atol=1e-8)
    # orthonormal coordinates differ by a rotation: compare Gram matrices
    C1, C2 = gm.log_coords(centre, Y), ours.log_coords(centre, Y)
    np.testing.assert_allclose(C1 @ C1.T, C2 @ C2.T, atol=1e-8)
    X = rng.normal(size=12)
    # MMDD depends on inner products only, hence the same through either route
    np.testing.assert_allclose(
        mmdd(Y, X, gm, base_point=centre), mmdd(Y, X, ours, base_point=centre), atol=1e-10
    )
    assert gm.belongs(gm.random_point(3, rng)).all()


def test_adapter_rejects_non_manifolds():
    with pytest.raises(TypeError, match="geomstats manifold"):
        from_geomstats(object())
