"""Progress of a long ``episeg ingest``: a redrawn bar on a terminal, lines otherwise.

On a terminal the bar shows the share of the file read (when its size is
known), turns, episodes and the rate, redrawn at most every ``interval``
seconds. Anywhere else (a log, a pipe, CI) it prints one line every
``every`` turns, which stays readable in a file.

>>> import io
>>> out = io.StringIO()
>>> progress = IngestProgress(out, every=2, total_bytes=None, clock=iter(range(10)).__next__)
>>> for n in range(1, 5):
...     progress.update(turns=n, episodes=n // 3)
>>> progress.finish()
>>> print(out.getvalue(), end="")
episeg: 2 turns, 0 episodes (1 turns/s)
episeg: 4 turns, 1 episodes (1 turns/s)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["IngestProgress"]

_WIDTH = 30


class IngestProgress:
    """Reports ingestion progress on ``stream`` (stderr in the CLI).

    Parameters
    ----------
    stream
        Where to write; a terminal (``isatty()``) gets the redrawn bar.
    every
        Turns between lines when not on a terminal; ``0`` turns reporting off.
    total_bytes
        Size of the input, for the bar's percentage (``None``: stdin, unknown).
    clock
        Seconds, monotonic; injectable for tests.
    interval
        Least seconds between two redraws of the bar.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        every: int,
        total_bytes: int | None,
        clock: Callable[[], float] = time.monotonic,
        interval: float = 0.1,
    ) -> None:
        if every < 0:
            raise ValueError(f"every must be >= 0, got {every}")
        self._stream = stream
        self._every = every
        self._total = total_bytes if total_bytes else None
        self._clock = clock
        self._interval = interval
        self._started = clock()
        self._drawn_at: float | None = None
        self._tty = bool(getattr(stream, "isatty", lambda: False)())

    def _rate(self, turns: int, now: float) -> float:
        return turns / max(now - self._started, 1e-9)

    def update(self, *, turns: int, episodes: int, bytes_read: int | None = None) -> None:
        """Called after each turn; decides itself whether to write anything."""
        if not self._every:
            return
        now = self._clock()
        if not self._tty:
            if turns % self._every == 0:
                print(
                    f"episeg: {turns} turns, {episodes} episodes "
                    f"({self._rate(turns, now):.0f} turns/s)",
                    file=self._stream,
                    flush=True,
                )
            return
        if self._drawn_at is not None and now - self._drawn_at < self._interval:
            return
        self._drawn_at = now
        self._draw(turns, episodes, bytes_read, now)

    def _draw(self, turns: int, episodes: int, bytes_read: int | None, now: float) -> None:
        if self._total and bytes_read is not None:
            share = min(bytes_read / self._total, 1.0)
            filled = int(share * _WIDTH)
            bar = f"[{'#' * filled}{'.' * (_WIDTH - filled)}] {share:4.0%} "
        else:
            bar = ""
        self._stream.write(
            f"\r{bar}{turns} turns, {episodes} episodes "
            f"({self._rate(turns, now):.0f} turns/s)\x1b[K"
        )
        self._stream.flush()

    def finish(self, *, turns: int = 0, episodes: int = 0) -> None:
        """Draw the final state and end the bar's line (terminal only)."""
        if self._tty and self._every and self._drawn_at is not None:
            self._draw(turns, episodes, self._total, self._clock())
            self._stream.write("\n")
            self._stream.flush()
