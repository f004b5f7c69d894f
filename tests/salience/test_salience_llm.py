"""LLMSalienceScorer through the real anthropic/openai SDKs and the loopback server."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from episeg.llm import RetryPolicy
from episeg.salience import AnchorSet, LLMSalienceScorer
from episeg.testing import LoopbackLLMServer, Reply
from episeg.types import Actor, Episode, Turn
from episeg.typing import SalienceScorer

FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02)  # real backoff, tiny waits
EPISODE = Episode(
    id="ep-1",
    user="u",
    session="s",
    summary="outage",
    opened_at=0.0,
    closed_at=1.0,
    turns=(
        Turn(actor=Actor.USER, text="production is down, 503 everywhere", ts=0.0),
        Turn(actor=Actor.TOOL, text="error: pool exhausted", ts=1.0),
    ),
)

Factory = Callable[..., LLMSalienceScorer]


@pytest.fixture
def server() -> Iterator[LoopbackLLMServer]:
    with LoopbackLLMServer() as srv:
        yield srv


@pytest.fixture(params=["anthropic", "openai"])
def make(request: pytest.FixtureRequest, server: LoopbackLLMServer) -> Factory:
    def build(**kwargs: Any) -> LLMSalienceScorer:
        if request.param == "anthropic":
            return LLMSalienceScorer.anthropic(
                api_key="k", base_url=server.anthropic_url, timeout=0.5, retry=FAST, **kwargs
            )
        return LLMSalienceScorer.openai_compatible(
            model="m", api_key="k", base_url=server.openai_url, timeout=0.5, retry=FAST, **kwargs
        )

    return build


class TestLLMSalienceScorer:
    def test_scores_once_with_anchored_prompt(
        self, server: LoopbackLLMServer, make: Factory
    ) -> None:
        server.enqueue(Reply.json({"score": 9}))
        scorer = make(anchors="sre")
        assert isinstance(scorer, SalienceScorer)
        result = scorer.score(EPISODE)
        assert result.score == 9 and result.normalized == pytest.approx(8 / 9)
        assert scorer.calls == 1
        request = server.requests[0]
        prompt = request.prompt_text
        assert "On the scale of 1 to 10, where 1 is a one-line clarifying question" in prompt
        assert "10 is a critical production incident and its root cause" in prompt
        assert "rate the likely poignancy of the following memory" in prompt
        assert "production is down, 503 everywhere" in prompt
        assert request.body["temperature"] == 0

    def test_schema_forces_integer_enum(self, server: LoopbackLLMServer) -> None:
        server.enqueue(Reply.json({"score": 2}))
        LLMSalienceScorer.anthropic(api_key="k", base_url=server.anthropic_url).score(EPISODE)
        body = server.requests[0].body
        assert body["tool_choice"] == {"type": "tool", "name": "rate_poignancy"}
        score = body["tools"][0]["input_schema"]["properties"]["score"]
        assert score == {"type": "integer", "enum": list(range(1, 11))}

    def test_custom_anchors_in_prompt(self, server: LoopbackLLMServer, make: Factory) -> None:
        server.enqueue(Reply.json({"score": 3}))
        anchors = AnchorSet(
            "support",
            "a greeting",
            "a churn-risk escalation",
            ("saying hello",),
            ("a customer threatening to cancel",),
        )
        make(anchors=anchors).score(EPISODE)
        assert "(e.g., a customer threatening to cancel)" in server.requests[0].prompt_text

    def test_bad_reply_retried_then_scored(self, server: LoopbackLLMServer, make: Factory) -> None:
        server.enqueue(Reply.json({"score": 11}), Reply.json({"score": 7}))
        scorer = make()
        assert scorer.score(EPISODE).score == 7
        assert scorer.calls == 2

    @pytest.mark.parametrize(
        "bad",
        [Reply.json({"score": 11}), Reply.text("7-8, depending"), Reply.json({"score": "7"})],
        ids=["out-of-range", "prose", "string"],
    )
    def test_persistent_garbage_is_unscored_not_5(
        self, server: LoopbackLLMServer, make: Factory, bad: Reply, caplog: pytest.LogCaptureFixture
    ) -> None:
        server.enqueue(bad, bad)
        scorer = make()
        with caplog.at_level(logging.WARNING, logger="episeg"):
            result = scorer.score(EPISODE)
        assert result.score is None and result.normalized is None
        assert "unusable reply" in result.reason
        assert result.scorer == scorer.name
        assert scorer.calls == 2  # one retry by default
        assert "ep-1 left unscored" in caplog.text

    def test_retries_configurable(self, server: LoopbackLLMServer, make: Factory) -> None:
        server.enqueue(Reply.text("no"))
        scorer = make(retries=0)
        assert not scorer.score(EPISODE).is_scored
        assert scorer.calls == 1

    @pytest.mark.slow  # two 0.5 s client timeouts
    def test_timeout_is_unscored(
        self, server: LoopbackLLMServer, make: Factory, caplog: pytest.LogCaptureFixture
    ) -> None:
        server.enqueue(Reply.slow(2.0), Reply.slow(2.0))
        with caplog.at_level(logging.WARNING, logger="episeg"):
            result = make().score(EPISODE)
        assert not result.is_scored and "timed out" in result.reason
        assert "left unscored" in caplog.text

    def test_overloaded_is_unscored(
        self, server: LoopbackLLMServer, make: Factory, caplog: pytest.LogCaptureFixture
    ) -> None:
        server.enqueue(Reply.overloaded(), Reply.overloaded())
        with caplog.at_level(logging.WARNING, logger="episeg"):
            result = make().score(EPISODE)
        assert not result.is_scored and "unavailable" in result.reason
        assert "HTTP 529" in caplog.text

    def test_429_then_success(self, server: LoopbackLLMServer, make: Factory) -> None:
        server.enqueue(Reply.error(429, retry_after=0.1), Reply.json({"score": 4}))
        assert make().score(EPISODE).score == 4

    def test_bad_values(self, server: LoopbackLLMServer) -> None:
        with pytest.raises(ValueError, match="retries"):
            LLMSalienceScorer.anthropic(api_key="k", base_url=server.anthropic_url, retries=-1)
        with pytest.raises(ValueError, match="valid: coding, general, sre"):
            LLMSalienceScorer.anthropic(api_key="k", base_url=server.anthropic_url, anchors="legal")
