"""The MCP server as an agent sees it: spawned over stdio, driven by the MCP SDK's client."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from episeg.interfaces.transcript import read_transcript
from tests.interfaces.helpers import SAMPLE

pytestmark = pytest.mark.slow


def _payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


async def _session(path: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "episeg.interfaces.cli", "mcp", "--user", "alice", "--path", str(path)],
        env=env,
    )
    seen: dict[str, Any] = {"closed": []}
    async with Client(params) as client:
        seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        for turn in read_transcript(SAMPLE):
            result = await client.call_tool(
                "observe_turn",
                {
                    "actor": turn.actor.value,
                    "text": turn.text,
                    "ts": turn.ts,
                    "type": turn.type.value if turn.type else None,
                    "id": turn.id,
                    "session": turn.session,
                },
            )
            seen["closed"] += _payload(result)["closed"]
        seen["flushed"] = _payload(await client.call_tool("flush", {}))["closed"]
        seen["recall"] = _payload(
            await client.call_tool(
                "recall", {"query": "terraform state lock held by the CI runner", "k": 2}
            )
        )
        seen["listed"] = _payload(await client.call_tool("list_episodes", {"limit": 50}))
        seen["bad_actor"] = await client.call_tool("observe_turn", {"actor": "robot", "text": "x"})
        seen["bad_k"] = await client.call_tool("recall", {"query": "x", "k": 0})
        seen["no_user_arg"] = await client.call_tool("list_episodes", {"limit": 5, "user": "bob"})
    return seen


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return asyncio.run(_session(tmp_path_factory.mktemp("mcp")))


class TestMcpServer:
    def test_lists_the_four_tools(self, session: dict[str, Any]) -> None:
        assert session["tools"] == ["flush", "list_episodes", "observe_turn", "recall"]

    def test_observed_turns_become_episodes(self, session: dict[str, Any]) -> None:
        episodes = session["closed"] + session["flushed"]
        assert len(session["closed"]) >= 1 and len(session["flushed"]) == 1
        assert sum(e["turn_count"] for e in episodes) == 20
        assert {e["user"] for e in episodes} == {"alice"}
        assert all(e["salience"]["score"] is not None for e in episodes)
        listed = session["listed"]["episodes"]
        assert sorted(e["id"] for e in listed) == sorted(e["id"] for e in episodes)

    def test_recall_returns_the_right_episode_with_terms(self, session: dict[str, Any]) -> None:
        best = session["recall"]["results"][0]
        assert "lock" in " ".join(t["text"] for t in best["episode"]["turns"])
        assert best["score"] == pytest.approx(
            best["recency"] + best["importance"] + best["similarity"]
        )

    def test_errors_come_back_as_tool_errors(self, session: dict[str, Any]) -> None:
        assert session["bad_actor"].is_error
        assert "unknown actor 'robot'" in session["bad_actor"].content[0].text
        assert session["bad_k"].is_error

    def test_no_tool_accepts_a_user(self, session: dict[str, Any]) -> None:
        # an extra "user" argument is refused or ignored: never another tenant's data
        result = session["no_user_arg"]
        if not result.is_error:
            assert {e["user"] for e in _payload(result)["episodes"]} == {"alice"}
