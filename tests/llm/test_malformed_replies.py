"""Replies of any shape give typed episeg errors, never a raw Python error (review 2, L3, L7).

Real SDKs against the loopback server (JSON bodies) or the raw one (bytes).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from episeg.errors import BackendUnavailableError, EpisegError, JudgeError
from episeg.llm import AnthropicBackend, OpenAICompatibleBackend, RetryPolicy, StructuredBackend
from episeg.testing import LoopbackLLMServer, Reply
from tests.llm.raw_http import RawHTTPServer

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["score"],
    "additionalProperties": False,
    "properties": {"score": {"type": "integer", "enum": list(range(1, 11))}},
}
ONE = RetryPolicy(attempts=1)
DEEP = "[" * 100_000 + "]" * 100_000  # deeper than the JSON decoder's recursion limit


def _openai(url: str) -> StructuredBackend:
    return OpenAICompatibleBackend(model="m", api_key="k", base_url=url, timeout=2.0, retry=ONE)


def _anthropic(url: str) -> StructuredBackend:
    return AnthropicBackend(api_key="k", base_url=url, timeout=2.0, retry=ONE)


def _ask(backend: StructuredBackend) -> dict[str, Any]:
    return backend.complete(system="s", prompt="p", tool_name="rate", schema=SCHEMA)


def _openai_body(content: str, finish_reason: str = "stop") -> str:
    message = {"role": "assistant", "content": content}
    return json.dumps(
        {"choices": [{"index": 0, "finish_reason": finish_reason, "message": message}]}
    )


def _anthropic_body(content: Any, stop_reason: str = "tool_use") -> str:
    return json.dumps(
        {"type": "message", "role": "assistant", "stop_reason": stop_reason, "content": content}
    )


TOOL_USE = [{"type": "tool_use", "id": "t", "name": "rate", "input": {"score": 4}}]


@pytest.mark.parametrize(
    ("dialect", "body"),
    [
        ("openai", '{"choices": [1]}'),
        ("openai", '{"choices": ["x"]}'),
        ("openai", '{"choices": {"a": 1}}'),
        ("openai", _openai_body('{"score": ' + "[" * 5_000 + "]" * 5_000 + "}")),
        ("anthropic", _anthropic_body(5)),
        ("anthropic", _anthropic_body(True)),
        ("anthropic", '{"type": "message", "content": [{"type": "tool_use", "name": "rate", '
         f'"input": {{"score": {DEEP}}}}}]}}'),
    ],
    ids=["choices-int", "choices-str", "choices-dict", "deep-content", "content-int",
         "content-bool", "deep-body"],
)  # fmt: skip
def test_a_malformed_reply_is_a_judge_error(dialect: str, body: str) -> None:
    with LoopbackLLMServer() as server:
        server.enqueue(Reply.raw(body))
        if dialect == "openai":
            backend = _openai(server.openai_url)
        else:
            backend = _anthropic(server.anthropic_url)
        with pytest.raises(JudgeError) as info:
            _ask(backend)
    assert not isinstance(info.value, BackendUnavailableError)
    assert len(server.requests) == 1


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_body_that_is_not_utf8_is_a_judge_error(dialect: str) -> None:
    with RawHTTPServer(b'{"choices": "\xff\xfe"}') as server:
        backend = _openai(f"{server.url}/v1") if dialect == "openai" else _anthropic(server.url)
        with pytest.raises(JudgeError, match="not UTF-8"):
            _ask(backend)
    assert server.requests == 1


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_body_that_cannot_be_decoded_is_not_retried_as_an_outage(dialect: str) -> None:
    gzip = {"content-encoding": "gzip"}
    with RawHTTPServer(b'{"choices": []}', headers=gzip) as server:
        url = f"{server.url}/v1" if dialect == "openai" else server.url
        backend = (
            OpenAICompatibleBackend(model="m", api_key="k", base_url=url, timeout=2.0)
            if dialect == "openai"
            else AnthropicBackend(api_key="k", base_url=url, timeout=2.0)
        )  # the default policy: 3 attempts
        with pytest.raises(EpisegError, match="cannot be decoded") as info:
            _ask(backend)
    assert not isinstance(info.value, BackendUnavailableError)
    assert server.requests == 1


class TestTruncatedReplies:
    """A reply cut at ``max_tokens`` is unusable, even when it parses (L7)."""

    def test_anthropic_stop_reason_max_tokens(self) -> None:
        with LoopbackLLMServer() as server:
            server.enqueue(Reply.raw(_anthropic_body(TOOL_USE, stop_reason="max_tokens")))
            with pytest.raises(JudgeError, match="truncated at max_tokens"):
                _ask(_anthropic(server.anthropic_url))

    def test_openai_finish_reason_length(self) -> None:
        with LoopbackLLMServer() as server:
            server.enqueue(Reply.raw(_openai_body('{"score": 4}', finish_reason="length")))
            with pytest.raises(JudgeError, match="truncated at max_tokens"):
                _ask(_openai(server.openai_url))

    @pytest.mark.parametrize("dialect", ["openai", "anthropic"])
    def test_a_complete_reply_still_passes(self, dialect: str) -> None:
        with LoopbackLLMServer() as server:
            if dialect == "openai":
                server.enqueue(Reply.raw(_openai_body('{"score": 4}')))
                assert _ask(_openai(server.openai_url)) == {"score": 4}
            else:
                server.enqueue(Reply.raw(_anthropic_body(TOOL_USE)))
                assert _ask(_anthropic(server.anthropic_url)) == {"score": 4}
