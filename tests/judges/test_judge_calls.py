"""``LLMJudge.calls`` counts this judge's own requests, also under concurrency (review 2, L1).

Before, it was the shared backend's counter after the call minus before it, so
every call that overlapped another counted the other's requests too.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from episeg.judges import LLMJudge, OpenAICompatibleJudge
from episeg.llm import OpenAICompatibleBackend, RetryPolicy
from episeg.salience import LLMSalienceScorer
from episeg.testing import LoopbackLLMServer, Reply
from episeg.types import Episode, Turn

ANSWER = {"decision": "continue", "summary": "auth 401 debugging"}
TURN = Turn(actor="user", text="token expired?", ts=0)


def test_concurrent_calls_count_their_own_requests() -> None:
    with LoopbackLLMServer(default=Reply.json(ANSWER, delay=0.3)) as server:
        judge = OpenAICompatibleJudge(
            model="m", api_key="k", base_url=server.openai_url, timeout=5.0
        )
        start = threading.Barrier(4)

        def call() -> None:
            start.wait()
            judge.judge("auth", [], TURN)

        threads = [threading.Thread(target=call) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(server.requests) == 4
    assert judge.backend.calls == 4
    assert judge.calls == 4


def test_a_backend_shared_with_a_scorer_counts_only_the_judges_requests() -> None:
    episode = Episode(
        id="e", user="u", session="s", summary="x", opened_at=0, closed_at=1, turns=(TURN,)
    )
    with LoopbackLLMServer() as server:
        server.enqueue(Reply.json(ANSWER, delay=0.5), Reply.json({"score": 3}))
        backend = OpenAICompatibleBackend(
            model="m", api_key="k", base_url=server.openai_url, timeout=5.0
        )
        judge, scorer = LLMJudge(backend), LLMSalienceScorer(backend)
        worker = threading.Thread(target=judge.judge, args=("auth", [], TURN))
        worker.start()
        while not server.requests:  # the judge's request is in flight
            time.sleep(0.005)
        assert scorer.score(episode).score == 3
        worker.join()
    assert backend.calls == 2
    assert judge.calls == 1


class _Silent:
    """A custom backend that does not report its requests with ``note_request``."""

    name = "silent"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, **_: Any) -> dict[str, Any]:
        self.calls += 2  # one retry, say
        return dict(ANSWER)


def test_a_backend_that_does_not_report_is_counted_by_its_total() -> None:
    judge = LLMJudge(_Silent())
    judge.judge("auth", [], TURN)
    assert judge.calls == 2


def test_retries_are_counted() -> None:
    with LoopbackLLMServer() as server:
        server.enqueue(Reply.error(503), Reply.json(ANSWER))
        judge = OpenAICompatibleJudge(
            model="m", api_key="k", base_url=server.openai_url, timeout=5.0,
            retry=RetryPolicy(attempts=2, base_delay=0.0),
        )  # fmt: skip
        judge.judge("auth", [], TURN)
    assert judge.calls == 2
