"""Execution backends: serial, threads, processes and dask, behind one ordered ``map``.

See :mod:`statcore.distributed` for what each backend is and when to use it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import multiprocessing
import os
import pickle
import sys
from collections.abc import Callable, Iterable
from typing import ClassVar

from statcore.compat import import_optional
from statcore.progress import progress as progress_bar
from statcore.validation import check_option, check_positive_int, describe

BACKENDS = ("serial", "threads", "processes", "dask")

#: Start method of the process backend's workers (see :mod:`statcore.distributed`).
START_METHOD = "forkserver" if sys.platform.startswith("linux") else "spawn"


class Backend:
    """An execution backend: an ordered :meth:`map` and the lifetime of the pool it owns.

    Backends are context managers; leaving the ``with`` block calls :meth:`close`.
    """

    name: ClassVar[str] = ""

    @property
    def n_workers(self) -> int:
        """How many calls can run at once."""
        return 1

    def map(
        self, fn: Callable, iterable: Iterable, *, progress: bool = False, desc: str | None = None
    ) -> list:
        """``[fn(item) for item in iterable]``, computed on the backend, in input order.

        Parameters
        ----------
        fn : callable
            Called once per item with the item as its only argument.
        iterable : iterable
            The items; consumed into a list first.
        progress : bool
            Show a tqdm progress bar advancing as calls complete.
        desc : str, optional
            The progress bar's label.

        Returns
        -------
        list
            The results, in the order of the items. The first exception raised by a call is
            re-raised (calls not yet started are cancelled).
        """
        items = list(iterable)
        with progress_bar(len(items), enabled=progress, desc=desc) as bar:
            return self._map(fn, items, bar)

    def _map(self, fn: Callable, items: list, bar) -> list:
        out = []
        for item in items:
            out.append(fn(item))
            bar.update()
        return out

    def close(self) -> None:
        """Release the pool this backend owns; backends without one do nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_workers={self.n_workers})"


class SerialBackend(Backend):
    """A plain loop in the calling process (the default backend)."""

    name = "serial"


class _PoolBackend(Backend):
    """A backend owning a :mod:`concurrent.futures` executor of ``n_workers`` workers."""

    def __init__(self, n_workers: int | None = None):
        self._n_workers = (
            _available_cpus()
            if n_workers is None
            else check_positive_int(n_workers, name="n_workers")
        )
        self._executor = self._make_executor()

    def _make_executor(self) -> concurrent.futures.Executor:
        raise NotImplementedError

    @property
    def n_workers(self) -> int:
        return self._n_workers

    def _map(self, fn: Callable, items: list, bar) -> list:
        futures = [self._executor.submit(fn, item) for item in items]
        try:
            for future in concurrent.futures.as_completed(futures):
                future.result()
                bar.update()
            return [future.result() for future in futures]
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        """Shut the pool down, cancelling calls that have not started."""
        self._executor.shutdown(wait=True, cancel_futures=True)


class ThreadBackend(_PoolBackend):
    """A thread pool of ``n_workers`` threads (default: the CPUs available to this process)."""

    name = "threads"

    def _make_executor(self) -> concurrent.futures.Executor:
        return concurrent.futures.ThreadPoolExecutor(
            max_workers=self._n_workers, thread_name_prefix="statcore"
        )


class ProcessBackend(_PoolBackend):
    """A process pool of ``n_workers`` processes started by ``START_METHOD``.

    The mapped function is serialised once per :meth:`map` (by cloudpickle when installed,
    else by pickle) and unpickled once per worker.
    """

    name = "processes"

    def _make_executor(self) -> concurrent.futures.Executor:
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=self._n_workers, mp_context=multiprocessing.get_context(START_METHOD)
        )

    def _map(self, fn: Callable, items: list, bar) -> list:
        return super()._map(functools.partial(_call_pickled, _dumps(fn)), items, bar)


