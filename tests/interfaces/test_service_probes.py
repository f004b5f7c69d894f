"""Issue 12's probe failures of the HTTP service (F5, F9, F11, F19, F20), through real HTTP.

The app runs in-process (``InProcessServer``: Starlette's TestClient, no socket)
over a real ``Memory`` (SQLite journal, embedded Chroma); only the embedder is the
fast hashing one. ``test_refusal_knows_an_evicted_sessions_past`` runs the same
app under uvicorn on a loopback port (``LiveServer``, real HTTP).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from episeg.errors import JournalError
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.interfaces.service_errors import JournalHealth, json_safe
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from tests.interfaces.helpers import KEY_A, KEYS, InProcessServer, LiveServer


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[InProcessServer, Memory]]:
    memory = open_memory(tmp_path, embedder=HashingEmbedder(dim=64))
    server = InProcessServer(create_app(memory, KEYS))
    yield server, memory
    server.stop()
    memory.close()


@pytest.fixture(scope="module")
def refusing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[InProcessServer, Memory]]:
    """One app for the tests whose requests are refused: each checks nothing was recorded."""
    memory = open_memory(tmp_path_factory.mktemp("refusing"), embedder=HashingEmbedder(dim=64))
    server = InProcessServer(create_app(memory, KEYS))
    yield server, memory
    server.stop()
    memory.close()


def _post(server: InProcessServer, path: str, raw: bytes) -> Any:
    with server.client(KEY_A) as c:
        return c.post(path, content=raw, headers={"content-type": "application/json"})


class TestUnrepresentableInput:
    """F9: values JSON cannot carry back were echoed in the 422 and made it a 500."""

    @pytest.mark.parametrize(
        "raw",
        [
            b'{"actor": "user", "text": "x", "ts": NaN}',
            b'{"actor": "user", "text": "x", "ts": Infinity}',
            b'{"actor": "user", "text": "x", "ts": -Infinity}',
            b'{"actor": "user", "text": "x", "ts": 1e400}',
            b'{"actor": "user", "text": "x\\udc80"}',
            b'{"actor": "user", "text": "x", "session": "s\\udc80"}',
            b'{"actor": "user", "text": "x", "id": "\\ud800"}',
            b'[{"actor": "user", "text": "x", "ts": NaN}]',
        ],
    )
    def test_422_not_500(self, refusing: tuple[InProcessServer, Memory], raw: bytes) -> None:
        server, memory = refusing
        seen = memory.journal.counts()["seen"]
        path = "/v1/turns:batch" if raw.startswith(b"[") else "/v1/turns"
        answer = _post(server, path, raw)
        assert answer.status_code == 422, answer.text
        assert answer.json()["detail"]
        assert memory.journal.counts()["seen"] == seen

    def test_json_safe_keeps_ordinary_values(self) -> None:
        value = {"a": [1, 2.5, "ok", None, True]}
        assert json_safe(value) == value


class TestStrictTimes:
    """F20: JSON ``true`` or ``"12"`` is not a time."""

    @pytest.mark.parametrize("ts", [b"true", b'"12"', b"[]", b"{}"])
    def test_refused(self, refusing: tuple[InProcessServer, Memory], ts: bytes) -> None:
        server, memory = refusing
        seen = memory.journal.counts()["seen"]
        answer = _post(server, "/v1/turns", b'{"actor": "user", "text": "x", "ts": ' + ts + b"}")
        assert answer.status_code == 422, answer.text
        assert memory.journal.counts()["seen"] == seen
        assert answer.json()["detail"][0]["loc"] == ["body", "ts"]

    def test_integers_are_still_seconds(self, served: tuple[InProcessServer, Memory]) -> None:
        server, _ = served
        answer = _post(server, "/v1/turns", b'{"actor": "user", "text": "x", "ts": 12}')
        assert answer.status_code == 200, answer.text


class TestInvalidBodies:
    """F19: every undecodable body is a 422 in FastAPI's shape, as docs/INTERFACES.md says."""

    @pytest.mark.parametrize("raw", [b"{not json", b'\xff\xfe{"a": 1}', b'{"text": "\xff"}'])
    @pytest.mark.parametrize("path", ["/v1/turns", "/v1/turns:batch", "/v1/flush", "/v1/recall"])
    def test_422(self, refusing: tuple[InProcessServer, Memory], raw: bytes, path: str) -> None:
        server, memory = refusing
        seen = memory.journal.counts()["seen"]
        answer = _post(server, path, raw)
        assert answer.status_code == 422, answer.text
        assert memory.journal.counts()["seen"] == seen
        assert isinstance(answer.json()["detail"], list)


