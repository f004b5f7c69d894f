"""The journal's reads: sessions to replay, open turns, the outbox, seen ids, idle sessions.

Split from :mod:`episeg.durability.journal` (which holds the writes);
:class:`~episeg.durability.journal.Journal` inherits these. Every SQLite
failure becomes :class:`~episeg.errors.JournalError`.

>>> import numpy as np
>>> from episeg.durability.journal import Journal
>>> from episeg.segmentation.checkpoint import SessionCheckpoint
>>> from episeg.types import Turn
>>> j = Journal(":memory:")
>>> t = Turn(actor="user", text="deploy?", ts=5.0, id="q1", user="u", session="s")
>>> j.record(t, np.ones(2, np.float32), judge=None, closed=(), touched=100.0,
...          checkpoint=SessionCheckpoint(user="u", session="s", seq=0, position=0))
>>> j.seen_times("u", "s", ["q1", "q2"]), j.idle_sessions(before=101.0)
({'q1': 5.0}, [('u', 's')])
>>> [(s, t.text) for s, t, _ in j.open_turns("u")]
[('s', 'deploy?')]
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from episeg.durability.journal_file import HAS_OPEN, unpack
from episeg.errors import JournalError, StoreError
from episeg.segmentation.checkpoint import SessionCheckpoint
from episeg.store.codec import decode
from episeg.types import Episode, Turn

__all__ = ["JournalReads", "JournaledSession"]


@dataclass(frozen=True, slots=True)
class JournaledSession:
    """What the journal holds for one session: enough for ``Segmenter.resume``.

    ``seen`` maps every id accepted in the session to its turn fingerprint
    (``None`` for an id recorded before fingerprints).
    """

    user: str
    session: str
    checkpoint: SessionCheckpoint
    last_ts: float | None
    turns: tuple[tuple[Turn, np.ndarray, str | None], ...]
    seen: Mapping[str, int | None]


class JournalReads:
    """The read half of the journal (one SQLite connection, a lock held per read)."""

    path: str
    _db: sqlite3.Connection
    _lock: threading.RLock

    def sessions(
        self, only: tuple[str, str] | None = None, *, open_only: bool = False
    ) -> list[JournaledSession]:
        """Every journaled session (or ``only`` this one) with its open turns, in order.

        ``open_only`` lists only the sessions that have open turns.
        """
        with self._reading("listing sessions"):
            sql = "SELECT user, session, last_ts, checkpoint FROM sessions"
            rows = (
                self._db.execute(sql + " WHERE user = ? AND session = ?", only).fetchall()
                if only
                else self._db.execute(
                    sql + (f" WHERE {HAS_OPEN}" if open_only else "") + " ORDER BY rowid"
                ).fetchall()
            )
            out = []
            for user, session, last_ts, checkpoint in rows:
                turns = tuple(
                    (Turn.from_dict(json.loads(raw)), unpack(vec), judge)
                    for raw, vec, judge in self._db.execute(
                        "SELECT turn, vector, judge FROM turns WHERE user = ? AND session = ?"
                        " AND episode IS NULL ORDER BY n",
                        (user, session),
                    )
                )
                seen = {
                    str(turn_id): None if fp is None else int(fp)
                    for turn_id, fp in self._db.execute(
                        "SELECT turn_id, fingerprint FROM seen WHERE user = ? AND session = ?",
                        (user, session),
                    )
                }
                out.append(
                    JournaledSession(
                        user, session, SessionCheckpoint.from_json(checkpoint), last_ts, turns, seen
                    )
                )
            return out

    def open_sessions(self, user: str | None = None) -> list[tuple[str, str]]:
        """(user, session) of every session (of ``user``, or all) with open turns, sorted."""
        with self._reading("listing open sessions"):
            sql = "SELECT DISTINCT user, session FROM turns WHERE episode IS NULL"
            rows = (
                self._db.execute(sql).fetchall()
                if user is None
                else self._db.execute(sql + " AND user = ?", (user,)).fetchall()
            )
            return sorted((str(u), str(s)) for u, s in rows)

    def open_turns(self, user: str) -> list[tuple[str, Turn, np.ndarray]]:
        """``(session, turn as given, embedding)`` of ``user``'s open turns, in order."""
        with self._reading("reading open turns"):
            rows = self._db.execute(
                "SELECT session, turn, vector FROM turns WHERE user = ? AND episode IS NULL"
                " ORDER BY session, n",
                (user,),
            ).fetchall()
            return [(str(s), Turn.from_dict(json.loads(raw)), unpack(v)) for s, raw, v in rows]

    def open_version(self, user: str) -> tuple[int, int]:
        """(last row number, count) of ``user``'s open turns: changes whenever they change.

        Rows are append-only with numbers never reused, and a turn leaves the
        open set only by being closed or deleted, which lowers the count.
        """
        with self._reading("reading the open turns' version"):
            row = self._db.execute(
                "SELECT coalesce(max(n), 0), count(*) FROM turns"
                " WHERE user = ? AND episode IS NULL",
                (user,),
            ).fetchone()
            return int(row[0]), int(row[1])

    def idle_sessions(
        self, *, before: float, user: str | None = None, session: str | None = None
    ) -> list[tuple[str, str]]:
        """(user, session) with open turns whose last turn arrived before ``before``, sorted.

        ``user`` limits it to one tenant, ``session`` (with ``user``) to one session.
        """
        with self._reading("listing idle sessions"):
            # driven by the turns table (only turns not yet stored), not by every session ever
            sql = (
                "SELECT DISTINCT s.user, s.session FROM turns t JOIN sessions s"
                " ON s.user = t.user AND s.session = t.session"
                " WHERE t.episode IS NULL AND s.touched < ?"
            )
            if user is None:
                rows = self._db.execute(sql, (before,)).fetchall()
            elif session is None:
                rows = self._db.execute(sql + " AND t.user = ?", (before, user)).fetchall()
            else:
                sql += " AND t.user = ? AND t.session = ?"
                rows = self._db.execute(sql, (before, user, session)).fetchall()
            return sorted((str(u), str(s)) for u, s in rows)

    def seen_times(self, user: str, session: str, ids: Iterable[str]) -> dict[str, float]:
        """The recorded ``ts`` of those ``ids`` already accepted in (user, session).

        An interface that stamps turns without ``ts`` with "now" gives a re-sent
        one its recorded time instead, so the re-send stays a duplicate.
        """
        wanted = list(dict.fromkeys(ids))
        with self._reading("reading seen ids"):
            out: dict[str, float] = {}
            for turn_id in wanted:
                row = self._db.execute(
                    "SELECT ts FROM seen WHERE user = ? AND session = ? AND turn_id = ?",
                    (user, session, turn_id),
                ).fetchone()
                if row is not None and row[0] is not None:
                    out[turn_id] = float(row[0])
            return out

    def pending_version(self, user: str) -> tuple[int, int]:
        """(last row number, count) of ``user``'s outbox rows: changes whenever they change."""
        with self._reading("reading the outbox's version"):
            row = self._db.execute(
                "SELECT coalesce(max(n), 0), count(*) FROM outbox WHERE user = ?", (user,)
            ).fetchone()
            return int(row[0]), int(row[1])

    def pending(self, user: str | None = None) -> list[Episode]:
        """Closed episodes (of ``user``, or all) not yet confirmed in the store, oldest first."""
        with self._reading("reading the outbox"):
            sql = "SELECT episode, document, metadata, vector FROM outbox"
            rows = (
                self._db.execute(sql + " ORDER BY n").fetchall()
                if user is None
                else self._db.execute(sql + " WHERE user = ? ORDER BY n", (user,)).fetchall()
            )
            try:
                return [
                    decode(eid, doc, json.loads(meta), unpack(vec)) for eid, doc, meta, vec in rows
                ]
            except StoreError as exc:
                raise JournalError(f"unreadable outbox record: {exc}") from exc

    def counts(self) -> dict[str, int]:
        """Rows per table (open turns counted separately from pending ones)."""
        with self._reading("counting"):
            one = self._db.execute
            return {
                "sessions": one("SELECT count(*) FROM sessions").fetchone()[0],
                "open_turns": one("SELECT count(*) FROM turns WHERE episode IS NULL").fetchone()[0],
                "pending_turns": one(
                    "SELECT count(*) FROM turns WHERE episode IS NOT NULL"
                ).fetchone()[0],
                "seen": one("SELECT count(*) FROM seen").fetchone()[0],
                "outbox": one("SELECT count(*) FROM outbox").fetchone()[0],
            }

    @contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        try:
            with self._lock:
                yield
        except (sqlite3.Error, ValueError, KeyError) as exc:
            raise JournalError(f"journal {self.path}: {what} failed: {exc}") from exc
