"""The tensor checks of mlcore: what a tensor argument must be, in one place and one style.

Scalars go through :mod:`statcore.validation` (``check_scalar``, ``check_option``, ...); these
are their tensor counterparts, in the same words: "`name` must be ...; got ...". A raw torch
error (an index out of range in an embedding, a broadcast of mismatched shapes, a kernel not
implemented for an integer dtype) names none of the user's arguments, so every public entry of
mlcore checks its tensors here first.

Shape, dtype and device checks read only metadata. Value checks (``finite=True``,
:func:`check_token_ids`) read the data and so wait for a GPU to finish its queued work; they
guard the places where a bad value gives a silent wrong number or a torch error far from its
cause (token ids that index an embedding, calibration data, diffusion times). Module
``forward`` passes leave NaN to propagate, as torch's own layers do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from statcore.validation import describe

_KIND_WORDS = {
    "floating": "a floating-point tensor",
    "integer": "an integer tensor",
    "real": "a real (integer or floating-point) tensor",
}


def _has_kind(x: torch.Tensor, kind: str) -> bool:
    floating = x.is_floating_point()
    integer = not floating and not x.is_complex() and x.dtype != torch.bool
    return {"floating": floating, "integer": integer, "real": floating or integer}[kind]


def check_tensor(
    x,
    *,
    name: str,
    dims: Sequence[str] | None = None,
    sizes: Mapping[str, int] | None = None,
    ndim: int | Sequence[int] | None = None,
    kind: str | None = None,
    nonempty: bool | Sequence[str] = False,
    finite: bool = False,
    like: torch.Tensor | None = None,
    like_name: str | None = None,
) -> torch.Tensor:
    """Check a tensor argument; return it unchanged.

    Parameters
    ----------
    x : object
        What the user passed.
    name : str
        The argument's name, used in every message.
    dims : sequence of str, optional
        The names of its axes, e.g. ``("batch", "length", "d_model")``; fixes ``ndim``.
    sizes : mapping of str to int, optional
        Required sizes of named axes, e.g. ``{"d_model": 8}``.
    ndim : int or sequence of int, optional
        Accepted numbers of dimensions, when the axes have no names.
    kind : {"floating", "integer", "real"}, optional
        Required dtype kind; ``"integer"`` excludes bool, ``"real"`` excludes bool and complex.
    nonempty : bool or sequence of str
        ``True``: every axis must be non-empty; a sequence of names from ``dims``: those axes
        must be.
    finite : bool
        Refuse NaN and infinite entries (reads the data).
    like : Tensor, optional
        ``x`` must share its dtype and device.
    like_name : str, optional
        The name of ``like``, for the message.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"`{name}` must be a torch.Tensor; got {type(x).__name__}")
    shape = tuple(x.shape)
    if dims is not None:
        sizes = dict(sizes or {})
        want = "(" + ", ".join(f"{d}={sizes[d]}" if d in sizes else d for d in dims) + ")"
        fits = len(shape) == len(dims) and all(
            shape[i] == sizes[d] for i, d in enumerate(dims) if d in sizes
        )
        if not fits:
            raise ValueError(f"`{name}` must be a {len(dims)}-D {want} tensor; got shape {shape}")
    elif ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if x.ndim not in allowed:
            want = " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(f"`{name}` must be a {want} tensor; got shape {shape}")
    if kind is not None and not _has_kind(x, kind):
        raise TypeError(f"`{name}` must be {_KIND_WORDS[kind]}; got dtype {x.dtype}")
    if nonempty is True and x.numel() == 0:
        raise ValueError(f"`{name}` must not be empty; got shape {shape}")
    if nonempty and nonempty is not True:
        for axis in nonempty:
            if shape[list(dims).index(axis)] == 0:
                raise ValueError(f"`{name}` must have at least one {axis} entry; got shape {shape}")
    if like is not None and (x.dtype != like.dtype or x.device != like.device):
        raise ValueError(
            f"`{name}` must have the dtype and device of `{like_name}` ({like.dtype} on "
            f"{like.device}); got {x.dtype} on {x.device}"
        )
    if finite:
        check_finite(x, name=name)
    return x


def check_finite(x: torch.Tensor, *, name: str) -> torch.Tensor:
    """Refuse NaN and infinite entries, saying how many of each came."""
    if x.is_floating_point() or x.is_complex():
        bad = ~torch.isfinite(x)
        if bool(bad.any()):
            n_nan = int(torch.isnan(x).sum())
            raise ValueError(
                f"`{name}` must be finite; found {n_nan} NaN and {int(bad.sum()) - n_nan} "
                f"infinite entries among {x.numel()}"
            )
    return x


def check_token_ids(
    ids, *, name: str, vocab: int, dims: Sequence[str] = ("batch", "length")
) -> torch.Tensor:
    """Integer token ids in ``[0, vocab)``: an id outside would index past an embedding."""
    check_tensor(ids, name=name, dims=dims, kind="integer")
    if ids.numel():
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or high >= vocab:
            raise ValueError(
                f"`{name}` must hold token ids in [0, {vocab - 1}]; got ids from {low} to {high}"
            )
    return ids


def check_float_dtype(dtype, *, name: str = "dtype"):
    """A floating-point ``torch.dtype`` or None (the default dtype): the factory keyword of
    modules whose buffers hold frequencies, scales and weights, which integers would round."""
    if dtype is None or (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        return dtype
    raise TypeError(f"`{name}` must be None or a floating-point torch.dtype; got {describe(dtype)}")


def check_finite_parameters(module: torch.nn.Module, *, name: str) -> None:
    """Refuse a module whose parameters hold NaN or infinite entries, naming the parameter."""
    for pname, param in module.named_parameters():
        check_finite(param.detach(), name=f"{name}.{pname}")
