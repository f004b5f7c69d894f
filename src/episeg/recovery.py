"""What crash recovery needs besides the journal: session checkpoints and a judge tap.

A :class:`SessionCheckpoint` is the state a session's *open* episode started
from (intake sequence, position, parent, opening verdicts, summaries). With
it and the open episode's journaled turns (original text, embedding, judge
answer) :meth:`episeg.segmenter.Segmenter.resume` rebuilds the session
exactly: every signal's state is a function of the open episode's turns.

:class:`JudgeTap` wraps the prediction-error judge. Live, it records each
answer (or failure) by turn id so the journal can keep it; during replay it
answers from those records and never calls the (paid) judge again.

>>> from episeg.testing import ScriptedJudge
>>> from episeg.types import Turn
>>> tap = JudgeTap(ScriptedJudge(["new"]))
>>> turn = Turn(actor="user", text="deploy?", ts=1.0, id="s:3")
>>> tap.judge("", [], turn).decision.value, tap.take("s:3")
('boundary', '{"decision": "boundary", "reason": "scripted", "summary": "about: deploy?"}')
>>> with tap.replaying({"s:3": '{"error": "timed out"}'}):
...     tap.judge("", [], turn)
Traceback (most recent call last):
...
episeg.errors.JudgeError: timed out
>>> tap.calls   # the replay did not reach the scripted judge
1
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from episeg.errors import BackendUnavailableError, JournalError, JudgeError, StoreError
from episeg.types import Decision, Episode, Turn, Verdict
from episeg.typing import EpisodeStore, Judge, JudgeAnswer

if TYPE_CHECKING:  # both import this module
    from episeg.journal import Journal, JournaledSession
    from episeg.segmenter import Segmenter

__all__ = [
    "JudgeTap",
    "PendingWriter",
    "RecoveryReport",
    "SessionCheckpoint",
    "recover",
    "replay",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SessionCheckpoint:
    """The opening state of one session's open episode (JSON round-trips).

    ``seq`` and ``position`` are the intake sequence number and session
    position *before* the open episode's first turn; ``summary`` and
    ``prediction_summary`` are the episode's and the prediction signal's
    running summaries right after that turn opened it, and
    ``prediction_since_check`` the judge cadence counter at that moment (the
    cadence runs across boundaries, so it is not derivable from the turns).

    >>> cp = SessionCheckpoint(user="u", session="s", seq=4, position=4)
    >>> SessionCheckpoint.from_json(cp.to_json()) == cp
    True
    """

    user: str
    session: str
    seq: int
    position: int
    top_level_id: str | None = None
    parent_id: str | None = None
    opening_verdicts: tuple[Verdict, ...] = ()
    summary: str = ""
    prediction_summary: str = ""
    prediction_since_check: int = 0

    def to_json(self) -> str:
        """JSON with the verdict scores exact (``Verdict.to_dict`` rounds them)."""
        data = asdict(self)
        data["opening_verdicts"] = [{**v.to_dict(), "score": float(v.score)}
                                    for v in self.opening_verdicts]
        return json.dumps(data, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> SessionCheckpoint:
        """Parse :meth:`to_json` output; a damaged record raises ``JournalError``."""
        try:
            data: dict[str, Any] = json.loads(raw)
            data["opening_verdicts"] = tuple(Verdict.from_dict(v)
                                             for v in data["opening_verdicts"])
            return cls(**data)
        except (ValueError, KeyError, TypeError) as exc:
            raise JournalError(f"unreadable session checkpoint {raw[:80]!r}: {exc}") from exc


class JudgeTap:
    """A :class:`~episeg.typing.Judge` that records live answers and replays them.

    Parameters
    ----------
    inner
        The real judge.
    """

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self._recorded: dict[str, str] = {}
        self._replay: Mapping[str, str] | None = None
        self.replay_misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def calls(self) -> int:
        return self.inner.calls

    def judge(self, summary: str, recent: Sequence[Turn], turn: Turn) -> JudgeAnswer:
        key = turn.id or ""
        if self._replay is not None:
            return _answer(self._replay, key, self)
        try:
            answer = self.inner.judge(summary, recent, turn)
        except (JudgeError, BackendUnavailableError) as exc:
            self._recorded[key] = json.dumps({"error": str(exc)}, ensure_ascii=False)
            raise
        self._recorded[key] = json.dumps({"decision": answer.decision.value,
                                          "summary": answer.summary, "reason": answer.reason},
                                         ensure_ascii=False, sort_keys=True)
        return answer

    def take(self, turn_id: str) -> str | None:
        """The JSON record of the judge's answer on ``turn_id`` (once), or ``None``."""
        return self._recorded.pop(turn_id, None)

    def clear(self) -> None:
        """Forget unclaimed records (e.g. of a refused or duplicate turn)."""
        self._recorded.clear()

    @contextmanager
    def replaying(self, records: Mapping[str, str]) -> Iterator[None]:
        """Answer from ``records`` (turn id -> JSON) instead of the real judge."""
        self._replay = records
        try:
            yield
        finally:
            self._replay = None


