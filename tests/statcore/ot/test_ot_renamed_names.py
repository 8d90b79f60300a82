"""The ``barycenter`` names before the one spelling "centre" keep working for one release."""

import numpy as np
import pytest

import statcore.ot as sot
from statcore.ot import SLOTAlign, bures_wasserstein_barycentre
from statcore.ot.bures import BuresBarycentreResult
from statcore.ot.simulate import affine_clients


@pytest.mark.parametrize("module", ["statcore.ot", "statcore.ot.bures"])
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("bures_wasserstein_barycenter", bures_wasserstein_barycentre),
        ("BuresBarycenterResult", BuresBarycentreResult),
    ],
)
def test_old_module_names_warn_and_are_the_new_objects(module, old, new):
    import importlib

    mod = importlib.import_module(module)
    with pytest.warns(FutureWarning, match=old):
        assert getattr(mod, old) is new


def test_unknown_names_still_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sot.nope  # noqa: B018


def test_old_result_attribute_warns_and_returns_the_barycentre():
    res = SLOTAlign(affine_clients(sizes=(30, 25), dim=3, random_state=0)).fit()
    with pytest.warns(FutureWarning, match="barycentre"):
        old = res.barycenter
    assert old is res.barycentre
    assert np.isfinite(res.tidy()["w2_to_barycentre"]).all()
