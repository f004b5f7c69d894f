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

from collections.abc import Sequence
from typing import TypedDict

from episeg.judges.prompt import (
    JUDGE_SCHEMA,
    JUDGE_SYSTEM,
    JUDGE_TOOL,
    answer_from_reply,
    render_prompt,
)
from episeg.llm import RetryPolicy, StructuredBackend
from episeg.types import JudgeAnswer, Turn

__all__ = ["LLMJudge", "PromptCaps", "judge_retry"]


class PromptCaps(TypedDict, total=False):
    """The prompt caps every LLM judge takes as keywords (see :class:`LLMJudge`)."""

    max_recent: int
    max_turn_chars: int
    max_summary_chars: int


def judge_retry(retry: RetryPolicy | None) -> RetryPolicy:
    """``retry``, or the judges' default: one retry, then the signal abstains.

    >>> judge_retry(None).attempts
    2
    """
    return retry or RetryPolicy(attempts=2)


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
    JudgeError
        From :meth:`judge` when the reply is unusable; its subclass
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
            if value < low:
                raise ValueError(f"{label} must be >= {low}, got {value}")
        self._backend = backend
        self._max_recent = max_recent
        self._max_turn_chars = max_turn_chars
        self._max_summary_chars = max_summary_chars
        self._calls = 0

    @property
    def name(self) -> str:
        return f"judge:{self._backend.name}"

    @property
    def calls(self) -> int:
        """Requests this judge made, retries included."""
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
        try:
            data = self._backend.complete(
                system=JUDGE_SYSTEM, prompt=prompt, tool_name=JUDGE_TOOL, schema=JUDGE_SCHEMA
            )
        finally:
            self._calls += self._backend.calls - before
        return answer_from_reply(data, self.name)
