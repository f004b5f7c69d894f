"""A judge on any OpenAI-compatible server (Ollama, vLLM, llama.cpp, OpenAI).

>>> from episeg.judges import OpenAICompatibleJudge
>>> from episeg.testing import LoopbackLLMServer, Reply
>>> from episeg.types import Turn
>>> with LoopbackLLMServer() as server:
...     server.enqueue(Reply.json({"decision": "continue", "summary": "auth 401 debugging"}))
...     judge = OpenAICompatibleJudge(model="llama3.1", api_key="ollama",
...                                   base_url=server.openai_url, timeout=2.0)
...     answer = judge.judge("auth 401", [], Turn(actor="user", text="token expired?", ts=0))
>>> answer.decision, answer.summary
(<Decision.CONTINUE: 'continue'>, 'auth 401 debugging')
"""

from __future__ import annotations

from typing import Unpack

from episeg.judges._base import LLMJudge, PromptCaps, judge_retry
from episeg.llm import OpenAICompatibleBackend, RetryPolicy

__all__ = ["OpenAICompatibleJudge"]


class OpenAICompatibleJudge(LLMJudge):
    """:class:`LLMJudge` over an :class:`~episeg.llm.OpenAICompatibleBackend`.

    Parameters
    ----------
    model : str
        Model name as the server knows it.
    api_key : str or None
        Falls back to ``OPENAI_API_KEY``; local servers accept any string.
    base_url : str or None
        API root including ``/v1``, e.g. ``http://127.0.0.1:11434/v1`` for Ollama.
    timeout : float, default 10.0
    structured : {"json_schema", "json_object", "none"}, default "json_schema"
        How the server is asked to constrain output; see the backend.
    retry : RetryPolicy or None
        Default: one retry, then the signal abstains; a ``Retry-After`` longer
        than ``timeout`` abstains at once (see :func:`~episeg.judges._base.judge_retry`).
    max_recent, max_turn_chars, max_summary_chars
        Prompt caps, see :class:`LLMJudge`.
    """

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 10.0,
        structured: str = "json_schema",
        retry: RetryPolicy | None = None,
        **caps: Unpack[PromptCaps],
    ) -> None:
        backend = OpenAICompatibleBackend(
            model=model,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            structured=structured,
            retry=judge_retry(retry, timeout),
        )
        super().__init__(backend, **caps)
