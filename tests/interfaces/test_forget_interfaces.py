"""Forget through the service (real uvicorn, the typed client) and the MCP tool (issue 12).

Each erasure is checked in the bytes of the data folder (Chroma's files, the
journal and its ``-wal``), not only through the API: while the store is open,
every byte but the unused slots of Chroma's vector files; once it is opened
again, every byte (``tests/erased_bytes.py``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client as McpClient

from episeg.client import APIError, Client
from episeg.interfaces.mcp_server import create_server
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from tests.erased_bytes import files_with, reopened_files_with
from tests.interfaces.helpers import KEY_A, KEY_B, KEYS, LiveServer


def _files_with(folder: Path, needle: str) -> list[str]:
    """While the store is open here: everywhere but Chroma's unused slots (see erased_bytes)."""
    return files_with(folder, needle, unused_slots=False)


class TestHttpForget:
    def test_episode_session_and_tenant_routes(self, tmp_path: Path) -> None:
        memory = open_memory(tmp_path, embedder=HashingEmbedder(dim=64))
        live = LiveServer(create_app(memory, KEYS))
        try:
            with Client(live.url, KEY_A) as alice, Client(live.url, KEY_B) as bob:
                alice.observe({"actor": "user", "text": "gnuheron one", "session": "s1"})
                alice.observe({"actor": "user", "text": "emuotter two", "session": "s2"})
                alice.flush()
                alice.observe({"actor": "user", "text": "emuotter open", "session": "s2"})
                bob.observe({"actor": "user", "text": "yakcrane bob", "session": "s1"})
                bob.flush()
                [first] = [e for e in alice.episodes() if e["session"] == "s1"]
                with pytest.raises(APIError) as refused:
                    bob.forget(first["id"])  # another tenant's id: 404, nothing erased
                assert refused.value.status == 404
                assert alice.forget(first["id"])["forgotten"] == [first["id"]]
                assert _files_with(tmp_path, "gnuheron") == []
                gone = alice.forget_session("s2")
                assert gone["session"] == "s2" and gone["turns"] >= 1
                assert _files_with(tmp_path, "emuotter") == []
                assert alice.episodes() == []
                alice.observe({"actor": "user", "text": "tapirwren later", "session": "s3"})
                alice.flush()
                assert alice.forget_all()["tenant"] is True
                assert _files_with(tmp_path, "tapirwren") == []
                assert alice.episodes() == [] and alice.recall("tapirwren") == []
                assert [e["session"] for e in bob.episodes()] == ["s1"]  # bob untouched
        finally:
            live.stop()
            memory.close()
        for erased in ("gnuheron", "emuotter", "tapirwren"):
            assert reopened_files_with(tmp_path, erased) == []
        assert reopened_files_with(tmp_path, "yakcrane")


@pytest.mark.slow
class TestMcpForget:
    def test_session_and_everything(self, tmp_path: Path) -> None:
        memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
        server = create_server(memory, "alice")

        async def run() -> dict[str, Any]:
            out: dict[str, Any] = {}
            async with McpClient(server) as client:
                for session, text in [("a", "lemurfinch"), ("b", "koalaswift")]:
                    args = {"text": text, "actor": "user", "ts": 1.0, "session": session}
                    await client.call_tool("observe_turn", args)
                await client.call_tool("flush", {})
                out["both"] = await client.call_tool("forget", {"session": "a", "everything": True})
                out["session"] = await client.call_tool("forget", {"session": "a"})
                out["all"] = await client.call_tool("forget", {"everything": True})
            return out

        out = asyncio.run(run())
        assert out["both"].is_error and "exactly one" in out["both"].content[0].text
        assert json.loads(out["session"].content[0].text)["session"] == "a"
        assert json.loads(out["all"].content[0].text)["everything"] is True
        assert _files_with(tmp_path, "lemurfinch") == []
        assert _files_with(tmp_path, "koalaswift") == []
        memory.close()
        assert reopened_files_with(tmp_path, "lemurfinch") == []
        assert reopened_files_with(tmp_path, "koalaswift") == []
