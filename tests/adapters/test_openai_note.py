"""EpisegSession's recalled-memories note: what it holds and what ``add_items`` drops.

Review 3: R3-S9 (a user message starting with the note's header was dropped from the
history and from episeg) and R3-S10 (the note repeated the current conversation's own
open turns as "earlier conversations"). Real SDK, real Memory on Chroma.
"""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

from episeg.adapters.openai_agents import CONTEXT_HEADER, EpisegSession
from episeg.memory import Memory
from episeg.testing import LoopbackLLMServer, Reply
from episeg.types import Turn
from tests.adapters.test_openai_session import _run


def _stored_turns(memory: Memory, user: str, session: str) -> list[str]:
    memory.flush(user, session)
    return [t.text for e in memory.episodes(user) if e.session == session for t in e.turns]


def _note(items: list[Any]) -> str | None:
    notes = [str(i["content"]) for i in items if i.get("role") == "developer"]
    assert len(notes) <= 1
    return notes[0] if notes else None


def _store_old_conversation(memory: Memory) -> None:
    memory.ingest(
        [
            Turn(
                actor="user",
                text="zebra upgrade failed on node 7",
                ts=1.0,
                user="alice",
                session="old",
            ),
            Turn(actor="assistant", text="drain node 7 first", ts=2.0, user="alice", session="old"),
        ]
    )
    memory.flush("alice")


class TestOnlyTheSessionsOwnNoteIsDropped:
    """R3-S9."""

    def test_a_user_message_quoting_the_header_is_kept_and_observed(
        self, sdk: ModuleType, memory: Memory
    ) -> None:
        session = EpisegSession("chat-1", memory=memory, user="alice")
        quoted = f"{CONTEXT_HEADER} is what the bot printed; why?"
        items: list[Any] = [
            {"role": "user", "content": quoted},
            {"role": "assistant", "content": "It lists recalled memories."},
            {"role": "developer", "content": f"{CONTEXT_HEADER}\n- my own instructions"},
        ]
        asyncio.run(session.add_items(items))
        assert asyncio.run(session.get_items()) == items  # none of them is a note it made
        assert _stored_turns(memory, "alice", "chat-1") == [
            quoted,
            "It lists recalled memories.",
        ]

    def test_the_note_it_made_is_dropped_once_a_quote_of_it_is_not(
        self, sdk: ModuleType, memory: Memory
    ) -> None:
        _store_old_conversation(memory)
        session = EpisegSession("chat", memory=memory, user="alice")
        new: list[Any] = [{"role": "user", "content": "how was the zebra upgrade done?"}]
        combined = asyncio.run(session.input_callback([], new))
        note = _note(combined)
        assert note is not None and note.startswith(CONTEXT_HEADER)
        copies: list[Any] = [dict(i) for i in combined]  # the SDK hands back copies
        quote: Any = {"role": "user", "content": note}
        again: Any = dict(copies[0])  # the note once more: it made one, it drops one
        asyncio.run(session.add_items([*copies, quote, again]))
        assert asyncio.run(session.get_items()) == [new[0], quote, again]

    def test_through_a_real_run_a_quoting_user_message_stays(
        self, sdk: ModuleType, memory: Memory
    ) -> None:
        _store_old_conversation(memory)
        session = EpisegSession("chat", memory=memory, user="alice")
        question = f"{CONTEXT_HEADER} zebra upgrade: what did you mean?"
        with LoopbackLLMServer() as model:
            model.enqueue(Reply.text("drain it first"))
            assert _run(sdk, model, session, question) == "drain it first"
            assert "drain node 7" in model.requests[0].prompt_text  # the note was sent
        history = asyncio.run(session.get_items())
        assert [i.get("role") for i in history] == ["user", "assistant"]  # no note kept
        assert history[0].get("content") == question
        assert _stored_turns(memory, "alice", "chat") == [question, "drain it first"]


class TestTheNoteLeavesOutTheOwnConversation:
    """R3-S10."""

    def test_no_note_from_the_open_turns_of_this_conversation(
        self, sdk: ModuleType, memory: Memory
    ) -> None:
        session = EpisegSession("chat-2", memory=memory, user="bob")
        asyncio.run(
            session.add_items(
                [
                    {"role": "user", "content": "the billing deploy failed with exit 137"},
                    {"role": "assistant", "content": "exit 137 means the container was OOM killed"},
                ]
            )
        )
        history = asyncio.run(session.get_items())
        new: list[Any] = [
            {"role": "user", "content": "how much memory did the billing deploy need?"}
        ]
        assert asyncio.run(session.input_callback(history, new)) == [*history, *new]

    def test_other_conversations_fill_the_slots_its_own_turns_would_take(
        self, sdk: ModuleType, memory: Memory
    ) -> None:
        _store_old_conversation(memory)
        other = EpisegSession("side", memory=memory, user="alice")
        asyncio.run(other.add_items([{"role": "user", "content": "zebra upgrade checklist"}]))
        session = EpisegSession("chat", memory=memory, user="alice", recall_k=2)
        own: list[Any] = [
            {"role": "user", "content": "zebra upgrade zebra upgrade failed again on node 7"},
            {"role": "assistant", "content": "zebra upgrade: drain node 7, then upgrade"},
        ]
        asyncio.run(session.add_items(own))
        new: list[Any] = [{"role": "user", "content": "zebra upgrade failed on node 7 again"}]
        note = _note(asyncio.run(session.input_callback(own, new)))
        assert note is not None
        sessions = [line.split(")")[0] for line in note.splitlines() if line.startswith("- (")]
        assert sorted(sessions) == ["- (old", "- (side"]
