"""Devices, seeding, and the one door through which tensors become numpy arrays.

Results never see torch: every tensor that reaches a results object goes through
:func:`as_numpy` (detach, move to the CPU, copy to a numpy array), so ``statcore.results``
works on plain numpy and pandas.
"""

from __future__ import annotations

import contextlib
import numbers
import random

import numpy as np
import torch

from statcore.validation import check_random_state, check_scalar, describe

#: The largest seed ``seed_everything`` accepts: numpy's legacy global generator takes 32 bits.
MAX_SEED = 2**32 - 1


def get_device(device=None) -> torch.device:
    """Resolve a device request to a :class:`torch.device`.

    Parameters
    ----------
    device : None, str or torch.device
        ``None`` or ``"auto"``: CUDA when available, else the CPU. Otherwise ``"cpu"``,
        ``"cuda"`` (the current CUDA device), ``"cuda:N"`` or a ``torch.device`` of type cpu
        or cuda.

    Returns
    -------
    torch.device

    Raises
    ------
    TypeError
        When ``device`` is neither None, a string nor a ``torch.device``.
    ValueError
        When the string names no device, or a device type other than cpu and cuda.
    RuntimeError
        When CUDA is requested but not available, or the index exceeds the device count.

    Examples
    --------
    >>> get_device("cpu")
    device(type='cpu')
    """
    if device is None or (isinstance(device, str) and device == "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not isinstance(device, str | torch.device):
        raise TypeError(
            "`device` must be None, 'auto', 'cpu', 'cuda', 'cuda:N' or a torch.device; got "
            f"{device!r} ({type(device).__name__})"
        )
    try:
        resolved = torch.device(device)
    except RuntimeError:
        raise ValueError(
            f"`device` must be None, 'auto', 'cpu', 'cuda', 'cuda:N' or a torch.device; "
            f"got {device!r}"
        ) from None
    if resolved.type not in ("cpu", "cuda"):
        raise ValueError(f"`device` must be a cpu or cuda device; got {device!r}")
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(
                f"`device` {device!r} asks for CUDA, but torch.cuda.is_available() is False; "
                "use device='cpu' or device='auto'"
            )
        count = torch.cuda.device_count()
        if resolved.index is not None and resolved.index >= count:
            raise RuntimeError(
                f"`device` {device!r} asks for CUDA device {resolved.index}, but only {count} "
                "CUDA device(s) are visible"
            )
    return resolved


def as_numpy(x, *, name: str = "x") -> np.ndarray:
    """Return ``x`` as a new, C-contiguous numpy array, leaving torch behind.

    This is the single place where tensors become arrays: a tensor is detached from the
    autograd graph, its lazy conjugate/negative bits are resolved, it is cast and moved to the
    CPU, and copied. Numpy arrays, Python scalars, lists and pandas objects go through the same
    dtype rules (and are copied too, so the result never shares memory with the input).

    Parameters
    ----------
    x : torch.Tensor, numpy.ndarray, scalar or array_like
        What to convert; a 0-d tensor gives a 0-d array.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    TypeError
        When ``x`` is not numeric (strings, objects).

    Notes
    -----
    Dtypes:

    - floating (float16, bfloat16, float32, float64) -> ``float64``
    - complex -> ``complex128``
    - signed or unsigned integers -> ``int64`` (labels, counts and indices stay exact)
    - bool -> ``bool`` (masks stay masks; ``.mean()`` still gives a proportion)
    """
    if isinstance(x, torch.Tensor):
        x = x.detach().resolve_conj().resolve_neg()
        if x.is_floating_point():
            x = x.to(device="cpu", dtype=torch.float64)
        elif x.is_complex():
            x = x.to(device="cpu", dtype=torch.complex128)
        elif x.dtype != torch.bool:
            x = x.to(device="cpu", dtype=torch.int64)
        else:
            x = x.cpu()
        x = x.numpy()
    arr = np.asarray(x)
    for kind, dtype in (
        (np.bool_, np.bool_),
        (np.integer, np.int64),
        (np.floating, np.float64),
        (np.complexfloating, np.complex128),
    ):
        if np.issubdtype(arr.dtype, kind):
            return np.array(arr, dtype=dtype, order="C", copy=True)
    raise TypeError(f"`{name}` must be a numeric tensor or array; got dtype {arr.dtype}")


def seed_everything(seed) -> np.random.Generator:
    """Seed Python's ``random``, numpy's legacy global generator and torch; return a Generator.

    ``torch.manual_seed`` seeds the CPU generator and every CUDA device's. Deterministic
    algorithms (``torch.use_deterministic_algorithms``) are a separate switch left to the user.

    Parameters
    ----------
    seed : int
        An integer in ``[0, 2**32 - 1]`` (the range numpy's legacy ``np.random.seed`` takes).

    Returns
    -------
    numpy.random.Generator
        ``numpy.random.default_rng(seed)``: pass it on as ``random_state`` for numpy work.

    Examples
    --------
    >>> rng = seed_everything(0)
    >>> a = torch.randn(2); _ = seed_everything(0); bool((a == torch.randn(2)).all())
    True
    """
    seed = check_scalar(seed, name="seed", kind=numbers.Integral, low=0, high=MAX_SEED)
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 -- seeding the legacy global state is the point here
    torch.manual_seed(seed)
    return check_random_state(seed)


def module_device(module: torch.nn.Module, default="cpu") -> torch.device:
    """The device of ``module``'s first parameter; ``default`` for a module without any."""
    for parameter in module.parameters():
        return parameter.device
    return torch.device(default)


def torch_seed(random_state) -> int:
    """One seed for torch from ``random_state`` (None, int, SeedSequence, a numpy or a torch
    Generator): 63 bits from numpy, 31 bits from a torch Generator.

    A Generator passed in advances by one draw, so that consecutive calls on one stream give
    different seeds; None draws fresh entropy. This is the bridge from the numpy ``random_state``
    every public entry takes to the torch generators that draw.
    """
    if isinstance(random_state, torch.Generator):
        # 31 bits: the draw the areas made before this helper existed, so their streams stay
        draw = torch.randint(0, 2**31 - 1, (), generator=random_state, device=random_state.device)
        return int(draw)
    return int(check_random_state(random_state).integers(2**63 - 1))


def torch_generator(random_state, device=None) -> torch.Generator:
    """A ``torch.Generator`` from ``random_state``, never torch's global one.

    The one helper through which mlcore's torch draws get their randomness: None seeds a new
    generator from fresh entropy, an int or a numpy Generator (one draw of it) seeds a new one on
    ``device``; a ``torch.Generator`` passed in is returned as is, so that a caller's stream
    continues across calls. Torch's global RNG state is neither read nor changed.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or torch.Generator
    device : str or torch.device, optional
        Where a new generator lives; it must match the tensors it draws (CPU by default).

    Returns
    -------
    torch.Generator

    Raises
    ------
    TypeError
        For anything else (a float, a string).
    ValueError
        For a negative seed, or a generator on another device type than ``device`` (torch
        would refuse it only at the first draw).

    Examples
    --------
    >>> a = torch.rand(2, generator=torch_generator(0))
    >>> bool((a == torch.rand(2, generator=torch_generator(0))).all())
    True
    """
    if isinstance(random_state, torch.Generator):
        if device is not None and random_state.device.type != torch.device(device).type:
            raise ValueError(
                f"`random_state` is a torch.Generator on {random_state.device.type}, but the "
                f"draws are on {torch.device(device)}; create it with "
                f"torch.Generator(device={torch.device(device).type!r})"
            )
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        seed = check_scalar(
            random_state, name="random_state", kind=numbers.Integral, low=0, high=2**64 - 1
        )
    elif random_state is None or isinstance(
        random_state, np.random.Generator | np.random.SeedSequence
    ):
        seed = torch_seed(random_state)
    else:
        raise TypeError(
            "`random_state` must be None, a non-negative int, a numpy Generator or a "
            f"torch.Generator; got {describe(random_state)}"
        )
    return torch.Generator(device=device if device is not None else "cpu").manual_seed(seed)


@contextlib.contextmanager
def seeded_torch(random_state, devices=()):
    """Run a block whose draws from torch's global RNG (module initialisation) are seeded.

    ``nn.Module`` constructors draw their initial weights from torch's global generator and take
    no ``generator=``; inside this block those draws come from a seed taken from
    ``random_state`` (see :func:`torch_seed`), and on leaving it the global RNG state is
    restored as it was (``torch.random.fork_rng``), so the caller's stream is untouched.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or torch.Generator
    devices : sequence of int
        CUDA devices whose global state the block may draw from as well (saved and restored too).
    """
    with torch_global_seed(torch_seed(random_state), devices) as seed:
        yield seed


@contextlib.contextmanager
def torch_global_seed(seed: int, devices=()):
    """Run a block with torch's global RNG seeded with ``seed`` itself, restored on leaving.

    :func:`seeded_torch` derives its seed from a ``random_state``; this is the block for an
    integer seed that must reach torch as it is (a study whose numbers were calibrated on
    ``torch.manual_seed(seed)``). Module initialisers and any unseeded draw inside the block
    use it; the caller's global stream is untouched (``torch.random.fork_rng``).

    Parameters
    ----------
    seed : int
        A non-negative integer below 2**64.
    devices : sequence of int
        CUDA devices whose global state is saved and restored too.
    """
    seed = check_scalar(seed, name="seed", kind=numbers.Integral, low=0, high=2**64 - 1)
    with torch.random.fork_rng(devices=list(devices)):
        torch.manual_seed(seed)
        yield seed
