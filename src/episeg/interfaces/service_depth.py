"""JSON bodies refused up front with a 422: nested absurdly deep, or naming a key twice.

Python's JSON parser, pydantic's error echo and ``json.dumps`` all recurse once
per level: a ~1 KB body nested a few hundred levels deep used to end as a 500
or a reset connection (issue 12). :class:`DepthLimit` answers any body that
FastAPI would read as JSON (no content type, ``application/json`` or
``application/*+json``) and whose arrays and objects nest deeper than
:data:`MAX_JSON_DEPTH` with FastAPI's 422 shape::

    {"detail": [{"loc": ["body"], "msg": "JSON nested deeper than 100 levels",
                 "type": "json_too_deep"}]}

A body that parses but names one key twice in an object (``{"user": "alice", ...,
"user": "bob"}``, which FastAPI's parser would read as the last one without a word)
gets the same shape with ``"type": "json_duplicate_key"``
(:mod:`episeg.strict_json`); malformed JSON is left to FastAPI's own 422.

Other bodies, and those of ``raw_paths`` (the service passes ``POST /v1/import``,
whose export file may come with any content type), go through untouched: their
own reader names the line it cannot parse.

:func:`nesting_depth` counts brackets outside JSON strings in linear time with
no recursion, whatever the bytes (malformed JSON is left to the parser):

>>> nesting_depth(b'{"a": [1, {"b": "[[[not nesting"}], "c\\\\\\\\": "]"}')
3
>>> nesting_depth(b"[" * 5 + b"]" * 5), nesting_depth(b'"just a string"')
(5, 0)
"""

from __future__ import annotations

from collections.abc import Iterable
from email.message import Message as MimeMessage

import numpy as np
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from episeg.errors import ConfigError
from episeg.interfaces.service_auth import replaying
from episeg.strict_json import DuplicateKeyError, loads_strict

__all__ = ["MAX_JSON_DEPTH", "DepthLimit", "nesting_depth"]

MAX_JSON_DEPTH = 100
_OPENERS = b"[{"
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def nesting_depth(body: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in ``body``, brackets inside JSON strings not counted."""
    # Escapes are read left to right: drop "\\" pairs first, then escaped quotes; what
    # remains splits on '"' into outside / inside / outside ... of the strings.
    plain = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(plain.split(b'"')[0::2]).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == _OPENERS[0]) | (codes == _OPENERS[1]), 1, -1)
    return max(int(np.cumsum(steps, dtype=np.int64).max()), 0)


def _is_json(scope: Scope) -> bool:
    """Whether FastAPI would parse this request's body as JSON (its own content-type rule)."""
    declared = dict(scope.get("headers") or []).get(b"content-type")
    if declared is None:
        return True
    mime = MimeMessage()
    mime["content-type"] = declared.decode("latin-1")
    subtype = mime.get_content_subtype()
    return mime.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


class DepthLimit:
    """ASGI middleware: 422 for a JSON body nested deeper than ``max_depth`` or naming a key
    twice in one object.

    Requests to ``raw_paths`` (routes that read the raw body themselves) pass.
    Reads the whole body (put it inside
    :class:`~episeg.interfaces.service_auth.BodyLimit`, which caps its size)
    and replays it to the app.
    """

    def __init__(
        self, app: ASGIApp, *, max_depth: int = MAX_JSON_DEPTH, raw_paths: Iterable[str] = ()
    ) -> None:
        if max_depth < 1:
            raise ConfigError(f"max_depth must be >= 1, got {max_depth}")
        self.app = app
        self.max_depth = max_depth
        self.raw_paths = frozenset(raw_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.raw_paths or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if nesting_depth(body) > self.max_depth:
            msg = f"JSON nested deeper than {self.max_depth} levels"
            await _reject(msg, "json_too_deep", scope, receive, send)
            return
        duplicate = _duplicate_key(body)
        if duplicate is not None:
            await _reject(f"invalid JSON: {duplicate}", "json_duplicate_key", scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)


def _duplicate_key(body: bytes) -> DuplicateKeyError | None:
    try:
        loads_strict(body)
    except DuplicateKeyError as exc:
        return exc
    except (ValueError, RecursionError):  # malformed: FastAPI's own 422 says how
        return None
    return None


async def _reject(msg: str, kind: str, scope: Scope, receive: Receive, send: Send) -> None:
    detail = [{"loc": ["body"], "msg": msg, "type": kind}]
    await JSONResponse({"detail": detail}, status_code=422)(scope, receive, send)
