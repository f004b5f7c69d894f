"""Two tenants' conversations of one session id never share a verbatim history.

The SDK keys a ``SQLiteSession`` by its session id alone, and the docs suggested
``history=SQLiteSession(id, "chat.db")``: with one file for every tenant, bob's
session "chat-1" read alice's items (the SDK would replay them into bob's model),
popped them and cleared them (review 11). Real SDK sessions on a real file here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from episeg.adapters.openai_agents import EpisegSession, history_key
from episeg.memory import Memory

pytest.importorskip("agents", reason="the openai-agents extra: pip install 'episeg[openai-agents]'")

SECRET: list[Any] = [
    {"role": "user", "content": "my bank PIN is 4411, remember it"},
    {"role": "assistant", "content": "Noted."},
]


def test_history_db_keeps_each_tenant_to_its_own_items(memory: Memory, tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    alice = EpisegSession("chat-1", memory=memory, user="alice", history_db=db)
    bob = EpisegSession("chat-1", memory=memory, user="bob", history_db=db)

    async def run() -> tuple[list[Any], Any, list[Any]]:
        await alice.add_items(SECRET)
        seen = await bob.get_items()
        popped = await bob.pop_item()
        await bob.clear_session()
        return seen, popped, await alice.get_items()

    seen, popped, kept = asyncio.run(run())
    assert (seen, popped) == ([], None)
    assert [item["content"] for item in kept] == [item["content"] for item in SECRET]
    again = EpisegSession("chat-1", memory=memory, user="alice", history_db=db)
    assert len(asyncio.run(again.get_items())) == 2  # kept across objects (and restarts)


def test_a_history_keyed_by_the_bare_session_id_is_refused(memory: Memory, tmp_path: Path) -> None:
    from agents import SQLiteSession

    shared = SQLiteSession("chat-1", str(tmp_path / "chat.db"))
    with pytest.raises(ValueError, match="keyed by the bare session id 'chat-1'"):
        EpisegSession("chat-1", memory=memory, user="alice", history=shared)
    keyed = SQLiteSession(history_key("alice", "chat-1"), str(tmp_path / "chat.db"))
    session = EpisegSession("chat-1", memory=memory, user="alice", history=keyed)
    assert session.history is keyed
    with pytest.raises(ValueError, match="not both"):
        EpisegSession("chat-1", memory=memory, user="alice", history=keyed, history_db="x.db")
