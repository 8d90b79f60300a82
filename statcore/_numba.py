"""The one njit shim: project defaults for every numba kernel."""

import numba


def njit(func=None, **options):
    """``numba.njit`` with ``cache=True`` (compiled kernels survive between sessions).

    Use bare (``@njit``) or with options (``@njit(parallel=True)``). ``parallel=True`` stays
    opt-in per kernel: parallel reductions change the floating-point order, and with it the last
    digits of a result.
    """
    options.setdefault("cache", True)
    if func is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(func)
