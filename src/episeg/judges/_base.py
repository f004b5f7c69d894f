"""The LLM judge over any :class:`~episeg.llm.StructuredBackend`.

:class:`~episeg.judges.AnthropicJudge` and
:class:`~episeg.judges.OpenAICompatibleJudge` are this class with their
backend built from keyword arguments.

>>> from episeg.judges import LLMJudge
>>> from episeg.llm import OpenAICompatibleBackend
>>> from episeg.testing import LoopbackLLMServer, Reply
>>> from episeg.types import Turn
>>> with LoopbackLLMServer() as server:
...     server.enqueue(Reply.json({"decision": "sub-episode",
...                                "summary": "fix the failing pip install"}))
...     backend = OpenAICompatibleBackend(model="m", api_key="k", base_url=server.openai_url)
...     judge = LLMJudge(backend)
...     answer = judge.judge("set up the project", [], Turn(actor="tool", text="pip: error", ts=0))
>>> answer.decision, answer.summary, judge.calls
(<Decision.SUB_EPISODE: 'sub-episode'>, 'fix the failing pip install', 1)
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from numbers import Integral
from typing import TypedDict

from episeg.errors import ConfigError
from episeg.judges.prompt import (
    JUDGE_SCHEMA,
    JUDGE_SYSTEM,
    JUDGE_TOOL,
    answer_from_reply,
    render_prompt,
)
from episeg.llm import RetryPolicy, StructuredBackend, count_requests, validate_reply
from episeg.types import JudgeAnswer, Turn

__all__ = ["LLMJudge", "PromptCaps", "judge_retry"]


class PromptCaps(TypedDict, total=False):
    """The prompt caps every LLM judge takes as keywords (see :class:`LLMJudge`)."""

    max_recent: int
    max_turn_chars: int
    max_summary_chars: int


def judge_retry(retry: RetryPolicy | None, timeout: float) -> RetryPolicy:
    """``retry``, or the judges' default: one retry, then the signal abstains.

    A judge sits on the ingest path (``observe`` waits for it), so by default a
    server's ``Retry-After`` is honoured only up to the judge's own ``timeout``;
    a longer one fails the call at once (the signal abstains) instead of holding
    the turn for a minute.

    >>> policy = judge_retry(None, 10.0)
    >>> policy.attempts, policy.max_retry_after, policy.fail_beyond_retry_after
    (2, 10.0, True)
    """
    if retry is not None:
        return retry
    usable = isinstance(timeout, int | float) and 0 < timeout < float("inf")
    cap = timeout if usable else RetryPolicy.max_retry_after  # a bad timeout: the backend says so
    return RetryPolicy(attempts=2, max_retry_after=cap, fail_beyond_retry_after=True)


class LLMJudge:
    """Prediction-error judge asking a chat model through a structured backend.

    Parameters
    ----------
    backend : StructuredBackend
        The client that sends the prompt (temperature 0, forced schema, retries).
    max_recent : int, default 6
        Recent turns shown to the model (the last ones).
    max_turn_chars : int, default 1000
        Each turn's text is clipped to this many characters (head and tail kept).
    max_summary_chars : int, default 300
        Cap of the running summary shown.

    Raises
    ------
    ConfigError
        A cap that is not an integer in range (also a ``ValueError``).
    JudgeError
        From :meth:`judge` when the reply is unusable (checked against the
        schema whatever the backend: a custom one may return anything); its subclass
        ``BackendUnavailableJudgeError`` (also a ``BackendUnavailableError``)
        when the server is unreachable, times out or stays overloaded.
    """

    def __init__(
        self,
        backend: StructuredBackend,
        *,
        max_recent: int = 6,
        max_turn_chars: int = 1000,
        max_summary_chars: int = 300,
    ) -> None:
        if not isinstance(backend, StructuredBackend):
            raise TypeError(f"backend must implement StructuredBackend, got {type(backend)!r}")
        for label, value, low in (
            ("max_recent", max_recent, 0),
            ("max_turn_chars", max_turn_chars, 1),
            ("max_summary_chars", max_summary_chars, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
                raise ConfigError(f"{label} must be an integer >= {low}, got {value!r}")
        self._backend = backend
        self._max_recent = int(max_recent)
        self._max_turn_chars = int(max_turn_chars)
        self._max_summary_chars = int(max_summary_chars)
        self._calls = 0
        self._calls_lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"judge:{self._backend.name}"

    @property
    def calls(self) -> int:
        """Requests this judge made, retries included.

        Counted per call (:func:`episeg.llm.count_requests`), so a backend shared
        with other threads or with a salience scorer adds only this judge's
        requests.
        """
        return self._calls

    @property
    def backend(self) -> StructuredBackend:
        return self._backend

    def judge(self, summary: str, recent: Sequence[Turn], turn: Turn) -> JudgeAnswer:
        """Does ``turn`` continue the episode, open a new one, or open a sub-episode?"""
        prompt = render_prompt(
            summary,
            recent,
            turn,
            max_recent=self._max_recent,
            max_turn_chars=self._max_turn_chars,
            max_summary_chars=self._max_summary_chars,
        )
        before = self._backend.calls
        with count_requests() as mine:
            try:
                data = self._backend.complete(
                    system=JUDGE_SYSTEM, prompt=prompt, tool_name=JUDGE_TOOL, schema=JUDGE_SCHEMA
                )
            finally:
                # a backend that does not report its requests: the change of its total
                made = mine.value or max(0, self._backend.calls - before)
                with self._calls_lock:
                    self._calls += made
        return answer_from_reply(validate_reply(data, JUDGE_SCHEMA), self.name)
