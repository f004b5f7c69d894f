"""Structured output from any OpenAI-compatible chat server (OpenAI, Ollama, vLLM, llama.cpp).

The request asks for ``response_format={"type": "json_schema", ...}`` (strict)
at temperature 0. Servers differ in how well they honour it, so the reply text
is always parsed leniently (bare JSON, a fenced block, or an object inside prose
or after a ``<think>`` block) and checked against the schema here; exactly one
distinct answer fitting the schema must be found (:mod:`episeg.llm._json`).

>>> from episeg.llm import OpenAICompatibleBackend
>>> from episeg.testing import LoopbackLLMServer, Reply
>>> schema = {"type": "object", "required": ["score"], "additionalProperties": False,
...           "properties": {"score": {"type": "integer", "enum": list(range(1, 11))}}}
>>> with LoopbackLLMServer() as server:
...     server.enqueue(Reply.text('Sure! ```json\\n{"score": 9}\\n```'))
...     backend = OpenAICompatibleBackend(model="llama3.1", base_url=server.openai_url,
...                                       api_key="ollama", timeout=2.0)
...     answer = backend.complete(system="Rate.", prompt="Memory: outage", tool_name="rate",
...                               schema=schema)
...     sent = server.requests[0].body
>>> answer, sent["temperature"], sent["response_format"]["type"]
({'score': 9}, 0.0, 'json_schema')
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from episeg.errors import ConfigError, JudgeError, RequestRejectedError
from episeg.llm._base import (
    RetryPolicy,
    check_request_limits,
    read_reply,
    shared_tls_context,
)
from episeg.llm._config import check_api_key, check_base_url
from episeg.llm._counting import RequestCounter
from episeg.llm._deadline import DeadlineRunner
from episeg.llm._json import extract_json_object
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
    import openai

__all__ = ["OpenAICompatibleBackend"]

STRUCTURED_MODES = ("json_schema", "json_object", "none")


class OpenAICompatibleBackend:
    """A thin OpenAI-compatible client: temperature 0, JSON-schema output, bounded retries.

    Parameters
    ----------
    model : str
        Model name as the server knows it (e.g. ``"llama3.1"`` on Ollama).
    api_key : str or None
        Falls back to ``OPENAI_API_KEY``; local servers accept any non-empty
        string (e.g. ``"ollama"``). A ``ConfigError`` if neither is given, or if
        the key holds whitespace (a trailing newline) or non-ASCII.
    base_url : str or None
        API root including ``/v1`` (e.g. ``http://127.0.0.1:11434/v1``);
        ``None``: ``OPENAI_BASE_URL`` or the SDK default. An ``http://`` or
        ``https://`` URL, else a ``ConfigError``.
    timeout : float, default 30.0
        Wall-clock seconds per attempt (finite) before it counts as a
        (retryable) timeout, however the server paces its reply
        (:mod:`episeg.llm._deadline`).
    max_tokens : int, default 256
        Output token budget; a reply cut at it (``finish_reason: "length"``)
        is unusable (``JudgeError``).
    temperature : float or None, default 0.0
        Sent while the model takes it; ``None`` never sends it. A model that
        refuses it (reasoning models take only their default) or refuses
        ``max_tokens`` gets the request again without it, or with
        ``max_completion_tokens`` (:mod:`episeg.llm._sampling`), and keeps that.
    structured : {"json_schema", "json_object", "none"}, default "json_schema"
        How output is constrained: a strict JSON schema; JSON mode plus the
        schema in the system prompt; or the schema in the prompt only (for
        servers that reject ``response_format``).
    retry : RetryPolicy
        Attempts and backoff for 429/5xx/timeouts (SDK retries are off).
    """

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_tokens: int = 256,
        temperature: float | None = 0.0,
        structured: str = "json_schema",
        retry: RetryPolicy | None = None,
    ) -> None:
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ConfigError(
                "no API key: pass api_key= or set OPENAI_API_KEY (local servers "
                "such as Ollama accept any non-empty string)"
            )
        check_api_key(key, "OPENAI_API_KEY")
        self._secrets = (key,)  # redacted from every error text (a server may echo it)
        check_base_url(base_url, "OPENAI_BASE_URL")
        if structured not in STRUCTURED_MODES:
            raise ConfigError(
                f"unknown structured mode {structured!r}; valid: {', '.join(STRUCTURED_MODES)}"
            )
        check_request_limits(model, timeout, max_tokens)
        if temperature is not None and not 0.0 <= temperature <= 2.0:
            raise ConfigError(f"temperature must be in [0, 2] or None, got {temperature}")
        self._model = model
        self._options = RequestOptions(temperature=temperature, max_tokens=max_tokens)
        self._structured = structured
        self._retry = retry or RetryPolicy()
        self._counter = RequestCounter()
        self._deadline = DeadlineRunner(timeout)
        import openai  # here, not at module top: the SDK takes ~1 s to import

        self._client: openai.OpenAI = openai.OpenAI(
            api_key=key,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
            # the SDK's default client, with the process's one TLS context (see shared_tls_context)
            http_client=openai.DefaultHttpxClient(verify=shared_tls_context()),
        )

    @property
    def name(self) -> str:
        return f"openai-compatible:{self._model}"

    def _run(self, send: Callable[[], Any]) -> Any:
        self._counter.note()
        return self._deadline.run(send)

    def _adapt(self, exc: Exception) -> bool:
        """True if ``exc`` is a 400 refusing a parameter that is now changed."""
        import openai  # loaded by the constructor already

        if not isinstance(exc, openai.BadRequestError):
            return False
        param = exc.param if isinstance(exc.param, str) else None
        message = scrub(str(exc.message), self._secrets)
        return self._options.adapt(message, param=param, model=self.name)

    @property
    def calls(self) -> int:
        """HTTP requests made so far, retries included."""
        return self._counter.value

    def complete(
        self, *, system: str, prompt: str, tool_name: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask once (with retries on transient errors); return the validated JSON object."""
        extra: dict[str, Any] = {}
        if self._structured == "json_schema":
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": tool_name, "schema": wire_schema(schema), "strict": True},
            }
        else:
            system = (
                f"{system}\n\nAnswer with only a JSON object matching this JSON schema:\n"
                f"{json.dumps(schema)}"
            )
            if self._structured == "json_object":
                extra["response_format"] = {"type": "json_object"}

        def send() -> Any:
            return self._client.chat.completions.create(
                model=self._model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": prompt},
                ],
                **self._options.body(),
                **extra,
            )

        def attempt() -> dict[str, Any]:
            completion = send_adapting(self._run, send, self._adapt)
            budget = f"{self._options.budget_name}={self._options.budget}"
            content = read_reply(lambda: _content(completion, budget))
            return extract_json_object(content, schema)

        return run_with_retries(self.name, self._retry, attempt, _classify, secrets=self._secrets)


