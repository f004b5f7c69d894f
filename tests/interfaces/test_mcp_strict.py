"""MCP tool arguments are as strict as the library and HTTP: ``true`` is no number, ``"false"``
no flag (issue 12). ``observe_turn`` took ``ts: true`` as 1.0 (a turn of 1970) and
``update_episode`` ``salience: true`` as 1 and ``pinned: "false"`` as false.

Through the MCP SDK's client (in-memory transport) against the real server.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from episeg.interfaces.mcp_server import create_server
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn

pytestmark = pytest.mark.slow

REFUSED: list[tuple[str, dict[str, Any]]] = [
    ("observe_turn", {"actor": "user", "text": "x", "ts": True}),
    ("observe_turn", {"actor": "user", "text": "x", "ts": False}),
    ("observe_turn", {"actor": "user", "text": "x", "ts": "12"}),
    ("update_episode", {"salience": True}),
    ("update_episode", {"salience": "5"}),
    ("update_episode", {"salience": 5.0}),
    ("update_episode", {"pinned": "false"}),
    ("update_episode", {"pinned": "true"}),
    ("update_episode", {"pinned": 0}),
    ("get_episode", {"full_turns": 1}),
    ("get_episode", {"full_turns": "yes"}),
    ("recall", {"query": "x", "k": True}),
    ("recall", {"query": "x", "k": 2.0}),
    ("recall", {"query": "x", "max_words": "30"}),
    ("recall", {"query": "x", "full_turns": "true"}),
    ("recall", {"query": "x", "min_score": True}),
    ("list_episodes", {"limit": True}),
    ("list_episodes", {"offset": "1"}),
    ("list_episodes", {"include_archived": 1}),
    ("forget", {"everything": "true"}),
    ("forget", {"everything": 1}),
]
ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    ("observe_turn", {"actor": "user", "text": "an int ts is fine", "ts": 2_000_000_000}),
    ("observe_turn", {"actor": "user", "text": "a float ts too", "ts": 2_000_000_001.5}),
    ("update_episode", {"salience": 7, "pinned": False}),
    ("get_episode", {"full_turns": True}),
    ("recall", {"query": "x", "k": 3, "max_words": 30, "full_turns": False, "min_score": 0}),
    ("list_episodes", {"limit": 5, "offset": 0, "include_archived": True}),
]


def _payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path: Path = tmp_path_factory.mktemp("mcp-strict")
    memory = Memory(path=path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    memory.observe(Turn(actor="user", text="renew the TLS cert", ts=1e9, user="alice", session="s"))
    memory.flush()
    target = memory.episodes("alice")[0].id
    server = create_server(memory, "alice")

    async def calls(client: Client, cases: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        results = []
        for tool, args in cases:
            if tool in ("update_episode", "get_episode"):
                args = {"episode_id": target, **args}
            results.append(await client.call_tool(tool, args))
        return results

    async def run() -> dict[str, Any]:
        async with Client(server) as client:
            out: dict[str, Any] = {"refused": await calls(client, REFUSED)}
            got = await client.call_tool("get_episode", {"episode_id": target})
            out["after_refused"] = _payload(got)
            out["open_after_refused"] = memory.journal.open_turns("alice")
            out["stored_after_refused"] = memory.episodes("alice", include_archived=True)
            out["accepted"] = await calls(client, ACCEPTED)
        return out

    out = asyncio.run(run())
    memory.close()
    return out


@pytest.mark.parametrize(("index", "case"), list(enumerate(REFUSED)))
def test_a_loosely_typed_argument_is_a_tool_error(
    answers: dict[str, Any], index: int, case: tuple[str, dict[str, Any]]
) -> None:
    result = answers["refused"][index]
    assert result.is_error, (case, result.content)
    name = next(iter(case[1].keys() - {"query", "actor", "text"}))
    assert name in result.content[0].text


def test_refused_calls_changed_nothing(answers: dict[str, Any]) -> None:
    after = answers["after_refused"]
    assert after["pinned"] is False and after["salience_by_user"] is False
    assert answers["open_after_refused"] == []  # no turn of 1970 (ts: true read as 1.0)
    assert [e.summary for e in answers["stored_after_refused"]] == ["renew the TLS cert"]


@pytest.mark.parametrize(("index", "case"), list(enumerate(ACCEPTED)))
def test_well_typed_arguments_still_work(
    answers: dict[str, Any], index: int, case: tuple[str, dict[str, Any]]
) -> None:
    _payload(answers["accepted"][index])
