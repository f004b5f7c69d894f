"""Issue 12, F6: the same turn id with other content is a conflict, not a silent "accepted".

The same id with the same actor, type, text and ts stays an idempotent duplicate.
Checked in the intake, through ``Memory`` (also across a restart and after the
episode was stored), on a journal written before fingerprints, and through the
HTTP service (real uvicorn), the CLI and the MCP server.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from episeg.durability.journal import Journal
from episeg.errors import TurnConflictError
from episeg.interfaces import cli_commands
from episeg.interfaces.cli import main
from episeg.interfaces.mcp_server import create_server
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.memory import Memory
from episeg.segmentation.intake import SessionIntake
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.interfaces.helpers import KEY_A, KEYS, LiveServer


def _turn(text: str = "deploy prod 2.14", ts: float = 1.0, **kw: Any) -> Turn:
    return Turn(actor=kw.pop("actor", "user"), text=text, ts=ts, user="alice", **kw)


def _memory(path: Path) -> Memory:
    return Memory(path=path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)


class TestIntake:
    @pytest.mark.parametrize(
        "change",
        [{"text": "deploy prod 2.15"}, {"actor": "assistant"}, {"ts": 2.0}, {"type": "tool-call"}],
    )
    def test_other_content_under_a_seen_id_is_a_conflict(self, change: dict[str, Any]) -> None:
        intake = SessionIntake(session_key=("alice", "default"))
        assert intake.accept(_turn(id="t1"), max_turn_chars=100) is not None
        with pytest.raises(TurnConflictError) as caught:
            intake.accept(
                _turn(id="t1", **{"text": "deploy prod 2.14", **change}), max_turn_chars=100
            )
        assert caught.value.turn_id == "t1" and "'t1'" in str(caught.value)

    def test_the_same_content_is_a_duplicate(self) -> None:
        intake = SessionIntake(session_key=("alice", "default"))
        intake.accept(_turn(id="t1"), max_turn_chars=100)
        assert intake.accept(_turn(id="t1"), max_turn_chars=100) is None
        assert intake.duplicates == 1

    def test_an_id_without_a_fingerprint_can_only_be_a_duplicate(self) -> None:
        intake = SessionIntake(session_key=("alice", "default"))
        intake.remember(["t1"])  # as resumed from a journal written before fingerprints
        assert intake.accept(_turn(text="anything at all", id="t1"), max_turn_chars=100) is None


class TestMemory:
    def test_conflict_records_nothing_and_survives_restart_and_storage(
        self, tmp_path: Path
    ) -> None:
        memory = _memory(tmp_path)
        memory.observe(_turn(id="t1"))
        before = memory.journal.counts()
        with pytest.raises(TurnConflictError):
            memory.observe(_turn("something else", id="t1"))
        assert memory.journal.counts() == before
        assert memory.observe(_turn(id="t1")) == []  # unchanged: a duplicate
        memory.flush()  # the episode is stored; its turns leave the journal
        memory.close()
        again = _memory(tmp_path)
        with pytest.raises(TurnConflictError):
            again.observe(_turn("something else", id="t1"))
        assert again.observe(_turn(id="t1")) == []
        assert again.segmenter.stats["duplicates"] == 1
        assert [t.text for e in again.episodes("alice") for t in e.turns] == ["deploy prod 2.14"]
        again.close()

    def test_resumed_open_turn_keeps_its_fingerprint(self, tmp_path: Path) -> None:
        memory = _memory(tmp_path)
        memory.observe(_turn(id="t1"))
        memory.close()
        again = _memory(tmp_path)  # t1 is replayed from the journal, still open
        with pytest.raises(TurnConflictError):
            again.observe(_turn("other", id="t1"))
        again.close()


_OLD_SCHEMA = """
CREATE TABLE sessions (user TEXT NOT NULL, session TEXT NOT NULL,
    last_ts REAL, checkpoint TEXT NOT NULL, PRIMARY KEY (user, session));
CREATE TABLE turns (n INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL,
    session TEXT NOT NULL, turn_id TEXT NOT NULL, turn TEXT NOT NULL, vector BLOB NOT NULL,
    judge TEXT, episode TEXT);
CREATE TABLE seen (user TEXT NOT NULL, session TEXT NOT NULL,
    turn_id TEXT NOT NULL, PRIMARY KEY (user, session, turn_id)) WITHOUT ROWID;
