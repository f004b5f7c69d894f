"""Memory per idle session: resident bytes after many sessions, with and without the cap.

Issue 12, F13: every session's state (intake, signal state, open episode) stayed
in memory for the life of the process. :class:`~episeg.memory.Memory` now keeps
at most ``max_sessions`` sessions resident and replays a dropped one from the
journal when it is used again (:mod:`episeg.durability.sessions`).

The run: one ``Memory`` (a 384-dimensional hashing embedder, the size of
MiniLM's vectors, so no model is loaded; no judge or scorer; the journal in a
temporary folder, ``/dev/shm`` when present so fsync costs nothing) takes one
turn in each of ``sessions`` sessions spread over ``tenants`` tenants; every
session is then idle with one open turn. The figure is the growth of the
process's resident set size (``/proc/self/statm``, after ``gc.collect()``)
divided by the number of sessions.

Run ``python -m episeg.benchmarks.sessions_bench --sessions 100000`` (capped at the
default) and ``... --max-sessions 100000`` (nothing dropped) for the comparison.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from episeg.durability.sessions import DEFAULT_MAX_RESIDENT
from episeg.embedders import HashingEmbedder
from episeg.memory import Memory
from episeg.types import Actor, Turn

__all__ = ["main", "resident_bytes", "run_sessions_bench"]


def resident_bytes() -> int:
    """This process's resident set size in bytes (Linux ``/proc/self/statm``).

    >>> resident_bytes() > 0
    True
    """
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


class _NoStore:
    """A store that is never written: every session stays idle with an open turn."""

    def store_for(self, tenant: str) -> Any:
        raise AssertionError("no episode closes in this benchmark")


def run_sessions_bench(
    sessions: int = 100_000, *, tenants: int = 10, max_sessions: int = DEFAULT_MAX_RESIDENT
) -> dict[str, Any]:
    """One turn in each of ``sessions`` sessions; returns resident bytes per session."""
    if min(sessions, tenants, max_sessions) < 1:
        raise ValueError("sessions, tenants and max_sessions must be >= 1")
    shm = Path("/dev/shm")
    folder = tempfile.mkdtemp(prefix="episeg-sessions-", dir=shm if shm.is_dir() else None)
    memory = Memory(
        path=folder,
        embedder=HashingEmbedder(dim=384),
        judge=None,
        scorer=None,
        backend=_NoStore(),  # type: ignore[arg-type]
        max_sessions=max_sessions,
    )
    texts = ["deploy the prod release", "rotate the jwt key", "fix the flaky fixture"]
    memory.observe(Turn(actor=Actor.USER, text="warm up", ts=0.0, user="warm", session="w"))
    gc.collect()
    before = resident_bytes()
    started = time.perf_counter()
    for n in range(sessions):
        memory.observe(
            Turn(
                actor=Actor.USER,
                text=f"{texts[n % 3]} {n}",
                ts=1.7e9 + n,
                user=f"tenant{n % tenants}",
                session=f"s{n}",
                id=f"t{n}",
            )
        )
    seconds = time.perf_counter() - started
    gc.collect()
    grown = resident_bytes() - before
    figures = {
        "sessions": sessions,
        "tenants": tenants,
        "max_sessions": max_sessions,
        "resident_sessions": memory.sessions.resident,
        "evicted": memory.sessions.evicted,
        "rss_growth_bytes": grown,
        "bytes_per_session": grown / sessions,
        "journal_bytes": sum(p.stat().st_size for p in Path(folder).glob("journal.sqlite3*")),
        "turns_per_s": sessions / seconds,
    }
    memory.close()
    shutil.rmtree(folder, ignore_errors=True)  # /dev/shm is memory: do not leave it behind
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: print (and optionally write) the figures as JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m episeg.benchmarks.sessions_bench",
        description=__doc__.split("\n")[0] if __doc__ else None,
    )
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--tenants", type=int, default=10)
    parser.add_argument("--max-sessions", type=int, default=DEFAULT_MAX_RESIDENT)
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args(argv)
    try:
        res = run_sessions_bench(
            args.sessions, tenants=args.tenants, max_sessions=args.max_sessions
        )
    except ValueError as exc:
        parser.error(str(exc))
    print(json.dumps(res, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
