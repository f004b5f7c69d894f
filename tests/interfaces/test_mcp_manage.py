"""The MCP get_episode / update_episode / unarchive tools and recall's filters, through the MCP
SDK's client (in-memory transport) against the real server over an embedded Chroma store."""

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


def _payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


def test_get_update_unarchive_and_filters(tmp_path: Path) -> None:
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    for user, session, text in [
        ("alice", "s1", "rotate the jwt signing key"),
        ("alice", "s2", "login page css broken"),
        ("bob", "b", "bob's login secret"),
    ]:
        memory.observe(Turn(actor="user", text=text, ts=1.0, user=user, session=session))
    memory.flush()
    bobs = memory.episodes("bob")[0].id
    server = create_server(memory, "alice")

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(server) as client:
            listed = _payload(await client.call_tool("list_episodes", {}))["episodes"]
            target = next(e["id"] for e in listed if e["session"] == "s1")
            out["target"] = target
            out["got"] = _payload(await client.call_tool("get_episode", {"episode_id": target}))
            args = {
                "episode_id": target,
                "summary": "jwt rotation",
                "pinned": True,
                "salience": 8,
                "metadata": {"project": "auth", "n": 2},
            }
            out["edited"] = _payload(await client.call_tool("update_episode", args))
            out["filtered"] = _payload(
                await client.call_tool(
                    "recall", {"query": "login jwt", "k": 5, "metadata": {"project": "auth"}}
                )
            )
            out["high_bar"] = _payload(
                await client.call_tool("recall", {"query": "login", "min_score": 10.0})
            )
            out["bad_salience"] = await client.call_tool(
                "update_episode", {"episode_id": target, "salience": 11}
            )
            out["bad_meta"] = await client.call_tool(
                "update_episode", {"episode_id": target, "metadata": {"bad key": 1}}
            )
            out["bobs_get"] = await client.call_tool("get_episode", {"episode_id": bobs})
            out["bobs_edit"] = await client.call_tool(
                "update_episode", {"episode_id": bobs, "summary": "alice was here"}
            )
            out["unarchived"] = _payload(
                await client.call_tool("unarchive", {"episode_id": target})
            )
        return out

    out = asyncio.run(run())
    assert out["got"]["id"] == out["target"] and out["got"]["pinned"] is False
    edited = out["edited"]
    assert (edited["summary"], edited["pinned"], edited["salience"]) == ("jwt rotation", True, 8)
    assert edited["salience_by_user"] is True and edited["metadata"] == {"project": "auth", "n": 2}
    assert [r["episode"]["id"] for r in out["filtered"]["results"]] == [out["target"]]
    assert out["high_bar"]["results"] == []
    assert out["bad_salience"].is_error and "1-10" in out["bad_salience"].content[0].text
    assert out["bad_meta"].is_error and "bad key" in out["bad_meta"].content[0].text
    assert out["bobs_get"].is_error and out["bobs_edit"].is_error
    assert memory.episode("bob", bobs).summary == "bob's login secret"
    assert memory.episode("alice", out["target"]).pinned
    assert out["unarchived"]["archived"] is False
