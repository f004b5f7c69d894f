"""The MCP stdio transport with one addition: every request gets an answer.

The SDK's stdio transport drops a line it cannot validate, and pydantic's JSON
parser cannot validate a string holding a lone surrogate (``"\\udc80"``, e.g.
a file name read with ``surrogateescape``): the client then waits forever
for a reply (issue 12, F18). :class:`AnsweringStdin` sits between stdin and
the SDK: a line that is valid JSON but not valid UTF-8 text is answered at
once with a JSON-RPC ``invalid params`` error naming the problem, through the
SDK's own writer (so replies never interleave), and is not passed on.

>>> bad_strings({"a": ["ok", {"b": "x\\udc80"}]}), bad_strings({"a": "fine"})
(["'x\\\\udc80'"], [])
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

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream
    from mcp.server.mcpserver import MCPServer

__all__ = ["AnsweringStdin", "bad_strings", "serve_stdio"]


def bad_strings(value: Any) -> list[str]:
    """The ``repr`` of every string in ``value`` (keys included) that is not valid UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return [repr(value)]
        return []
    if isinstance(value, dict):
        return [bad for k, v in value.items() for bad in bad_strings(k) + bad_strings(v)]
    if isinstance(value, list):
        return [bad for v in value for bad in bad_strings(v)]
    return []


class AnsweringStdin:
    """Lines of ``source`` for the SDK; unencodable requests are answered, not passed on.

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
            message = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            return None  # the SDK reports what it cannot parse
        bad = bad_strings(message)
        if not bad or not isinstance(message, dict) or "id" not in message:
            return None
        ident = message["id"]
        if not isinstance(ident, int | str) or isinstance(ident, bool) or bad_strings(ident):
            return None
        error = types.ErrorData(
            code=types.INVALID_PARAMS,
            message=(
                f"string {bad[0]} holds a lone surrogate: not valid UTF-8 text "
                "(was it read from undecodable bytes?)"
            ),
        )
        return types.JSONRPCError(jsonrpc="2.0", id=ident, error=error)


async def serve_stdio(server: MCPServer) -> None:
    """Run ``server`` over stdin/stdout like ``server.run("stdio")``, answering every request."""
    lines = AnsweringStdin(
        anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    )
    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
    async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (read, write):
        lines.replies = write.clone()
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
