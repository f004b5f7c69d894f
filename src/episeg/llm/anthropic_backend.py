"""Structured output from the Anthropic Messages API through a forced, strict tool.

The model must call the one tool offered (``tool_choice={"type": "tool"}``; a
model that thinks by default refuses that, and is then offered the tool with
``{"type": "auto"}``), so its answer is the tool input; integer ranges are
expressed as ``enum``, since strict tools take no ``minimum``/``maximum``. The
reply is checked against the schema here as well: a server may still send anything.

>>> from episeg.llm import AnthropicBackend
>>> from episeg.testing import LoopbackLLMServer, Reply
>>> schema = {"type": "object", "required": ["score"], "additionalProperties": False,
...           "properties": {"score": {"type": "integer", "enum": list(range(1, 11))}}}
>>> with LoopbackLLMServer() as server:
...     server.enqueue(Reply.json({"score": 3}))
...     backend = AnthropicBackend(base_url=server.anthropic_url, api_key="test", timeout=2.0)
...     answer = backend.complete(system="Rate.", prompt="Memory: tea", tool_name="rate",
...                               schema=schema)
...     sent = server.requests[0].body
>>> answer, backend.calls, sent["temperature"], sent["tool_choice"]
({'score': 3}, 1, 0.0, {'type': 'tool', 'name': 'rate'})
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from episeg.errors import ConfigError, JudgeError, RequestRejectedError
from episeg.llm._base import (
    RetryPolicy,
    check_request_limits,
    read_reply,
    shared_tls_context,
    validate_reply,
)
from episeg.llm._config import check_api_key, check_base_url
from episeg.llm._counting import RequestCounter
from episeg.llm._deadline import DeadlineRunner
from episeg.llm._retry import (
    Failure,
    classify_connection,
    classify_local,
    classify_status,
    run_with_retries,
)
from episeg.llm._sampling import RequestOptions, send_adapting
from episeg.llm._scrub import scrub
from episeg.llm._wire_schema import wire_schema

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicBackend"]

log = logging.getLogger(__name__)

DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5"


class AnthropicBackend:
    """A thin Anthropic client: temperature 0, forced tool, bounded retries.

    Parameters
    ----------
    model : str, default "claude-haiku-4-5"
        Model id sent with every request.
    api_key : str or None
        Falls back to ``ANTHROPIC_API_KEY``; a ``ConfigError`` if neither is set,
        or if the key holds whitespace (a trailing newline) or non-ASCII.
    base_url : str or None
        API root (``None``: ``ANTHROPIC_BASE_URL`` or the SDK default); an
        ``http://`` or ``https://`` URL, else a ``ConfigError``.
    timeout : float, default 30.0
        Wall-clock seconds per attempt (finite) before it counts as a
        (retryable) timeout, however the server paces its reply
        (:mod:`episeg.llm._deadline`).
    max_tokens : int, default 256
        Output token budget; a tool answer is small. A reply cut at this
        budget (``stop_reason: "max_tokens"``) is unusable (``JudgeError``).
    temperature : float or None, default 0.0
        Sent in the request body (this SDK version has no ``temperature``
        argument, so it goes through ``extra_body``); ``None`` never sends it.
        Newer Claude models refuse it ("`temperature` is deprecated for this
        model"): the request is then sent again without it, and so are all
        later ones of this backend (:mod:`episeg.llm._sampling`).
    retry : RetryPolicy
        Attempts and backoff for 429/529/5xx/timeouts (SDK retries are off).
    """

    def __init__(
        self,
        *,
        model: str = DEFAULT_ANTHROPIC_MODEL,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_tokens: int = 256,
        temperature: float | None = 0.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ConfigError("no Anthropic API key: pass api_key= or set ANTHROPIC_API_KEY")
        check_api_key(key, "ANTHROPIC_API_KEY")
        self._secrets = (key,)  # redacted from every error text (a server may echo it)
        check_base_url(base_url, "ANTHROPIC_BASE_URL")
        check_request_limits(model, timeout, max_tokens)
        if temperature is not None and not 0.0 <= temperature <= 1.0:
            raise ConfigError(f"temperature must be in [0, 1] or None, got {temperature}")
        self._model = model
        self._options = RequestOptions(temperature=temperature, max_tokens=max_tokens)
        self._force_tool = True  # until a model thinking by default refuses it
        self._max_tokens = max_tokens
        self._retry = retry or RetryPolicy()
        self._counter = RequestCounter()
        self._deadline = DeadlineRunner(timeout)
        import anthropic  # here, not at module top: the SDK takes ~1-2 s to import

        self._client: anthropic.Anthropic = anthropic.Anthropic(
            api_key=key,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
            # the SDK's default client, with the process's one TLS context (see shared_tls_context)
            http_client=anthropic.DefaultHttpxClient(verify=shared_tls_context()),
        )

    @property
    def name(self) -> str:
        return f"anthropic:{self._model}"

    @property
    def calls(self) -> int:
        """HTTP requests made so far, retries included."""
        return self._counter.value

    def _sampling(self) -> dict[str, Any]:
        temperature = self._options.temperature
        return {} if temperature is None else {"temperature": temperature}

    def _run(self, send: Callable[[], Any]) -> Any:
        self._counter.note()
        return self._deadline.run(send)

    def _adapt(self, exc: Exception) -> bool:
        """True if ``exc`` is a 400 refusing a forced tool or the temperature, now changed."""
        import anthropic  # loaded by the constructor already

        if not isinstance(exc, anthropic.BadRequestError):
            return False
        message = scrub(str(exc.message), self._secrets)
        if self._force_tool and "tool_choice" in message and "thinking" in message.lower():
            # a model that thinks by default cannot be forced to a tool: offer it instead
            # (the prompt asks for the tool alone, and the reply must still be that tool)
            self._force_tool = False
            log.warning("%s refused a forced tool (%s): offered from now on", self.name, message)
            return True
        return self._options.adapt(message, model=self.name)

    def complete(
        self, *, system: str, prompt: str, tool_name: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask once (with retries on transient errors); return the validated tool input."""

        def send() -> Any:
            return self._client.messages.create(
                model=self._model,
                max_tokens=self._max_tokens,
                system=system,
                messages=[{"role": "user", "content": prompt}],
                tools=[
                    {
                        "name": tool_name,
                        "description": "Record your answer.",
                        "input_schema": wire_schema(schema),
                        "strict": True,
                    }
                ],
                tool_choice=(
                    {"type": "tool", "name": tool_name} if self._force_tool else {"type": "auto"}
                ),
                extra_body=self._sampling(),
            )

        def attempt() -> dict[str, Any]:
            message = send_adapting(self._run, send, self._adapt)
            return read_reply(lambda: _tool_input(message, tool_name, schema, self._max_tokens))

        return run_with_retries(self.name, self._retry, attempt, _classify, secrets=self._secrets)


def _tool_input(
    message: Any, tool_name: str, schema: dict[str, Any], max_tokens: int
) -> dict[str, Any]:
    stop = getattr(message, "stop_reason", None)
    if stop == "max_tokens":
        raise JudgeError(f"reply truncated at max_tokens={max_tokens} (stop_reason max_tokens)")
    if stop == "refusal":  # the same prompt would be declined again: not worth paying twice
        details = getattr(message, "stop_details", None)
        category = getattr(details, "category", None)
        explanation = str(getattr(details, "explanation", None) or "")[:300]
        raise RequestRejectedError(
            f"the model declined to answer (stop_reason refusal, category {category!r}): "
            f"{explanation!r}"
        )
    blocks = list(getattr(message, "content", None) or [])
    for block in blocks:
        if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == tool_name:
            return validate_reply(block.input, schema)
    kinds = [getattr(block, "type", "?") for block in blocks]
    text = " ".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
    raise JudgeError(
        f"reply has no {tool_name!r} tool_use block (blocks: {kinds}, text: {text[:200]!r})"
    )


def _classify(exc: Exception) -> Failure | None:
    import anthropic  # loaded by the constructor already

    local = classify_local(exc)
    if local is not None:
        return local
    if isinstance(exc, anthropic.APITimeoutError):
        return Failure("request timed out", retryable=True, unavailable=True)
    if isinstance(exc, anthropic.APIConnectionError):
        return classify_connection(exc)
    if isinstance(exc, anthropic.APIStatusError):
        return classify_status(exc.status_code, exc.response.headers, str(exc.message)[:300])
    if isinstance(exc, json.JSONDecodeError):
        return Failure(f"response body is not JSON: {exc}", retryable=False, unavailable=False)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return Failure(f"malformed response: {exc}", retryable=False, unavailable=False)
    return None
