"""An MCP server (stdio) that gives one agent episeg as its episodic memory.

Bound to ONE tenant at start (``episeg mcp --user alice``): every tool reads and
writes only that tenant, and no tool takes a user argument. Tools:

``observe_turn``
    Feed one conversation turn; returns the episodes it closed.
``flush``
    Close the open episode(s) (one session or all of this user's).
``recall``
    The ``k`` most relevant past episodes for a query, with score terms and
    the turns recall matched (``full_turns=True`` adds every turn).
``used``
    Confirm which recalled episodes the agent actually used (reinforces them).
``forget``
    Erase one episode, one session or everything of this memory, everywhere
    (:meth:`Memory.forget`).
``list_episodes``
    A page of stored episodes (summary, salience, boundary reasons).
``get_episode``, ``update_episode``, ``unarchive``
    One episode by id; edit its summary, pin, salience or metadata; bring it
    back from the archive (:mod:`episeg.interfaces.mcp_manage`).

Arguments with a fixed set of values (actor, turn type) are enums in the
input schema; numbers and flags are strict, as over HTTP (``true`` is not a
number nor ``"false"`` a flag: a tool error; an integer is a fine ``ts``);
every tool declares its output schema (:mod:`episeg.interfaces.mcp_models`).
Any failure comes back as a tool error (``isError``) with episeg's message,
never as a crash of the server.

>>> import asyncio, tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None, scorer=None)
>>> server = create_server(mem, "alice")
>>> sorted(t.name for t in asyncio.run(server.list_tools()))  # doctest: +NORMALIZE_WHITESPACE
['flush', 'forget', 'get_episode', 'list_episodes', 'observe_messages', 'observe_turn', 'recall',
 'unarchive', 'update_episode', 'used']
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import StrictBool, StrictFloat, StrictInt

from episeg.durability.idle import IdleTicker
from episeg.errors import EpisegError
from episeg.interfaces.mcp_manage import MetaValue, add_manage_tools
from episeg.interfaces.mcp_models import (
    ActorName,
    Closed,
    EpisodeBrief,
    EpisodePage,
    Forgotten,
    Hit,
    Recalled,
    TurnTypeName,
    Used,
)
from episeg.interfaces.mcp_stdio import serve_stdio
from episeg.interfaces.messages import recorded_times, turns_from_messages
from episeg.interfaces.runtime import package_version
from episeg.memory import Memory
from episeg.store.tenants import validate_tenant
from episeg.types import Actor, Episode, Turn, TurnType

__all__ = ["create_server", "run_stdio"]

_T = TypeVar("_T")
log = logging.getLogger(__name__)

_INSTRUCTIONS = (
    "Episodic memory. Call observe_turn for every user, assistant and tool turn as it "
    "happens; call recall before answering questions that may depend on earlier work, "
    "then used with the ids of the episodes you relied on; call flush when a "
    "conversation ends."
)


def _guard(call: Callable[[], _T]) -> _T:
    """Run a tool body; any failure becomes a tool error (isError), not a crash."""
    try:
        return call()
    except ToolError:
        raise
    except (EpisegError, ValueError) as exc:
        raise ToolError(str(exc)) from exc
    except Exception as exc:  # a bug or an outage: report it to the agent, keep serving
        log.exception("MCP tool failed")
        raise ToolError(f"internal error ({type(exc).__name__}): {exc}") from exc


def create_server(memory: Memory, user: str) -> MCPServer:
    """The MCP server whose tools act on ``user``'s memory only."""
    tenant = validate_tenant(user)
    server: MCPServer = MCPServer(
        name="episeg", version=package_version(), instructions=_INSTRUCTIONS
    )

    def closed(episodes: list[Episode]) -> Closed:
        return Closed(closed=[EpisodeBrief.of(e) for e in episodes])

    @server.tool()
    def observe_turn(
        actor: ActorName,
        text: str,
        session: str = "default",
        type: TurnTypeName | None = None,
        ts: StrictFloat | None = None,
        id: str | None = None,
    ) -> Closed:
        """Record one conversation turn in episodic memory.

        ts: seconds since the epoch (default now). id: makes re-sending the same
        turn harmless. Returns the episodes this turn closed (without their turns).
        """

        def run() -> Closed:
            with memory.tenant_lock(tenant):  # stamped "now" in arrival order, as HTTP (F7)
                if ts is None:  # now, or the recorded time of a re-sent id (a duplicate, F6)
                    known = recorded_times(memory.journal, tenant, session, [{"id": id}])
                    stamp = known.get(id or "", time.time())
                turn = Turn(
                    actor=Actor.parse(actor),
                    text=text,
                    ts=stamp if ts is None else ts,
                    type=None if type is None else TurnType.parse(type),
                    id=id,
                    user=tenant,
                    session=session,
                )
                return closed(list(memory.observe(turn)))

        return _guard(run)

    @server.tool()
    def observe_messages(messages: list[dict[str, Any]], session: str = "default") -> Closed:
        """Record chat messages ({"role", "content"}, OpenAI / Anthropic style, tool use kept).

        All are checked before any is recorded. A message may carry ts and id;
        without ts it is stamped now. Returns the episodes they closed.
        """

        def run() -> Closed:
            with memory.tenant_lock(tenant):
                recorded = recorded_times(memory.journal, tenant, session, messages)
                turns = turns_from_messages(
                    messages, user=tenant, session=session, ts=time.time(), recorded=recorded
                )
                memory.sessions.enter(tenant, session).preview(turns)
                return closed(list(memory.ingest(turns)))

        return _guard(run)

    @server.tool()
    def flush(session: str | None = None) -> Closed:
        """Close and store the open episode of one session (default: all sessions)."""
        return _guard(lambda: closed(list(memory.flush(tenant, session))))

    @server.tool()
    def recall(
        query: str,
        k: StrictInt = 5,
        max_words: StrictInt = 300,
        full_turns: StrictBool = False,
        metadata: dict[str, MetaValue] | None = None,
        min_score: StrictFloat | None = None,
    ) -> Recalled:
        """Recall the k (1-50) most relevant past episodes for query.

        Each result has its score terms, the episode (id, dates, summary, salience)
        and the turns recall matched, at most max_words words of them across all
        results; full_turns=True adds every turn of each episode. metadata keeps
        episodes whose labels hold every given key=value; min_score drops weaker hits.
        """
        if not 1 <= k <= 50:
            raise ToolError(f"k must be in 1..50, got {k}")
        if max_words < 1:
            raise ToolError(f"max_words must be >= 1, got {max_words}")
        return _guard(
            lambda: Recalled(
                results=[
                    Hit.of(h, full_turns=full_turns)
                    for h in memory.recall(
                        tenant,
                        query,
                        k,
                        max_words=max_words,
                        metadata=metadata,
                        min_score=min_score,
                    )
                ]
            )
        )

    @server.tool()
    def used(episode_ids: list[str]) -> Used:
        """Say which recalled episodes you actually used; they are reinforced (kept longer)."""
        if not episode_ids:  # as over HTTP: an empty list is a mistake, not a confirmation
            raise ToolError("episode_ids must name at least one episode")
        return _guard(
            lambda: Used(confirmed=[e.id for e in memory.confirm_used(tenant, episode_ids)])
        )

    @server.tool()
    def forget(
        episode_id: str | None = None, session: str | None = None, everything: StrictBool = False
    ) -> Forgotten:
        """Erase for good (e.g. when the user asks): one episode, one session, or everything.

        Give exactly one of ``episode_id``, ``session``, ``everything=true``.
        """

        def run() -> Forgotten:
            if sum((episode_id is not None, session is not None, everything)) != 1:
                raise ToolError("give exactly one of episode_id, session, everything=true")
            report = memory.forget(tenant, episode=episode_id, session=session, all=everything)
            if report.missing:
                raise ToolError(f"no episode {episode_id!r} in this memory")
            return Forgotten(
                forgotten=list(report.episodes),
                turns=report.turns,
                session=session,
                everything=everything,
            )

        return _guard(run)

    @server.tool()
    def list_episodes(
        limit: StrictInt = 20,
        offset: StrictInt = 0,
        include_archived: StrictBool = False,
        full_turns: StrictBool = False,
    ) -> EpisodePage:
        """A page of stored episodes: summary, salience, turn count, boundary reasons."""
        if not 1 <= limit <= 1000 or offset < 0:
            raise ToolError(f"need 1 <= limit <= 1000 and offset >= 0, got {limit}, {offset}")
        return _guard(
            lambda: EpisodePage(
                episodes=[
                    EpisodeBrief.of(e, full_turns=full_turns)
                    for e in memory.episodes(
                        tenant, limit=limit, offset=offset, include_archived=include_archived
                    )
                ]
            )
        )

    add_manage_tools(server, memory, tenant, guard=_guard)
    return server


def run_stdio(memory: Memory, user: str) -> None:
    """Serve ``user``'s memory over stdin/stdout until the client disconnects.

    Open episodes are flushed (scored and stored) when the client goes away.
    """
    server = create_server(memory, user)
    ticker = IdleTicker(memory).start()  # the idle timeout, while the client stays connected
    try:
        anyio.run(serve_stdio, server)  # server.run("stdio"), but every request is answered
    finally:
        ticker.stop()
        memory.flush(validate_tenant(user))
