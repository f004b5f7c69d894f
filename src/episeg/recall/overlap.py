"""A small worker pool, so recall's dense query runs beside its lexical lists.

Chroma releases the GIL while it searches, and the lexical lists are mostly
numpy (which releases it too), so on this project's 2-core machine the dense
turn query on a worker thread and the two BM25 lists on the calling thread
overlap almost completely: at 10^5 episodes hierarchical recall went from
8.1-8.5 ms to 6.3 ms p50, against 3.2-3.3 ms for the raw query alone
(docs/RESULTS.md). Pure-Python work on the calling thread does *not* overlap:
the query thread needs the GIL back to build its result, so nothing else is
done while the query runs. For the same reason the query's thread needs the
GIL to *start*: :func:`~episeg.recall.candidates.gather` waits until the
worker runs before it takes the GIL for the lexical lists. Reading likely
episodes ahead during the query was measured too and lost (6.6 ms): a second
store read competes with the query for the same two cores.

The pool is one per process (``WORKERS`` threads, made on first use and made
again in a child after ``fork``), shared by every tenant, so it never makes a
recall wait for a worker: when all ``WORKERS`` are busy (many recalls at
once), :func:`submit` runs the call on the calling thread instead, which is
the serial path with the same result. One tenant's burst of recalls cannot
queue another tenant's query behind it.

>>> submit(sum, [1, 2, 3]).result()
6
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

__all__ = ["WORKERS", "submit"]

WORKERS = 8
P = ParamSpec("P")
T = TypeVar("T")

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_free = threading.BoundedSemaphore(WORKERS)  # workers not running a call


def _forget_pool() -> None:  # a forked child has the pool object but not its threads
    global _pool, _free
    _pool = None
    _free = threading.BoundedSemaphore(WORKERS)


os.register_at_fork(after_in_child=_forget_pool)


def submit(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
    """Run ``call(*args, **kwargs)`` on a free recall worker, or here if none is free.

    Either way the returned future holds the result or the exception.
    """
    global _pool
    free = _free
    if not free.acquire(blocking=False):
        return _run_here(call, *args, **kwargs)
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="episeg-recall")
        pool = _pool
    try:
        future = pool.submit(call, *args, **kwargs)
    except BaseException:
        free.release()
        raise
    future.add_done_callback(lambda _: free.release())
    return future


def _run_here(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
    future: Future[T] = Future()
    try:
        future.set_result(call(*args, **kwargs))
    except Exception as exc:  # handed to the caller through the future, as a worker would
        future.set_exception(exc)
    return future
