"""The maps' ``base=`` is now ``base_point=`` (the name mmdd and check_point use): the old
spelling still works for one release, with a FutureWarning."""

import numpy as np
import pytest

from statcore.manifold import Sphere


@pytest.mark.parametrize(
    ("method", "arg"),
    [
        ("exp", np.array([0.0, 0.3, 0.0])),
        ("log", np.array([0.0, 0.6, 0.8])),
        ("to_tangent_coords", np.array([0.0, 0.3, 0.0])),
        ("from_tangent_coords", np.array([0.3, 0.1])),
        ("log_coords", np.array([0.0, 0.6, 0.8])),
    ],
)
def test_maps_accept_base(method, arg):
    sphere, p = Sphere(2), np.array([0.0, 0.0, 1.0])
    with pytest.warns(FutureWarning, match="base_point"):
        old = getattr(sphere, method)(base=p, **{_second(method): arg})
    np.testing.assert_allclose(old, getattr(sphere, method)(p, arg))


def test_inner_accepts_base():
    sphere, p = Sphere(2), np.array([0.0, 0.0, 1.0])
    u, v = np.array([0.1, 0.2, 0.0]), np.array([0.3, 0.0, 0.0])
    with pytest.warns(FutureWarning, match="base_point"):
        old = sphere.inner(base=p, u=u, v=v)
    assert old == pytest.approx(sphere.inner(p, u, v))


def _second(method):
    return {"exp": "v", "log": "y", "to_tangent_coords": "V", "from_tangent_coords": "C"}.get(
        method, "Y"
    )
