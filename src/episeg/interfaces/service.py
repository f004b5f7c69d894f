"""The HTTP service: FastAPI over one ``Memory``, a bearer key per tenant.

The tenant of every request comes **only** from its API key; no endpoint takes
a tenant parameter, and a turn whose ``user`` names another tenant is refused
(403). Bodies over ``max_body_bytes`` get 413, malformed ones 422 (also JSON
nested deeper than 100 levels, :mod:`episeg.interfaces.service_depth`), an
unreachable store 503. While it runs, an :class:`~episeg.durability.idle.IdleTicker`
closes the open episodes of sessions idle for ``intake.idle_timeout`` and retries
the outbox. Run it
with one worker: ``Memory`` serialises each tenant's writes with that tenant's
lock and lets tenants run side by side (``episeg serve --keys-file keys.json``);
to scale out, run replicas behind a proxy that routes each key to one replica
(``docs/DEPLOYMENT.md``).

>>> import tempfile
>>> from fastapi.testclient import TestClient
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None, scorer=None)
>>> app = create_app(mem, {"alice-key-0123456789": "alice"})
>>> TestClient(app).get("/v1/episodes").status_code
401
"""

# No `from __future__ import annotations`: FastAPI reads the (local) annotations at runtime.
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException, Query, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import Field

from episeg.durability.idle import IdleTicker
from episeg.errors import TenantError
from episeg.interfaces.messages import recorded_times, turns_from_messages
from episeg.interfaces.metrics import MetricsMiddleware, ServiceMetrics
from episeg.interfaces.runtime import package_version
from episeg.interfaces.service_auth import BodyLimit, KeyRing, OneAuthorization
from episeg.interfaces.service_depth import DepthLimit
from episeg.interfaces.service_errors import JournalHealth, install_error_handlers
from episeg.interfaces.service_gate import DEFAULT_TENANT_REQUESTS, GateFull, TenantGate
from episeg.interfaces.service_manage import add_manage_routes
from episeg.interfaces.service_models import (
    ERRORS,
    MAX_BATCH,
    READ_ERRORS,
    ClosedOut,
    EpisodeOut,
    EpisodesOut,
    FlushIn,
    MessagesIn,
    RecallHitOut,
    RecallIn,
    RecallOut,
    TurnIn,
)
from episeg.interfaces.service_routes import add_extra_routes
from episeg.interfaces.views import episode_view, scored_view
from episeg.memory import Memory
from episeg.types import Actor, Episode, Turn, TurnType

__all__ = ["DEFAULT_MAX_BODY", "KeyRing", "create_app", "serve"]

DEFAULT_MAX_BODY = 1 << 20
_DESCRIPTION = (
    "Episodic memory for AI agents over HTTP: turns in, episodes out, recall. "
    "The tenant of every request comes only from its bearer API key."
)


