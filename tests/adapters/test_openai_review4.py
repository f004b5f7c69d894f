"""EpisegSession, review 4: concurrency, tool items, refusals and the SDK's retry rewind."""

from __future__ import annotations

import asyncio
import logging
import typing
from typing import Any

import pytest

from episeg.adapters._openai_items import CALLS, NOT_CONVERSATION, OUTPUTS
from episeg.adapters.openai_agents import EpisegSession, item_to_turn
from episeg.memory import Memory
from episeg.text import is_tool_error
from episeg.types import Actor, Turn, TurnType

pytest.importorskip("agents", reason="the openai-agents extra: pip install 'episeg[openai-agents]'")


class SlowHistory:
    """An SDK session whose writes yield to the event loop (as a file or network one does)."""

    def __init__(self) -> None:
        from agents import SQLiteSession

        self.inner = SQLiteSession("slow")
        self.session_id = "slow"
        self.session_settings = None

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return await self.inner.get_items(limit)

    async def add_items(self, items: list[Any]) -> None:
        await asyncio.sleep(0.01)
        await self.inner.add_items(items)

    async def pop_item(self) -> Any:
        return await self.inner.pop_item()

    async def clear_session(self) -> None:
        await self.inner.clear_session()


def _turns(memory: Memory, user: str = "alice") -> list[Turn]:
    return sorted((t for e in memory.episodes(user) for t in e.turns), key=lambda t: t.ts)


def _observe(memory: Memory, items: list[Any]) -> list[Turn]:
    session = EpisegSession("s1", memory=memory, user="alice")

    async def run() -> None:
        await session.add_items(items)
        await session.clear_session()

    asyncio.run(run())
    return _turns(memory)


def test_concurrent_add_items_keep_every_turn_in_history_order(memory: Memory) -> None:
    def batch(tag: str) -> list[Any]:
        return [
            {"role": "user", "content": f"{tag} message {i} about the deploy"} for i in range(3)
        ]

    history = SlowHistory()
    session = EpisegSession("c", memory=memory, user="alice", history=history)  # type: ignore[arg-type]
    other = EpisegSession("c", memory=memory, user="alice", history=history)  # type: ignore[arg-type]

    async def run() -> list[Any]:
        await asyncio.gather(
            session.add_items(batch("A")),
            other.add_items(batch("B")),
            session.add_items(batch("C")),
        )
        items = await session.get_items()
        await session.clear_session()
        return items

    items = asyncio.run(run())
    assert [t.text for t in _turns(memory)] == [i["content"] for i in items]
    assert len(items) == 9


def test_a_tool_output_is_not_typed_success_unless_known(memory: Memory) -> None:
    from agents.tool import default_tool_error_function

    failure = default_tool_error_function(None, PermissionError("denied: /var/backup"))  # type: ignore[arg-type]
    item = {"type": "function_call_output", "call_id": "c1", "output": failure}
    turn = item_to_turn(item, user="u", session="s", ts=1.0)
    assert turn is not None and turn.type is None and is_tool_error(turn)
    ok = item_to_turn({**item, "output": "3 rows"}, user="u", session="s", ts=1.0)
    assert ok is not None and ok.type is None and not is_tool_error(ok)
    failed = item_to_turn({**item, "status": "incomplete"}, user="u", session="s", ts=1.0)
    assert failed is not None and failed.type is TurnType.TOOL_ERROR


_ITEMS: list[Any] = [
    {"type": "custom_tool_call", "call_id": "c2", "name": "run_sql", "input": "SELECT 1"},
    {"type": "custom_tool_call_output", "call_id": "c2", "output": "1 row"},
    {
        "type": "mcp_call",
        "id": "m1",
        "server_label": "gh",
        "name": "list_issues",
        "arguments": "{}",
        "output": "issue #42 backup disk full",
    },
    {"type": "shell_call", "call_id": "s1", "action": {"commands": ["df -h"]}},
    {
        "type": "shell_call_output",
        "call_id": "s1",
        "output": [
            {
                "stdout": "/dev/sda1 100% /var/backup",
                "stderr": "",
                "outcome": {"type": "exit", "exit_code": 0},
            }
        ],
    },
    {
        "type": "web_search_call",
        "id": "w1",
        "status": "completed",
        "action": {"type": "search", "query": "backup disk full"},
    },
    {
        "type": "local_shell_call_output",
        "id": "l1",
        "output": "rm: permission denied",
        "status": "failed",
    },
]


