"""MCP tools that manage this memory's stored episodes: get, edit, unarchive.

Added to the server of :mod:`episeg.interfaces.mcp_server` (bound to one
tenant, like every tool there):

``get_episode``
    One stored episode (archived or not) by id; a tool error if this memory
    has none by that id.
``update_episode``
    Edit it: ``summary``, ``pinned`` (never decayed nor archived),
    ``salience`` (1-10, set by the user: no scorer overwrites it),
    ``metadata`` (a flat ``{str: str | int | float | bool}`` that replaces
    the episode's user metadata; ``{}`` clears it). All or nothing; strict
    types (``salience: true`` or ``pinned: "false"`` is a tool error).
``unarchive``
    Bring an archived episode back into recall.

>>> import asyncio, tempfile
>>> from mcp.server.mcpserver import MCPServer
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None, scorer=None)
>>> server = MCPServer(name="t")
>>> add_manage_tools(server, mem, "alice", guard=lambda call: call())
>>> sorted(t.name for t in asyncio.run(server.list_tools()))
['get_episode', 'unarchive', 'update_episode']
"""

from __future__ import annotations

from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from pydantic import StrictBool, StrictInt

from episeg.interfaces.mcp_models import EpisodeBrief
from episeg.memory import Memory

__all__ = ["MetaValue", "add_manage_tools"]

MetaValue = str | int | float | bool
Guard = Callable[[Callable[[], EpisodeBrief]], EpisodeBrief]


def add_manage_tools(server: MCPServer, memory: Memory, tenant: str, *, guard: Guard) -> None:
    """Add ``get_episode``, ``update_episode`` and ``unarchive`` for ``tenant`` to ``server``.

    ``guard`` runs a tool body and turns any failure into a tool error.
    """

    @server.tool()
    def get_episode(episode_id: str, full_turns: StrictBool = False) -> EpisodeBrief:
        """One stored episode by id (archived ones too); full_turns adds its turns."""
        return guard(
            lambda: EpisodeBrief.of(memory.episode(tenant, episode_id), full_turns=full_turns)
        )

    @server.tool()
    def update_episode(
        episode_id: str,
        summary: str | None = None,
        pinned: StrictBool | None = None,
        salience: StrictInt | None = None,
        metadata: dict[str, MetaValue] | None = None,
    ) -> EpisodeBrief:
        """Edit a stored episode; the fields given change together, or nothing does.

        pinned=true: never decayed or archived. salience: 1-10, your own rating
        (kept over the scorer's). metadata: flat labels {key: str|int|float|bool}
        that replace the episode's labels ({} clears them); recall can filter on them.
        """
        return guard(
            lambda: EpisodeBrief.of(
                memory.update_episode(
                    tenant,
                    episode_id,
                    summary=summary,
                    pinned=pinned,
                    salience=salience,
                    metadata=metadata,
                )
            )
        )

    @server.tool()
    def unarchive(episode_id: str) -> EpisodeBrief:
        """Bring an archived episode back into recall."""
        return guard(lambda: EpisodeBrief.of(memory.unarchive(tenant, episode_id)))
