"""``episeg ingest`` and ``episeg report``: a JSONL transcript into memory, or into a page.

A regular file (also stdin redirected from one) is read and checked whole
before any turn is observed: every line's JSON and fields, and what
``Memory.observe`` would refuse (an id reused with other content, a ``ts``
going backwards, an over-long text), so a bad line exits 2 naming it with
nothing written. A pipe is streamed: an error on line L names the turns
before it that were kept. Only the (user, session) pairs the transcript fed
are flushed at the end, never another tenant's open episode.
``--assign-ts`` continues after the last time recorded in each session.

>>> checks = []
>>> def refuse_b(turns):
...     checks.append(len(turns))
...     if any(t.text == "b" for t in turns):
...         raise TurnValidationError("no b")
>>> from episeg.types import Turn
>>> lines = [(n, Turn(actor="user", text=t, ts=n)) for n, t in [(1, "a"), (4, "b"), (5, "c")]]
>>> first_refused(refuse_b, lines)
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: line 4: no b
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

from episeg.config import EpisegConfig
from episeg.durability.turn_checks import check_turn, find_refused
from episeg.errors import ConfigError, TenantError, TurnValidationError
from episeg.interfaces.progress import IngestProgress
from episeg.interfaces.transcript import RecordedTs, numbered_turns
from episeg.memory import Memory
from episeg.segmentation.intake import preview_intake
from episeg.types import Episode, Turn

__all__ = ["cmd_ingest", "cmd_report", "first_refused"]

Emit = Callable[[argparse.Namespace, Any, str], None]


@contextmanager
def _source(name: str) -> Iterator[IO[bytes]]:
    if name == "-":
        yield sys.stdin.buffer
    else:
        with open(name, "rb") as handle:
            yield handle


def _size(handle: IO[bytes]) -> int | None:
    """Bytes in a regular file (for the progress bar); ``None`` for pipes and streams."""
    return os.fstat(handle.fileno()).st_size if _regular(handle) else None


def _regular(handle: IO[bytes]) -> bool:
    """Whether ``handle`` reads a regular file (which can be checked whole before use)."""
    try:
        return handle.seekable() and stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return False


def _turns(
    args: argparse.Namespace, handle: IO[bytes], recorded: RecordedTs | None = None
) -> Iterator[tuple[int, Turn]]:
    return numbered_turns(
        handle,
        user=args.user,
        session=args.session,
        assign_ts=args.assign_ts,
        recorded_ts=recorded,
    )


def first_refused(
    check: Callable[[list[Turn]], object], numbered: Sequence[tuple[int, Turn]]
) -> None:
    """Run ``check`` on the turns; if it refuses them, raise its error naming the first bad line."""
    found = find_refused(check, [turn for _, turn in numbered])
    if found is not None:
        at, exc = found
        raise exc.at_line(numbered[at][0]) from None


def _recorded_ts(memory: Memory) -> RecordedTs:
    def last(user: str, session: str) -> float | None:
        found = memory.journal.sessions(only=(user, session))
        return found[0].last_ts if found else None

    return last


def _preview(memory: Memory, numbered: Sequence[tuple[int, Turn]]) -> None:
    """Refuse the whole transcript, naming the line, if ``observe`` would refuse a turn of it."""
    sessions: dict[tuple[str, str], list[tuple[int, Turn]]] = {}
    for line, turn in numbered:
        try:  # Memory refuses a type its actor cannot produce (F120), a user no tenant can be
            check_turn(turn)
        except (TurnValidationError, TenantError) as exc:
            raise _at_line(exc, line) from None
        sessions.setdefault((turn.user, turn.session), []).append((line, turn))
    for (user, session), group in sessions.items():
        with memory.tenant_lock(user):
            first_refused(memory.sessions.enter(user, session).preview, group)


def _at_line(exc: TurnValidationError | TenantError, line: int) -> TurnValidationError:
    """``exc`` naming ``line``; a user that is no valid tenant id is a bad line too."""
    if isinstance(exc, TenantError):
        return TurnValidationError(f"user: {exc}", line=line)
    return exc.at_line(line)


def _kept(exc: TurnValidationError, turns: int) -> TurnValidationError:
    """``exc`` also saying which turns of a streamed transcript were kept before it."""
    if not turns or exc.line is None:
        return exc
    message = (
        f"{exc.message}; the {turns} turn(s) before line {exc.line} were ingested and are "
        f"kept (open, not flushed): fix line {exc.line} and send the transcript from it on"
    )
    copy = type(exc).__new__(type(exc))
    copy.__dict__.update(exc.__dict__)
    copy.message, copy.args = message, (f"line {exc.line}: {message}",)
    return copy


def _observe(
    memory: Memory,
    source: Iterable[tuple[int, Turn, int | None]],
    progress: IngestProgress,
    fed: dict[tuple[str, str], None],
) -> tuple[int, list[Episode]]:
    count, stored = 0, []
    try:
        for line, turn, offset in source:
            try:
                stored.extend(memory.observe(turn))
            except (TurnValidationError, TenantError) as exc:  # e.g. an id reused (F6)
                raise _at_line(exc, line) from None
            fed[(turn.user, turn.session)] = None
            count += 1
            progress.update(turns=count, episodes=len(stored), bytes_read=offset)
    except TurnValidationError as exc:  # a streamed line, or a turn observe refused
        raise _kept(exc, count) from None
    progress.finish(turns=count, episodes=len(stored))
    return count, stored


def cmd_ingest(
    args: argparse.Namespace, emit: Emit, open_: Callable[[argparse.Namespace], Memory]
) -> int:
    """Feed turns to ``Memory.observe``; flush the sessions fed unless ``--no-flush``.

    ``emit`` writes the result (``--json`` or text); ``open_`` opens the memory.
    """
    if args.progress_every < 0:
        raise ConfigError(f"--progress-every must be >= 0, got {args.progress_every}")
    memory = open_(args)
    fed: dict[tuple[str, str], None] = {}
    with _source(args.file) as handle:
        size = _size(handle)
        progress = IngestProgress(sys.stderr, every=args.progress_every, total_bytes=size)
        numbered = _turns(args, handle, _recorded_ts(memory) if args.assign_ts else None)
        source: Iterable[tuple[int, Turn, int | None]]
        if size is not None:  # a regular file: check it whole, then observe
            source = [(line, turn, handle.tell()) for line, turn in numbered]
            _preview(memory, [(line, turn) for line, turn, _ in source])
        else:  # a pipe: streamed; an error names the turns kept before it
            source = ((line, turn, None) for line, turn in numbered)
        count, stored = _observe(memory, source, progress, fed)
    flushed = [] if args.no_flush else [e for key in fed for e in memory.flush(*key)]
    stored.extend(flushed)
    users = sorted({user for user, _ in fed})
    stats = memory.segmenter.stats
    data = {
        "turns": count,
        "duplicates": stats["duplicates"],
        "episodes": len(stored),
        "flushed": len(flushed),
        "users": users,
        "episode_ids": [e.id for e in stored],
    }
    text = (
        f"ingested {count} turns ({stats['duplicates']} duplicates skipped) -> "
        f"{len(stored)} episodes stored for {', '.join(users) or 'nobody'}"
        + ("" if not args.no_flush else "; open episodes left unflushed")
    )
    emit(args, data, text)
    return 0


def cmd_report(args: argparse.Namespace, emit: Emit) -> int:
    """Write the HTML timeline of a transcript's segmentation."""
    from episeg.interfaces.report import write_report

    with _source(args.file) as handle:
        numbered = list(_turns(args, handle))
    limit = EpisegConfig().intake.max_turn_chars  # the report segments with the defaults
    first_refused(lambda turns: preview_intake({}, turns, max_turn_chars=limit), numbered)
    summary = write_report([turn for _, turn in numbered], args.output, title=args.title)
    text = (
        f"wrote {args.output}: {summary['turns']} turns, {summary['episodes']} episodes "
        f"in {summary['sessions']} session(s)"
    )
    emit(args, {"output": args.output, **summary}, text)
    return 0
