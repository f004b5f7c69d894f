"""An MCP server (stdio) that gives one agent episeg as its episodic memory.

Bound to ONE tenant at start (``episeg mcp --user alice``): every tool reads and
writes only that tenant, and no tool takes a user argument. Tools:

``observe_turn``
    Feed one conversation turn; returns the episodes it closed.
``flush``
    Close the open episode(s) (one session or all of this user's).
``recall``
    The ``k`` most relevant past episodes for a query, with score terms.
``list_episodes``
    A page of stored episodes (summary, salience, boundary reasons).

Failures the caller can fix (a bad actor name, ...) come back as tool errors
with episeg's message.

>>> import asyncio, tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None, scorer=None)
>>> server = create_server(mem, "alice")
>>> sorted(t.name for t in asyncio.run(server.list_tools()))
['flush', 'list_episodes', 'observe_turn', 'recall']
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from episeg.errors import EpisegError
from episeg.interfaces.views import episode_view, scored_view
from episeg.memory import Memory
from episeg.store.tenants import validate_tenant
from episeg.types import Actor, Episode, Turn, TurnType

__all__ = ["create_server", "run_stdio"]

_T = TypeVar("_T")

_INSTRUCTIONS = (
    "Episodic memory. Call observe_turn for every user, assistant and tool turn as it "
    "happens; call recall before answering questions that may depend on earlier work; "
    "call flush when a conversation ends."
)


def _guard(call: Callable[[], _T]) -> _T:
    try:
        return call()
    except EpisegError as exc:
        raise ToolError(str(exc)) from exc


def _brief(episodes: list[Episode]) -> list[dict[str, Any]]:
    return [episode_view(e, with_turns=False) for e in episodes]


def create_server(memory: Memory, user: str) -> MCPServer:
    """The MCP server whose tools act on ``user``'s memory only."""
    tenant = validate_tenant(user)
    server: MCPServer = MCPServer(name="episeg", instructions=_INSTRUCTIONS)

    @server.tool()
    def observe_turn(
        actor: str,
        text: str,
        session: str = "default",
        type: str | None = None,
        ts: float | None = None,
        id: str | None = None,
    ) -> dict[str, Any]:
        """Record one conversation turn in episodic memory.

        actor: user, assistant, tool or system. type (optional): user-question,
        user-correction, assistant-answer, tool-call, tool-error, tool-success,
        system-event. ts: seconds since the epoch (default now). id: makes
        re-sending the same turn harmless. Returns the episodes this turn closed.
        """

        def run() -> dict[str, Any]:
            turn = Turn(
                actor=Actor.parse(actor),
                text=text,
                ts=time.time() if ts is None else ts,
                type=None if type is None else TurnType.parse(type),
                id=id,
                user=tenant,
                session=session,
            )
            return {"closed": _brief(memory.observe(turn))}

        return _guard(run)

    @server.tool()
    def flush(session: str | None = None) -> dict[str, Any]:
        """Close and store the open episode of one session (default: all sessions)."""
        return _guard(lambda: {"closed": _brief(memory.flush(tenant, session))})

    @server.tool()
    def recall(query: str, k: int = 5) -> dict[str, Any]:
        """Recall the k most relevant past episodes for query, with their turns.

        Each result has score = recency + importance + similarity (weighted terms).
        """
        if not 1 <= k <= 50:
            raise ToolError(f"k must be in 1..50, got {k}")
        return _guard(
            lambda: {"results": [scored_view(h) for h in memory.recall(tenant, query, k=k)]}
        )

    @server.tool()
    def list_episodes(
        limit: int = 20, offset: int = 0, include_archived: bool = False
    ) -> dict[str, Any]:
        """A page of stored episodes: summary, salience, turn count, boundary reasons."""
        if not 1 <= limit <= 1000 or offset < 0:
            raise ToolError(f"need 1 <= limit <= 1000 and offset >= 0, got {limit}, {offset}")
        return _guard(
            lambda: {
                "episodes": _brief(
                    memory.episodes(
                        tenant, limit=limit, offset=offset, include_archived=include_archived
                    )
                )
            }
        )

    return server


def run_stdio(memory: Memory, user: str) -> None:
    """Serve ``user``'s memory over stdin/stdout until the client disconnects.

    Open episodes are flushed (scored and stored) when the client goes away.
    """
    server = create_server(memory, user)
    try:
        server.run("stdio")
    finally:
        memory.flush(validate_tenant(user))
