"""Parallel work (eigenvision._parallel): one BLAS thread a worker, order, nesting, fork."""

import functools
import multiprocessing
import os

import numpy as np
import pytest

import eigenvision as ev
from eigenvision.detection import dffs_map


def test_parallel_work_runs_blas_on_one_thread_and_restores_it():
    """Regression: BLAS's own threads on the cores our threads use made a photo's stage-1
    search slower on two threads than on one. Inside parallel work BLAS runs on one thread
    (every call, the caller's and the pool's); afterwards its setting is back."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from eigenvision._parallel import run_parallel

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    with threadpool_limits(2, user_api="blas"):
        assert set(blas_threads()) == {2}
        seen = run_parallel([blas_threads, blas_threads, blas_threads])
        assert all(set(threads) == {1} for threads in seen)
        assert set(blas_threads()) == {2}


def test_one_part_runs_as_a_part_of_parallel_work_does():
    """as_one_part: BLAS on one thread, parallel work inside it on the calling thread in turn,
    and BLAS's setting back afterwards (what bench_describe compares the whole with)."""
    import threading

    from threadpoolctl import threadpool_info, threadpool_limits

    from eigenvision._parallel import as_one_part, run_parallel

    def blas_threads():
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    def part():
        here = threading.get_ident()
        inner = run_parallel([threading.get_ident, threading.get_ident, threading.get_ident])
        return blas_threads(), [ident == here for ident in inner]

    with threadpool_limits(2, user_api="blas"):
        assert as_one_part(part) == ({1}, [True, True, True])
        assert blas_threads() == {2}


def test_run_parallel_returns_in_order_and_raises():
    from eigenvision._parallel import run_parallel

    assert run_parallel([lambda: 1, lambda: 2, lambda: 3]) == [1, 2, 3]
    assert run_parallel([]) == []  # was an IndexError

    def fail():
        raise RuntimeError("in a pool thread")

    with pytest.raises(RuntimeError, match="in a pool thread"):
        run_parallel([lambda: 1, fail])


def test_queued_work_is_taken_as_threads_come_free():
    """run_queued: each thread takes the next call left, so a long first call does not hold
    back the calls behind it (in fixed shares, call 0 would have waited here for a call of its
    own share after it: the test would time out); results in order, exceptions re-raised."""
    import threading

    from eigenvision._parallel import run_queued

    released = threading.Event()

    def first():
        return released.wait(timeout=30)  # True only if another thread ran the last call

    def last():
        released.set()
        return "set"

    calls = [first, *[lambda i=i: i for i in range(1, 7)], last]
    assert run_queued(calls, 2) == [True, 1, 2, 3, 4, 5, 6, "set"]
    assert run_queued([lambda: 1, lambda: 2], 1) == [1, 2]
    assert run_queued([], 2) == []

    def fail():
        raise RuntimeError("in a queued call")

    with pytest.raises(RuntimeError, match="in a queued call"):
        run_queued([lambda: 1, fail, lambda: 3], 2)


def _put_result(queue, target, args):
    queue.put(target(*args))


def _in_forked_child(target, *args):
    """``(target(*args), exit code)`` in a forked child process (a hang fails in 60 s)."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_put_result, args=(queue, target, args))
    child.start()
    try:
        result = queue.get(timeout=60)
    finally:
        child.join(timeout=10)
        child.kill()
    return result, child.exitcode


def _nested_parallel_work():
    import threading

    from eigenvision._parallel import n_threads, run_parallel

    def outer(index):
        here = threading.get_ident()
        inner = run_parallel([lambda: threading.get_ident(), lambda: threading.get_ident()])
        return index, all(ident == here for ident in inner)

    return run_parallel([functools.partial(outer, i) for i in range(n_threads() + 1)])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_parallel_work_nested_in_parallel_work_runs_in_turn():
    """run_parallel inside a run_parallel call runs its calls on that call's thread (in a
    child process: waiting on the pool from every pool thread would hang)."""
    result, _ = _in_forked_child(_nested_parallel_work)
    assert result == [(i, True) for i in range(len(result))] and len(result) >= 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_threaded_maps_work_in_a_forked_child(rng):
    # The parent's pool threads do not survive fork(): the child must make its own, not hang.
    space = ev.Eigenspace(4).fit(rng.random((20, 8, 8)))
    image = rng.random((200, 200))
    expected = dffs_map(image, space)  # starts the parent's pool
    result, exit_code = _in_forked_child(dffs_map, image, space)
    assert exit_code == 0
    np.testing.assert_array_equal(result, expected)
