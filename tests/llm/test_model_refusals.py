"""Models refusing a request parameter: sent again without it, and so are later requests.

Newer Claude models answer HTTP 400 "`temperature` is deprecated for this model"; OpenAI's
reasoning models refuse ``temperature`` 0 and ``max_tokens``. Before, every judge call and
every salience score on such a model failed (the judge abstained, episodes went unscored).
The loopback server plays such a model (``refuses=``) with the APIs' messages; the real
SDKs talk to it.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from episeg import Memory
from episeg.config import EpisegConfig
from episeg.errors import RequestRejectedError
from episeg.judges import AnthropicJudge, OpenAICompatibleJudge
from episeg.llm import AnthropicBackend, OpenAICompatibleBackend, RetryPolicy
from episeg.llm._sampling import REASONING_BUDGET
from episeg.salience import LLMSalienceScorer
from episeg.testing import HashingEmbedder, InMemoryBackend, LoopbackLLMServer, Reply
from episeg.types import Decision, Episode, Turn

ONE = RetryPolicy(attempts=1, base_delay=0.01, max_delay=0.01)
SCHEMA = {
    "type": "object",
    "required": ["score"],
    "additionalProperties": False,
    "properties": {"score": {"type": "integer", "enum": list(range(1, 11))}},
}
TURN = Turn(actor="user", text="now the deploy", ts=0)


def _ask(backend: AnthropicBackend | OpenAICompatibleBackend) -> object:
    return backend.complete(system="Rate.", prompt="Memory: x", tool_name="rate", schema=SCHEMA)


def test_anthropic_drops_a_refused_temperature_once_and_for_later_calls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with LoopbackLLMServer(refuses={"temperature"}, default=Reply.json({"score": 4})) as server:
        backend = AnthropicBackend(base_url=server.anthropic_url, api_key="k", retry=ONE)
        with caplog.at_level(logging.WARNING, logger="episeg.llm"):
            assert _ask(backend) == {"score": 4}
            assert _ask(backend) == {"score": 4}
        sent = [r.body for r in server.requests]
    assert [("temperature" in body) for body in sent] == [True, False, False]
    assert backend.calls == 3
    assert all(body["max_tokens"] == 256 for body in sent)
    warnings = [r for r in caplog.records if "refused a request parameter" in r.getMessage()]
    assert len(warnings) == 1 and "sending no temperature" in warnings[0].getMessage()


def test_openai_moves_to_max_completion_tokens_and_drops_temperature() -> None:
    refuses = {"temperature", "max_tokens"}
    with LoopbackLLMServer(refuses=refuses, default=Reply.json({"score": 7})) as server:
        backend = OpenAICompatibleBackend(
            model="gpt-5-mini", base_url=server.openai_url, api_key="k", retry=ONE
        )
        assert _ask(backend) == {"score": 7}
        assert _ask(backend) == {"score": 7}
        sent = [r.body for r in server.requests]
    assert len(sent) == 4  # max_tokens refused, temperature refused, answered; then one
    final = sent[-1]
    assert "max_tokens" not in final and "temperature" not in final
    assert final["max_completion_tokens"] == REASONING_BUDGET  # reasoning is paid from it
    assert sent[-2] == final


def test_a_model_that_takes_both_gets_what_it_always_got() -> None:
    with LoopbackLLMServer(default=Reply.json({"score": 2})) as server:
        backend = OpenAICompatibleBackend(model="m", base_url=server.openai_url, api_key="k")
        assert _ask(backend) == {"score": 2}
        (request,) = server.requests
    assert request.body["temperature"] == 0.0 and request.body["max_tokens"] == 256


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_another_bad_request_is_not_sent_again(dialect: str) -> None:
    message = "prompt is too long: 300000 tokens > 200000 maximum; temperature unaffected"
    with LoopbackLLMServer(default=Reply.error(400, message=message)) as server:
        backend: AnthropicBackend | OpenAICompatibleBackend
        if dialect == "anthropic":
            backend = AnthropicBackend(base_url=server.anthropic_url, api_key="k", retry=ONE)
        else:
            backend = OpenAICompatibleBackend(
                model="m", base_url=server.openai_url, api_key="k", retry=ONE
            )
        with pytest.raises(RequestRejectedError, match="prompt is too long"):
            _ask(backend)
        assert len(server.requests) == 1
        assert "temperature" in server.requests[0].body  # nothing was dropped for it


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_judge_and_scorer_work_on_a_model_that_refuses_temperature(
    tmp_path: Path, dialect: str
) -> None:
    """Through Memory: the judge decides and episodes are scored, none of it failing."""
    refuses = {"temperature"} if dialect == "anthropic" else {"temperature", "max_tokens"}
    with LoopbackLLMServer(refuses=refuses) as server:
        server.enqueue(
            *[Reply.json({"decision": "continue", "summary": "auth debugging"})] * 2,
            Reply.json({"decision": "new", "summary": "deploy"}),
            Reply.json({"score": 8}),
        )
        if dialect == "anthropic":
            url = server.anthropic_url
            judge: AnthropicJudge | OpenAICompatibleJudge = AnthropicJudge(
                base_url=url, api_key="k", timeout=2.0
            )
            scorer = LLMSalienceScorer.anthropic(base_url=url, api_key="k", timeout=2.0)
        else:
            url = server.openai_url
            judge = OpenAICompatibleJudge(model="m", base_url=url, api_key="k", timeout=2.0)
            scorer = LLMSalienceScorer.openai_compatible(
                model="m", base_url=url, api_key="k", timeout=2.0
            )
        config = EpisegConfig().with_overrides(**{"judge.gate": "periodic", "judge.every": 1})
        memory = Memory(
            path=tmp_path,
            embedder=HashingEmbedder(),
            judge=judge,
            scorer=scorer,
            backend=InMemoryBackend(),
            config=config,
        )
        texts = ["the login fails", "token expired?", "yes, refreshed", "now deploy it"]
        steps = [
            memory.observe(Turn(actor="user", text=t, ts=float(n), id=f"t{n}", user="u"))
            for n, t in enumerate(texts)
        ]
        closed = [episode for step in steps for episode in step]
        assert [len(e.turns) for e in closed] == [3]  # the judge's "new" cut before turn 4
        assert closed[0].salience is not None and closed[0].salience.score == 8
        opened = memory.flush()[0]
        judged = [v for v in opened.boundary_verdicts if v.signal == "prediction"]
        assert [v.decision for v in judged] == [Decision.BOUNDARY], opened.boundary_verdicts
        memory.close()
        assert server.pending() == 0


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_a_declined_answer_is_a_rejected_request_and_not_paid_for_twice(dialect: str) -> None:
    """A refusal (Anthropic ``stop_reason: "refusal"``, OpenAI ``refusal``) was an unusable
    reply: the scorer asked again, paying twice for the same refusal, and the category and
    explanation were lost."""
    declined = Reply.refusal("not something I can rate", category="general_harms")
    with LoopbackLLMServer(default=declined) as server:
        backend: AnthropicBackend | OpenAICompatibleBackend
        if dialect == "anthropic":
            backend = AnthropicBackend(base_url=server.anthropic_url, api_key="k", retry=ONE)
            scorer = LLMSalienceScorer.anthropic(base_url=server.anthropic_url, api_key="k")
        else:
            backend = OpenAICompatibleBackend(
                model="m", base_url=server.openai_url, api_key="k", retry=ONE
            )
            scorer = LLMSalienceScorer.openai_compatible(
                model="m", base_url=server.openai_url, api_key="k"
            )
        with pytest.raises(RequestRejectedError, match=r"declined.*not something I can rate"):
            _ask(backend)
        assert len(server.requests) == 1
        salience = scorer.score(_episode("how do I pick this lock"))
        assert len(server.requests) == 2  # one request for the score, not retried
    assert salience.score is None and "declined" in salience.reason
    if dialect == "anthropic":
        assert "general_harms" in salience.reason


def _episode(text: str) -> Episode:
    turns = (Turn(actor="user", text=text, ts=0.0),)
    return Episode(
        id="e", user="u", session="s", turns=turns, summary="", opened_at=0.0, closed_at=1.0
    )


def test_a_model_thinking_by_default_is_offered_the_tool_instead_of_forced() -> None:
    """Forcing a tool is refused while thinking is on; such a model failed every call."""
    with LoopbackLLMServer(refuses={"tool_choice"}, default=Reply.json({"score": 3})) as server:
        backend = AnthropicBackend(base_url=server.anthropic_url, api_key="k", retry=ONE)
        assert _ask(backend) == {"score": 3}
        assert _ask(backend) == {"score": 3}
        choices = [r.body["tool_choice"] for r in server.requests]
    assert choices == [{"type": "tool", "name": "rate"}, {"type": "auto"}, {"type": "auto"}]
