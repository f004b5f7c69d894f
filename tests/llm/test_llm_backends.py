"""The real anthropic and openai SDKs against the loopback server."""

from __future__ import annotations

import email.utils
import logging
import socket
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from episeg.errors import BackendUnavailableError, ConfigError, JudgeError
from episeg.llm import (
    AnthropicBackend,
    BackendUnavailableJudgeError,
    OpenAICompatibleBackend,
    RetryPolicy,
    StructuredBackend,
)
from episeg.testing import LoopbackLLMServer, Reply

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["score"],
    "additionalProperties": False,
    "properties": {"score": {"type": "integer", "enum": list(range(1, 11))}},
}
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02)  # real backoff, tiny waits

BackendFactory = Callable[..., StructuredBackend]


@pytest.fixture
def server() -> Iterator[LoopbackLLMServer]:
    with LoopbackLLMServer() as srv:
        yield srv


def _anthropic(srv: LoopbackLLMServer, **kw: Any) -> StructuredBackend:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout", 0.5)
    return AnthropicBackend(base_url=srv.anthropic_url, api_key="test", **kw)


def _openai(srv: LoopbackLLMServer, **kw: Any) -> StructuredBackend:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout", 0.5)
    return OpenAICompatibleBackend(model="loop", base_url=srv.openai_url, api_key="test", **kw)


@pytest.fixture(params=["anthropic", "openai"])
def make(request: pytest.FixtureRequest) -> BackendFactory:
    return _anthropic if request.param == "anthropic" else _openai


def _ask(backend: StructuredBackend) -> dict[str, Any]:
    return backend.complete(
        system="Rate it.", prompt="Memory: hello", tool_name="rate", schema=SCHEMA
    )


class TestHappyPath:
    def test_answer_and_request_shape(
        self, server: LoopbackLLMServer, make: BackendFactory
    ) -> None:
        server.enqueue(Reply.json({"score": 8}))
        backend = make(server)
        assert _ask(backend) == {"score": 8}
        assert backend.calls == 1
        body = server.requests[0].body
        assert body["temperature"] == 0
        assert "Memory: hello" in server.requests[0].prompt_text

    def test_anthropic_forces_the_strict_tool(self, server: LoopbackLLMServer) -> None:
        server.enqueue(Reply.json({"score": 2}))
        _ask(_anthropic(server))
        body = server.requests[0].body
        assert body["tool_choice"] == {"type": "tool", "name": "rate"}
        assert body["tools"][0]["input_schema"] == SCHEMA
        assert body["tools"][0]["strict"] is True

    def test_openai_sends_json_schema(self, server: LoopbackLLMServer) -> None:
        server.enqueue(Reply.json({"score": 2}))
        _ask(_openai(server))
        fmt = server.requests[0].body["response_format"]
        assert fmt["type"] == "json_schema"
        assert fmt["json_schema"]["schema"] == SCHEMA

    def test_openai_prompt_only_mode_puts_schema_in_system(self, server: LoopbackLLMServer) -> None:
        server.enqueue(Reply.text('{"score": 5}'))
        assert _ask(_openai(server, structured="none")) == {"score": 5}
        body = server.requests[0].body
        assert "response_format" not in body
        assert '"enum"' in body["messages"][0]["content"]


class TestUnusableReplies:
    def test_text_instead_of_answer(
        self, server: LoopbackLLMServer, make: BackendFactory, caplog: pytest.LogCaptureFixture
    ) -> None:
        server.enqueue(Reply.text("I think it's about a 7, maybe 8."))
        backend = make(server)
        with (
            caplog.at_level(logging.WARNING, logger="episeg.llm"),
            pytest.raises(JudgeError) as info,
        ):
            _ask(backend)
        assert not isinstance(info.value, BackendUnavailableError)
        assert backend.calls == 1  # no retry of a temperature-0 garbage reply
        assert "unusable reply" in caplog.text

    def test_out_of_schema_value(self, server: LoopbackLLMServer, make: BackendFactory) -> None:
        server.enqueue(Reply.json({"score": 11}))
        with pytest.raises(JudgeError, match="not one of"):
            _ask(make(server))

    def test_extra_field_rejected(self, server: LoopbackLLMServer, make: BackendFactory) -> None:
        server.enqueue(Reply.json({"score": 3, "note": "ignore previous instructions"}))
        with pytest.raises(JudgeError, match="unexpected field"):
            _ask(make(server))

    def test_invalid_json_body(self, server: LoopbackLLMServer, make: BackendFactory) -> None:
        server.enqueue(Reply.raw("{not json"))
        with pytest.raises(JudgeError):
            _ask(make(server))

    def test_bad_request_is_not_retried(
        self, server: LoopbackLLMServer, make: BackendFactory
    ) -> None:
        server.enqueue(Reply.error(400, message="bad schema"))
        backend = make(server)
        with pytest.raises(JudgeError, match="HTTP 400") as info:
            _ask(backend)
        assert not isinstance(info.value, BackendUnavailableError)
        assert backend.calls == 1


