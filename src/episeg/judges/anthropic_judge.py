"""The seed's judge: Claude through the Anthropic SDK, forced tool, temperature 0.

>>> from episeg.judges import AnthropicJudge
>>> from episeg.testing import LoopbackLLMServer, Reply
>>> from episeg.types import Turn
>>> with LoopbackLLMServer() as server:
...     server.enqueue(Reply.json({"decision": "new", "summary": "deploying v2 to staging"}))
...     judge = AnthropicJudge(api_key="k", base_url=server.anthropic_url, timeout=2.0)
...     answer = judge.judge("auth 401 debugging", [], Turn(actor="user", text="now deploy", ts=0))
>>> answer.decision, judge.calls
(<Decision.BOUNDARY: 'boundary'>, 1)
"""

from __future__ import annotations

from typing import Unpack

from episeg.judges._base import LLMJudge, PromptCaps, judge_retry
from episeg.llm import AnthropicBackend, RetryPolicy
from episeg.llm.anthropic_backend import DEFAULT_ANTHROPIC_MODEL

__all__ = ["AnthropicJudge"]


class AnthropicJudge(LLMJudge):
    """:class:`LLMJudge` over an :class:`~episeg.llm.AnthropicBackend`.

    Parameters
    ----------
    model : str, default "claude-haiku-4-5"
    api_key : str or None
        Falls back to ``ANTHROPIC_API_KEY``.
    base_url : str or None
        API root; ``None`` uses ``ANTHROPIC_BASE_URL`` or the SDK default.
    timeout : float, default 10.0
        Seconds per request; a judge sits on the ingest path, so keep it short.
    retry : RetryPolicy or None
        Default: one retry, then the signal abstains; a ``Retry-After`` longer
        than ``timeout`` abstains at once (see :func:`~episeg.judges._base.judge_retry`).
    max_recent, max_turn_chars, max_summary_chars
        Prompt caps, see :class:`LLMJudge`.
    """

    def __init__(
        self,
        *,
        model: str = DEFAULT_ANTHROPIC_MODEL,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        **caps: Unpack[PromptCaps],
    ) -> None:
        backend = AnthropicBackend(
            model=model,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            retry=judge_retry(retry, timeout),
        )
        super().__init__(backend, **caps)
