"""Who may touch an embedded Chroma store's SQLite file at a time, inside this process.

Chroma links its own copy of SQLite; ``forget`` vacuums ``chroma.sqlite3`` (and
reads Chroma's log) through Python's ``sqlite3``, a second copy in the same
process. SQLite's locks are POSIX advisory locks, which never conflict within
one process, and each copy keeps its own table of them, so the two copies do
not exclude each other at all: a ``VACUUM`` while a recall read the file made
Chroma fail ("disk I/O error") and left the database malformed for good
(found by review, reproduced: ``PRAGMA integrity_check`` then reported an
orphan index). SQLite documents this hazard ("multiple copies of SQLite linked
into the same application").

:data:`CHROMA_ACCESS` is the exclusion SQLite cannot give here: every call
into Chroma holds it shared (:func:`episeg.store.chroma_io.translate` takes
it), and episeg's own access to Chroma's file holds it exclusively, so it
runs only while no Chroma call is in flight in this process. Waiting writers
go first (new shared holders queue behind them), so a stream of recalls
cannot starve an erasure; a thread that already holds the lock shared may
take it shared again without waiting (a nested call), never exclusively.

>>> access = StoreAccess()
>>> with access.shared(), access.shared():  # nested on one thread: no wait
...     access.readers
1
>>> with access.exclusive():
...     access.writing
True
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["CHROMA_ACCESS", "StoreAccess"]


class StoreAccess:
    """A writer-preferring reader-writer lock whose shared side is re-entrant per thread."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._held = threading.local()  # this thread's shared depth
        self.readers = 0  # threads holding it shared
        self.writing = False
        self._waiting_writers = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Hold the lock shared (many threads at once, none while one holds it exclusively)."""
        depth = getattr(self._held, "depth", 0)
        if depth == 0:
            with self._cond:
                while self.writing or self._waiting_writers:
                    self._cond.wait()
                self.readers += 1
        self._held.depth = depth + 1
        try:
            yield
        finally:
            self._held.depth = depth
            if depth == 0:
                with self._cond:
                    self.readers -= 1
                    if not self.readers:
                        self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the lock alone; raises ``RuntimeError`` on a thread that holds it shared."""
        if getattr(self._held, "depth", 0):
            raise RuntimeError("exclusive access asked by a thread that holds it shared")
        with self._cond:
            self._waiting_writers += 1
            try:
                while self.writing or self.readers:
                    self._cond.wait()
            finally:
                self._waiting_writers -= 1
                self._cond.notify_all()  # readers held back for this writer re-check
            self.writing = True
        try:
            yield
        finally:
            with self._cond:
                self.writing = False
                self._cond.notify_all()


CHROMA_ACCESS = StoreAccess()
"""The process's one :class:`StoreAccess` for embedded Chroma stores (see the module docstring)."""