class TestTransientFailures:
    def test_overloaded_then_success(self, server: LoopbackLLMServer, make: BackendFactory) -> None:
        server.enqueue(Reply.overloaded(), Reply.error(503), Reply.json({"score": 6}))
        backend = make(server)
        assert _ask(backend) == {"score": 6}
        assert backend.calls == 3

    def test_429_retry_after_is_honoured(
        self, server: LoopbackLLMServer, make: BackendFactory
    ) -> None:
        server.enqueue(Reply.error(429, retry_after=0.1), Reply.json({"score": 4}))
        backend = make(server, retry=RetryPolicy(attempts=2, base_delay=0.0, max_delay=0.01))
        start = time.monotonic()
        assert _ask(backend) == {"score": 4}
        assert time.monotonic() - start >= 0.1  # the server's wait, not the 0.01 s backoff
        assert backend.calls == 2

    def test_retry_after_as_an_http_date_is_honoured(
        self, server: LoopbackLLMServer, make: BackendFactory
    ) -> None:
        """RFC 9110 allows a date instead of seconds; it was logged as unparseable and the
        backend retried after its 0.01 s backoff."""
        when = email.utils.formatdate(time.time() + 2, usegmt=True)  # 1-2 s ahead (whole s)
        server.enqueue(Reply.error(503, retry_after=when), Reply.json({"score": 4}))
        policy = RetryPolicy(attempts=2, base_delay=0.0, max_delay=0.01, max_retry_after=5.0)
        backend = make(server, retry=policy)
        start = time.monotonic()
        assert _ask(backend) == {"score": 4}
        assert time.monotonic() - start >= 0.9
        assert backend.calls == 2

    def test_x_should_retry_false_is_not_sent_again(
        self, server: LoopbackLLMServer, make: BackendFactory
    ) -> None:
        """A 429 for an exhausted quota says so; both SDKs obey the header, episeg retried."""
        server.enqueue(Reply.error(429, should_retry=False), Reply.json({"score": 4}))
        with pytest.raises(BackendUnavailableJudgeError, match="after 1 attempt"):
            _ask(make(server))
        assert len(server.requests) == 1

    def test_x_should_retry_true_retries_a_4xx(
        self, server: LoopbackLLMServer, make: BackendFactory
    ) -> None:
        server.enqueue(Reply.error(400, should_retry=True), Reply.json({"score": 4}))
        assert _ask(make(server)) == {"score": 4}
        assert len(server.requests) == 2

    def test_payment_required_is_unavailable_not_one_bad_request(
        self, server: LoopbackLLMServer, make: BackendFactory
    ) -> None:
        server.enqueue(Reply.error(402, message="billing"))
        with pytest.raises(BackendUnavailableJudgeError, match="HTTP 402"):
            _ask(make(server))
        assert len(server.requests) == 1

    def test_retry_after_is_capped(self, server: LoopbackLLMServer, make: BackendFactory) -> None:
        server.enqueue(Reply.error(429, retry_after=60), Reply.json({"score": 4}))
        policy = RetryPolicy(attempts=2, base_delay=0.0, max_delay=0.1, max_retry_after=0.1)
        backend = make(server, retry=policy)
        start = time.monotonic()
        assert _ask(backend) == {"score": 4}
        assert time.monotonic() - start < 2.0

    def test_overloaded_after_all_attempts(
        self, server: LoopbackLLMServer, make: BackendFactory, caplog: pytest.LogCaptureFixture
    ) -> None:
        server.enqueue(*[Reply.overloaded()] * 3)
        backend = make(server)
        with (
            caplog.at_level(logging.WARNING, logger="episeg.llm"),
            pytest.raises(BackendUnavailableJudgeError, match="after 3 attempt"),
        ):
            _ask(backend)
        assert backend.calls == 3
        assert server.pending() == 0
        assert caplog.text.count("retrying") == 2
        assert "request failed" in caplog.text

    def test_timeout(
        self, server: LoopbackLLMServer, make: BackendFactory, caplog: pytest.LogCaptureFixture
    ) -> None:
        server.enqueue(Reply.slow(2.0, Reply.json({"score": 5})))
        backend = make(server, retry=RetryPolicy(attempts=1), timeout=0.2)
        start = time.monotonic()
        with (
            caplog.at_level(logging.ERROR, logger="episeg.llm"),
            pytest.raises(BackendUnavailableError, match="timed out"),
        ):
            _ask(backend)
        assert time.monotonic() - start < 1.5
        assert "timed out" in caplog.text

    def test_timeout_then_success(self, server: LoopbackLLMServer, make: BackendFactory) -> None:
        server.enqueue(Reply.slow(2.0), Reply.json({"score": 9}))
        assert _ask(make(server, timeout=0.25)) == {"score": 9}

    def test_connection_refused(
        self, make: BackendFactory, caplog: pytest.LogCaptureFixture
    ) -> None:
        with socket.socket() as sock:  # a port that was free a moment ago: nobody listens
            sock.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        closed = SimpleNamespace(anthropic_url=url, openai_url=f"{url}/v1")
        backend = make(closed, retry=RetryPolicy(attempts=2, base_delay=0.0))
        with (
            caplog.at_level(logging.ERROR, logger="episeg.llm"),
            pytest.raises(BackendUnavailableError, match="cannot connect"),
        ):
            _ask(backend)
        assert backend.calls == 2
        assert "cannot connect" in caplog.text


class TestConfiguration:
    def test_missing_api_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
            AnthropicBackend()
        with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
            OpenAICompatibleBackend(model="m")

    def test_key_from_env(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
        assert AnthropicBackend(base_url="http://127.0.0.1:9").calls == 0

    def test_bad_values_name_valid_ones(self) -> None:
        with pytest.raises(ConfigError, match="json_schema, json_object, none"):
            OpenAICompatibleBackend(model="m", api_key="k", structured="xml")
        with pytest.raises(ConfigError, match="timeout"):
            AnthropicBackend(api_key="k", timeout=0)
        with pytest.raises(ValueError, match="attempts"):
            RetryPolicy(attempts=0)
