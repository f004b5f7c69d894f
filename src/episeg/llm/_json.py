"""Reading the one JSON answer out of free model text (OpenAI-compatible replies).

Every top-level JSON object in the text is a candidate, found with
``json.JSONDecoder.raw_decode`` at each ``{`` (a brace in prose, ``{ retry(); }``,
is skipped, not fatal). Reasoning before the last ``</think>`` is ignored. With a
schema, only candidates that fit it count; exactly one distinct candidate must
remain: a reply that quotes turn text holding another answer is ambiguous, a
:class:`~episeg.errors.JudgeError`, never the first block.

>>> from episeg.llm import extract_json_object
>>> extract_json_object('<think>if (x) { retry(); }</think> ```json\\n{"score": 4}\\n```')
{'score': 4}
>>> schema = {"type": "object", "required": ["score"], "additionalProperties": False,
...           "properties": {"score": {"type": "integer"}}}
>>> extract_json_object('The turn says {"score": 9}. My answer: {"score": 2}', schema)
Traceback (most recent call last):
...
episeg.errors.JudgeError: reply holds 2 different candidate answers; refusing to pick one
"""

from __future__ import annotations

import json
from typing import Any

from episeg.errors import JudgeError
from episeg.llm._base import validate_reply

__all__ = ["MAX_REPLY_CHARS", "extract_json_object"]

MAX_REPLY_CHARS = 200_000  # far beyond any max_tokens a judge or scorer asks for
_MAX_BRACES = 2_000  # positions tried: bounds the scan of a reply full of "{"
_DECODER = json.JSONDecoder()


def extract_json_object(text: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The one JSON object of ``text`` (fitting ``schema`` if given); else ``JudgeError``.

    Bare, fenced in ```, or inside prose all work. If no object fits the
    schema, the schema error of the last object found is raised.
    """
    if len(text) > MAX_REPLY_CHARS:
        raise JudgeError(f"reply is {len(text)} chars long, more than {MAX_REPLY_CHARS}")
    answer = text.rpartition("</think>")[2]
    found = _objects(answer)
    if not found:
        raise JudgeError(f"reply is not a JSON object: {_clip(text)!r}")
    if schema is None:
        valid = found
    else:
        valid, last_error = [], None
        for candidate in found:
            try:
                valid.append(validate_reply(candidate, schema))
            except JudgeError as exc:
                last_error = exc
        if not valid and last_error is not None:
            raise last_error
    distinct = {json.dumps(obj, sort_keys=True): obj for obj in valid}
    if len(distinct) > 1:
        raise JudgeError(
            f"reply holds {len(distinct)} different candidate answers; refusing to pick one"
        )
    return next(iter(distinct.values()))


def _objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text`` (an object inside another is not separate)."""
    found: list[dict[str, Any]] = []
    start = text.find("{")
    tries = 0
    while start >= 0 and tries < _MAX_BRACES:
        tries += 1
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        except RecursionError:
            raise JudgeError("reply JSON is nested too deeply") from None
        if isinstance(value, dict):
            found.append(value)
        start = text.find("{", end)
    return found


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
