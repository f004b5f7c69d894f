"""The outbox is keyed per tenant: an episode id another tenant also uses never costs a write.

Ids a caller chooses (``Memory.store_episodes``, the LangGraph adapter's
``lg:<session>:<key>``) may coincide between tenants. Under the old key
(``outbox.episode UNIQUE``) a second tenant's episode with the id of a first
tenant's waiting episode replaced it in the outbox, and confirming it deleted
the first tenant's journaled turns: the first tenant's episode was lost.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from episeg.durability.journal import Journal
from episeg.durability.journal_file import upgrade
from episeg.memory import Memory
from episeg.segmentation.checkpoint import SessionCheckpoint
from episeg.store import ChromaBackend
from episeg.testing import ChromaServer, HashingEmbedder, InMemoryBackend
from episeg.types import Episode, Turn

from .helpers import one_turn_episode as _episode

_OLD_OUTBOX = (
    "(n INTEGER PRIMARY KEY AUTOINCREMENT, episode TEXT NOT NULL UNIQUE, user TEXT NOT NULL,"
    " document TEXT NOT NULL, metadata TEXT NOT NULL, vector BLOB NOT NULL)"
)


def _journal_with(path: Path, *episodes: Episode) -> Journal:
    """A journal holding each episode's turn (open, then closed into the outbox)."""
    journal = Journal(path)
    for ep in episodes:
        (turn,) = ep.turns
        cp = SessionCheckpoint(user=ep.user, session=ep.session, seq=0, position=0)
        journal.record(turn, np.ones(2, np.float32), judge=None, closed=(), checkpoint=cp)
        journal.close_episodes([ep])
    return journal


def _unique_keys(db: sqlite3.Connection) -> list[list[str]]:
    keys = []
    for _, name, unique, *_ in db.execute("PRAGMA index_list(outbox)").fetchall():
        if unique:
            keys.append([row[2] for row in db.execute(f"PRAGMA index_info('{name}')")])
    return keys


def _turns_of(journal: Journal, user: str) -> list[str]:
    rows = journal._db.execute("SELECT turn_id FROM turns WHERE user = ?", (user,)).fetchall()
    return [r[0] for r in rows]


class TestJournal:
    def test_two_tenants_wait_with_the_same_id_and_confirm_drops_only_one(
        self, tmp_path: Path
    ) -> None:
        a, b = (
            _episode("alice", "note-1", "alice's note"),
            _episode("bob", "note-1", "bob's"),
        )
        journal = _journal_with(tmp_path / "j.sqlite3", a, b)
        assert [(e.user, e.summary) for e in journal.pending()] == [
            ("alice", "alice's note"),
            ("bob", "bob's"),
        ]
        journal.confirm("bob", "note-1")
        assert [(e.user, e.summary) for e in journal.pending()] == [("alice", "alice's note")]
        assert _turns_of(journal, "alice") == ["t0"] and _turns_of(journal, "bob") == []

    def test_a_journal_keyed_by_episode_alone_is_rekeyed_with_its_rows_kept(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "j.sqlite3"
        first, second = (
            _episode("alice", "e1", "first"),
            _episode("carol", "e2", "second"),
        )
        _journal_with(path, first, second).close()
        db = sqlite3.connect(path)  # make it the journal an older episeg wrote
        db.executescript(
            f"CREATE TABLE old {_OLD_OUTBOX}; INSERT INTO old SELECT * FROM outbox;"
            " DROP TABLE outbox; ALTER TABLE old RENAME TO outbox;"
        )
        db.close()

        journal = Journal(path)
        assert [(e.user, e.id) for e in journal.pending()] == [("alice", "e1"), ("carol", "e2")]
        assert _unique_keys(journal._db) == [["user", "episode"]]
        journal.close_episodes([_episode("bob", "e1", "bob's e1")], journaled=False)
        assert [(e.user, e.id) for e in journal.pending()] == [
            ("alice", "e1"),
            ("carol", "e2"),
            ("bob", "e1"),
        ]
        assert upgrade(journal._db) is False  # nothing left to upgrade
        journal.close()
        fresh = Journal(tmp_path / "new.sqlite3")
        assert _unique_keys(fresh._db) == [["user", "episode"]]  # a new journal has the new key


def test_a_tenants_waiting_episode_survives_another_tenant_storing_its_id(tmp_path: Path) -> None:
    """In process: alice's conversation waits for the store; bob stores an episode with its id."""
    backend = InMemoryBackend()
    memory = Memory(
        path=tmp_path,
        embedder=HashingEmbedder(),
        judge=None,
        scorer=None,
        backend=backend,
        retry_interval=0.0,
    )
    memory.observe(
        Turn(
            actor="user",
            text="alice: the deploy key is in vault",
            ts=1.0,
            user="alice",
            session="s",
        )
    )
    backend.down = True
    assert memory.flush("alice") == []
    (waiting,) = memory.pending_writes()
    backend.down = False
    stored = memory.store_episodes([_episode("bob", waiting.id, "bob's own note")])
    assert [(e.user, e.id) for e in stored] == [("bob", waiting.id)]
    assert [(e.user, e.id) for e in memory.pending_writes()] == [("alice", waiting.id)]
    assert [(e.user, e.id) for e in memory.retry_pending()] == [("alice", waiting.id)]
    alice = memory.episode("alice", waiting.id)
    assert [t.text for t in alice.turns] == ["alice: the deploy key is in vault"]
    assert [t.text for t in memory.episode("bob", waiting.id).turns] == ["bob's own note"]
    assert memory.pending_writes() == []


@pytest.mark.slow
def test_same_ids_of_two_tenants_both_arrive_after_a_chroma_outage(tmp_path: Path) -> None:
    """Through a real ``chroma run`` server that is killed while both tenants store."""
    server = ChromaServer(tmp_path / "srv", start=False)
    server.start()
    try:
        memory = Memory(
            path=tmp_path / "mem",
            embedder=HashingEmbedder(),
            judge=None,
            scorer=None,
            backend=ChromaBackend.http("127.0.0.1", server.port),
            retry_interval=0.0,
        )
        server.kill()
        for user in ("alice", "bob"):
            assert (
                memory.store_episodes([_episode(user, "lg:prefs:editor", f"{user} uses vim")]) == []
            )
        assert sorted(e.user for e in memory.pending_writes()) == ["alice", "bob"]
        server.start()
        assert sorted(e.user for e in memory.retry_pending()) == ["alice", "bob"]
        for user in ("alice", "bob"):
            (turn,) = memory.episode(user, "lg:prefs:editor").turns
            assert turn.text == f"{user} uses vim"
        assert memory.pending_writes() == []
    finally:
        server.kill()