def create_app(
    memory: Memory,
    keys: KeyRing | Mapping[str, str],
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY,
    max_tenant_requests: int = DEFAULT_TENANT_REQUESTS,
) -> FastAPI:
    """The FastAPI app serving ``memory`` to the tenants of ``keys``.

    A tenant with ``max_tenant_requests`` requests in flight gets 429 (``Retry-After: 1``)
    for the next one (:mod:`~episeg.interfaces.service_gate`).
    """
    ring = keys if isinstance(keys, KeyRing) else KeyRing(keys)
    gate = TenantGate(max_tenant_requests)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        ticker = IdleTicker(memory).start()  # closes abandoned sessions' episodes
        try:
            yield
        finally:
            ticker.stop()

    app = FastAPI(  # no /docs, /redoc: they load CDN scripts on the origin holding /ui's key
        title="episeg",
        version=package_version(),
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    # inside BodyLimit (a body over the size cap is never read); an import names its bad line
    app.add_middleware(DepthLimit, raw_paths=["/v1/import"])
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.add_middleware(OneAuthorization)  # outermost: two keys are refused before anything
    metrics = ServiceMetrics(
        judge_calls=lambda: memory.judge.calls if memory.judge is not None else 0,
        outbox_depth=lambda: len(memory.pending_writes()),
    )
    app.add_middleware(MetricsMiddleware, metrics=metrics, routes=lambda: app.routes)

    health = JournalHealth(memory.path)

    def _closed(
        episodes: list[Episode], accepted: int, duplicates: Sequence[str] = ()
    ) -> ClosedOut:
        metrics.record(accepted=accepted, closed=len(episodes))
        return ClosedOut(
            accepted=accepted,
            closed=[EpisodeOut.model_validate(episode_view(e)) for e in episodes],
            duplicates=list(duplicates),
        )

    def ingest(turns: list[Turn], owner: str) -> ClosedOut:
        """Check every turn first (all-or-nothing, F5), then observe them in order."""
        fresh: dict[int, bool] = {}
        for session in dict.fromkeys(t.session for t in turns):
            index = [n for n, t in enumerate(turns) if t.session == session]
            segmenter = memory.sessions.enter(owner, session)  # its state, from the journal
            fresh.update(zip(index, segmenter.preview([turns[n] for n in index]), strict=True))
        closed = memory.ingest(turns)
        health.succeeded()
        duplicates = [t.id or "" for n, t in enumerate(turns) if not fresh[n]]
        return _closed(closed, len(turns) - len(duplicates), duplicates)

    bearer = HTTPBearer(auto_error=False, description="API key of one tenant")

    async def tenant(  # async: it runs on the event loop, never waits for a worker thread
        creds: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    ) -> AsyncIterator[str]:
        found, admin = ring.lookup(creds.credentials) if creds is not None else (None, False)
        if found is None and admin:  # a valid key, but for the admin routes only
            raise HTTPException(403, "this API key is an admin key: it has no tenant")
        if found is None:
            raise HTTPException(
                401, "missing or unknown API key", headers={"WWW-Authenticate": "Bearer"}
            )
        try:
            with gate.slot(found):
                yield found
        except GateFull as full:
            detail = f"{full.limit} requests of this tenant are in flight: retry shortly"
            raise HTTPException(429, detail, headers={"Retry-After": "1"}) from None

    Tenant = Annotated[str, Depends(tenant)]

    def check_owner(items: list[TurnIn], owner: str) -> None:
        if any(item.user is not None and item.user != owner for item in items):
            raise TenantError("this API key may only write its own tenant's turns")

    def to_turns(items: list[TurnIn], owner: str) -> list[Turn]:
        """Turns stamped "now" if they lack ts, or their recorded time if re-sent (F6)."""
        now, recorded = time.time(), dict[tuple[str, str | None], float]()
        for session in dict.fromkeys(item.session for item in items):
            mine = [item.model_dump() for item in items if item.session == session]
            found = recorded_times(memory.journal, owner, session, mine)
            recorded.update({(session, turn_id): ts for turn_id, ts in found.items()})
        return [
            Turn(
                actor=Actor.parse(item.actor),
                text=item.text,
                ts=recorded.get((item.session, item.id), now) if item.ts is None else item.ts,
                type=None if item.type is None else TurnType.parse(item.type),
                id=item.id,
                user=owner,
                session=item.session,
            )
            for item in items
        ]

    @app.post("/v1/turns", responses=ERRORS)
    def observe(item: TurnIn, owner: Tenant) -> ClosedOut:
        """Observe one turn; returns the episode(s) it closed, scored and stored."""
        check_owner([item], owner)
        with memory.tenant_lock(owner):  # stamp "now" in arrival order (F7)
            return ingest(to_turns([item], owner), owner)

    @app.post("/v1/turns:batch", responses=ERRORS)
    def observe_batch(
        items: Annotated[list[TurnIn], Field(max_length=MAX_BATCH)], owner: Tenant
    ) -> ClosedOut:
        """Observe turns in order; all are validated before any is observed.

        "accepted" counts the new turns; "duplicates" lists the ids skipped
        because they were already recorded (a re-sent batch is safe).
        """
        check_owner(items, owner)
        with memory.tenant_lock(owner):
            return ingest(to_turns(items, owner), owner)

    @app.post("/v1/messages", responses=ERRORS)
    def observe_messages(body: MessagesIn, owner: Tenant) -> ClosedOut:
        """Observe chat messages (role, content) of one session as turns, all-or-nothing.

        A message without ts is stamped now (in order); see POST /v1/turns:batch.
        """
        raw = [m.model_dump(exclude_none=True) for m in body.messages]
        with memory.tenant_lock(owner):
            recorded = recorded_times(memory.journal, owner, body.session, raw)
            turns = turns_from_messages(
                raw, user=owner, session=body.session, ts=time.time(), recorded=recorded
            )
            return ingest(turns, owner)

    @app.post("/v1/flush", responses=READ_ERRORS)
    def flush(owner: Tenant, body: FlushIn | None = None) -> ClosedOut:
        """Close the tenant's open episodes (one session, or all of its sessions)."""
        return _closed(memory.flush(owner, body.session if body else None), 0)

    @app.get("/v1/episodes", responses=READ_ERRORS)
    def episodes(
        owner: Tenant,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
        include_archived: bool = False,
    ) -> EpisodesOut:
        """The tenant's stored episodes, one page."""
        page = memory.episodes(owner, limit=limit, offset=offset, include_archived=include_archived)
        return EpisodesOut(episodes=[EpisodeOut.model_validate(episode_view(e)) for e in page])

    @app.post("/v1/recall", responses=READ_ERRORS)
    def recall(body: RecallIn, owner: Tenant) -> RecallOut:
        """The k best of the tenant's episodes for the query, each with its matching turns.

        Nothing is written: confirm what was used with POST /v1/used.
        """
        hits = memory.recall(
            owner,
            body.query,
            k=body.k,
            max_words=body.max_words,
            since=body.since,
            until=body.until,
            session=body.session,
            expand=body.expand,
            context=body.context,
            neighbours=body.neighbours,
            metadata=body.metadata,
            min_score=body.min_score,
        )
        return RecallOut(results=[RecallHitOut.model_validate(scored_view(h)) for h in hits])

    @app.get("/v1/healthz", responses={503: ERRORS[503]})
    def healthz() -> dict[str, str]:
        """Liveness, store reachability and journal writability (no key needed)."""
        memory.backend.heartbeat()
        problem = health.problem()
        if problem is not None:
            raise HTTPException(503, problem)
        return {"status": "ok"}

    add_extra_routes(app, memory, tenant, metrics, READ_ERRORS)
    add_manage_routes(app, memory, tenant, ring, READ_ERRORS)  # get, edit, unarchive, tenants
    install_error_handlers(app, health)
    return app


def serve(
    memory: Memory,
    keys: KeyRing,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    max_body_bytes: int = DEFAULT_MAX_BODY,
    max_tenant_requests: int = DEFAULT_TENANT_REQUESTS,
) -> None:
    """Run the service with uvicorn (one worker) until interrupted."""
    import uvicorn

    app = create_app(
        memory, keys, max_body_bytes=max_body_bytes, max_tenant_requests=max_tenant_requests
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        workers=1,
        log_level="info",
        log_config=None,  # uvicorn's loggers propagate to the root (plain or JSON, see cli)
    )
