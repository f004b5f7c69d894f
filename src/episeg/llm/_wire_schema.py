"""The schema a strict structured-output request may carry, and what it may not.

Both providers compile a strict schema into a decoding grammar and accept only a
subset of JSON Schema: Anthropic's strict tools answer HTTP 400 to numeric bounds
(``minimum``, ``maximum``, ...) and string lengths (``minLength``, ``maxLength``),
and OpenAI's strict ``json_schema`` lists no string lengths among its supported
keywords. A schema that is fine for checking a reply therefore cannot be sent as
is: :func:`wire_schema` drops those keywords and restates each bound in the
property's ``description``, so the model still reads it, while the reply is
checked against the full schema locally (:func:`episeg.llm.validate_reply`).

>>> from episeg.llm._wire_schema import strict_violations, wire_schema
>>> schema = {"type": "object", "required": ["summary"], "additionalProperties": False,
...           "properties": {"summary": {"type": "string", "minLength": 1, "maxLength": 400}}}
>>> strict_violations(schema)
["properties.summary: 'maxLength'", "properties.summary: 'minLength'"]
>>> sent = wire_schema(schema)
>>> sent["properties"]["summary"]
{'type': 'string', 'description': 'maxLength 400; minLength 1.'}
>>> strict_violations(sent), schema["properties"]["summary"]["maxLength"]
([], 400)
"""

from __future__ import annotations

from typing import Any

__all__ = ["NOT_IN_STRICT_MODE", "strict_violations", "wire_schema"]

NOT_IN_STRICT_MODE = frozenset(
    {
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minProperties",
        "maxProperties",
        "uniqueItems",
    }
)
"""Keywords left out of what is sent: the intersection of what both providers refuse."""

_NESTED = ("properties", "$defs", "definitions")


def wire_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` without :data:`NOT_IN_STRICT_MODE`, bounds moved to descriptions."""
    sent: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in schema.items():
        if key in NOT_IN_STRICT_MODE:
            dropped.append(f"{key} {value}")
        elif key in _NESTED and isinstance(value, dict):
            sent[key] = {
                name: wire_schema(sub) if isinstance(sub, dict) else sub
                for name, sub in value.items()
            }
        elif key == "items" and isinstance(value, dict):
            sent[key] = wire_schema(value)
        elif key in ("anyOf", "allOf", "oneOf") and isinstance(value, list):
            sent[key] = [wire_schema(sub) if isinstance(sub, dict) else sub for sub in value]
        else:
            sent[key] = value
    if dropped:
        note = "; ".join(sorted(dropped)) + "."
        existing = sent.get("description")
        sent["description"] = f"{existing} ({note})" if existing else note
    return sent


def strict_violations(schema: dict[str, Any], where: str = "") -> list[str]:
    """Where ``schema`` uses a keyword strict mode refuses, as ``"path: 'keyword'"`` lines."""
    found = [f"{where or '(root)'}: {key!r}" for key in sorted(NOT_IN_STRICT_MODE & set(schema))]
    for key, value in schema.items():
        if key in _NESTED and isinstance(value, dict):
            for name, sub in value.items():
                if isinstance(sub, dict):
                    found += strict_violations(sub, _join(where, f"{key}.{name}"))
        elif key == "items" and isinstance(value, dict):
            found += strict_violations(value, _join(where, "items"))
        elif key in ("anyOf", "allOf", "oneOf") and isinstance(value, list):
            for index, sub in enumerate(value):
                if isinstance(sub, dict):
                    found += strict_violations(sub, _join(where, f"{key}[{index}]"))
    return found


def _join(where: str, part: str) -> str:
    return f"{where}.{part}" if where else part