class DaskBackend(Backend):
    """A ``dask.distributed.Client``'s cluster. The client is the caller's: :meth:`close`
    leaves it open."""

    name = "dask"

    def __init__(self, client):
        self.client = client

    @property
    def n_workers(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def _map(self, fn: Callable, items: list, bar) -> list:
        from distributed import as_completed

        futures = self.client.map(fn, items, pure=False)
        for _ in as_completed(futures):
            bar.update()
        return self.client.gather(futures)


def get_backend(backend=None, *, n_workers: int | None = None) -> Backend:
    """Resolve a ``backend=`` argument to a :class:`Backend`.

    Parameters
    ----------
    backend : None, str, Backend or dask.distributed.Client
        ``None`` or ``"serial"``, ``"threads"``, ``"processes"``, ``"dask"`` (the current dask
        client, as ``distributed.get_client()`` finds it), a ``Client``, or a :class:`Backend`
        (returned as is, so one pool can serve several calls).
    n_workers : int, optional
        Size of the ``"threads"`` or ``"processes"`` pool; default: the CPUs available to this
        process.

    Returns
    -------
    Backend
        Close it (or use it as a context manager) when it owns a pool, i.e. for ``"threads"`` and
        ``"processes"``.

    Raises
    ------
    ImportError
        For ``"dask"`` when dask.distributed is not installed (``pip install statcore[dist]``).
    """
    if isinstance(backend, str) and backend in ("threads", "processes"):
        cls = ThreadBackend if backend == "threads" else ProcessBackend
        return cls(n_workers)
    if n_workers is not None:
        raise ValueError(
            "`n_workers` sizes the 'threads' and 'processes' backends only; "
            f"got n_workers={n_workers!r} with backend={describe(backend)}"
        )
    if isinstance(backend, Backend):
        return backend
    if is_dask_client(backend):
        return DaskBackend(backend)
    name = "serial" if backend is None else check_option(backend, name="backend", options=BACKENDS)
    if name == "serial":
        return SerialBackend()
    distributed = import_optional("distributed", "dist")
    try:
        client = distributed.get_client()
    except ValueError as exc:
        raise ValueError(
            "`backend='dask'` runs on the current dask client, and none is running; start one "
            "with `dask.distributed.Client(...)` or pass the Client itself as `backend`"
        ) from exc
    return DaskBackend(client)


@contextlib.contextmanager
def borrowed_backend(backend=None, *, n_workers: int | None = None):
    """Use ``backend`` for a ``with`` block, closing it afterwards only if it was made here.

    A :class:`Backend` or dask client the caller passed in is theirs and stays open (so one pool
    can serve several calls); a pool this call made from a name (``"threads"``, ``"processes"``)
    is closed when the block ends, also on error.

    Parameters
    ----------
    backend, n_workers
        As in :func:`get_backend`.

    Yields
    ------
    Backend
    """
    resolved = get_backend(backend, n_workers=n_workers)
    try:
        yield resolved
    finally:
        if resolved is not backend:
            resolved.close()


def is_dask_client(obj) -> bool:
    """Whether ``obj`` is a ``dask.distributed.Client``, without importing dask.

    A Client can only exist once ``distributed`` is imported, so an unloaded module means no.

    Parameters
    ----------
    obj : object

    Returns
    -------
    bool
    """
    distributed = sys.modules.get("distributed")
    return distributed is not None and isinstance(obj, distributed.Client)


def is_dask_backend(backend) -> bool:
    """Whether a ``backend=`` argument names the dask cluster: ``"dask"`` or a Client.

    Parameters
    ----------
    backend : None, str, Backend or dask.distributed.Client

    Returns
    -------
    bool
    """
    return (isinstance(backend, str) and backend == "dask") or is_dask_client(backend)


def as_dask_array(obj):
    """``obj`` if it is a ``dask.array.Array``, else None, without importing dask.

    Parameters
    ----------
    obj : object

    Returns
    -------
    dask.array.Array or None
    """
    da = sys.modules.get("dask.array")
    return obj if da is not None and isinstance(obj, da.Array) else None


def compute_delayed(task: Callable, items: Iterable, backend) -> list:
    """``task`` on each item as ``dask.delayed`` calls on the dask ``backend``, in input order.

    Unlike ``DaskBackend.map``, the items may be dask delayed objects (an array's blocks):
    the cluster resolves them where they live instead of shipping them through this process.

    Parameters
    ----------
    task : callable
        Picklable; called once per item on a worker.
    items : iterable
        Arguments of ``task``; dask collections among them are computed on the cluster.
    backend : str or dask.distributed.Client
        ``"dask"`` or a Client (see :func:`is_dask_backend`).

    Returns
    -------
    list
    """
    dask = import_optional("dask", "dist")
    with borrowed_backend(backend) as pool:
        jobs = [dask.delayed(task)(item) for item in items]
        return pool.client.gather(pool.client.compute(jobs))


def _available_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _dumps(fn: Callable) -> bytes:
    """Serialise ``fn`` for process workers: cloudpickle when installed, else pickle."""
    try:
        import cloudpickle
    except ImportError:
        return pickle.dumps(fn)
    return cloudpickle.dumps(fn)


#: Worker-side cache, so that a function sent with every task is unpickled once per worker.
_loads = functools.lru_cache(maxsize=8)(pickle.loads)


def _call_pickled(payload: bytes, item):
    return _loads(payload)(item)
