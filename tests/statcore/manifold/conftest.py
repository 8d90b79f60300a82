import pytest
from _manifold_helpers import MANIFOLDS


@pytest.fixture(params=list(MANIFOLDS), ids=list(MANIFOLDS))
def manifold(request):
    return MANIFOLDS[request.param]
