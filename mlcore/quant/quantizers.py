"""Symmetric group-wise round-to-nearest quantisation, the one number format of :mod:`mlcore.quant`.

A tensor is cut along its last axis into groups of ``group_size`` entries; each group gets one
scale ``max|x| / (2**(bits-1) - 1)`` and its entries become integers in ``[-qmax, qmax]``. The
largest entry of a group maps to ``±qmax`` exactly, so nothing is clipped and the rounding error
is at most ``scale / 2`` per entry. ``bits=16`` is the unquantised reference (the tensor is
returned as is): the library's 16-bit precision is the model's own floating-point dtype.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch

from mlcore._checks import check_tensor
from statcore.validation import check_scalar, describe

#: Bit-widths the integer format supports (16 = unquantised).
SUPPORTED_BITS = (2, 3, 4, 5, 6, 7, 8, 16)


def check_bits(bits, *, name: str = "bits") -> int:
    """One of ``SUPPORTED_BITS``."""
    bits = check_scalar(bits, name=name, kind=numbers.Integral)
    if bits not in SUPPORTED_BITS:
        raise ValueError(f"`{name}` must be one of {SUPPORTED_BITS}; got {bits}")
    return bits


def check_bits_set(values, *, name: str = "activation_bits") -> tuple[int, ...]:
    """A sequence of ``SUPPORTED_BITS`` (possibly empty), as a tuple."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | set | frozenset):
        raise TypeError(f"`{name}` must be a sequence of bit-widths; got {describe(values)}")
    return tuple(check_bits(b, name=f"{name}[{i}]") for i, b in enumerate(values))


def _check_quantizable(x, *, name: str) -> torch.Tensor:
    """A non-empty, finite, floating-point tensor with a last axis to group along."""
    check_tensor(x, name=name, kind="floating", nonempty=True, finite=True)
    if x.ndim == 0:
        raise ValueError(f"`{name}` must have a last axis to quantise along; got a 0-d tensor")
    return x


def _check_group(x: torch.Tensor, group_size, *, name: str) -> int:
    width = x.shape[-1]
    if group_size is None:
        return width
    group_size = check_scalar(group_size, name="group_size", kind=numbers.Integral, low=1)
    if width % group_size:
        raise ValueError(
            f"`group_size`={group_size} must divide the last axis of `{name}` ({width})"
        )
    return group_size


def quantize(x, bits: int, *, group_size: int | None = None, name: str = "x"):
    """Quantise ``x`` group-wise along its last axis.

    Parameters
    ----------
    x : Tensor (..., width), floating point
    bits : int
        Bit-width, one of ``SUPPORTED_BITS`` below 16.
    group_size : int, optional
        Entries sharing one scale; must divide ``width``. Default: the whole last axis (one scale
        per row, "per-token").
    name : str
        The argument's name in error messages.

    Returns
    -------
    q : Tensor (..., width), int8
        Integers in ``[-qmax, qmax]``, ``qmax = 2**(bits-1) - 1``.
    scales : Tensor (..., width // group_size), dtype of ``x``

    Notes
    -----
    Symmetric round-to-nearest with absmax scales, the format of the int8/int4 GEMM kernels that
    the CoCoQuant rewrite feeds (see :func:`mlcore.quant.fused_allreduce_quantize`). An all-zero
    group gets scale 0 and integers 0.
    """
    _check_quantizable(x, name=name)
    bits = check_bits(bits)
    if bits == 16:
        raise ValueError("`bits`=16 is the unquantised reference; there is nothing to quantise")
    group = _check_group(x, group_size, name=name)
    qmax = 2 ** (bits - 1) - 1
    grouped = x.reshape(*x.shape[:-1], -1, group)
    scales = grouped.abs().amax(dim=-1) / qmax
    safe = torch.where(scales > 0, scales, torch.ones_like(scales))
    q = torch.round(grouped / safe.unsqueeze(-1)).clamp_(-qmax, qmax).to(torch.int8)
    return q.reshape(x.shape), scales


