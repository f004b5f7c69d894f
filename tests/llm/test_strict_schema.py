"""Strict schemas: what reaches the provider compiles there; the bounds are still enforced here.

The judge's schema bounds the summary to 1-400 characters. Anthropic's strict tools
answer HTTP 400 to ``minLength``/``maxLength`` (and numeric bounds), and OpenAI's
strict ``json_schema`` does not support string lengths either, so a judge sending
its schema as is would fail every call against the real APIs. The loopback server
refuses such schemas the way they do; these tests go through the real SDKs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from episeg.errors import JudgeError
from episeg.judges import AnthropicJudge, OpenAICompatibleJudge
from episeg.judges.prompt import JUDGE_SCHEMA
from episeg.llm import AnthropicBackend, OpenAICompatibleBackend, RetryPolicy
from episeg.llm._wire_schema import strict_violations, wire_schema
from episeg.testing import LoopbackLLMServer, Reply
from episeg.types import Decision, Turn

ONE = RetryPolicy(attempts=1, base_delay=0.01, max_delay=0.01)
TURN = Turn(actor="user", text="now the deploy", ts=0)


@pytest.fixture
def server() -> Iterator[LoopbackLLMServer]:
    with LoopbackLLMServer() as srv:
        yield srv


def _sent_schema(server: LoopbackLLMServer, dialect: str) -> dict[str, Any]:
    body = server.requests[-1].body
    if dialect == "anthropic":
        schema: dict[str, Any] = body["tools"][0]["input_schema"]
        assert body["tools"][0]["strict"] is True
    else:
        schema = body["response_format"]["json_schema"]["schema"]
        assert body["response_format"]["json_schema"]["strict"] is True
    return schema


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_judge_schema_reaches_the_model_without_refused_keywords(
    server: LoopbackLLMServer, dialect: str
) -> None:
    server.enqueue(Reply.json({"decision": "new", "summary": "deploy the service"}))
    if dialect == "anthropic":
        judge: AnthropicJudge | OpenAICompatibleJudge = AnthropicJudge(
            base_url=server.anthropic_url, api_key="k", timeout=2.0, retry=ONE
        )
    else:
        judge = OpenAICompatibleJudge(
            model="m", base_url=server.openai_url, api_key="k", timeout=2.0, retry=ONE
        )
    answer = judge.judge("debug the auth error", [], TURN)
    assert answer.decision is Decision.BOUNDARY
    sent = _sent_schema(server, dialect)
    assert strict_violations(sent) == []
    summary = sent["properties"]["summary"]
    assert "maxLength 400" in summary["description"]  # the model still reads the bound
    assert sent["required"] == JUDGE_SCHEMA["required"]
    assert JUDGE_SCHEMA["properties"]["summary"]["maxLength"] == 400  # the original untouched


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_bounds_left_out_of_the_request_are_still_checked_on_the_reply(
    server: LoopbackLLMServer, dialect: str
) -> None:
    server.enqueue(Reply.json({"decision": "new", "summary": "x" * 401}))
    schema = JUDGE_SCHEMA
    if dialect == "anthropic":
        backend: AnthropicBackend | OpenAICompatibleBackend = AnthropicBackend(
            base_url=server.anthropic_url, api_key="k", timeout=2.0, retry=ONE
        )
    else:
        backend = OpenAICompatibleBackend(
            model="m", base_url=server.openai_url, api_key="k", timeout=2.0, retry=ONE
        )
    with pytest.raises(JudgeError, match="longer than 400"):
        backend.complete(system="s", prompt="p", tool_name="record", schema=schema)


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_loopback_refuses_a_strict_schema_as_the_real_apis_do(
    server: LoopbackLLMServer, dialect: str
) -> None:
    import anthropic
    import openai

    server.enqueue(Reply.json({"n": 1}))
    tool: dict[str, Any] = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1}},
    }
    if dialect == "anthropic":
        client = anthropic.Anthropic(base_url=server.anthropic_url, api_key="k", max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="'minimum' is not supported"):
            client.messages.create(
                model="m",
                max_tokens=8,
                messages=[{"role": "user", "content": "hi"}],
                tools=[{"name": "t", "input_schema": tool, "strict": True}],
            )
    else:
        oclient = openai.OpenAI(base_url=server.openai_url, api_key="k", max_retries=0)
        with pytest.raises(openai.BadRequestError, match="'minimum' is not supported"):
            oclient.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "hi"}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "t", "schema": tool, "strict": True},
                },
            )
    assert server.pending() == 1  # refused before the queued behaviour was taken
    assert len(server.requests) == 1


def test_wire_schema_walks_nested_schemas_and_keeps_descriptions() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {"type": "string", "maxLength": 9, "description": "a tag"},
            },
            "either": {"anyOf": [{"type": "integer", "maximum": 3}, {"type": "null"}]},
        },
        "$defs": {"n": {"type": "number", "multipleOf": 2}},
    }
    sent = wire_schema(schema)
    assert strict_violations(schema) != []
    assert strict_violations(sent) == []
    assert sent["properties"]["items"]["items"]["description"] == "a tag (maxLength 9.)"
    assert sent["properties"]["either"]["anyOf"][0]["description"] == "maximum 3."
    assert sent["$defs"]["n"] == {"type": "number", "description": "multipleOf 2."}
