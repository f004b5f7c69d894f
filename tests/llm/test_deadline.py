"""``timeout`` bounds a whole attempt, not each read (review 2, L2).

A raw loopback server sends a valid reply one byte every 50 ms: every read is
far inside the 0.3 s timeout, so before the fix the SDK call took ~8 s and
succeeded. Real SDKs throughout.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from episeg.errors import BackendUnavailableError
from episeg.judges import AnthropicJudge, OpenAICompatibleJudge
from episeg.llm import RetryPolicy
from episeg.types import Turn
from tests.llm.raw_http import RawHTTPServer

ANSWER = {"decision": "continue", "summary": "auth 401 debugging"}
OPENAI_BODY = json.dumps(
    {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": json.dumps(ANSWER)},
            }
        ],
    }
).encode()
ANTHROPIC_BODY = json.dumps(
    {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "stop_reason": "tool_use",
        "content": [
            {"type": "tool_use", "id": "t", "name": "record_episode_decision", "input": ANSWER}
        ],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
).encode()
ONE = RetryPolicy(attempts=1)
TWO = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02)

Maker = Callable[[str, float, RetryPolicy], Any]
JUDGES: dict[str, tuple[bytes, Maker]] = {
    "openai": (
        OPENAI_BODY,
        lambda url, timeout, retry: OpenAICompatibleJudge(
            model="m", api_key="k", base_url=f"{url}/v1", timeout=timeout, retry=retry
        ),
    ),
    "anthropic": (
        ANTHROPIC_BODY,
        lambda url, timeout, retry: AnthropicJudge(
            api_key="k", base_url=url, timeout=timeout, retry=retry
        ),
    ),
}


def _turn() -> Turn:
    return Turn(actor="user", text="token expired?", ts=0)


@pytest.mark.parametrize("kind", sorted(JUDGES))
def test_a_trickled_reply_times_out_at_the_deadline(kind: str) -> None:
    body, make = JUDGES[kind]
    assert len(body) * 0.05 > 5.0  # the whole reply would take > 5 s
    with RawHTTPServer(body, gap=0.05) as server:
        judge = make(server.url, 0.3, TWO)
        start = time.monotonic()
        with pytest.raises(BackendUnavailableError, match=r"no complete reply within 0\.3 s"):
            judge.judge("auth 401", [], _turn())
        took = time.monotonic() - start
    assert took < 1.5  # two 0.3 s attempts and the backoff, not the 5+ s trickle
    assert judge.calls == 2 and server.requests == 2


@pytest.mark.parametrize("kind", sorted(JUDGES))
def test_a_reply_within_the_deadline_is_read(kind: str) -> None:
    body, make = JUDGES[kind]
    with RawHTTPServer(body, gap=0.0) as server:
        answer = make(server.url, 2.0, ONE).judge("auth 401", [], _turn())
    assert answer.summary == "auth 401 debugging"
