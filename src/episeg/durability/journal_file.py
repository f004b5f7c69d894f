"""The journal's SQLite file: its schema, the exclusive lock, the node id, vector bytes.

Split from :mod:`episeg.durability.journal`, which holds the reads and writes.

Schema upgrades (:func:`node_id` runs them when the file is opened): a journal
from before turn fingerprints (issue 12, F6) gets ``seen.fingerprint`` and
``seen.ts``, filled in from the turns it still holds (open or waiting for the
store); an id whose turn is already stored keeps ``NULL``, so a re-send of it
stays a duplicate (its content is not known, and refusing every such re-send
would break clients that replay after an upgrade). ``sessions.touched`` (when
the session last took a turn, by the process clock, for the idle timeout) is
added as the upgrade time. An ``outbox`` keyed by the episode id alone is
rebuilt keyed by (user, episode), its rows and their order kept: under the old
key a second tenant's episode with the same caller-chosen id replaced the
first tenant's waiting episode, and confirming it deleted the first tenant's
journaled turns.

>>> import numpy as np
>>> unpack(pack(np.arange(3, dtype=np.float32))).tolist()
[0.0, 1.0, 2.0]
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import io
import json
import os
import secrets
import sqlite3
import time
from pathlib import Path

import numpy as np

from episeg.errors import EpisegError, JournalError
from episeg.segmentation.intake import turn_fingerprint
from episeg.types import Turn

__all__ = [
    "HAS_OPEN",
    "OUTBOX_COLUMNS",
    "SCHEMA",
    "lock_exclusively",
    "node_id",
    "pack",
    "unpack",
    "upgrade",
]

# an episode id is unique per tenant, not across tenants: ids a caller chooses
# (``Memory.store_episodes``, the LangGraph adapter) may coincide between users
OUTBOX_COLUMNS = (
    "(n INTEGER PRIMARY KEY AUTOINCREMENT, episode TEXT NOT NULL, user TEXT NOT NULL,"
    " document TEXT NOT NULL, metadata TEXT NOT NULL, vector BLOB NOT NULL, UNIQUE (user, episode))"
)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sessions (user TEXT NOT NULL, session TEXT NOT NULL,
    last_ts REAL, checkpoint TEXT NOT NULL, touched REAL, PRIMARY KEY (user, session));
CREATE TABLE IF NOT EXISTS turns (n INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL,
    session TEXT NOT NULL, turn_id TEXT NOT NULL, turn TEXT NOT NULL, vector BLOB NOT NULL,
    judge TEXT, episode TEXT);
CREATE INDEX IF NOT EXISTS turns_by_session ON turns (user, session, episode);
CREATE INDEX IF NOT EXISTS turns_by_episode ON turns (episode);
CREATE TABLE IF NOT EXISTS seen (user TEXT NOT NULL, session TEXT NOT NULL,
    turn_id TEXT NOT NULL, fingerprint INTEGER, ts REAL,
    PRIMARY KEY (user, session, turn_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS outbox {OUTBOX_COLUMNS};
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""
HAS_OPEN = (
    "EXISTS (SELECT 1 FROM turns WHERE turns.user = sessions.user"
    " AND turns.session = sessions.session AND turns.episode IS NULL)"
)


def lock_exclusively(lock_path: Path) -> int:
    """Hold an exclusive ``flock`` on ``lock_path``; the open descriptor is the lock.

    A journal left unreachable in this process (a dropped ``Memory``) may still hold
    the lock until the garbage collector closes it, so a conflict collects once and
    retries before it is reported.
    """
    for attempt in (1, 2):
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            if attempt == 1:
                gc.collect()
                continue
            raise JournalError(
                f"the journal {lock_path.with_suffix('')} is in use by another Memory "
                f"(process {holder}); use one Memory per path"
            ) from None
        except OSError:  # e.g. ENOLCK: no locks on this filesystem
            os.close(fd)
            raise
        with contextlib.suppress(OSError):  # the pid is a courtesy: a full disk may refuse it
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        return fd
    raise AssertionError("unreachable")  # pragma: no cover


def node_id(db: sqlite3.Connection) -> str:
    """This journal's node id: random for a new journal, '' for one made before node ids."""
    found = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'sessions'").fetchone()
    db.executescript(SCHEMA)
    upgrade(db)
    row = db.execute("SELECT value FROM meta WHERE key = 'node'").fetchone()
    if row is not None:
        return str(row[0])
    node = "" if found is not None else secrets.token_hex(8)
    db.execute("INSERT INTO meta VALUES ('node', ?)", (node,))
    return node


def upgrade(db: sqlite3.Connection, *, now: float | None = None) -> bool:
    """Add the columns a journal from an older episeg lacks; ``True`` if it changed.

    One transaction: fingerprints and times of ids whose turns the journal
    still holds are filled in, the others stay ``NULL`` (see the module
    docstring); ``touched`` of every session is ``now`` (default: the time).
    """
    seen = {row[1] for row in db.execute("PRAGMA table_info(seen)")}
    sessions = {row[1] for row in db.execute("PRAGMA table_info(sessions)")}
    rekey = _outbox_keyed_by_episode_alone(db)
    if "fingerprint" in seen and "touched" in sessions and not rekey:
        return False
    db.execute("BEGIN IMMEDIATE")
    try:
        if rekey:  # SQLite cannot drop a constraint: copy into a table with the new key
            db.execute(f"CREATE TABLE outbox_rekeyed {OUTBOX_COLUMNS}")
            db.execute(
                "INSERT INTO outbox_rekeyed (n, episode, user, document, metadata, vector)"
                " SELECT n, episode, user, document, metadata, vector FROM outbox"
            )
            db.execute("DROP TABLE outbox")
            db.execute("ALTER TABLE outbox_rekeyed RENAME TO outbox")
        if "fingerprint" not in seen:
            db.execute("ALTER TABLE seen ADD COLUMN fingerprint INTEGER")
            db.execute("ALTER TABLE seen ADD COLUMN ts REAL")
            rows = db.execute("SELECT user, session, turn_id, turn FROM turns").fetchall()
            for user, session, turn_id, raw in rows:
                try:
                    turn = Turn.from_dict(json.loads(raw))
                except (EpisegError, ValueError):  # unreadable: the id stays a duplicate
                    continue
                db.execute(
                    "UPDATE seen SET fingerprint = ?, ts = ?"
                    " WHERE user = ? AND session = ? AND turn_id = ?",
                    (turn_fingerprint(turn), turn.ts, user, session, turn_id),
                )
        if "touched" not in sessions:
            db.execute("ALTER TABLE sessions ADD COLUMN touched REAL")
            db.execute("UPDATE sessions SET touched = ?", (time.time() if now is None else now,))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return True


def _outbox_keyed_by_episode_alone(db: sqlite3.Connection) -> bool:
    """Whether ``outbox`` is a journal's from before per-tenant keys (``episode UNIQUE``)."""
    for _, name, unique, *_ in db.execute("PRAGMA index_list(outbox)").fetchall():
        columns = [row[2] for row in db.execute(f"PRAGMA index_info('{name}')")]
        if unique and columns == ["episode"]:
            return True
    return False


def pack(vector: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.asarray(vector), allow_pickle=False)
    return buf.getvalue()


def unpack(blob: bytes) -> np.ndarray:
    return np.asarray(np.load(io.BytesIO(blob), allow_pickle=False))
