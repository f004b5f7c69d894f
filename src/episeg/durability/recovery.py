"""Start-up crash recovery: replay every journaled session, then retry the outbox.

The journal (:mod:`episeg.durability.journal`) holds each session's open
episode as a :class:`~episeg.segmentation.checkpoint.SessionCheckpoint` plus its
turns; :func:`replay` rebuilds the session in a segmenter with the judge
answering from the recorded answers (:class:`~episeg.segmentation.tap.JudgeTap`),
and :func:`recover` does that for every session with open turns (through the
:class:`~episeg.durability.sessions.SessionPool`) and drains the outbox
(:class:`~episeg.durability.outbox.PendingWriter`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from episeg.durability.sessions import SessionPool, replay

if TYPE_CHECKING:
    from episeg.durability.outbox import PendingWriter

__all__ = ["RecoveryReport", "recover", "replay"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What :class:`~episeg.memory.Memory` found in its journal at start-up."""

    sessions: int = 0
    turns_replayed: int = 0
    replay_closed: int = 0
    pending_found: int = 0
    pending_stored: int = 0
    seconds: float = 0.0


def recover(sessions: SessionPool, writer: PendingWriter) -> RecoveryReport:
    """Start-up recovery: replay every session with open turns, then retry the outbox.

    A replay that closes an episode the live run had not closed (only possible
    when a component is not deterministic) keeps it: it is scored, journaled
    and written, never dropped, and a warning says so. Sessions without open
    turns are not replayed now: :meth:`SessionPool.enter` loads each one from
    the journal when it is next used.
    """
    started = time.perf_counter()
    journal = sessions.journal
    count = turns = replay_closed = 0
    for key in journal.open_sessions():  # one session read at a time; the pool keeps its cap
        for one in journal.sessions(only=key):
            count, turns = count + 1, turns + len(one.turns)
            replay_closed += len(sessions.load(one))
    pending = journal.pending()
    stored = writer.drain() if pending else []
    report = RecoveryReport(
        sessions=count,
        turns_replayed=turns,
        replay_closed=replay_closed,
        pending_found=len(pending),
        pending_stored=len(stored),
        seconds=time.perf_counter() - started,
    )
    if count or pending:
        log.info("journal recovery: %s", report)
    return report
