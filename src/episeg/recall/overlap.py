"""A small worker pool, so recall's dense query runs beside its lexical lists.

Chroma releases the GIL while it searches, and the lexical lists are mostly
numpy (which releases it too), so on this project's 2-core machine the dense
turn query on a worker thread and the two BM25 lists on the calling thread
overlap almost completely: at 10^5 episodes hierarchical recall went from
8.1-8.5 ms to 6.3 ms p50, against 3.2-3.3 ms for the raw query alone
(docs/RESULTS.md). Pure-Python work on the calling thread does *not* overlap:
the query thread needs the GIL back to build its result, so nothing else is
done while the query runs. Reading likely episodes ahead during the query
was measured too and lost (6.6 ms): a second store read competes with the
query for the same two cores.

The pool is one per process (``WORKERS`` threads, made on first use and made
again in a child after ``fork``); a task never waits on another task, so it
cannot deadlock however many recalls run at once.

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


def _forget_pool() -> None:  # a forked child has the pool object but not its threads
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


def submit(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
    """Run ``call(*args, **kwargs)`` on the process's recall workers."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="episeg-recall")
        pool = _pool
    return pool.submit(call, *args, **kwargs)
