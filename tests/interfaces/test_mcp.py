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

from episeg.interfaces.mcp_server import create_server
from episeg.interfaces.runtime import package_version
from episeg.interfaces.transcript import read_transcript
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
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
        seen["compact"] = await client.call_tool("recall", {"query": "deploy", "k": 5})
        seen["full"] = await client.call_tool(
            "recall", {"query": "deploy", "k": 5, "full_turns": True}
        )
        seen["schemas"] = {t.name: t for t in (await client.list_tools()).tools}
        seen["listed"] = _payload(await client.call_tool("list_episodes", {"limit": 50}))
        seen["bad_actor"] = await client.call_tool("observe_turn", {"actor": "robot", "text": "x"})
        seen["bad_k"] = await client.call_tool("recall", {"query": "x", "k": 0})
        seen["no_user_arg"] = await client.call_tool("list_episodes", {"limit": 5, "user": "bob"})
    return seen


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return asyncio.run(_session(tmp_path_factory.mktemp("mcp")))


class TestMcpServer:
    def test_lists_the_tools(self, session: dict[str, Any]) -> None:
        assert session["tools"] == [
            "flush",
            "forget",
            "get_episode",
            "list_episodes",
            "observe_messages",
            "observe_turn",
            "recall",
            "unarchive",
            "update_episode",
            "used",
        ]

    def test_schemas_have_enums_and_outputs(self, session: dict[str, Any]) -> None:
        tools = session["schemas"]
        props = tools["observe_turn"].input_schema["properties"]
        assert props["actor"]["enum"] == ["user", "assistant", "tool", "system"]
        turn_type = json.dumps(props["type"])
        assert "tool-error" in turn_type and "enum" in turn_type
        for tool in tools.values():
            assert tool.output_schema is not None, tool.name
        hit = tools["recall"].output_schema["$defs"]["Hit"]["properties"]
        assert {"score", "similarity", "recency", "importance", "matched"} <= set(hit)

    def test_recall_is_compact_unless_full_turns_are_asked(self, session: dict[str, Any]) -> None:
        compact, full = session["compact"], session["full"]
        compact_size = len(compact.content[0].text)
        full_size = len(full.content[0].text)
        assert all(r["episode"]["turns"] is None for r in _payload(compact)["results"])
        assert all(r["episode"]["turns"] for r in _payload(full)["results"])
        # the matched turns are capped at max_words=300 across hits; whole turn lists only if asked
        assert compact_size < 0.75 * full_size and compact_size < 6000, (compact_size, full_size)

    def test_observed_turns_become_episodes(self, session: dict[str, Any]) -> None:
        episodes = session["closed"] + session["flushed"]
        assert len(session["closed"]) >= 1 and len(session["flushed"]) == 1
        assert sum(e["turn_count"] for e in episodes) == 20
        assert {e["user"] for e in episodes} == {"alice"}
        assert all(1 <= e["salience"] <= 10 for e in episodes)
        listed = session["listed"]["episodes"]
        assert sorted(e["id"] for e in listed) == sorted(e["id"] for e in episodes)

    def test_recall_returns_the_right_episode_with_terms(self, session: dict[str, Any]) -> None:
        best = session["recall"]["results"][0]
        assert "lock" in " ".join(t["text"] for t in best["matched"]) + best["episode"]["summary"]
        assert best["score"] == pytest.approx(
            best["recency"] + best["importance"] + best["similarity"] + best["reinforcement"]
        )

    def test_errors_come_back_as_tool_errors(self, session: dict[str, Any]) -> None:
        assert session["bad_actor"].is_error
        assert "Input should be 'user'" in session["bad_actor"].content[0].text  # the enum
        assert session["bad_k"].is_error

    def test_no_tool_accepts_a_user(self, session: dict[str, Any]) -> None:
        # an extra "user" argument is refused or ignored: never another tenant's data
        result = session["no_user_arg"]
        if not result.is_error:
            assert {e["user"] for e in _payload(result)["episodes"]} == {"alice"}


class TestMcpInProcess:
    """The same server over the SDK's in-memory transport: forget, used, tool errors."""

    def test_the_server_names_its_version(self, tmp_path: Path) -> None:
        """`initialize` answered `serverInfo.version` "" (the SDK's default)."""
        memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)

        async def run() -> Any:
            async with Client(create_server(memory, "alice")) as client:
                return client.server_info

        try:
            info = asyncio.run(run())
        finally:
            memory.close()
        assert info.name == "episeg"
        assert info.version == package_version() and info.version != ""

    def test_forget_used_and_errors(self, tmp_path: Path) -> None:
        memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
        server = create_server(memory, "alice")

        async def run() -> dict[str, Any]:
            out: dict[str, Any] = {}
            async with Client(server) as client:
                for i, text in enumerate(["deploy prod 2.14", "done <episode_boundary>", "x"]):
                    actor = "assistant" if i == 1 else "user"
                    args = {"actor": actor, "text": text, "ts": float(i)}
                    await client.call_tool("observe_turn", args)
                await client.call_tool("flush", {})
                hit = _payload(await client.call_tool("recall", {"query": "deploy", "k": 1}))
                target = hit["results"][0]["episode"]["id"]
                out["used"] = _payload(await client.call_tool("used", {"episode_ids": [target]}))
                out["used_unknown"] = await client.call_tool("used", {"episode_ids": ["nope"]})
                out["forget"] = _payload(await client.call_tool("forget", {"episode_id": target}))
                out["forget_again"] = await client.call_tool("forget", {"episode_id": target})
                out["left"] = _payload(await client.call_tool("list_episodes", {}))["episodes"]
                out["target"] = target

                def broken(*args: Any, **kwargs: Any) -> Any:
                    raise RuntimeError("store exploded")

                memory.recall = broken  # type: ignore[method-assign]
                out["crash"] = await client.call_tool("recall", {"query": "deploy"})
                out["after"] = await client.call_tool("list_episodes", {})
            return out

        out = asyncio.run(run())
        assert out["used"] == {"confirmed": [out["target"]]}
        assert out["used_unknown"].is_error
        assert out["forget"]["forgotten"] == [out["target"]]
        assert out["forget_again"].is_error and "no episode" in out["forget_again"].content[0].text
        assert out["target"] not in {e["id"] for e in out["left"]}
        assert out["crash"].is_error and "store exploded" in out["crash"].content[0].text
        assert not out["after"].is_error  # the server kept serving