def dequantize(q, scales, *, dtype=torch.float32) -> torch.Tensor:
    """Integers times their group's scale: the inverse of :func:`quantize` up to rounding."""
    check_tensor(q, name="q", kind="integer")
    check_tensor(scales, name="scales", kind="floating", finite=True)
    if q.ndim == 0 or scales.ndim == 0:
        raise ValueError(
            f"`q` and `scales` must have a last axis (the groups); got shapes {tuple(q.shape)} "
            f"and {tuple(scales.shape)}"
        )
    if q.shape[:-1] != scales.shape[:-1] or scales.shape[-1] == 0 or q.shape[-1] % scales.shape[-1]:
        raise ValueError(
            f"`scales` of shape {tuple(scales.shape)} do not fit `q` of shape {tuple(q.shape)}"
        )
    grouped = q.reshape(*q.shape[:-1], scales.shape[-1], -1).to(dtype)
    return (grouped * scales.to(dtype).unsqueeze(-1)).reshape(q.shape)


def fake_quantize(x, bits: int, *, group_size: int | None = None, name: str = "x") -> torch.Tensor:
    """``dequantize(quantize(x))`` in ``x``'s dtype; ``x`` itself for ``bits=16``.

    The simulation of a low-bit tensor used by the sensitivity calibration: the forward value
    the low-bit kernel would see, in floating point.
    """
    if check_bits(bits) == 16:
        _check_quantizable(x, name=name)
        return x
    q, scales = quantize(x, bits, group_size=group_size, name=name)
    return dequantize(q, scales, dtype=x.dtype)


def pack_int4(q: torch.Tensor) -> torch.Tensor:
    """Two 4-bit integers per byte (uint8), so that a 4-bit payload costs half a byte an entry
    on the wire; the last axis must be even and every value an integer in [-8, 7] (the int4
    range), or the bytes would silently hold other numbers."""
    check_tensor(q, name="q", kind="integer", nonempty=True)
    if q.ndim == 0:
        raise ValueError("`q` must have a last axis to pack pairs along; got a 0-d tensor")
    if bool(((q < -8) | (q > 7)).any()):
        raise ValueError(
            f"`q` must hold int4 values in [-8, 7]; got values in [{int(q.min())}, {int(q.max())}]"
        )
    if q.shape[-1] % 2:
        raise ValueError(f"`q` needs an even last axis to pack 4-bit pairs; got {q.shape[-1]}")
    u = (q.to(torch.int16) + 8).to(torch.uint8)
    return (u[..., 0::2] << 4) | u[..., 1::2]


def unpack_int4(packed: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`pack_int4`."""
    check_tensor(packed, name="packed", nonempty=True)
    if packed.dtype != torch.uint8 or packed.ndim == 0:
        raise TypeError(
            f"`packed` must be a uint8 tensor with a last axis (from pack_int4); got dtype "
            f"{packed.dtype}, {packed.ndim}-d"
        )
    high = (packed >> 4).to(torch.int16) - 8
    low = (packed & 0xF).to(torch.int16) - 8
    return torch.stack([high, low], dim=-1).reshape(*packed.shape[:-1], -1).to(torch.int8)


def quantized_linear(
    x, weight, bias=None, *, bits: int, group_size: int | None = None, activation_bits=(8,)
) -> torch.Tensor:
    """A GEMM at ``bits``: weights fake-quantised in groups along the reduction axis, inputs too
    when ``bits`` is in ``activation_bits`` (otherwise weight-only, W``bits``A16)."""
    _check_quantizable(x, name="x")
    check_tensor(weight, name="weight", ndim=2, kind="floating", nonempty=True, finite=True)
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"`x` must have a last axis of `weight`'s {weight.shape[1]} inputs; got shape "
            f"{tuple(x.shape)}"
        )
    if bias is not None:
        check_tensor(bias, name="bias", dims=("out",), sizes={"out": weight.shape[0]},
                     kind="floating")  # fmt: skip
    bits = check_bits(bits)
    activation_bits = check_bits_set(activation_bits)
    if bits == 16:
        return torch.nn.functional.linear(x, weight, bias)
    if group_size is not None:
        _check_group(x, group_size, name="x")
    w = fake_quantize(weight, bits, group_size=group_size, name="weight")
    if bits in activation_bits:
        x = fake_quantize(x, bits, group_size=group_size, name="x")
    return torch.nn.functional.linear(x, w, bias)


__all__ = [
    "dequantize",
    "fake_quantize",
    "pack_int4",
    "quantize",
    "quantized_linear",
    "unpack_int4",
]
