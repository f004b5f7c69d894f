"""Issue 12: an idle timeout closes open episodes, durably, in the library and the service.

The clock is injected (no sleeping) except in the service test, which runs the
real periodic task of a real uvicorn server with a one-second timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from episeg.config import EpisegConfig, IntakeConfig
from episeg.durability.idle import IdleTicker, check_interval
from episeg.errors import ConfigError
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.interfaces.settings import EpisegSettings
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.interfaces.helpers import KEY_A, KEYS, LiveServer

from .review3_helpers import Clock

TIMEOUT = 600.0


def _memory(path: Path, clock: Clock, timeout: float = TIMEOUT) -> Memory:
    return Memory(
        path=path,
        embedder=HashingEmbedder(dim=64),
        judge=None,
        scorer=None,
        clock=clock,
        config=EpisegConfig(intake=IntakeConfig(idle_timeout=timeout)),
    )


def _turn(text: str, ts: float, session: str = "s1", user: str = "alice") -> Turn:
    return Turn(actor="user", text=text, ts=ts, user=user, session=session)


class TestCloseIdle:
    def test_only_sessions_idle_past_the_timeout_close(self, tmp_path: Path) -> None:
        clock = Clock()
        memory = _memory(tmp_path, clock)
        memory.observe(_turn("book the flight to Oslo", 1.0))
        memory.observe(_turn("water the ferns", 1.0, user="bob"))
        clock.now += TIMEOUT / 2
        memory.observe(_turn("renew the passport", 2.0, session="s2"))
        assert memory.close_idle() == []
        clock.now += TIMEOUT / 2 + 1  # s1 and bob's session are idle now, s2 is not
        closed = memory.close_idle()
        assert sorted((e.user, e.session) for e in closed) == [("alice", "s1"), ("bob", "s1")]
        assert memory.journal.open_sessions() == [("alice", "s2")]
        assert [e.summary for e in memory.episodes("bob")] == ["water the ferns"]
        assert memory.close_idle(user="alice") == []  # nothing more is idle yet
        memory.close()

    def test_turn_times_do_not_count_only_arrival(self, tmp_path: Path) -> None:
        clock = Clock()
        memory = _memory(tmp_path, clock)
        memory.observe(_turn("an old transcript line", 5.0))  # ts 1970: not idle
        assert memory.close_idle() == []
        memory.close()

    def test_a_turn_after_the_timeout_starts_a_new_episode(self, tmp_path: Path) -> None:
        clock = Clock()
        memory = _memory(tmp_path, clock)
        memory.observe(_turn("book the flight to Oslo", 1.0))
        clock.now += TIMEOUT + 1
        memory.observe(_turn("book the flight to Oslo, window seat", 2.0))
        stored = memory.episodes("alice")
        assert [[t.text for t in e.turns] for e in stored] == [["book the flight to Oslo"]]
        assert [t.text for t in memory.segmenter.for_tenant("alice").open_turns("alice", "s1")] == [
            "book the flight to Oslo, window seat"
        ]
        memory.close()

    def test_zero_never_closes(self, tmp_path: Path) -> None:
        clock = Clock()
        memory = _memory(tmp_path, clock, timeout=0)
        memory.observe(_turn("book the flight", 1.0))
        clock.now += 10**9
        assert memory.close_idle() == [] and memory.journal.open_sessions()
        IdleTicker(memory).start().stop()  # timeout 0: its thread only retries the outbox
        assert memory.journal.open_sessions()
        memory.close()


class TestDurable:
    def test_idle_time_survives_a_restart(self, tmp_path: Path) -> None:
        clock = Clock()
        memory = _memory(tmp_path, clock)
        memory.observe(_turn("book the flight", 1.0))
        memory.close()
        clock.now += TIMEOUT + 1
        again = _memory(tmp_path, clock)  # replayed from the journal, still open
        assert [e.summary for e in again.close_idle()] == ["book the flight"]
        again.close()
        third = _memory(tmp_path, clock)
        assert third.recovery.sessions == 0 and not third.journal.open_sessions()
        assert [e.summary for e in third.episodes("alice")] == ["book the flight"]
        third.close()

    def test_closing_with_the_store_down_keeps_the_episode_in_the_outbox(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        clock = Clock()
        memory = _memory(tmp_path, clock)
        memory.observe(_turn("book the flight", 1.0))
        clock.now += TIMEOUT + 1
        store = memory.store("alice")
        from episeg.errors import StoreUnavailableError

        def down(*_: object, **__: object) -> None:
            raise StoreUnavailableError("store down")

        monkeypatch.setattr(store, "add", down)
        assert memory.close_idle() == []  # closed, but not stored
        assert [e.summary for e in memory.pending_writes()] == ["book the flight"]
        assert not memory.journal.open_sessions()
        memory.close()
        monkeypatch.undo()
        again = _memory(tmp_path, clock)  # a restart writes the outbox
        assert again.recovery.pending_stored == 1
        assert [e.summary for e in again.episodes("alice")] == ["book the flight"]
        again.close()


class TestConfiguration:
    @pytest.mark.parametrize("bad", [-1.0, 0.5, 31 * 86400.0, float("nan")])
    def test_bounds(self, bad: float) -> None:
        with pytest.raises(ConfigError, match="idle_timeout"):
            IntakeConfig(idle_timeout=bad)

    def test_default_and_settings(self, monkeypatch: pytest.MonkeyPatch) -> None:
        assert IntakeConfig().idle_timeout == 1800.0
        assert check_interval(1800.0) == 60.0
        monkeypatch.setenv("EPISEG_IDLE_TIMEOUT", "120")
        assert EpisegSettings().config().intake.idle_timeout == 120.0


@pytest.mark.slow
def test_the_service_closes_idle_sessions_by_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real uvicorn server, a one-second timeout: the turn's episode appears unflushed."""
    monkeypatch.setenv("EPISEG_IDLE_TIMEOUT", "1")
    memory = open_memory(tmp_path, embedder=HashingEmbedder(dim=64))
    server = LiveServer(create_app(memory, KEYS))
    try:
        with server.client(KEY_A) as c:
            turn = {"actor": "user", "text": "book the flight to Oslo", "id": "t1"}
            assert c.post("/v1/turns", json=turn).status_code == 200
            deadline = time.monotonic() + 30
            episodes: list[object] = []
            while not episodes and time.monotonic() < deadline:
                time.sleep(0.2)
                episodes = c.get("/v1/episodes").json()["episodes"]
        assert len(episodes) == 1, "the idle ticker never closed the episode"
        assert not memory.journal.open_sessions()
    finally:
        server.stop()
        memory.close()


@pytest.mark.slow
def test_the_mcp_server_closes_idle_sessions_by_itself(tmp_path: Path) -> None:
    """The real stdio MCP server (``episeg mcp``, real model) with a one-second timeout."""
    env = {
        **os.environ,
        "EPISEG_IDLE_TIMEOUT": "1",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "episeg.interfaces.cli", "mcp", "--user", "alice", "--path", str(tmp_path)],
        env=env,
    )

    def payload(result: Any) -> dict[str, Any]:
        return dict(json.loads(result.content[0].text))

    async def run() -> tuple[dict[str, Any], list[object]]:
        async with Client(params) as client:
            args = {"actor": "user", "text": "book the flight to Oslo", "id": "t1"}
            await client.call_tool("observe_turn", args)
            hits = payload(await client.call_tool("recall", {"query": "flight to Oslo"}))
            deadline = time.monotonic() + 30
            episodes: list[object] = []
            while not episodes and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
                episodes = payload(await client.call_tool("list_episodes", {}))["episodes"]
            return hits, episodes

    hits, episodes = asyncio.run(run())
    assert [r["open"] for r in hits["results"]] == [True]  # recallable before it closed
    assert len(episodes) == 1, "the idle ticker of the MCP server never closed the episode"
