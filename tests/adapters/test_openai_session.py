"""EpisegSession with the real OpenAI Agents SDK against a scripted loopback model."""

from __future__ import annotations

import asyncio
import sys
from types import ModuleType
from typing import Any

import pytest

from episeg.adapters.openai_agents import CONTEXT_HEADER, EpisegSession
from episeg.memory import Memory
from episeg.testing import LoopbackLLMServer, Reply
from episeg.types import Turn


def _run(sdk: ModuleType, model: LoopbackLLMServer, session: EpisegSession, text: str) -> str:
    from openai import AsyncOpenAI

    sdk.set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=model.openai_url, api_key="sk-local", max_retries=0)
    agent = sdk.Agent(
        name="helper",
        instructions="be brief",
        model=sdk.OpenAIChatCompletionsModel(model="m", openai_client=client),
    )

    async def go() -> Any:
        result = await sdk.Runner.run(
            agent,
            text,
            session=session,
            run_config=sdk.RunConfig(session_input_callback=session.input_callback),
        )
        return result.final_output

    return str(asyncio.run(go()))


class TestEpisegSession:
    def test_satisfies_the_sdk_protocol(self, sdk: ModuleType, memory: Memory) -> None:
        from agents.memory import Session

        assert isinstance(EpisegSession("s", memory=memory, user="alice"), Session)

    def test_turns_go_in_as_they_happen_and_recall_feeds_the_model(
        self, sdk: ModuleType, memory: Memory
    ) -> None:
        memory.ingest(
            [
                Turn(
                    actor="user",
                    text="zebra cluster upgrade failed on node 7",
                    ts=1.0,
                    user="alice",
                    session="old",
                ),
                Turn(
                    actor="assistant",
                    text="drain node 7 before the zebra upgrade",
                    ts=2.0,
                    user="alice",
                    session="old",
                ),
            ]
        )
        memory.flush("alice")
        session = EpisegSession("chat", memory=memory, user="alice")
        with LoopbackLLMServer() as model:
            model.enqueue(Reply.text("drain it first"), Reply.text("you are welcome"))
            assert _run(sdk, model, session, "how do I do the zebra upgrade?") == "drain it first"
            first = model.requests[0].prompt_text
            assert CONTEXT_HEADER in first and "drain node 7" in first
            _run(sdk, model, session, "thanks")
        history = asyncio.run(session.get_items())
        texts = [str(i.get("content")) for i in history]
        assert not any(CONTEXT_HEADER in t for t in texts)  # sent, never stored
        assert [i.get("role") for i in history] == ["user", "assistant", "user", "assistant"]
        asyncio.run(session.clear_session())
        stored = [e for e in memory.episodes("alice") if e.session == "chat"]
        assert sum(len(e.turns) for e in stored) == 4
        assert asyncio.run(session.get_items()) == []

    def test_pop_item_and_other_tenants(self, sdk: ModuleType, memory: Memory) -> None:
        memory.observe(Turn(actor="user", text="bob private zebra plan", ts=1.0, user="bob"))
        memory.flush("bob")
        session = EpisegSession("c", memory=memory, user="alice")
        asyncio.run(session.add_items([{"role": "user", "content": "zebra plan?"}]))
        popped = asyncio.run(session.pop_item())
        assert popped == {"role": "user", "content": "zebra plan?"}
        combined = asyncio.run(
            session.input_callback([], [{"role": "user", "content": "zebra plan"}])
        )
        assert all("bob private" not in str(i.get("content")) for i in combined)


def test_without_the_sdk_a_session_names_the_extra(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "agents", None)  # as if the extra were not installed
    with pytest.raises(ImportError, match=r"episeg\[openai-agents\]"):
        EpisegSession("s", memory=memory, user="alice")
