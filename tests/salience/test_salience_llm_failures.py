"""``LLMSalienceScorer.score`` never raises, never retries a rejected request, and never
coerces an out-of-schema score (review 2: L3, L6, L8). Real SDKs, loopback server."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from episeg.llm import RetryPolicy
from episeg.salience import LLMSalienceScorer
from episeg.testing import LoopbackLLMServer, Reply
from episeg.types import Episode, Turn

EPISODE = Episode(
    id="ep-1",
    user="u",
    session="s",
    summary="outage",
    opened_at=0.0,
    closed_at=1.0,
    turns=(Turn(actor="user", text="production is down, 503 everywhere", ts=0.0),),
)
ONE = RetryPolicy(attempts=1)


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
@pytest.mark.parametrize("retries", [1, 3])
def test_a_rejected_request_is_sent_once(dialect: str, retries: int) -> None:
    with LoopbackLLMServer(default=Reply.error(400, message="prompt is too long")) as server:
        if dialect == "openai":
            scorer = LLMSalienceScorer.openai_compatible(
                model="m", api_key="k", base_url=server.openai_url, retries=retries
            )
        else:
            scorer = LLMSalienceScorer.anthropic(
                api_key="k", base_url=server.anthropic_url, retries=retries
            )
        salience = scorer.score(EPISODE)
        assert len(server.requests) == 1
    assert salience.score is None
    assert "request rejected" in salience.reason and "HTTP 400" in salience.reason


@pytest.mark.parametrize(
    "body", ['{"choices": [1]}', '{"choices": {"a": 1}}'], ids=["list-of-int", "dict"]
)
def test_a_malformed_reply_leaves_the_episode_unscored(body: str) -> None:
    with LoopbackLLMServer(default=Reply.raw(body)) as server:
        scorer = LLMSalienceScorer.openai_compatible(
            model="m", api_key="k", base_url=server.openai_url, retry=ONE
        )
        salience = scorer.score(EPISODE)
    assert salience.score is None and "malformed reply" in salience.reason


class _Fixed:
    """A custom backend answering ``{"score": value}``, or raising ``error``."""

    name = "fixed"
    calls = 0

    def __init__(self, value: object = None, error: Exception | None = None) -> None:
        self.value, self.error = value, error

    def complete(self, **_: Any) -> dict[str, Any]:
        if self.error is not None:
            raise self.error
        return {"score": self.value}


@pytest.mark.parametrize("value", [7.9, "7", True, 0, 11, None], ids=repr)
def test_an_out_of_schema_score_from_a_custom_backend_is_unscored(value: object) -> None:
    salience = LLMSalienceScorer(_Fixed(value)).score(EPISODE)
    assert salience.score is None
    assert "unusable reply" in salience.reason and "score" in salience.reason


def test_a_valid_score_from_a_custom_backend_is_kept() -> None:
    assert LLMSalienceScorer(_Fixed(7)).score(EPISODE).score == 7


def test_any_error_of_a_backend_leaves_the_episode_unscored_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    scorer = LLMSalienceScorer(_Fixed(error=KeyError("choices")))
    with caplog.at_level(logging.ERROR, logger="episeg.salience"):
        salience = scorer.score(EPISODE)
    assert salience.score is None and "KeyError" in salience.reason
    assert "scorer failed" in caplog.text
