"""Execution backends (serial, threads, processes, dask) and :class:`MonteCarloStudy`.

``backends`` holds the backends and :func:`borrowed_backend`; ``montecarlo`` the simulation
studies that run on them.

Everything that parallelises takes ``backend=``, resolved by :func:`get_backend`:

- ``None`` or ``"serial"``: a plain loop in this process (the default);
- ``"threads"``: a :class:`concurrent.futures.ThreadPoolExecutor` (useful when the work releases
  the GIL: numpy, scipy, numba kernels with ``nogil``);
- ``"processes"``: a :class:`concurrent.futures.ProcessPoolExecutor` whose workers start by
  ``"forkserver"`` on Linux (``"spawn"`` elsewhere). Plain ``fork`` is not used: forking a
  process that already runs threads (numba's threading layer, OpenMP/BLAS pools, a dask client)
  can copy held locks into the child and deadlock it. The forkserver is a clean single-threaded
  process started once; it receives the parent's ``sys.path``, so workers import what the parent
  can. The mapped function is serialised with cloudpickle when it is installed (it comes with
  the ``dist`` extra), so lambdas, closures and functions defined in a notebook work; without it,
  the function must be importable by reference (defined at module level in an importable module).
  As with ``"spawn"``, a script using this backend needs an ``if __name__ == "__main__":`` guard,
  since the forkserver imports the main module;
- ``"dask"`` (the current ``dask.distributed`` client) or a ``dask.distributed.Client``:
  ``client.map`` and ``client.gather``. Needs ``pip install statcore[dist]``.

Every backend's :meth:`Backend.map` returns the results in input order, whatever the completion
order, so a seeded computation gives the same answer on all of them.
"""

from statcore.distributed.backends import (
    BACKENDS,
    START_METHOD,
    Backend,
    DaskBackend,
    ProcessBackend,
    SerialBackend,
    ThreadBackend,
    as_dask_array,
    borrowed_backend,
    compute_delayed,
    get_backend,
    is_dask_backend,
    is_dask_client,
)
from statcore.distributed.montecarlo import MonteCarloResult, MonteCarloStudy

__all__ = [
    "BACKENDS",
    "START_METHOD",
    "Backend",
    "DaskBackend",
    "MonteCarloResult",
    "MonteCarloStudy",
    "ProcessBackend",
    "SerialBackend",
    "ThreadBackend",
    "as_dask_array",
    "borrowed_backend",
    "compute_delayed",
    "get_backend",
    "is_dask_backend",
    "is_dask_client",
]
