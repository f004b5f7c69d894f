"""What the loopback LLM server answers: programmed :class:`Reply` behaviours, recorded
requests, and the Anthropic / OpenAI response bodies built from them.

>>> Reply.slow(0.5).delay, Reply.overloaded(retry_after=1).status
(0.5, 529)
>>> _error_body("openai", Reply.error(429))["error"]["type"]
'rate_limit_error'
>>> _dialect("/v1/chat/completions"), _dialect("/v1/messages"), _dialect("/x")
('openai', 'anthropic', None)
>>> _schema_refusal("anthropic", {"tools": [{"strict": True, "input_schema": {
...     "type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}}]})
"Invalid schema for strict mode: properties.n: 'minimum' is not supported"
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["MAX_DELAY_SECONDS", "RecordedRequest", "Reply"]

MAX_DELAY_SECONDS = 30.0
_ERROR_TYPES = {
    400: "invalid_request_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class Reply:
    """One programmed behaviour of the server (build it with the classmethods)."""

    kind: str
    payload: Any = None
    status: int = 200
    retry_after: float | str | None = None
    delay: float = 0.0
    should_retry: bool | None = None

    @classmethod
    def json(cls, data: dict[str, Any], *, delay: float = 0.0) -> Reply:
        """A well-formed answer: an Anthropic ``tool_use`` block / OpenAI JSON content."""
        return cls("json", payload=data, delay=delay)

    @classmethod
    def text(cls, text: str, *, delay: float = 0.0) -> Reply:
        """Plain text instead of a tool call (Anthropic) or as the content (OpenAI)."""
        return cls("text", payload=text, delay=delay)

    @classmethod
    def refusal(cls, explanation: str = "declined", *, category: str | None = None) -> Reply:
        """The model declines: Anthropic ``stop_reason: "refusal"`` with ``stop_details``;
        OpenAI a ``refusal`` text and no content."""
        return cls("refusal", payload={"explanation": explanation, "category": category})

    @classmethod
    def raw(cls, body: str, *, status: int = 200) -> Reply:
        """A raw HTTP body, e.g. invalid JSON, sent as ``application/json``."""
        return cls("raw", payload=body, status=status)

    @classmethod
    def error(
        cls,
        status: int,
        *,
        retry_after: float | str | None = None,
        message: str = "simulated error",
        should_retry: bool | None = None,
    ) -> Reply:
        """An API error in the dialect of the endpoint, with optional ``retry-after``
        (seconds, or a string sent as is, e.g. an HTTP-date) and ``x-should-retry``."""
        if not 400 <= status <= 599:
            raise ValueError(f"error status must be in 400-599, got {status}")
        return cls(
            "error",
            payload=message,
            status=status,
            retry_after=retry_after,
            should_retry=should_retry,
        )

    @classmethod
    def overloaded(cls, *, retry_after: float | None = None) -> Reply:
        """Anthropic's HTTP 529 ``overloaded_error``."""
        return cls.error(529, retry_after=retry_after, message="Overloaded")

    @classmethod
    def slow(cls, seconds: float, then: Reply | None = None) -> Reply:
        """``then`` (default an empty JSON answer) after ``seconds`` of silence."""
        if not 0 <= seconds <= MAX_DELAY_SECONDS:
            raise ValueError(f"delay must be in [0, {MAX_DELAY_SECONDS}] s, got {seconds}")
        return replace(then or cls.json({}), delay=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received: path, lower-cased headers, parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt_text(self) -> str:
        """All message and system text of the request, joined (for assertions)."""
        parts: list[str] = []
        system = self.body.get("system")
        if isinstance(system, str):
            parts.append(system)
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(str(block.get("text", "")) for block in content)
        return "\n".join(parts)


def _schema_refusal(dialect: str, body: dict[str, Any]) -> str | None:
    """The 400 message a real API gives a strict schema it cannot compile, else ``None``.

    Anthropic refuses numeric bounds and string lengths in strict tools; OpenAI's
    strict ``json_schema`` does not list string lengths among what it supports
    (:data:`episeg.llm._wire_schema.NOT_IN_STRICT_MODE`).
    """
    schemas: list[Any] = []  # checked by the server's own rule, not by episeg's wire_schema
    if dialect == "anthropic":
        tools = body.get("tools")
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, dict) and tool.get("strict") is True:
                schemas.append(tool.get("input_schema"))
    else:
        fmt = body.get("response_format")
        inner = fmt.get("json_schema") if isinstance(fmt, dict) else None
        if isinstance(inner, dict) and inner.get("strict") is True:
            schemas.append(inner.get("schema"))
    for schema in schemas:
        found = _refused_keyword(schema, "") if isinstance(schema, dict) else None
        if found:
            return f"Invalid schema for strict mode: {found} is not supported"
    return None