def _answer(records: Mapping[str, str], key: str, tap: JudgeTap) -> JudgeAnswer:
    raw = records.get(key)
    if raw is None:  # the live run did not ask here: do not pay for a new answer
        tap.replay_misses += 1
        log.warning("replay asked the judge about turn %s, which the live run did not; "
                    "answering with a judge failure (abstain)", key)
        raise JudgeError(f"no recorded judge answer for replayed turn {key}")
    data = json.loads(raw)
    if "error" in data:
        raise JudgeError(str(data["error"]))
    return JudgeAnswer(decision=Decision.parse(data["decision"]), summary=str(data["summary"]),
                       reason=str(data["reason"]))


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What :class:`~episeg.memory.Memory` found in its journal at start-up."""

    sessions: int = 0
    turns_replayed: int = 0
    replay_closed: int = 0
    pending_found: int = 0
    pending_stored: int = 0
    seconds: float = 0.0


def replay(segmenter: Segmenter, tap: JudgeTap | None,
           journaled: JournaledSession) -> list[Episode]:
    """Rebuild one journaled session in ``segmenter``; the judge answers from the records."""
    turns = [(t, v) for t, v, _ in journaled.turns]
    answers = {t.id or "": j for t, _, j in journaled.turns if j is not None}
    with tap.replaying(answers) if tap is not None else nullcontext():
        return segmenter.resume(journaled.checkpoint, turns, seen_ids=journaled.seen,
                                last_ts=journaled.last_ts)


def recover(segmenter: Segmenter, tap: JudgeTap | None, journal: Journal,
            writer: PendingWriter, score: Callable[[Episode], Episode]) -> RecoveryReport:
    """Start-up recovery: replay every journaled session, then retry the outbox.

    A replay that closes an episode the live run had not closed (only possible
    when a component is not deterministic) keeps it: it is scored, journaled
    and written, never dropped, and a warning says so.
    """
    started = time.perf_counter()
    sessions = journal.sessions()
    replay_closed = 0
    for journaled in sessions:
        closed = [score(e) for e in replay(segmenter, tap, journaled)]
        if closed:
            replay_closed += len(closed)
            log.warning("replaying session %s/%s closed %d episode(s) the live run had "
                        "not closed", journaled.user, journaled.session, len(closed))
            journal.close_episodes(closed, [segmenter.checkpoint(journaled.user,
                                                                 journaled.session)])
    pending = journal.pending()
    stored = writer.drain() if pending else []
    report = RecoveryReport(
        sessions=len(sessions), turns_replayed=sum(len(s.turns) for s in sessions),
        replay_closed=replay_closed, pending_found=len(pending), pending_stored=len(stored),
        seconds=time.perf_counter() - started)
    if sessions or pending:
        log.info("journal recovery: %s", report)
    return report


class PendingWriter:
    """Writes journaled episodes to their stores; a failed write waits in the outbox.

    Parameters
    ----------
    journal
        Where the episodes wait (:meth:`Journal.pending`) and are confirmed.
    store_for
        The tenant-bound store of a user.
    retry_interval
        After a failure, seconds during which new writes are not tried (they
        queue in the outbox) and :meth:`retry_if_due` does nothing.
    """

    def __init__(self, journal: Journal, store_for: Callable[[str], EpisodeStore], *,
                 retry_interval: float) -> None:
        self.journal, self.store_for, self.retry_interval = journal, store_for, retry_interval
        self.has_pending = False
        self._retry_at = 0.0

    def write(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Store ``episodes`` (already in the outbox); return those stored."""
        if self.has_pending and time.monotonic() < self._retry_at:
            for episode in episodes:
                log.warning("episode %s kept in the outbox: the store is marked down "
                            "(next retry in %.1fs)", episode.id, self._retry_at - time.monotonic())
            return []
        stored = []
        for episode in episodes:
            if not self._store_one(episode):
                break
            stored.append(episode)
        return stored

    def drain(self) -> list[Episode]:
        """Try every pending write now, oldest first; stop at the first failure."""
        stored: list[Episode] = []
        for episode in self.journal.pending():
            if not self._store_one(episode):
                return stored
            stored.append(episode)
        self.has_pending = False
        return stored

    def retry_if_due(self) -> None:
        if self.has_pending and time.monotonic() >= self._retry_at:
            self.drain()

    def _store_one(self, episode: Episode) -> bool:
        try:
            self.store_for(episode.user).add([episode])
        except StoreError as exc:
            self.has_pending, self._retry_at = True, time.monotonic() + self.retry_interval
            log.warning("episode %s kept in the outbox, store write failed: %s", episode.id, exc)
            return False
        try:
            self.journal.confirm(episode.id)
        except JournalError as exc:  # stored twice later is harmless: the write is an upsert
            log.warning("episode %s stored but not confirmed in the journal (%s); it will be "
                        "written again", episode.id, exc)
        return True
