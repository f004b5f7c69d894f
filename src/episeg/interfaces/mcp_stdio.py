"""The MCP stdio transport with one addition: every request gets an answer.

The SDK's stdio transport drops a line it cannot validate: the client then
waits forever for a reply (issue 12, F18). That happens to a string holding a
lone surrogate (``"\\udc80"``, e.g. a file name read with ``surrogateescape``),
to JSON nested deeper than pydantic's parser follows (~200 levels), to a line
that is not JSON and to JSON that is no JSON-RPC message. :class:`AnsweringStdin`
sits between stdin and the SDK, validates each line as the SDK will, and
answers a line the SDK would drop at once, through the SDK's own writer (so
replies never interleave), instead of passing it on:

==========================================  ======  =====================
the line                                    code    ``id`` of the answer
==========================================  ======  =====================
not JSON                                    -32700  ``null``
nested too deeply for the parser            -32700  the request's
a lone surrogate in a string                -32602  the request's
not a JSON-RPC message (no method, ...)      -32600  the request's
an array (batch), or an id that is not an   -32600  ``null``
integer or a string (``null``, ``true``)
==========================================  ======  =====================

A line without an ``id`` (a notification) gets no answer, as JSON-RPC says.

>>> bad_strings({"a": ["ok", {"b": "x\\udc80"}]}), bad_strings({"a": "fine"})
(["'x\\\\udc80'"], [])
>>> shallow('{"id": 7, "params": {"a": [[["x]"]]]}, "method": "m"}')
{'id': 7, 'params': None, 'method': 'm'}
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from episeg.strict_json import DuplicateKeyError, loads_strict

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream
    from mcp.server.mcpserver import MCPServer

__all__ = ["AnsweringStdin", "bad_strings", "refusal", "serve_stdio", "shallow"]

_NOT_JSON = object()
_BAD_ID = "Invalid request: id must be an integer or a string"


def bad_strings(value: Any) -> list[str]:
    """The ``repr`` of every string in ``value`` (keys included) that is not valid UTF-8."""
    bad: list[str] = []
    stack = [value]  # a walk without recursion: ``value`` may nest hundreds of levels deep
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                bad.append(repr(item))
        elif isinstance(item, dict):
            stack.extend(reversed([x for pair in item.items() for x in pair]))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return bad


def shallow(line: str) -> Any:
    """``line`` as JSON with every array or object inside a top-level one read as ``None``.

    Reads a line too deep for :func:`json.loads` far enough to find its ``id``;
    :data:`_NOT_JSON` if even that is not JSON.
    """
    kept: list[str] = []
    depth, in_string, escaped = 0, False, False
    for char in line:
        if in_string:
            in_string = escaped or char != '"'
            escaped = not escaped and char == "\\"
        elif char in "[{":
            depth += 1
            if depth == 2:
                kept.append("null")
        elif char in "]}":
            depth -= 1
            char = char if depth == 0 else ""
        else:
            in_string = char == '"'
        if depth <= 1:
            kept.append(char if char not in "[{" or depth == 1 else "")
    try:
        return json.loads("".join(kept))
    except (ValueError, RecursionError):
        return _NOT_JSON


def _parsed(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return _NOT_JSON
    except RecursionError:
        return shallow(line)


def _error(ident: int | str | None, code: int, message: str) -> types.JSONRPCError:
    error = types.ErrorData(code=code, message=message)
    return types.JSONRPCError(jsonrpc="2.0", id=ident, error=error)


def refusal(line: str, problem: ValidationError) -> types.JSONRPCError | None:
    """The answer to a ``line`` the SDK could not validate (``problem``); ``None``: no answer."""
    message = _parsed(line)
    if message is _NOT_JSON:
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    if not isinstance(message, dict):
        return _error(None, types.INVALID_REQUEST, "Invalid request: not a JSON-RPC object")
    if "id" not in message:
        return None  # a notification: JSON-RPC answers none
    ident = message["id"]
    if not isinstance(ident, int | str) or isinstance(ident, bool) or bad_strings(ident):
        return _error(None, types.INVALID_REQUEST, _BAD_ID)
    first = problem.errors()[0]
    if first["type"] != "json_invalid":
        where = ".".join(str(part) for part in first["loc"])
        return _error(
            ident,
            types.INVALID_REQUEST,
            f"Invalid request: not a JSON-RPC 2.0 message ({where}: {first['msg']})",
        )
    if "recursion limit" in first["msg"]:
        return _error(ident, types.PARSE_ERROR, f"Parse error: nested too deeply ({first['msg']})")
    bad = bad_strings(message)
    if bad:
        return _error(
            ident,
            types.INVALID_PARAMS,
            f"string {bad[0]} holds a lone surrogate: not valid UTF-8 text "
            "(was it read from undecodable bytes?)",
        )
    return _error(ident, types.PARSE_ERROR, f"Parse error: {first['msg']}")


class AnsweringStdin:
    """Lines of ``source`` for the SDK; a request the SDK would drop is answered instead.

    Parameters
    ----------
    source
        The text lines the client sends (stdin, decoded as UTF-8).
    """

    def __init__(self, source: Any) -> None:
        self._source = source
        self.replies: MemoryObjectSendStream[SessionMessage] | None = None

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._source:
            refused = self._refusal(line)
            if refused is None or self.replies is None:
                yield line
            else:
                await self.replies.send(SessionMessage(refused))

    def _refusal(self, line: str) -> types.JSONRPCError | None:
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError as exc:  # the SDK's own check: it would drop this line
            return refusal(line, exc)
        if isinstance(message, types.JSONRPCNotification) and "id" in json.loads(line):
            return _error(
                None, types.INVALID_REQUEST, _BAD_ID
            )  # the SDK reads it as a notification
        if isinstance(message, types.JSONRPCRequest):  # a key twice: the SDK keeps the last
            try:
                loads_strict(line)
            except DuplicateKeyError as exc:
                return _error(message.id, types.INVALID_PARAMS, f"Invalid params: {exc}")
        return None


async def serve_stdio(server: MCPServer) -> None:
    """Run ``server`` over stdin/stdout like ``server.run("stdio")``, answering every request."""
    lines = AnsweringStdin(
        anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    )
    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
    async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (read, write):
        lines.replies = write.clone()
        try:
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
        finally:  # the SDK's stdout writer ends when every send stream is closed: the clone
            # kept it (and the process, its journal lock and its open episodes) alive at EOF
            await lines.replies.aclose()