def _content(completion: Any, budget: str) -> str:
    choices = getattr(completion, "choices", None) or []
    if not choices:
        raise JudgeError("reply has no choices")
    if getattr(choices[0], "finish_reason", None) == "length":
        raise JudgeError(f"reply truncated at {budget} (finish_reason length)")
    message = choices[0].message
    content = getattr(message, "content", None)
    if not content:
        refusal = getattr(message, "refusal", None)
        if refusal:  # the same prompt would be declined again: not worth paying twice
            raise RequestRejectedError(f"the model declined to answer (refusal: {refusal!r})")
        raise JudgeError(f"reply has no content (refusal: {refusal!r})")
    return str(content)


def _classify(exc: Exception) -> Failure | None:
    import openai  # loaded by the constructor already

    local = classify_local(exc)
    if local is not None:
        return local
    if isinstance(exc, openai.APITimeoutError):
        return Failure("request timed out", retryable=True, unavailable=True)
    if isinstance(exc, openai.APIConnectionError):
        return classify_connection(exc)
    if isinstance(exc, openai.APIStatusError):
        return classify_status(exc.status_code, exc.response.headers, str(exc.message)[:300])
    if isinstance(exc, json.JSONDecodeError):
        return Failure(f"response body is not JSON: {exc}", retryable=False, unavailable=False)
    if isinstance(exc, openai.APIResponseValidationError):
        return Failure(f"malformed response: {exc}", retryable=False, unavailable=False)
    return None
