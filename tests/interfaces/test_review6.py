"""Review 6 of the interfaces (F152-F156), through real HTTP in-process and the MCP SDK's client.

- F152: HTTP recall took ``k: true`` as 1, ``"3"`` as 3 and ``max_words: true`` as 1.
- F153: a message naming another user or session was filed under the request's.
- F154: a session name longer than HTTP's 256 characters (MCP, the CLI and the library take
  it) could not be erased or filtered over HTTP.
- F155: an empty session to forget or flush, an edit of nothing, an empty ``used`` list and
  an empty query were silent no-ops over MCP, the CLI and the library (HTTP refused them).
- F156: a valid admin key on a tenant route was told it was "missing or unknown" (401).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from episeg.errors import ArgumentError, EpisodeEditError, RecallArgumentError
from episeg.interfaces.cli import main as cli_main
from episeg.interfaces.mcp_server import create_server
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.interfaces.helpers import KEY_A, KEYS, InProcessServer

KEY_ADMIN = "key-admin-0123456789abcdef"
LONG = "thread-" + "x" * 300


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[InProcessServer, Memory]]:
    memory = open_memory(tmp_path, embedder=HashingEmbedder(dim=64))
    keys: dict[str, Any] = {**KEYS, KEY_ADMIN: {"admin": True}}
    server = InProcessServer(create_app(memory, keys))
    yield server, memory
    server.stop()
    memory.close()


@pytest.mark.parametrize(
    "body",
    [
        {"query": "alps", "k": True},
        {"query": "alps", "k": "3"},
        {"query": "alps", "k": 2.0},
        {"query": "alps", "max_words": True},
        {"query": "alps", "context": False},
        {"query": "alps", "neighbours": "1"},
    ],
)
def test_recall_counts_are_strict(served: tuple[InProcessServer, Memory], body: Any) -> None:
    server, _ = served
    with server.client(KEY_A) as c:
        answer = c.post("/v1/recall", json=body)
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"][-1] in body


def test_a_message_naming_another_user_or_session_is_refused(
    served: tuple[InProcessServer, Memory],
) -> None:
    server, memory = served
    with server.client(KEY_A) as c:
        other_user = [{"role": "user", "content": "note for bob", "user": "bob"}]
        assert c.post("/v1/messages", json={"messages": other_user}).status_code == 403
        other_session = [{"role": "user", "content": "a note", "session": "support-42"}]
        refused = c.post("/v1/messages", json={"messages": other_session})
        assert refused.status_code == 422 and "support-42" in refused.text
        same = [{"role": "user", "content": "mine", "user": "alice", "session": "s"}]
        assert c.post("/v1/messages", json={"messages": same, "session": "s"}).status_code == 200
    assert [(s, t.text) for s, t, _ in memory.journal.open_turns("alice")] == [("s", "mine")]
    assert memory.journal.open_turns("bob") == []


def test_a_long_session_name_can_be_filtered_and_erased(
    served: tuple[InProcessServer, Memory],
) -> None:
    server, memory = served
    memory.observe(Turn(actor="user", text="the alps trip", ts=1.0, user="alice", session=LONG))
    with server.client(KEY_A) as c:
        assert c.post("/v1/flush", json={"session": LONG}).status_code == 200
        found = c.post("/v1/recall", json={"query": "alps trip", "session": LONG})
        assert found.status_code == 200 and len(found.json()["results"]) == 1
        erased = c.delete("/v1/sessions", params={"session": LONG})
        assert erased.status_code == 200 and len(erased.json()["forgotten"]) == 1
    assert memory.episodes("alice") == []


def test_an_admin_key_on_a_tenant_route_is_forbidden_not_unknown(
    served: tuple[InProcessServer, Memory],
) -> None:
    server, _ = served
    with server.client(KEY_ADMIN) as c:
        refused = c.post("/v1/recall", json={"query": "alps"})
        assert refused.status_code == 403 and "admin key" in refused.text
        assert c.get("/v1/admin/tenants").status_code == 200
    with server.client("key-nobody-0123456789abcdef") as c:
        assert c.post("/v1/recall", json={"query": "alps"}).status_code == 401


def test_the_library_refuses_empty_names_queries_and_edits(tmp_path: Path) -> None:
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    memory.observe(Turn(actor="user", text="renew the cert", ts=1.0, user="alice", session="s"))
    (stored,) = memory.flush("alice")
    with pytest.raises(ArgumentError, match="non-empty"):
        memory.forget("alice", session="")
    with pytest.raises(ArgumentError, match="non-empty"):
        memory.flush("alice", "")
    for query in ("", "   "):
        with pytest.raises(RecallArgumentError, match="some text"):
            memory.recall("alice", query)
    with pytest.raises(RecallArgumentError, match="non-empty"):
        memory.recall("alice", "cert", session="")
    with pytest.raises(EpisodeEditError, match="nothing to edit"):
        memory.update_episode("alice", stored.id)
    assert [e.id for e in memory.episodes("alice")] == [stored.id]
    memory.close()
    assert cli_main(["forget", "--user", "alice", "--session", "", "--path", str(tmp_path)]) == 2


@pytest.mark.slow
def test_mcp_refuses_what_http_refuses(tmp_path: Path) -> None:
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    memory.observe(Turn(actor="user", text="renew the cert", ts=1.0, user="alice", session="s"))
    (stored,) = memory.flush("alice")
    cases: list[tuple[str, dict[str, Any]]] = [
        ("forget", {"session": ""}),
        ("flush", {"session": ""}),
        ("update_episode", {"episode_id": stored.id}),
        ("used", {"episode_ids": []}),
        ("recall", {"query": ""}),
        ("observe_messages", {"messages": [{"role": "user", "content": "x", "user": "bob"}]}),
    ]

    async def run() -> list[Any]:
        async with Client(create_server(memory, "alice")) as client:
            return [await client.call_tool(tool, args) for tool, args in cases]

    results = asyncio.run(run())
    assert [r.is_error for r in results] == [True] * len(cases), [r.content for r in results]
    assert [e.id for e in memory.episodes("alice")] == [stored.id]
    assert memory.journal.open_turns("alice") == []
    memory.close()
