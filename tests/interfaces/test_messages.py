"""``{"role", "content"}`` chat messages through the library, the CLI reader, HTTP and MCP."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from episeg.errors import TurnValidationError
from episeg.interfaces.mcp_server import create_server
from episeg.interfaces.messages import turns_from_messages
from episeg.interfaces.service import create_app
from episeg.interfaces.transcript import iter_turns
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import TurnType
from tests.interfaces.helpers import KEY_A, KEYS, LiveServer

CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a deploy assistant."},
    {"role": "user", "content": "bump the prod deploy version", "id": "m1"},
    {"role": "assistant", "content": [{"type": "text", "text": "Edited version.tf."}]},
    {"role": "tool", "content": "apply: ok", "tool_call_id": "c1"},
]


# an agent's tool use in both SDKs' shapes: a call, the tool's answer, a failed call
TOOLS: list[dict[str, Any]] = [
    {"role": "user", "content": "what is the weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "content": "18C, cloudy", "tool_call_id": "c1"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Checking the forecast too."},
            {"type": "tool_use", "id": "t1", "name": "forecast", "input": {"city": "Paris"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "timeout", "is_error": True}
        ],
    },
]
TOOL_TURNS = [
    ("user", None, "what is the weather in Paris?"),
    ("assistant", "tool-call", '[tool call] weather({"city": "Paris"})'),
    ("tool", None, "18C, cloudy"),
    ("assistant", None, 'Checking the forecast too.\n[tool call] forecast({"city": "Paris"})'),
    ("tool", "tool-error", "timeout"),
]


def _memory(path: Path) -> Memory:
    return Memory(path=path, embedder=HashingEmbedder(dim=32), judge=None, scorer=None)


class TestLibrary:
    def test_messages_become_ordered_turns(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path)
        turns = turns_from_messages(
            [{k: v for k, v in m.items() if k != "tool_call_id"} for m in CHAT],
            user="alice",
            session="s1",
            ts=1_000.0,
        )
        assert [t.actor.value for t in turns] == ["system", "user", "assistant", "tool"]
        assert [t.ts for t in turns] == sorted(t.ts for t in turns)
        mem.ingest(turns)
        stored = [t.text for e in mem.flush() for t in e.turns]
        assert stored == [
            "You are a deploy assistant.",
            "bump the prod deploy version",
            "Edited version.tf.",
            "apply: ok",
        ]

    @pytest.mark.parametrize(
        ("message", "says"),
        [
            ({"role": "robot", "content": "x"}, "unknown role"),
            ({"role": "user"}, "content must be"),
            ({"role": "user", "content": [{"type": "image_url"}]}, "no text part"),
            # a text part that cannot be read is refused, never dropped from the turn
            (
                {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text"}]},
                "part 1 is a text part whose text is not a string: None",
            ),
            (
                {"role": "user", "content": [{"type": "text", "text": {"value": "b"}}]},
                "part 0 is a text part",
            ),
            ({"role": "user", "content": [{"text": 42}]}, "part 0 is a text part"),
            ({"role": "user", "content": ["a bare string"]}, "part 0 must be an object"),
        ],
    )
    def test_malformed_message_is_named(self, message: dict[str, object], says: str) -> None:
        with pytest.raises(TurnValidationError, match=f"message 1: .*{says}"):
            turns_from_messages([CHAT[1], message], user="a", session="s", ts=1.0)

    def test_tool_calls_and_results_are_kept_as_the_agents_turns(self) -> None:
        turns = turns_from_messages(TOOLS, user="a", session="s", ts=1.0)
        got = [(t.actor.value, t.type.value if t.type else None, t.text) for t in turns]
        assert got == TOOL_TURNS
        [ok] = turns_from_messages(
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "content": [{"type": "text", "text": "42"}]}
                    ],
                }
            ],
            user="a",
            session="s",
            ts=1.0,
        )
        assert (ok.actor.value, ok.type, ok.text) == ("tool", TurnType.TOOL_SUCCESS, "42")
        screenshot = {"type": "tool_result", "content": [{"type": "image", "source": {}}]}
        [shot] = turns_from_messages(
            [{"role": "user", "content": [screenshot]}], user="a", session="s", ts=1.0
        )
        assert (shot.actor.value, shot.type, shot.text) == ("tool", TurnType.TOOL_SUCCESS, "")
        with pytest.raises(TurnValidationError, match="tool result whose content is 7"):
            turns_from_messages(
                [{"role": "user", "content": [{"type": "tool_result", "content": 7}]}],
                user="a",
                session="s",
                ts=1.0,
            )

    @pytest.mark.parametrize(
        ("message", "says"),
        [
            ({"role": "assistant", "content": None}, "content must be"),
            (
                {"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]},
                "names no tool",
            ),
            ({"role": "assistant", "tool_calls": [{"id": "c1"}]}, "no function object"),
            ({"role": "assistant", "tool_calls": "weather()"}, "tool_calls must be a list"),
            (
                {"role": "assistant", "content": [{"type": "tool_use", "input": {}}]},
                "names no tool",
            ),
        ],
    )
    def test_a_malformed_tool_call_is_named(self, message: dict[str, object], says: str) -> None:
        with pytest.raises(TurnValidationError, match=f"message 1: .*{says}"):
            turns_from_messages([CHAT[1], message], user="a", session="s", ts=1.0)


class TestTranscriptReader:
    def test_role_and_content_lines(self) -> None:
        lines = [
            '{"role": "user", "content": "hi", "ts": 1}',
            '{"role": "developer", "content": [{"type": "text", "text": "be brief"}], "ts": 2}',
            '{"role": "function", "content": "42", "ts": 3}',
        ]
        assert [(t.actor.value, t.text) for t in iter_turns(lines)] == [
            ("user", "hi"),
            ("system", "be brief"),
            ("tool", "42"),
        ]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, Memory]]:
    memory = _memory(tmp_path)
    server = LiveServer(create_app(memory, KEYS))
    yield server, memory
    server.stop()
    memory.close()


class TestHttp:
    def test_post_messages(self, served: tuple[LiveServer, Memory]) -> None:
        server, memory = served
        with server.client(KEY_A) as c:
            first = c.post("/v1/messages", json={"messages": CHAT, "session": "s1"})
            again = c.post("/v1/messages", json={"messages": CHAT[1:2], "session": "s1"})
            c.post("/v1/flush", json={})
        assert first.status_code == 200, first.text
        assert first.json()["accepted"] == 4
        assert again.json()["accepted"] == 0 and again.json()["duplicates"] == ["m1"]
        episodes = memory.episodes("alice")
        assert sum(len(e.turns) for e in episodes) == 4
        assert {e.session for e in episodes} == {"s1"}

    def test_a_bad_message_commits_none(self, served: tuple[LiveServer, Memory]) -> None:
        server, memory = served
        bad = [*CHAT[:2], {"role": "user", "content": [{"type": "image_url"}]}]
        with server.client(KEY_A) as c:
            answer = c.post("/v1/messages", json={"messages": bad})
        assert answer.status_code == 422, answer.text
        assert "message 2" in answer.json()["detail"][0]["msg"]
        assert memory.journal.counts()["seen"] == 0
        dropped = [{"type": "text", "text": "restart the db"}, {"type": "text", "text": 42}]
        with server.client(KEY_A) as c:
            answer = c.post(
                "/v1/messages", json={"messages": [{"role": "user", "content": dropped}]}
            )
        assert answer.status_code == 422 and "part 1" in answer.json()["detail"][0]["msg"]
        assert memory.journal.counts()["seen"] == 0

    def test_post_tool_use(self, served: tuple[LiveServer, Memory]) -> None:
        server, memory = served
        with server.client(KEY_A) as c:
            answer = c.post("/v1/messages", json={"messages": TOOLS, "session": "t"})
            c.post("/v1/flush", json={})
        assert answer.status_code == 200, answer.text
        turns = [t for e in memory.episodes("alice") for t in e.turns]
        assert [
            (t.actor.value, t.type.value if t.type else None, t.text) for t in turns
        ] == TOOL_TURNS


class TestMcp:
    def test_observe_messages_tool(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path)
        server = create_server(mem, "alice")
        result = asyncio.run(
            server.call_tool("observe_messages", {"messages": CHAT, "session": "s1"})
        )
        assert not getattr(result, "is_error", True)
        assert sum(len(e.turns) for e in mem.flush()) == 4
        asyncio.run(server.call_tool("observe_messages", {"messages": TOOLS, "session": "t"}))
        turns = [t for e in mem.flush() for t in e.turns]
        assert [
            (t.actor.value, t.type.value if t.type else None, t.text) for t in turns
        ] == TOOL_TURNS

    def test_bad_message_is_a_tool_error_and_records_nothing(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path)
        server = create_server(mem, "alice")
        late_in_time = {"role": "user", "content": "x", "ts": 0.0}
        with pytest.raises(ToolError, match="earlier than"):
            asyncio.run(
                server.call_tool(
                    "observe_messages", {"messages": [{**CHAT[1], "ts": 5.0}, late_in_time]}
                )
            )
        assert mem.journal.counts()["seen"] == 0