_STRICT_REFUSED = (
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
)


def _refused_keyword(schema: dict[str, Any], where: str) -> str | None:
    for key in _STRICT_REFUSED:
        if key in schema:
            return f"{where or '(root)'}: {key!r}"
    for key, value in schema.items():
        children: list[tuple[str, Any]] = []
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            children = [(f"{key}.{name}", sub) for name, sub in value.items()]
        elif key == "items":
            children = [("items", value)]
        elif key in ("anyOf", "allOf", "oneOf") and isinstance(value, list):
            children = [(f"{key}[{index}]", sub) for index, sub in enumerate(value)]
        for name, sub in children:
            if not isinstance(sub, dict):
                continue
            found = _refused_keyword(sub, f"{where}.{name}" if where else name)
            if found:
                return found
    return None


MODEL_REFUSALS = {
    ("anthropic", "temperature"): "`temperature` is deprecated for this model.",
    ("openai", "temperature"): (
        "Unsupported value: 'temperature' does not support 0 with this model. "
        "Only the default (1) value is supported."
    ),
    ("openai", "max_tokens"): (
        "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead."
    ),
    ("anthropic", "tool_choice"): "Thinking may not be enabled when tool_choice forces tool use.",
}
"""What the APIs answer (HTTP 400) when a model refuses a parameter (see ``refuses``)."""


def _parameter_refusal(
    dialect: str, body: dict[str, Any], refuses: frozenset[str]
) -> tuple[str, str] | None:
    """(message, param) of the 400 a model refusing ``refuses`` gives this request."""
    for name in sorted(refuses):
        if name == "tool_choice":  # a model thinking by default refuses only a forced tool
            choice = body.get("tool_choice")
            if not isinstance(choice, dict) or choice.get("type") not in ("tool", "any"):
                continue
        if name in body and (dialect, name) in MODEL_REFUSALS:
            return MODEL_REFUSALS[(dialect, name)], name
    return None


def _dialect(path: str) -> str | None:
    if path.rstrip("/").endswith("/v1/messages"):
        return "anthropic"
    if path.rstrip("/").endswith("/chat/completions"):
        return "openai"
    return None


def _error_body(dialect: str, reply: Reply, param: str | None = None) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(reply.status, "api_error")
    if dialect == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": reply.payload}}
    return {
        "error": {"message": reply.payload, "type": kind, "param": param, "code": str(reply.status)}
    }


def _anthropic_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    if reply.kind == "json":
        choice = request.get("tool_choice") or {}
        tools = request.get("tools") or [{}]
        name = choice.get("name") or tools[0].get("name") or "answer"
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": "toolu_loopback", "name": name, "input": reply.payload}
        ]
        stop = "tool_use"
    elif reply.kind == "refusal":
        content, stop = [], "refusal"
    else:
        content, stop = [{"type": "text", "text": str(reply.payload)}], "end_turn"
    body: dict[str, Any] = {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "loopback"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    if reply.kind == "refusal":
        body["stop_details"] = {"type": "refusal", **reply.payload}
    return body


def _openai_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    text: str | None = json.dumps(reply.payload) if reply.kind == "json" else str(reply.payload)
    refusal = None
    if reply.kind == "refusal":
        text, refusal = None, reply.payload["explanation"]
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "loopback"),
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text, "refusal": refusal},
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
