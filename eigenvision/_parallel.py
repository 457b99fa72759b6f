"""Thread control: how many threads, a shared pool, and BLAS held to one thread.

The one home for parallelism in the package. One policy: ``n_jobs=None``
(or -1) means every core this process may run on; work splits into
threads only where a measured crossover says they pay (each caller states
its own). The pool and the BLAS limit are the only module-level state of
the package, guarded by locks and safe across ``fork``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral

import numpy as np

__all__ = [
    "n_threads",
    "run_parallel",
    "run_on_row_parts",
    "run_queued",
    "as_one_part",
    "single_threaded_blas",
    "MAP_PARALLEL_PIXELS",
]

#: Pixels of image from which threads pay for themselves in map work (the measured crossover,
#: docs/architecture.md "Why the fast paths").
MAP_PARALLEL_PIXELS = 160 * 160


def n_threads(n_jobs=None) -> int:
    """The number of threads ``n_jobs`` asks for.

    Parameters
    ----------
    n_jobs : int or None
        ``None`` or -1: every core this process may use; else a positive count.

    Returns
    -------
    int

    Examples
    --------
    >>> n_threads(3)
    3
    """
    if n_jobs is None or n_jobs == -1:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, Integral) or n_jobs < 1:
        raise ValueError(f"n_jobs={n_jobs!r} must be a positive number of threads, -1 or None")
    return int(n_jobs)


_pool_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None


def run_parallel(calls) -> list:
    """Results of the no-argument ``calls``, in order.

    The first runs on the caller's thread, the rest on a shared pool (one
    thread per core; numpy and pocketfft release the GIL), BLAS on one thread
    meanwhile (:func:`single_threaded_blas`: BLAS's own threads on the same
    cores made a photo's stage-1 search slower on two threads than on one). The pool is kept
    between calls (a fresh pool per call costs more than small work) and made
    again in a forked child, whose copy has no threads. Called from inside
    such a call (parallel work nested in parallel work), it runs the calls
    in turn on the calling thread: waiting on the pool from the pool's own
    threads would queue them behind the work that waits.

    Parameters
    ----------
    calls : iterable of callables

    Returns
    -------
    list
        ``[call() for call in calls]``; the first exception raised is re-raised
        after every call has finished.

    Examples
    --------
    >>> run_parallel([lambda: 1, lambda: 2])
    [1, 2]
    """
    global _pool
    calls = list(calls)
    if len(calls) <= 1 or getattr(_inside, "depth", 0):
        return [call() for call in calls]
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(max(1, n_threads() - 1), "eigenvision"))
        pool = _pool[1]
    with single_threaded_blas():
        futures = [pool.submit(_marked, call) for call in calls[1:]]
        try:
            first = _marked(calls[0])
        finally:
            others = [future.result() for future in futures]
    return [first, *others]


def run_on_row_parts(function, n_rows, parts) -> np.ndarray:
    """``function(indices)`` over ``parts`` nearly equal runs of ``range(n_rows)``, in parallel,
    the results concatenated along their first axis.

    Parameters
    ----------
    function : callable
        ``function(indices) -> (len(indices), ...) ndarray``; thread-safe.
    n_rows : int
    parts : int
        At least 1 (1: on the calling thread).

    Returns
    -------
    ndarray

    Examples
    --------
    >>> run_on_row_parts(lambda rows: rows * 10, 5, 2).tolist()
    [0, 10, 20, 30, 40]
    """
    shares = np.array_split(np.arange(n_rows), max(1, parts))
    return np.concatenate(run_parallel(functools.partial(function, share) for share in shares))


def run_queued(calls, workers) -> list:
    """Results of the no-argument ``calls``, in order, run by ``workers`` threads that each
    take the next call none has taken: a work queue, so calls of unequal cost balance
    themselves (give the dearest first) where fixed shares wait on the slowest.

    Parameters
    ----------
    calls : iterable of callables
        Thread-safe.
    workers : int
        At least 1 (1: in turn on the calling thread); at most one per call is used.

    Returns
    -------
    list
        ``[call() for call in calls]``; an exception stops the thread that met it, the
        others finish the queue, then the first is re-raised (:func:`run_parallel`).

    Examples
    --------
    >>> run_queued([lambda: 1, lambda: 2, lambda: 3], 2)
    [1, 2, 3]
    """
    calls = list(calls)
    results = [None] * len(calls)
    taken, lock = iter(range(len(calls))), threading.Lock()

    def worker():
        while True:
            with lock:
                index = next(taken, None)
            if index is None:
                return
            results[index] = calls[index]()

    run_parallel([worker] * max(1, min(int(workers), len(calls))))
    return results


_inside = threading.local()  # depth: run_parallel calls this thread is running


def as_one_part(call):
    """``call()`` on the calling thread, as :func:`run_parallel` runs each of its parts.

    BLAS on one thread, and parallel work inside ``call`` run in turn on this
    thread: what one part of parallel work costs, for comparing it with the
    whole (``benchmarks/bench_describe.py``).

    Parameters
    ----------
    call : callable
        No arguments.

    Returns
    -------
    object
        ``call()``.

    Examples
    --------
    >>> as_one_part(lambda: run_parallel([lambda: 1, lambda: 2]))
    [1, 2]
    """
    with single_threaded_blas():
        return _marked(call)


def _marked(call):
    """``call()``, with this thread marked as running parallel work meanwhile."""
    _inside.depth = getattr(_inside, "depth", 0) + 1
    try:
        return call()
    finally:
        _inside.depth -= 1


_blas_found = (-1, None)  # (modules imported when the BLAS libraries were last looked for, them)


def _blas_controller():
    """The BLAS libraries loaded, looked for again only when modules were imported since.

    Looking for them is not free, and an import may bring a BLAS of its own
    (SciPy's with ``scipy.linalg``, OpenCV's in its wheel). Called under ``_blas_lock``.
    """
    global _blas_found
    count = len(sys.modules)
    if _blas_found[0] != count:
        from threadpoolctl import ThreadpoolController

        _blas_found = (count, ThreadpoolController().select(user_api="blas"))
    return _blas_found[1]


_blas_lock = threading.Lock()
_blas_users = 0
_blas_limit = None


@contextlib.contextmanager
def single_threaded_blas():
    """Context in which BLAS runs on one thread (our own threads share the cores instead).

    The limit is process-wide, so concurrent users share it: the first to
    enter sets it, the last to leave restores the previous setting.

    Yields
    ------
    None
    """
    global _blas_users, _blas_limit
    with _blas_lock:
        if _blas_users == 0:
            _blas_limit = _blas_controller().limit(limits=1)
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limit.restore_original_limits()
                _blas_limit = None
