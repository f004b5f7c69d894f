"""Review 12 of what comes in: a JSON key given twice, loose flags and text parts in messages.

Before, ``{"user": "alice", ..., "user": "bob"}`` filed alice's line under bob (CLI and
HTTP: the last key won without a word), ``"is_error": "false"`` made a passing tool
a ``tool-error`` turn, and ``input_text`` / ``output_text`` / ``refusal`` parts beside a
``text`` part were dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from episeg.config import IntakeConfig
from episeg.errors import ConfigError, ExportFormatError, TurnValidationError
from episeg.interfaces.messages import turns_from_messages
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.interfaces.service_auth import KeyRing
from episeg.interfaces.transcript import read_transcript
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import TurnType
from tests.interfaces.helpers import KEY_A, KEYS, LiveServer


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Memory]]:
    memory = open_memory(tmp_path_factory.mktemp("review12"), embedder=HashingEmbedder(dim=32))
    server = LiveServer(create_app(memory, KeyRing(KEYS)))
    yield server, memory
    server.stop()


class TestAKeyGivenTwice:
    def test_a_transcript_line_is_refused_naming_the_key(self, tmp_path: Path) -> None:
        path = tmp_path / "chat.jsonl"
        good = {"actor": "user", "text": "first", "ts": 0, "user": "alice"}
        path.write_text(
            json.dumps(good) + "\n"
            '{"actor": "user", "text": "alice salary", "ts": 1, "user": "alice", "user": "bob"}\n'
        )
        with pytest.raises(TurnValidationError, match=r"line 2.*key 'user' given twice"):
            read_transcript(path)

    @pytest.mark.parametrize(
        "body",
        [
            '{"actor": "user", "text": "REAL TEXT", "text": "", "session": "d"}',
            '{"actor": "user", "text": "x", "session": "secret", "session": "public"}',
            '[{"actor": "user", "text": "x", "session": "d", "ts": 1, "ts": 2}]',
        ],
    )
    def test_an_http_body_is_a_422_and_nothing_is_observed(
        self, live: tuple[LiveServer, Memory], body: str
    ) -> None:
        server, memory = live
        path = "/v1/turns:batch" if body.startswith("[") else "/v1/turns"
        answer = httpx.post(
            server.url + path,
            content=body,
            headers={"Authorization": f"Bearer {KEY_A}", "Content-Type": "application/json"},
        )
        assert answer.status_code == 422, answer.text
        (detail,) = answer.json()["detail"]
        assert detail["type"] == "json_duplicate_key" and "given twice" in detail["msg"]
        assert memory.journal.open_turns("alice") == []

    def test_an_import_line_is_refused(self, tmp_path: Path) -> None:
        memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=32), judge=None, scorer=None)
        try:
            lines = ['{"format": "episeg-export", "format": "other"}\n']
            with pytest.raises(ExportFormatError, match="given twice"):
                memory.import_episodes("alice", lines)
        finally:
            memory.close()


class TestMessages:
    def test_is_error_must_be_a_boolean(self) -> None:
        message = {
            "role": "user",
            "content": [{"type": "tool_result", "content": "20 passed", "is_error": "false"}],
        }
        with pytest.raises(TurnValidationError, match="is_error is not true or false"):
            turns_from_messages([message], user="alice", session="s", ts=1.0)
        message["content"][0]["is_error"] = False  # type: ignore[index]
        (turn,) = turns_from_messages([message], user="alice", session="s", ts=1.0)
        assert turn.type is TurnType.TOOL_SUCCESS

    def test_every_part_that_holds_text_is_read(self) -> None:
        messages = [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "short intro"},
                    {"type": "input_text", "text": "the actual question about rollback"},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": "Sure."},
                    {"type": "refusal", "refusal": "I cannot share credentials"},
                ],
            },
        ]
        user, assistant = turns_from_messages(messages, user="alice", session="s", ts=1.0)
        assert user.text == "short intro\nthe actual question about rollback"
        assert assistant.text == "Sure.\nI cannot share credentials"

    def test_library_misuse_is_a_typed_error(self) -> None:
        one = {"role": "user", "content": "hi"}
        with pytest.raises(TurnValidationError, match="a list of message objects, got one dict"):
            turns_from_messages(one, user="alice", session="s", ts=1.0)  # type: ignore[arg-type]
        call = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"function": {"name": "grep", "arguments": {1, 2}}}],
        }
        with pytest.raises(TurnValidationError, match="arguments JSON cannot hold"):
            turns_from_messages([call], user="alice", session="s", ts=1.0)


def test_idle_timeout_false_is_not_a_number() -> None:
    with pytest.raises(ConfigError, match="idle_timeout"):
        IntakeConfig(idle_timeout=False)
    assert IntakeConfig(idle_timeout=0).idle_timeout == 0