def test_every_tool_item_kind_becomes_a_tool_turn(memory: Memory) -> None:
    turns = _observe(memory, _ITEMS)
    assert [t.actor for t in turns] == [Actor.TOOL] * len(_ITEMS)
    texts = "\n".join(t.text for t in turns)
    for fact in (
        "run_sql(SELECT 1)",
        "1 row",
        "issue #42",
        "df -h",
        "/dev/sda1 100%",
        "backup disk",
    ):
        assert fact in texts
    assert turns[0].type is TurnType.TOOL_CALL and turns[-1].type is TurnType.TOOL_ERROR


def test_every_item_kind_of_the_installed_sdk_is_mapped_or_skipped_on_purpose() -> None:
    from openai.types.responses import ResponseInputItemParam

    kinds: set[str] = set()
    for member in typing.get_args(ResponseInputItemParam):
        literal = typing.get_type_hints(member)["type"]
        while typing.get_origin(literal) is not typing.Literal:
            literal = typing.get_args(literal)[0]
        kinds.update(typing.get_args(literal))
    assert kinds - {"message"} - set(CALLS) - OUTPUTS - NOT_CONVERSATION == set()


def test_an_assistant_refusal_is_a_turn(memory: Memory) -> None:
    refusal: dict[str, Any] = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't delete production snapshots for you."}],
    }
    [turn] = _observe(memory, [refusal])
    assert (turn.actor, turn.text) == (Actor.ASSISTANT, refusal["content"][0]["refusal"])


def test_the_sdks_retry_rewind_does_not_duplicate_turns(memory: Memory) -> None:
    from agents.run_internal.session_persistence import rewind_session_items

    items: list[Any] = [
        {"role": "user", "content": "Rotate the staging TLS certificate before Friday"},
        {"role": "assistant", "content": "Noted: staging TLS rotation by Friday."},
    ]
    session = EpisegSession("s1", memory=memory, user="alice")

    async def run() -> list[Any]:
        await session.add_items(items)
        await rewind_session_items(session, items)  # the SDK pops them for a retry...
        assert await session.get_items() == []
        await session.add_items(items)  # ...and saves them again
        history = await session.get_items()
        await session.clear_session()
        return history

    assert asyncio.run(run()) == items
    assert [t.text for t in _turns(memory)] == [i["content"] for i in items]


def test_a_popped_item_replaced_by_another_is_kept_and_logged(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    session = EpisegSession("s1", memory=memory, user="alice")
    first: Any = {"role": "user", "content": "Rotate the staging certificate"}
    fixed: Any = {"role": "user", "content": "Sorry: rotate the PRODUCTION certificate"}

    async def run() -> None:
        await session.add_items([first])
        await session.pop_item()
        with caplog.at_level(logging.WARNING, logger="episeg.adapters.openai_agents"):
            await session.add_items([fixed])
        await session.add_items([first])  # a new item at a new place: observed again
        await session.clear_session()

    asyncio.run(run())
    assert [t.text for t in _turns(memory)] == [
        first["content"],
        fixed["content"],
        first["content"],
    ]
    assert any("episeg keeps the popped user turn" in r.getMessage() for r in caplog.records)


def test_per_conversation_state_does_not_grow_with_conversations_served(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-running process serving many conversations keeps no lock or clock per one (F144)."""
    import gc
    import itertools
    import time

    from episeg.adapters import _openai_state

    clock = itertools.cycle([100.0, 50.0, 101.0, 10.0, 102.0])  # the wall clock steps back
    monkeypatch.setattr(time, "time", lambda: next(clock))
    monkeypatch.setattr(_openai_state, "_last_ts", 0.0)

    async def run() -> int:
        for n in range(60):
            session = EpisegSession(f"c{n}", memory=memory, user="alice")
            await session.add_items([{"role": "user", "content": f"conversation {n} deploy"}])
            await session.clear_session()
        gc.collect()
        return len(_openai_state._LOCKS[asyncio.get_running_loop()])

    assert asyncio.run(run()) == 0  # every call is over: no lock is kept
    stamps = [t.ts for t in sorted(_turns(memory), key=lambda t: int(t.session[1:]))]
    assert len(stamps) == 60 and stamps == sorted(stamps)  # never back, across conversations
