"""Counting HTTP requests: per backend, and per caller even when a backend is shared.

A backend counts every request it sends (``calls``). A caller that wants the
requests of *its own* call (a judge sharing its backend with other tenants'
threads or with a salience scorer) opens :func:`count_requests` around the
call: the counter sees only requests made in its own context (thread, or asyncio
task), never those of a concurrent call. A custom
:class:`~episeg.llm.StructuredBackend` reports its requests with
:func:`note_request`.

>>> from episeg.llm import RequestCounter, count_requests
>>> shared = RequestCounter()
>>> with count_requests() as mine:
...     shared.note()
...     shared.note()
>>> shared.note()              # another caller's request: not in ``mine``
>>> mine.value, shared.value
(2, 3)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["RequestCounter", "count_requests", "note_request"]


class RequestCounter:
    """A thread-safe count of requests; :meth:`note` also tells the open ``count_requests``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value = 0

    @property
    def value(self) -> int:
        return self._value

    def add(self, count: int = 1) -> None:
        """Add ``count`` to this counter only."""
        with self._lock:
            self._value += count

    def note(self) -> None:
        """One request sent: counted here and in every ``count_requests`` open in this context."""
        self.add()
        note_request()


_OPEN: ContextVar[tuple[RequestCounter, ...]] = ContextVar("episeg_llm_counters", default=())


def note_request() -> None:
    """Count one request in every :func:`count_requests` open in the calling context."""
    for counter in _OPEN.get():
        counter.add()


@contextmanager
def count_requests() -> Iterator[RequestCounter]:
    """A counter of the requests noted in this context until the block ends (nests)."""
    counter = RequestCounter()
    token = _OPEN.set((*_OPEN.get(), counter))
    try:
        yield counter
    finally:
        _OPEN.reset(token)
