"""A wall-clock deadline for one request attempt.

The SDKs' ``timeout`` is httpx's per-read (and connect, write) timeout: a server
that trickles its reply, one byte a little faster than the timeout, holds a read
loop for as long as it likes. Neither SDK offers a total timeout, so each attempt
runs on a worker thread and the caller waits for it at most ``seconds``; past
that the attempt fails with :class:`AttemptDeadlineExceeded`, which the
backends classify as a retryable timeout.

What remains after the deadline: the worker keeps its HTTP request open until
the server finishes or falls silent for one read timeout (the SDK call cannot be
interrupted from another thread); its result is dropped. At most
``max_in_flight`` workers of one backend run at once: an attempt that finds
them all busy waits for a slot within its own deadline, so a server trickling to
every request cannot pile up threads.

>>> import time
>>> from episeg.llm._deadline import AttemptDeadlineExceeded, DeadlineRunner
>>> runner = DeadlineRunner(0.2)
>>> runner.run(lambda: "fast")
'fast'
>>> try:
...     runner.run(lambda: time.sleep(1.0))
... except AttemptDeadlineExceeded as exc:
...     print(exc)
no complete reply within 0.2 s
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import TypeVar

__all__ = ["AttemptDeadlineExceeded", "DeadlineRunner"]

T = TypeVar("T")


class AttemptDeadlineExceeded(TimeoutError):
    """An attempt got no complete reply within its wall-clock deadline."""


class DeadlineRunner:
    """Runs callables on daemon worker threads; the caller waits at most ``seconds`` each."""

    def __init__(self, seconds: float, *, max_in_flight: int = 16) -> None:
        if not seconds > 0:
            raise ValueError(f"seconds must be > 0, got {seconds}")
        self._seconds = seconds
        self._slots = threading.BoundedSemaphore(max_in_flight)
        self._max_in_flight = max_in_flight

    @property
    def seconds(self) -> float:
        return self._seconds

    def run(self, call: Callable[[], T]) -> T:
        """``call()``'s result or exception, or ``AttemptDeadlineExceeded`` at the deadline."""
        deadline = time.monotonic() + self._seconds
        if not self._slots.acquire(timeout=self._seconds):
            raise AttemptDeadlineExceeded(
                f"no worker free within {self._seconds:g} s: {self._max_in_flight} earlier "
                "requests are still running past their deadline"
            )
        future: Future[T] = Future()

        def work() -> None:
            try:
                future.set_result(call())
            except BaseException as exc:  # handed to the caller, who decides
                future.set_exception(exc)
            finally:
                self._slots.release()

        threading.Thread(target=work, name="episeg-llm-attempt", daemon=True).start()
        if not wait([future], timeout=max(0.0, deadline - time.monotonic())).done:
            raise AttemptDeadlineExceeded(f"no complete reply within {self._seconds:g} s")
        return future.result()