CREATE TABLE outbox (n INTEGER PRIMARY KEY AUTOINCREMENT,
    episode TEXT NOT NULL UNIQUE, user TEXT NOT NULL, document TEXT NOT NULL,
    metadata TEXT NOT NULL, vector BLOB NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""


class TestJournalUpgrade:
    """A journal written before fingerprints: open turns get theirs, stored ids stay lenient."""

    @pytest.fixture
    def legacy(self, tmp_path: Path) -> Path:
        # write a journal with the current code, then rebuild it in the old schema
        memory = _memory(tmp_path)
        memory.observe(_turn("old stored turn", ts=1.0, id="stored"))
        memory.flush()
        memory.observe(_turn("deploy prod 2.14", ts=2.0, id="open", session="s2"))
        memory.close()
        db_path = tmp_path / "journal.sqlite3"
        db = sqlite3.connect(db_path)
        rows = {
            "sessions": db.execute(
                "SELECT user, session, last_ts, checkpoint FROM sessions"
            ).fetchall(),
            "turns": db.execute("SELECT * FROM turns").fetchall(),
            "seen": db.execute("SELECT user, session, turn_id FROM seen").fetchall(),
            "meta": db.execute("SELECT * FROM meta").fetchall(),
        }
        db.executescript(
            "DROP TABLE sessions; DROP TABLE turns; DROP TABLE seen; DROP TABLE outbox;"
            "DROP TABLE meta;" + _OLD_SCHEMA
        )
        for table, values in rows.items():
            for row in values:
                marks = ", ".join("?" * len(row))
                db.execute(f"INSERT INTO {table} VALUES ({marks})", row)
        db.commit()
        db.close()
        return tmp_path

    def test_upgrade_fills_what_it_can(self, legacy: Path) -> None:
        journal = Journal(legacy / "journal.sqlite3")
        seen = {s.session: dict(s.seen) for s in journal.sessions()}
        assert seen["default"] == {"stored": None}  # its turn is gone: content unknown
        assert seen["s2"]["open"] is not None
        assert journal.seen_times("alice", "s2", ["open"]) == {"open": 2.0}
        assert journal.idle_sessions(before=float("inf")) == [("alice", "s2")]
        journal.close()

    def test_old_ids_stay_duplicates_and_open_ones_detect_conflicts(self, legacy: Path) -> None:
        memory = _memory(legacy)
        assert memory.observe(_turn("new text under an old id", ts=5.0, id="stored")) == []
        with pytest.raises(TurnConflictError):
            memory.observe(_turn("other", ts=2.0, id="open", session="s2"))
        assert memory.observe(_turn("deploy prod 2.14", ts=2.0, id="open", session="s2")) == []
        memory.close()

    def test_upgrade_is_kept(self, legacy: Path) -> None:
        Journal(legacy / "journal.sqlite3").close()
        db = sqlite3.connect(legacy / "journal.sqlite3")
        columns = {row[1] for row in db.execute("PRAGMA table_info(seen)")}
        db.close()
        assert {"fingerprint", "ts"} <= columns
        journal = Journal(legacy / "journal.sqlite3")  # a second open changes nothing
        assert journal.counts()["seen"] == 2
        assert {s.session: dict(s.seen) for s in journal.sessions()}["default"] == {"stored": None}
        journal.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, Memory]]:
    memory = open_memory(tmp_path, embedder=HashingEmbedder(dim=64))
    server = LiveServer(create_app(memory, KEYS))
    yield server, memory
    server.stop()
    memory.close()


