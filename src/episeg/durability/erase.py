"""Erase from the journal: one tenant's episodes, one session, or everything of a tenant.

An erasure deletes the rows that hold the text (``turns``, ``outbox``), the
ids (``seen``: a forgotten turn id is accepted again) and, for a session or a
tenant, the open episode's checkpoint (``sessions``). Deleting a row is not
enough to remove its bytes: SQLite leaves them in free pages and in the
``-wal`` file. :func:`scrub` therefore runs with ``secure_delete=ON`` (freed
content is zeroed), then ``VACUUM`` and ``wal_checkpoint(TRUNCATE)`` (the WAL
file is emptied), so the text is gone from every byte of the journal's files.

>>> import numpy as np
>>> from episeg.durability.journal import Journal
>>> from episeg.segmentation.checkpoint import SessionCheckpoint
>>> from episeg.types import Turn
>>> j = Journal(":memory:")
>>> t = Turn(actor="user", text="secret", ts=1.0, id="s:0", user="u", session="s")
>>> j.record(t, np.ones(2, np.float32), judge=None, closed=(),
...          checkpoint=SessionCheckpoint(user="u", session="s", seq=0, position=0))
>>> erase_journal(j, "u", session="s")
1
>>> j.counts()["open_turns"], j.counts()["seen"], j.counts()["sessions"]
(0, 0, 0)
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Collection

from episeg.durability.journal import Journal
from episeg.errors import JournalError
from episeg.segmentation.checkpoint import SessionCheckpoint

__all__ = ["erase_journal", "erase_open", "scrub"]

_OUTBOX_SESSION = "json_extract(metadata, '$.session')"


def erase_journal(
    journal: Journal,
    user: str,
    *,
    session: str | None = None,
    episodes: Collection[str] = (),
    turn_ids: Collection[tuple[str, str]] = (),
    everything: bool = False,
) -> int:
    """Delete ``user``'s rows for these episodes, this session, or all; return turns deleted.

    ``turn_ids`` are (session, turn id) pairs of the erased episodes, dropped
    from ``seen``. Nothing of another tenant is touched: every statement is
    scoped by ``user``. Call :func:`scrub` afterwards to remove the bytes.

    Raises
    ------
    JournalError
        If SQLite fails (nothing is deleted).
    ValueError
        If neither episodes, a session nor ``everything`` is given.
    """
    if not (episodes or session is not None or everything):
        raise ValueError("erase_journal needs episodes, a session or everything=True")
    db = journal._db  # the journal's own connection, under its own transaction
    with journal._transaction(f"erasing data of tenant {user!r}"):
        db.execute("PRAGMA secure_delete=ON")
        deleted = 0
        for eid in episodes:
            deleted += db.execute(
                "DELETE FROM turns WHERE user = ? AND episode = ?", (user, eid)
            ).rowcount
            db.execute("DELETE FROM outbox WHERE user = ? AND episode = ?", (user, eid))
        db.executemany(
            "DELETE FROM seen WHERE user = ? AND session = ? AND turn_id = ?",
            [(user, s, t) for s, t in turn_ids],
        )
        if session is not None or everything:
            where = "user = ?" if everything else "user = ? AND session = ?"
            args = (user,) if everything or session is None else (user, session)
            deleted += db.execute(f"DELETE FROM turns WHERE {where}", args).rowcount
            for table in ("seen", "sessions"):
                db.execute(f"DELETE FROM {table} WHERE {where}", args)
            outbox = "user = ?" if everything else f"user = ? AND {_OUTBOX_SESSION} = ?"
            db.execute(f"DELETE FROM outbox WHERE {outbox}", args)
        return deleted


def erase_open(journal: Journal, checkpoint: SessionCheckpoint) -> int:
    """Delete the open turns of ``checkpoint``'s session and their seen ids; return turns deleted.

    ``checkpoint`` replaces the session's: the state after its open episode
    was closed (nothing open). The session's stored and waiting episodes, and
    the ids of their turns, are not touched. Call :func:`scrub` afterwards.

    Raises
    ------
    JournalError
        If SQLite fails (nothing is deleted).
    """
    user, session = checkpoint.user, checkpoint.session
    db = journal._db
    with journal._transaction(f"erasing the open episode of {user!r}/{session!r}"):
        db.execute("PRAGMA secure_delete=ON")
        db.execute(
            "DELETE FROM seen WHERE user = ? AND session = ? AND turn_id IN (SELECT turn_id"
            " FROM turns WHERE user = ? AND session = ? AND episode IS NULL)",
            (user, session, user, session),
        )
        deleted: int = db.execute(
            "DELETE FROM turns WHERE user = ? AND session = ? AND episode IS NULL", (user, session)
        ).rowcount
        db.execute(
            "UPDATE sessions SET checkpoint = ? WHERE user = ? AND session = ?",
            (checkpoint.to_json(), user, session),
        )
        return deleted


def clear_judge_summaries(journal: Journal, keys: Collection[tuple[str, str]]) -> None:
    """Blank the judge's running summary in these sessions' checkpoints (if they still exist).

    The prediction signal keeps a keyword summary of the episode it last
    followed in the session's checkpoint, also after that episode closed, so
    an erased episode's words would stay in the journal (review 4). Call
    :func:`scrub` afterwards.
    """
    for user, session in sorted(keys):
        for found in journal.sessions((user, session)):
            if found.checkpoint.prediction_summary:
                blank = dataclasses.replace(found.checkpoint, prediction_summary="")
                with journal._transaction(f"blanking the judge summary of {user!r}/{session!r}"):
                    journal._db.execute(
                        "UPDATE sessions SET checkpoint = ? WHERE user = ? AND session = ?",
                        (blank.to_json(), user, session),
                    )


def scrub(journal: Journal) -> None:
    """Remove deleted rows' bytes from the journal file and its ``-wal`` (see module doc).

    Raises
    ------
    JournalError
        If SQLite cannot vacuum or checkpoint (e.g. the disk is full).
    """
    with journal._lock:
        try:
            db = journal._db
            db.execute("PRAGMA secure_delete=ON")
            db.execute("VACUUM")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error as exc:
            raise JournalError(f"journal {journal.path}: scrubbing failed: {exc}") from exc
