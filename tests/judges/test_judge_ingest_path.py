"""The judge on the ingest path: Retry-After capped by its timeout (L11), and
summaries without control or format characters (L10). Review 2."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest

from episeg.errors import BackendUnavailableError, JudgeError
from episeg.judges import AnthropicJudge, LLMJudge, OpenAICompatibleJudge
from episeg.testing import LoopbackLLMServer, Reply
from episeg.types import Decision, Turn

TURN = Turn(actor="user", text="now deploy", ts=0)
JudgeFactory = Callable[[LoopbackLLMServer], LLMJudge]


@pytest.fixture(params=["anthropic", "openai"])
def make(request: pytest.FixtureRequest) -> JudgeFactory:
    if request.param == "anthropic":
        return lambda srv: AnthropicJudge(api_key="k", base_url=srv.anthropic_url, timeout=0.5)
    return lambda srv: OpenAICompatibleJudge(
        model="m", api_key="k", base_url=srv.openai_url, timeout=0.5
    )


class TestRetryAfter:
    def test_a_wait_longer_than_the_timeout_abstains_at_once(
        self, make: JudgeFactory, caplog: pytest.LogCaptureFixture
    ) -> None:
        with LoopbackLLMServer() as server:
            server.enqueue(
                Reply.error(429, retry_after=3),
                Reply.json({"decision": "new", "summary": "deploy"}),
            )
            judge = make(server)
            start = time.monotonic()
            with (
                caplog.at_level(logging.ERROR, logger="episeg.llm"),
                pytest.raises(BackendUnavailableError, match="asked to wait 3 s"),
            ):
                judge.judge("auth", [], TURN)
            took = time.monotonic() - start
            assert server.pending() == 1  # not asked again
        assert took < 1.5  # not the server's 3 s
        assert judge.calls == 1
        assert "max_retry_after=0.5" in caplog.text

    def test_a_short_wait_is_honoured(self, make: JudgeFactory) -> None:
        with LoopbackLLMServer() as server:
            server.enqueue(
                Reply.error(429, retry_after=0.2),
                Reply.json({"decision": "new", "summary": "deploy"}),
            )
            judge = make(server)
            start = time.monotonic()
            assert judge.judge("auth", [], TURN).decision is Decision.BOUNDARY
            assert time.monotonic() - start >= 0.2
        assert judge.calls == 2


class TestSummaryCharacters:
    def test_control_and_format_characters_are_removed_and_logged(
        self, make: JudgeFactory, caplog: pytest.LogCaptureFixture
    ) -> None:
        said = "deploy\x00 v2 \x1b[31m red \u202egnp.exe\x07 done\u200b\ttoday\r\n\x85now"
        with LoopbackLLMServer() as server:
            server.enqueue(Reply.json({"decision": "continue", "summary": said}))
            with caplog.at_level(logging.WARNING, logger="episeg.judges"):
                answer = make(server).judge("auth", [], TURN)
        assert answer.summary == "deploy v2 [31m red gnp.exe done today now"
        assert "removed 5 control/format character(s)" in caplog.text

    def test_a_summary_of_nothing_but_control_characters_is_a_judge_error(
        self, make: JudgeFactory
    ) -> None:
        with LoopbackLLMServer() as server:
            server.enqueue(Reply.json({"decision": "new", "summary": "\x1b\u202e\x00"}))
            with pytest.raises(JudgeError, match="summary is empty"):
                make(server).judge("auth", [], TURN)

    def test_ordinary_text_is_untouched(self, make: JudgeFactory) -> None:
        with LoopbackLLMServer() as server:
            server.enqueue(Reply.json({"decision": "new", "summary": "déploiement: v2 → prod 🚀"}))
            assert make(server).judge("auth", [], TURN).summary == "déploiement: v2 → prod 🚀"