@pytest.mark.slow
class TestHttp:
    """Through a real uvicorn server: 409 with the id, batches all-or-nothing."""

    def test_single_post_conflict_is_409(self, served: tuple[LiveServer, Memory]) -> None:
        server, _ = served
        turn = {"actor": "user", "text": "deploy prod", "ts": 1.0, "id": "t1"}
        with server.client(KEY_A) as c:
            assert c.post("/v1/turns", json=turn).status_code == 200
            again = c.post("/v1/turns", json=turn)
            clash = c.post("/v1/turns", json={**turn, "text": "deploy staging"})
        assert again.status_code == 200 and again.json()["duplicates"] == ["t1"]
        assert clash.status_code == 409, clash.text
        assert clash.json()["turn_id"] == "t1" and "already recorded" in clash.json()["detail"]

    def test_resend_without_ts_is_a_duplicate(self, served: tuple[LiveServer, Memory]) -> None:
        server, _ = served
        turn = {"actor": "user", "text": "deploy prod", "id": "t1"}
        with server.client(KEY_A) as c:
            first = c.post("/v1/turns", json=turn)
            again = c.post("/v1/turns:batch", json=[turn, {**turn, "id": "t2"}])
            clash = c.post("/v1/turns", json={**turn, "text": "other"})
        assert first.status_code == 200 and again.status_code == 200, again.text
        assert again.json()["duplicates"] == ["t1"] and again.json()["accepted"] == 1
        assert clash.status_code == 409

    @pytest.mark.parametrize("inside", [False, True])
    def test_batch_with_a_conflict_commits_nothing(
        self, served: tuple[LiveServer, Memory], inside: bool
    ) -> None:
        server, memory = served
        base = {"actor": "user", "ts": 1.0}
        with server.client(KEY_A) as c:
            if not inside:
                c.post("/v1/turns", json={**base, "text": "first", "id": "a"})
            before = memory.journal.counts()
            batch = [
                {**base, "text": "fresh", "id": "b", "ts": 2.0},
                {**base, "text": "first" if inside else "changed", "id": "a", "ts": 3.0},
            ]
            if inside:
                batch.insert(0, {**base, "text": "first", "id": "a", "ts": 1.0})
            answer = c.post("/v1/turns:batch", json=batch)
        assert answer.status_code == 409, answer.text
        assert answer.json()["turn_id"] == "a"
        assert memory.journal.counts() == before  # not even the fresh turn "b"

    def test_messages_conflict(self, served: tuple[LiveServer, Memory]) -> None:
        server, _ = served
        message = {"role": "user", "content": "deploy prod", "id": "m1"}
        with server.client(KEY_A) as c:
            c.post("/v1/messages", json={"messages": [message]})
            again = c.post("/v1/messages", json={"messages": [message]})
            clash = c.post("/v1/messages", json={"messages": [{**message, "content": "x"}]})
        assert again.status_code == 200 and again.json()["duplicates"] == ["m1"]
        assert clash.status_code == 409


class TestCli:
    def test_conflict_names_the_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        monkeypatch.setattr(
            cli_commands,
            "_memory",
            lambda args: open_memory(args.path, embedder=HashingEmbedder(dim=64)),
        )
        lines = [
            {"actor": "user", "text": "deploy prod", "ts": 1, "id": "t1"},
            {"actor": "assistant", "text": "done", "ts": 2, "id": "t2"},
            {"actor": "user", "text": "deploy prod", "ts": 1, "id": "t1"},
            {"actor": "user", "text": "deploy staging", "ts": 3, "id": "t1"},
        ]
        source = tmp_path / "t.jsonl"
        source.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
        code = main(["ingest", str(source), "--path", str(tmp_path / "m"), "--progress-every", "0"])
        err = capsys.readouterr().err
        assert code == 2 and "line 4" in err and "'t1'" in err and "Traceback" not in err


class TestMcp:
    def test_conflict_is_a_tool_error(self, tmp_path: Path) -> None:
        memory = _memory(tmp_path)
        server = create_server(memory, "alice")

        async def run() -> list[Any]:
            async with Client(server) as client:
                args = {"actor": "user", "text": "deploy prod", "ts": 1.0, "id": "t1"}
                return [
                    await client.call_tool("observe_turn", args),
                    await client.call_tool("observe_turn", args),
                    await client.call_tool("observe_turn", {**args, "text": "other"}),
                ]

        first, again, clash = asyncio.run(run())
        assert not first.is_error and not again.is_error
        assert clash.is_error and "already recorded" in clash.content[0].text
        memory.close()

    def test_resend_without_ts_is_a_duplicate(self, tmp_path: Path) -> None:
        memory = _memory(tmp_path)
        server = create_server(memory, "alice")

        async def run() -> list[Any]:
            async with Client(server) as client:
                turn = {"actor": "user", "text": "deploy prod", "id": "t1"}
                message = {"role": "user", "content": "deploy prod", "id": "m1"}
                return [
                    await client.call_tool("observe_turn", turn),
                    await client.call_tool("observe_turn", turn),
                    await client.call_tool("observe_messages", {"messages": [message]}),
                    await client.call_tool("observe_messages", {"messages": [message]}),
                ]

        answers = asyncio.run(run())
        assert not any(a.is_error for a in answers), [a.content for a in answers]
        assert memory.journal.counts()["seen"] == 2
        memory.close()