class TestBatchAllOrNothing:
    """F5: a refused batch commits none of its turns; the answer names duplicates."""

    def test_a_bad_turn_late_in_the_batch_commits_nothing(
        self, served: tuple[InProcessServer, Memory]
    ) -> None:
        server, memory = served
        batch = [
            {"actor": "user", "text": "first", "ts": 5, "id": "a"},
            {"actor": "user", "text": "second", "ts": 6, "id": "b"},
            {"actor": "user", "text": "back in time", "ts": 1, "id": "c"},
        ]
        with server.client(KEY_A) as c:
            refused = c.post("/v1/turns:batch", json=batch)
            assert refused.status_code == 422, refused.text
            assert memory.journal.counts()["seen"] == 0
            batch[2]["ts"] = 7
            first = c.post("/v1/turns:batch", json=batch)
            again = c.post(
                "/v1/turns:batch", json=[*batch, {"actor": "user", "text": "d", "ts": 8}]
            )
        assert first.json()["accepted"] == 3 and first.json()["duplicates"] == []
        assert again.json()["accepted"] == 1 and again.json()["duplicates"] == ["a", "b", "c"]
        assert memory.journal.counts()["seen"] == 4

    def test_refusal_knows_an_evicted_sessions_past(self, tmp_path: Path) -> None:
        memory = Memory(
            path=tmp_path, embedder=HashingEmbedder(dim=16), judge=None, scorer=None, max_sessions=1
        )
        server = LiveServer(create_app(memory, KEYS))
        try:
            with server.client(KEY_A) as c:
                ok = c.post(
                    "/v1/turns", json={"actor": "user", "text": "x", "ts": 50, "session": "s"}
                )
                assert ok.status_code == 200
                c.post("/v1/turns", json={"actor": "user", "text": "y", "ts": 60, "session": "t"})
                batch = [
                    {"actor": "user", "text": "z", "ts": 70, "session": "t"},
                    {"actor": "user", "text": "w", "ts": 10, "session": "s"},  # before 50
                ]
                assert c.post("/v1/turns:batch", json=batch).status_code == 422
            assert memory.journal.counts()["seen"] == 2
        finally:
            server.stop()
            memory.close()


class TestJournalFailure:
    """F11: a journal that cannot write answers 503 + Retry-After and fails the health check."""

    def test_503_and_unhealthy_until_a_write_succeeds(
        self, served: tuple[InProcessServer, Memory], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        server, memory = served
        real = memory.journal.record

        def full(*args: Any, **kwargs: Any) -> None:
            raise JournalError("journal: recording turn failed: database or disk is full")

        monkeypatch.setattr(memory.journal, "record", full)
        with server.client(KEY_A) as c:
            refused = c.post("/v1/turns", json={"actor": "user", "text": "x", "ts": 1})
            assert refused.status_code == 503, refused.text
            assert refused.headers["Retry-After"] == "5"
            assert "disk is full" in refused.json()["detail"]
            health = c.get("/v1/healthz")
            assert health.status_code == 503 and "disk is full" in health.json()["detail"]
            monkeypatch.setattr(memory.journal, "record", real)
            again = c.post("/v1/turns", json={"actor": "user", "text": "x", "ts": 1})
            assert again.status_code == 200, again.text
            assert c.get("/v1/healthz").status_code == 200

    def test_failure_is_forgotten_after_a_while(self, tmp_path: Path) -> None:
        now = [0.0]
        health = JournalHealth(tmp_path, clock=lambda: now[0])
        health.failed("disk is full")
        assert health.problem() == "journal write failed: disk is full"
        now[0] = 31.0
        assert health.problem() is None
