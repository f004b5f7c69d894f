"""Deeply nested JSON bodies get a 422, never a 500 or a reset connection (issue 12).

A ~1 KB body nested a few hundred levels deep used to run FastAPI's 422 echo
(``json_safe``, ``jsonable_encoder``) into Python's recursion limit: a 500 at
depth 500, a reset connection at 900. The real app runs under uvicorn on a
loopback port (``LiveServer``); only the embedder is the fast hashing one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.interfaces.service_depth import MAX_JSON_DEPTH, nesting_depth
from episeg.interfaces.service_errors import CUT, MAX_ECHO_DEPTH, json_safe
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from tests.interfaces.helpers import KEY_A, KEYS, LiveServer, live_memory

JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Memory]]:
    memory = open_memory(tmp_path_factory.mktemp("deep"), embedder=HashingEmbedder(dim=64))
    server = LiveServer(create_app(memory, KEYS, max_body_bytes=64 * 1024))
    yield server, memory
    server.stop()
    memory.close()


def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


def _alice_open(memory: Memory) -> list[Any]:
    return memory.journal.open_turns("alice")


class TestDeepBodies:
    @pytest.mark.parametrize("depth", [MAX_JSON_DEPTH, 300, 500, 900, 20_000])
    @pytest.mark.parametrize(
        ("method", "path", "template"),
        [
            ("POST", "/v1/turns", '{"actor": "user", "text": %s}'),
            ("POST", "/v1/turns:batch", '[{"actor": "user", "text": "x", "id": %s}]'),
            ("POST", "/v1/messages", '{"messages": [{"role": "user", "content": "hi", "x": %s}]}'),
            ("POST", "/v1/recall", '{"query": %s}'),
            ("POST", "/v1/flush", '{"session": %s}'),
            ("PATCH", "/v1/episodes/e1", '{"summary": %s}'),
        ],
    )
    def test_a_deep_body_is_a_422_and_records_nothing(
        self, served: tuple[LiveServer, Memory], method: str, path: str, template: str, depth: int
    ) -> None:
        server, memory = served
        body = (template % _nest(depth)).encode()
        with server.client(KEY_A) as http:
            answer = http.request(method, path, content=body, headers=JSON)
            assert answer.status_code == 422, answer.text[:300]
            detail = answer.json()["detail"]
            assert isinstance(detail, list) and detail[0]["loc"][0] == "body"
            if nesting_depth(body) > MAX_JSON_DEPTH:
                assert detail[0]["type"] == "json_too_deep"
                assert f"deeper than {MAX_JSON_DEPTH} levels" in detail[0]["msg"]
            assert http.get("/v1/healthz").status_code == 200
        assert _alice_open(memory) == []

    def test_nesting_under_the_limit_is_still_accepted(
        self, served: tuple[LiveServer, Memory]
    ) -> None:
        server, memory = served
        extra = _nest(MAX_JSON_DEPTH - 3)  # {"messages": [{..., "x": ...}]} adds three levels
        body = '{"messages": [{"role": "user", "content": "hi", "x": %s}], "session": "ok"}'
        with server.client(KEY_A) as http:
            answer = http.post("/v1/messages", content=(body % extra).encode(), headers=JSON)
            assert answer.status_code == 200, answer.text[:300]
            assert answer.json()["accepted"] == 1
            assert http.post("/v1/flush", json={"session": "ok"}).status_code == 200
        assert _alice_open(memory) == []

    def test_the_echoed_input_is_cut_below_the_limit(
        self, served: tuple[LiveServer, Memory]
    ) -> None:
        server, _ = served
        body = '{"actor": "user", "text": ' + _nest(MAX_JSON_DEPTH - 1) + "}"
        with server.client(KEY_A) as http:
            answer = http.post("/v1/turns", content=body.encode(), headers=JSON)
        assert answer.status_code == 422
        assert answer.json()["detail"][0]["loc"] == ["body", "text"]
        assert CUT in answer.text

    @pytest.mark.parametrize("headers", [{}, {"content-type": "application/x-ndjson"}])
    @pytest.mark.parametrize("depth", [900, 30_000])
    def test_a_deep_import_line_is_a_422_naming_the_line(
        self, served: tuple[LiveServer, Memory], headers: dict[str, str], depth: int
    ) -> None:
        server, memory = served
        before = memory.episodes("alice")
        with server.client(KEY_A) as http:
            answer = http.post("/v1/import", content=("[" * depth + "\n").encode(), headers=headers)
            assert answer.status_code == 422, answer.text[:300]
            assert answer.json()["detail"][0]["loc"] == ["body", 1]
            assert answer.json()["detail"][0]["type"] == "export_format"
        assert memory.episodes("alice") == before


class TestHelpers:
    def test_json_safe_cuts_instead_of_recursing_without_bound(self) -> None:
        deep: Any = "leaf"
        for _ in range(20_000):
            deep = [deep]
        safe = json_safe({"input": deep})
        for _ in range(MAX_ECHO_DEPTH - 1):
            safe = safe[0] if isinstance(safe, list) else safe["input"]
        assert safe == [CUT]

    @pytest.mark.parametrize(
        ("body", "depth"),
        [
            (b"", 0),
            (b"42", 0),
            (b'{"a": 1}', 1),
            (b'{"a": [1, {"b": []}]}', 4),
            (b'{"a": "[[[[{{{{"}', 1),  # brackets inside a string do not nest
            (b'{"a": "\\"[[[["}', 1),  # nor after an escaped quote
            (b'{"a": "\\\\", "b": [[]]}', 3),  # an escaped backslash ends nothing
            (b'[{"x": "]]]]"}, [[["\\u005b"]]]]', 4),
            (b"[" * 50_000, 50_000),
        ],
    )
    def test_nesting_depth(self, body: bytes, depth: int) -> None:
        assert nesting_depth(body) == depth


@pytest.fixture
def plain_app(tmp_path: Path) -> Iterator[LiveServer]:
    with live_memory(tmp_path) as (server, _):
        yield server


def test_a_body_that_is_not_json_is_not_scanned(plain_app: LiveServer) -> None:
    """text/plain is not read as JSON by FastAPI, so the depth limit leaves it alone."""
    with plain_app.client(KEY_A) as http:
        answer = http.post(
            "/v1/turns", content=_nest(500).encode(), headers={"content-type": "text/plain"}
        )
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["type"] != "json_too_deep"
