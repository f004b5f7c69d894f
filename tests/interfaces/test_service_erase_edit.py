"""Issue 12: every session the API accepts can be erased through it; a blank summary is a 422.

``DELETE /v1/sessions/{session}`` could not reach a session named "a/b", "." or
"..": the router answered a generic 404 and the data stayed. ``PATCH
/v1/episodes/{id}`` answered 400 for a blank summary where the docs say 422, and
before the 404 of an unknown id. The real app under uvicorn on a loopback port.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest

from episeg.client import AsyncClient, Client
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from tests.interfaces.helpers import KEY_A, KEYS, LiveServer

NAMES = ["a/b", ".", "..", "x%2Fy", "sp ace", "q?x=1&y=2", "#frag", "a/../b", "/", "é/ü"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Memory]]:
    memory = open_memory(tmp_path_factory.mktemp("erase"), embedder=HashingEmbedder(dim=64))
    server = LiveServer(create_app(memory, KEYS))
    yield server, memory
    server.stop()
    memory.close()


def _leftovers(memory: Memory, session: str) -> list[str]:
    open_ = [s for s, _, _ in memory.journal.open_turns("alice") if s == session]
    stored = [e.id for e in memory.episodes("alice", include_archived=True) if e.session == session]
    return open_ + stored


def _seed(client: Client, session: str, *, stored: bool) -> None:
    client.observe({"actor": "user", "text": f"secret in {session}", "session": session})
    if stored:
        client.flush(session)
    client.observe({"actor": "user", "text": f"open in {session}", "session": session})


class TestForgetSession:
    @pytest.mark.parametrize("name", NAMES)
    def test_the_client_erases_every_session_name(
        self, served: tuple[LiveServer, Memory], name: str
    ) -> None:
        server, memory = served
        with Client(server.url, KEY_A) as alice:
            _seed(alice, name, stored=True)
            assert _leftovers(memory, name)
            gone = alice.forget_session(name)
        assert gone["session"] == name and len(gone["forgotten"]) == 1 and gone["turns"] >= 1
        assert _leftovers(memory, name) == []

    @pytest.mark.parametrize("name", ["a/b", ".."])
    def test_the_async_client_too(self, served: tuple[LiveServer, Memory], name: str) -> None:
        server, memory = served
        with Client(server.url, KEY_A) as alice:
            _seed(alice, name, stored=False)

        async def forget() -> None:
            async with AsyncClient(server.url, KEY_A) as alice:
                assert (await alice.forget_session(name))["session"] == name

        asyncio.run(forget())
        assert _leftovers(memory, name) == []

    @pytest.mark.parametrize("path", ["/v1/sessions/a/b", "/v1/sessions/a%2Fb"])
    def test_the_path_form_still_erases_a_name_with_a_slash(
        self, served: tuple[LiveServer, Memory], path: str
    ) -> None:
        server, memory = served
        with Client(server.url, KEY_A) as alice:
            _seed(alice, "a/b", stored=False)
        with server.client(KEY_A) as http:
            answer = http.delete(path)
        assert answer.status_code == 200 and answer.json()["session"] == "a/b"
        assert _leftovers(memory, "a/b") == []

    @pytest.mark.parametrize("query", ["", "?session="])  # a long name is erasable (F154)
    def test_a_missing_or_malformed_session_is_a_422(
        self, served: tuple[LiveServer, Memory], query: str
    ) -> None:
        server, _ = served
        with server.client(KEY_A) as http:
            answer = http.delete("/v1/sessions" + query)
        assert answer.status_code == 422
        assert answer.json()["detail"][0]["loc"] == ["query", "session"]

    def test_a_key_is_needed(self, served: tuple[LiveServer, Memory]) -> None:
        server, _ = served
        with server.client() as http:
            assert http.delete("/v1/sessions", params={"session": "a/b"}).status_code == 401

    def test_the_openapi_names_the_query_form(self, served: tuple[LiveServer, Memory]) -> None:
        server, _ = served
        paths = httpx.get(server.url + "/openapi.json").json()["paths"]
        params = paths["/v1/sessions"]["delete"]["parameters"]
        assert [(p["name"], p["in"], p["required"]) for p in params] == [("session", "query", True)]


@pytest.fixture(scope="module")
def target(served: tuple[LiveServer, Memory]) -> str:
    server, _ = served
    with Client(server.url, KEY_A) as alice:
        alice.observe({"actor": "user", "text": "renew the TLS cert", "session": "edit"})
        return alice.flush("edit")["closed"][0]["id"]


class TestBlankSummary:
    @pytest.mark.parametrize("summary", ["   ", "\n", "\t \r\n", "\udc80", "ok \udfff"])
    def test_a_blank_or_invalid_summary_is_a_422_and_changes_nothing(
        self, served: tuple[LiveServer, Memory], target: str, summary: str
    ) -> None:
        server, _ = served
        with server.client(KEY_A) as http:
            before = http.get(f"/v1/episodes/{target}").json()
            answer = http.patch(
                f"/v1/episodes/{target}",
                content=_json_with_escapes({"summary": summary, "pinned": True}),
                headers={"content-type": "application/json"},
            )
            assert answer.status_code == 422, answer.text
            assert answer.json()["detail"][0]["loc"] == ["body", "summary"]
            assert http.get(f"/v1/episodes/{target}").json() == before

    def test_a_malformed_edit_of_an_unknown_id_is_a_422_too(
        self, served: tuple[LiveServer, Memory]
    ) -> None:
        """The body is checked first, as for every malformed body (salience 11 too)."""
        server, _ = served
        with server.client(KEY_A) as http:
            assert http.patch("/v1/episodes/nope", json={"summary": "  "}).status_code == 422
            assert http.patch("/v1/episodes/nope", json={"salience": 11}).status_code == 422
            assert http.patch("/v1/episodes/nope", json={"summary": "fine"}).status_code == 404

    def test_a_summary_with_text_is_still_taken(
        self, served: tuple[LiveServer, Memory], target: str
    ) -> None:
        server, _ = served
        with server.client(KEY_A) as http:
            answer = http.patch(f"/v1/episodes/{target}", json={"summary": "  TLS renewal  "})
        assert answer.status_code == 200 and answer.json()["summary"] == "  TLS renewal  "


def _json_with_escapes(body: dict[str, object]) -> bytes:
    """JSON with every non-ASCII character escaped: a lone surrogate as ``\\udc80``."""
    return json.dumps(body).encode("ascii")
