"""Fixtures shared by the mlcore tests: the device parametrisation and one torch thread."""

import pytest
import torch

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available here")


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=CUDA)])
def device(request):
    """Each test that takes ``device`` runs on the CPU and, where there is one, on CUDA."""
    return request.param


@pytest.fixture(autouse=True)
def _one_thread():
    """One torch thread per test: the machines running the suite are shared."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
