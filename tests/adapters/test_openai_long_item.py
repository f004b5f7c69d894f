"""EpisegSession.add_items: an over-long item is kept clipped and marked, never fails the batch."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from episeg.adapters.openai_agents import EpisegSession
from episeg.memory import Memory

pytest.importorskip("agents", reason="the openai-agents extra: pip install 'episeg[openai-agents]'")


def test_a_long_item_is_clipped_visibly_and_later_items_are_kept(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    limit = memory.config.intake.max_turn_chars
    items: list[Any] = [
        {"role": "user", "content": "read the log file and tell me what failed"},
        {"type": "function_call", "call_id": "c1", "name": "read_file", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x" * (limit + 50_000)},
        {"role": "assistant", "content": "The deploy failed at step 3: disk full."},
    ]
    session = EpisegSession("chat-1", memory=memory, user="alice")

    async def run() -> list[Any]:
        with caplog.at_level(logging.WARNING, logger="episeg.adapters.openai_agents"):
            await session.add_items(items)  # does not raise
        history = await session.get_items()
        await session.clear_session()
        return history

    history = asyncio.run(run())
    assert history == items  # the verbatim history keeps the long item whole
    turns = [t for e in memory.episodes("alice") for t in e.turns]
    assert len(turns) == 4
    assert turns[-1].text == "The deploy failed at step 3: disk full."  # after the long one
    clipped = turns[2].text
    assert len(clipped) <= limit and clipped.startswith("x" * 1000)
    assert clipped.endswith(
        f"item 2 clipped, {limit + 50_000} characters; the first "
        f"{clipped.index(chr(10))} are kept above]"
    )
    assert any("over max_turn_chars" in r.getMessage() for r in caplog.records)
