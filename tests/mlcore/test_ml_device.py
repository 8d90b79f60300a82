"""get_device, as_numpy and seed_everything."""

import random

import numpy as np
import pytest
import torch

from mlcore import get_device, seed_everything
from mlcore._device import as_numpy


def test_default_device_follows_cuda_availability():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert get_device().type == expected
    assert get_device("auto") == get_device(None)


def test_get_device_accepts_strings_and_devices(device):
    resolved = get_device(device)
    assert resolved.type == device
    assert get_device(resolved) == resolved
    assert torch.zeros(2, device=resolved).device.type == device


@pytest.mark.parametrize(
    "bad, error, message",
    [
        ("gpu", ValueError, "`device` must be None"),
        ("cuda:x", ValueError, "`device` must be None"),
        ("meta", ValueError, "cpu or cuda"),
        (0, TypeError, r"got 0 \(int\)"),
    ],
)
def test_get_device_rejects_bad_values(bad, error, message):
    with pytest.raises(error, match=message):
        get_device(bad)


def test_cuda_requested_without_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert get_device().type == "cpu"
    for request in ("cuda", "cuda:0", torch.device("cuda", 1)):
        with pytest.raises(RuntimeError, match="is_available"):
            get_device(request)


def test_cuda_index_beyond_device_count(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert get_device("cuda:1") == torch.device("cuda", 1)
    with pytest.raises(RuntimeError, match="only 2 CUDA device"):
        get_device("cuda:2")


def test_as_numpy_tensor_dtypes_and_copy(device):
    x = torch.arange(6, dtype=torch.float32, device=device).reshape(2, 3).requires_grad_()
    out = as_numpy(x * 2)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, 2 * np.arange(6.0).reshape(2, 3))
    transposed = as_numpy(x.t())  # non-contiguous view
    assert transposed.flags.c_contiguous
    np.testing.assert_array_equal(transposed, np.arange(6.0).reshape(2, 3).T)
    assert as_numpy(torch.tensor([1, 2], dtype=torch.int8, device=device)).dtype == np.int64
    assert as_numpy(torch.tensor([True, False], device=device)).dtype == np.bool_
    assert as_numpy(torch.ones(2, dtype=torch.bfloat16, device=device)).dtype == np.float64
    assert as_numpy(torch.tensor(1 + 2j, device=device).conj()) == 1 - 2j
    assert as_numpy(torch.tensor(0.5, device=device)).shape == ()


def test_as_numpy_never_shares_memory():
    t = torch.zeros(3, dtype=torch.float64)
    out = as_numpy(t)
    out[0] = 1.0
    assert t[0] == 0.0
    arr = np.zeros(3)
    assert not np.shares_memory(as_numpy(arr), arr)


def test_as_numpy_non_tensor_inputs():
    arr32 = np.arange(4, dtype=np.float32)[::2]
    out = as_numpy(arr32)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, [0.0, 2.0])
    assert as_numpy(3).dtype == np.int64
    assert as_numpy(2.5) == 2.5 and as_numpy(2.5).dtype == np.float64
    assert as_numpy([1.0, 2.0]).dtype == np.float64
    assert as_numpy(np.array([1, 0], dtype=np.uint8)).dtype == np.int64
    with pytest.raises(TypeError, match="`labels` must be a numeric"):
        as_numpy(["a", "b"], name="labels")


def _draws(rng):
    """One draw from each generator seed_everything seeds, and one from the Generator it returns."""
    return torch.randn(4), np.random.rand(2), random.random(), rng.normal(size=3)  # noqa: NPY002


def test_seed_everything_reproduces_every_generator():
    first = _draws(seed_everything(123))
    second = _draws(seed_everything(123))
    assert torch.equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert first[2] == second[2]
    np.testing.assert_array_equal(first[3], second[3])
    assert isinstance(seed_everything(123), np.random.Generator)
    other = _draws(seed_everything(124))
    assert not torch.equal(other[0], first[0])
    assert not np.array_equal(other[3], first[3])


@pytest.mark.parametrize(
    "bad, error",
    [(-1, ValueError), (2**32, ValueError), (1.5, TypeError), (True, TypeError), (None, TypeError)],
)
def test_seed_everything_rejects_bad_seeds(bad, error):
    with pytest.raises(error, match="`seed`"):
        seed_everything(bad)
