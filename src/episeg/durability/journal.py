"""The crash-safety journal: accepted turns and unconfirmed episode writes, in SQLite.

One file (``<Memory path>/journal.sqlite3``), WAL mode, ``synchronous=FULL``:
a committed transaction survives ``kill -9`` and power loss. Five tables:

``sessions``  per (user, session): last timestamp, the open episode's
              :class:`~episeg.segmentation.checkpoint.SessionCheckpoint` and
              when the session last took a turn (``touched``, for the idle
              timeout);
``turns``     every accepted turn not yet in a *stored* episode, as given
              (original text, assigned id), with its embedding and the judge's
              recorded answer; ``episode`` is NULL while the turn is open;
``seen``      every turn id ever accepted per session, with its content
              fingerprint and ts (duplicates stay refused across restarts, also
              after their episode was stored; the same id with other content
              is a conflict, issue 12 F6);
``outbox``    closed episodes (encoded Chroma records) not yet confirmed in
              the store;
``meta``      the journal's node id.

:meth:`Journal.record` commits one accepted turn, and the episode it closed,
in one transaction; :meth:`Journal.confirm` removes a stored episode and its
turns in one transaction. Every SQLite failure becomes :class:`JournalError`.
The reads are in :mod:`episeg.durability.journal_reads`.

>>> import numpy as np
>>> from episeg.segmentation.checkpoint import SessionCheckpoint
>>> from episeg.types import Turn
>>> j = Journal(":memory:")
>>> t = Turn(actor="user", text="deploy?", ts=1.0, id="s:0", user="u", session="s")
>>> j.record(t, np.ones(2, np.float32), judge=None, closed=(),
...          checkpoint=SessionCheckpoint(user="u", session="s", seq=0, position=0))
>>> [(s.user, s.session, [x.id for x, _, _ in s.turns], sorted(s.seen)) for s in j.sessions()]
[('u', 's', ['s:0'], ['s:0'])]
>>> j.sessions()[0].seen["s:0"] == turn_fingerprint(t)
True
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from episeg.durability.journal_file import lock_exclusively, node_id, pack
from episeg.durability.journal_reads import JournaledSession, JournalReads
from episeg.errors import JournalError, StoreError
from episeg.segmentation.checkpoint import SessionCheckpoint
from episeg.segmentation.intake import turn_fingerprint
from episeg.store.codec import encode
from episeg.types import Episode, Turn

__all__ = ["Journal", "JournaledSession"]


class Journal(JournalReads):
    """Durable record of accepted turns and pending episode writes.

    Parameters
    ----------
    path
        The SQLite file (created with its folder), or ``":memory:"`` for a
        journal that does not survive the process (no crash safety).

    Raises
    ------
    JournalError
        When the file cannot be opened, read or written (disk full, I/O error,
        corruption), or when another live ``Journal`` holds the same file: an
        exclusive ``flock`` on ``<path>.lock`` (released by the OS if the
        holder dies, even by ``kill -9``) keeps two processes from replaying
        each other's sessions. A failed :meth:`record` leaves the journal
        unchanged.

    Notes
    -----
    One connection serves every thread; each transaction and read holds a
    short lock (commits are serialised by SQLite's single writer anyway).
    :attr:`node` is this journal's random id (``meta`` table), made with the
    file and folded into episode ids (:mod:`episeg.durability.ids`); a journal
    made before node ids has ``""``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._unlock: weakref.finalize[..., Journal] | None = None
        # one connection for every thread; each transaction or read holds this lock briefly
        self._lock = threading.RLock()
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                # closing the descriptor releases the flock: on close(), or when a
                # dropped Journal is collected
                fd = lock_exclusively(Path(self.path + ".lock"))
                self._unlock = weakref.finalize(self, os.close, fd)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self.node = node_id(self._db)
        except (sqlite3.Error, OSError) as exc:
            if self._unlock is not None:
                self._unlock()
            raise JournalError(f"cannot open the journal {self.path}: {exc}") from exc

    def close(self) -> None:
        """Close the SQLite connection and release the file lock (data is already durable)."""
        with self._lock:
            self._db.close()
        if self._unlock is not None:
            self._unlock()  # runs os.close once, however often close() is called

    # -- writes -------------------------------------------------------------------------
    def record(
        self,
        turn: Turn,
        vector: np.ndarray,
        *,
        judge: str | None,
        closed: Sequence[Episode],
        checkpoint: SessionCheckpoint | None,
        touched: float | None = None,
        judged: str | None = None,
    ) -> None:
        """Commit one accepted ``turn`` (id set), the episodes it closed, the new checkpoint.

        ``touched``: when the turn arrived by the caller's clock (default
        ``time.time()``); the idle timeout counts from it. ``judged``: the id of
        the open turn of the same session that ``judge`` answered about, when it
        is not ``turn`` (a boundary model with lookahead decides a turn after
        later ones came in); its row keeps the answer, for the replay.
        """
        touched = time.time() if touched is None else touched
        with self._transaction(f"recording turn {turn.id!r}"):
            self._close(closed)
            if judged is not None and judged != turn.id:
                self._keep_answer(turn, judged, judge)
                judge = None
            self._db.execute(
                "INSERT INTO turns (user, session, turn_id, turn, vector, judge)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    turn.user,
                    turn.session,
                    turn.id,
                    json.dumps(turn.to_dict(), ensure_ascii=False),
                    pack(vector),
                    judge,
                ),
            )
            self._db.execute(
                "INSERT OR IGNORE INTO seen (user, session, turn_id, fingerprint, ts)"
                " VALUES (?, ?, ?, ?, ?)",
                (turn.user, turn.session, turn.id, turn_fingerprint(turn), turn.ts),
            )
            if checkpoint is not None:
                self._db.execute(
                    "INSERT INTO sessions (user, session, last_ts, checkpoint, touched)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (user, session) DO UPDATE SET"
                    " last_ts = excluded.last_ts, checkpoint = excluded.checkpoint,"
                    " touched = excluded.touched",
                    (turn.user, turn.session, turn.ts, checkpoint.to_json(), touched),
                )
            else:
                self._db.execute(
                    "UPDATE sessions SET last_ts = ?, touched = ? WHERE user = ? AND session = ?",
                    (turn.ts, touched, turn.user, turn.session),
                )

    def _keep_answer(self, turn: Turn, judged: str, judge: str | None) -> None:
        if judge is None:
            return
        changed = self._db.execute(
            "UPDATE turns SET judge = ? WHERE user = ? AND session = ? AND turn_id = ?"
            " AND episode IS NULL",
            (judge, turn.user, turn.session, judged),
        ).rowcount
        if changed != 1:
            raise JournalError(
                f"the judge answered about turn {judged!r}, which is not an open turn of "
                f"session {turn.session!r}"
            )

    def close_episodes(
        self,
        closed: Sequence[Episode],
        checkpoints: Sequence[SessionCheckpoint] = (),
        *,
        journaled: bool = True,
    ) -> None:
        """Commit episodes closed without a new turn (flush, batch) to the outbox.

        ``journaled=False`` for episodes whose turns never went through the
        journal (batch ``store_episodes``): their turn ids are not looked up.
        """
        with self._transaction("recording closed episodes"):
            self._close(closed, mark_turns=journaled)
            for cp in checkpoints:
                self._db.execute(
                    "UPDATE sessions SET checkpoint = ? WHERE user = ? AND session = ?",
                    (cp.to_json(), cp.user, cp.session),
                )

    def confirm(self, user: str, episode_id: str) -> None:
        """``user``'s episode is in the store: drop it from the outbox, and its turns.

        Keyed by tenant and id: another tenant's episode with the same id (ids a
        caller chose can coincide) stays waiting, with its turns.
        """
        with self._transaction(f"confirming episode {episode_id} of {user!r}"):
            self._db.execute("DELETE FROM turns WHERE user = ? AND episode = ?", (user, episode_id))
            self._db.execute(
                "DELETE FROM outbox WHERE user = ? AND episode = ?", (user, episode_id)
            )

    # -- internals ----------------------------------------------------------------------
    def _close(self, closed: Sequence[Episode], *, mark_turns: bool = True) -> None:
        for ep in closed:
            rec = encode(ep, tenant=ep.user)
            self._db.executemany(
                "UPDATE turns SET episode = ? WHERE user = ? AND session = ? AND turn_id = ?"
                " AND episode IS NULL",
                [(ep.id, ep.user, ep.session, tid) for tid in ep.turn_ids] if mark_turns else [],
            )
            self._db.execute(
                "INSERT OR REPLACE INTO outbox (episode, user, document, metadata, vector)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    ep.id,
                    ep.user,
                    rec.document,
                    json.dumps(rec.metadata, ensure_ascii=False),
                    pack(rec.embedding),
                ),
            )

    @contextmanager
    def _transaction(self, what: str) -> Iterator[None]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise JournalError(f"journal {self.path}: cannot begin {what}: {exc}") from exc
            with self._rollback_on_error(what):
                yield

    @contextmanager
    def _rollback_on_error(self, what: str) -> Iterator[None]:
        try:
            yield
            self._db.execute("COMMIT")
        except (sqlite3.Error, StoreError) as exc:
            try:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
            except sqlite3.Error as again:
                raise JournalError(
                    f"journal {self.path}: {what} failed: {exc}; rollback failed too: {again}"
                ) from exc
            raise JournalError(f"journal {self.path}: {what} failed: {exc}") from exc
        except BaseException:
            # anything else (e.g. a string SQLite cannot encode): never leave the
            # transaction open, or every later write of every tenant fails (issue 12, F1)
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
