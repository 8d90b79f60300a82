"""The one njit shim: project defaults for every numba kernel and the first-compile notice.

Where compiled kernels are kept: ``cache=True`` lets numba's own chain of cache locators pick the
place, first ``NUMBA_CACHE_DIR`` when the user set it, then the ``__pycache__`` folder beside the
kernel's source when that folder is writable (a development checkout, a user-owned venv), then the
user-wide cache folder (``~/.cache/numba`` on Linux) when the package lies read-only (a system or
shared install). So a kernel compiles once per machine and Python version, never once per process,
and statcore sets no process-wide numba setting of its own (``NUMBA_CACHE_DIR`` would move the
cache of every other numba user in the process too).

The first real compile of a statcore kernel in a process (a cache miss: numba loading a cached
kernel does not count) prints one line to standard error, so a first call that stalls for a few
seconds says why. :func:`statcore.warmup` (in :mod:`statcore._warmup`, above the method areas,
which import this module) compiles the common kernels ahead of time.
"""

import sys

import numba
from numba.core import event

#: The line printed once per process, before the first statcore kernel compiles.
COMPILE_NOTICE = (
    "statcore: compiling kernels (first use only; cached afterwards, "
    "statcore.warmup() does it ahead of time)"
)

_PACKAGES = ("statcore.", "mlcore.")


class _FirstCompileNotice(event.Listener):
    """Prints :data:`COMPILE_NOTICE` when a statcore kernel starts compiling, once per process.

    numba fires ``numba:compile`` only for a real compile, after the on-disk cache missed. A
    compile of someone else's numba function is not ours to announce.
    """

    def __init__(self):
        self.announced = False

    def on_start(self, ev):
        if self.announced:
            return
        module = getattr(ev.data["dispatcher"].py_func, "__module__", "") or ""
        if module.startswith(_PACKAGES):
            self.announced = True
            print(COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, ev):
        pass


_notice = _FirstCompileNotice()
event.register("numba:compile", _notice)


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
