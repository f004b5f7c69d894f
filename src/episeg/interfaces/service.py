"""The HTTP service: FastAPI over one ``Memory``, a bearer key per tenant.

The tenant of every request comes **only** from its API key; no endpoint takes
a tenant parameter, and a turn whose ``user`` names another tenant is refused
(403). Bodies over ``max_body_bytes`` get 413, malformed ones 422, an
unreachable store 503. Run it with one worker: ``Memory`` serialises each
tenant's writes with that tenant's lock and lets tenants run side by side
(``episeg serve --keys-file keys.json``); to scale out, run replicas behind a
proxy that routes each key to one replica (``docs/DEPLOYMENT.md``).

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
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Query, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field

from episeg.errors import TenantError
from episeg.interfaces.messages import turns_from_messages
from episeg.interfaces.metrics import MetricsMiddleware, ServiceMetrics
from episeg.interfaces.service_auth import BodyLimit, KeyRing
from episeg.interfaces.service_errors import JournalHealth, install_error_handlers
from episeg.interfaces.service_routes import add_extra_routes
from episeg.interfaces.views import episode_view, scored_view
from episeg.memory import Memory
from episeg.types import Actor, Episode, Turn, TurnType

__all__ = ["DEFAULT_MAX_BODY", "KeyRing", "create_app", "serve"]

DEFAULT_MAX_BODY = 1 << 20
MAX_BATCH = 1000
_Name = Annotated[str, Field(min_length=1, max_length=256)]


class TurnIn(BaseModel):
    """One turn. user may be omitted (it is the key's tenant); ts defaults to now."""

    model_config = ConfigDict(extra="forbid")
    actor: Literal["user", "assistant", "tool", "system"]
    text: str
    # strict: JSON true or "12" is not a time (F20); NaN/Infinity are refused (F9)
    ts: Annotated[float, Field(strict=True, allow_inf_nan=False)] | None = None
    type: (
        Literal[
            "user-question",
            "user-correction",
            "assistant-answer",
            "tool-call",
            "tool-error",
            "tool-success",
            "system-event",
        ]
        | None
    ) = None
    id: _Name | None = None
    user: _Name | None = None
    session: _Name = "default"


class MessageIn(BaseModel):
    """A chat message, OpenAI / mem0 style; other keys (name, tool_calls, ...) are ignored."""

    model_config = ConfigDict(extra="ignore")
    role: Literal["user", "assistant", "system", "developer", "tool", "function"]
    content: str | list[dict[str, Any]]
    ts: Annotated[float, Field(strict=True, allow_inf_nan=False)] | None = None
    id: _Name | None = None


class MessagesIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    messages: Annotated[list[MessageIn], Field(min_length=1, max_length=MAX_BATCH)]
    session: _Name = "default"


class FlushIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session: _Name | None = None


class RecallIn(BaseModel):
    """A recall: query, at most k episodes, and optionally a word budget across all
    hits, a time range (seconds since the epoch) or one session, whole episodes
    (expand), turns of context around each match and neighbouring episodes."""

    model_config = ConfigDict(extra="forbid")
    query: Annotated[str, Field(min_length=1, max_length=10_000)]
    k: Annotated[int, Field(ge=1, le=50)] = 5
    max_words: Annotated[int, Field(ge=1, le=100_000)] | None = None
    since: Annotated[float, Field(strict=True, allow_inf_nan=False)] | None = None
    until: Annotated[float, Field(strict=True, allow_inf_nan=False)] | None = None
    session: _Name | None = None
    expand: Literal["turns", "episode"] = "turns"
    context: Annotated[int, Field(ge=0, le=10)] = 0
    neighbours: Annotated[int, Field(ge=0, le=10)] = 0


class SalienceOut(BaseModel):
    score: int | None
    normalized: float | None
    scorer: str
    reason: str


class VerdictOut(BaseModel):
    signal: str
    decision: str
    score: float
    reason: str
    authoritative: bool


class TurnOut(BaseModel):
    actor: str
    text: str
    ts: float
    type: str | None = None
    id: str | None = None
    user: str
    session: str


class EpisodeOut(BaseModel):
    id: str
    user: str
    session: str
    summary: str
    opened_at: float
    closed_at: float
    start: str
    end: str
    turn_count: int
    first_turn_id: str | None
    last_turn_id: str | None
    salience: SalienceOut | None
    parent_id: str | None
    boundary_reasons: list[str]
    boundary_verdicts: list[VerdictOut]
    recall_count: int
    last_accessed: float | None
    strength: float
    archived: bool
    turns: list[TurnOut]


class ClosedOut(BaseModel):
    accepted: int
    closed: list[EpisodeOut]
    duplicates: list[str] = Field(
        default_factory=list, description="ids of sent turns skipped as already recorded"
    )


class EpisodesOut(BaseModel):
    episodes: list[EpisodeOut]


class RecallHitOut(BaseModel):
    score: float
    recency: float
    importance: float
    similarity: float
    raw_similarity: float
    importance_imputed: bool
    episode: EpisodeOut
    episode_id: str
    start: str
    end: str
    summary: str
    reinforcement: float
    lexical: bool
    words: int
    turn_ids: list[str]
    turns: list[TurnOut]
    neighbours_before: list[str]
    neighbours_after: list[str]


class RecallOut(BaseModel):
    results: list[RecallHitOut]


class ErrorOut(BaseModel):
    detail: str


_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": what}
    for code, what in (
        (400, "refused by episeg (its message says why)"),
        (401, "missing or unknown API key"),
        (403, "turn names another tenant"),
        (413, "request body too large"),
        (503, "episode store unreachable, or the journal cannot write (see Retry-After)"),
    )
}
_READ_ERRORS = {code: v for code, v in _ERRORS.items() if code != 403}
_DESCRIPTION = (
    "Episodic memory for AI agents over HTTP: turns in, episodes out, recall. "
    "The tenant of every request comes only from its bearer API key."
)


def _version() -> str:
    try:
        return version("episeg")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def create_app(
    memory: Memory, keys: KeyRing | Mapping[str, str], *, max_body_bytes: int = DEFAULT_MAX_BODY
) -> FastAPI:
    """The FastAPI app serving ``memory`` to the tenants of ``keys``."""
    ring = keys if isinstance(keys, KeyRing) else KeyRing(keys)
    app = FastAPI(title="episeg", version=_version(), description=_DESCRIPTION)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
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

    def tenant(creds: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)]) -> str:
        found = ring.tenant_for(creds.credentials) if creds is not None else None
        if found is None:
            raise HTTPException(
                401, "missing or unknown API key", headers={"WWW-Authenticate": "Bearer"}
            )
        return found

    Tenant = Annotated[str, Depends(tenant)]

    def check_owner(items: list[TurnIn], owner: str) -> None:
        if any(item.user is not None and item.user != owner for item in items):
            raise TenantError("this API key may only write its own tenant's turns")

    def to_turn(item: TurnIn, owner: str, now: float) -> Turn:
        return Turn(
            actor=Actor.parse(item.actor),
            text=item.text,
            ts=now if item.ts is None else item.ts,
            type=None if item.type is None else TurnType.parse(item.type),
            id=item.id,
            user=owner,
            session=item.session,
        )

    @app.post("/v1/turns", responses=_ERRORS)
    def observe(item: TurnIn, owner: Tenant) -> ClosedOut:
        """Observe one turn; returns the episode(s) it closed, scored and stored."""
        check_owner([item], owner)
        with memory.tenant_lock(owner):  # stamp "now" in arrival order (F7)
            return ingest([to_turn(item, owner, time.time())], owner)

    @app.post("/v1/turns:batch", responses=_ERRORS)
    def observe_batch(
        items: Annotated[list[TurnIn], Field(max_length=MAX_BATCH)], owner: Tenant
    ) -> ClosedOut:
        """Observe turns in order; all are validated before any is observed.

        "accepted" counts the new turns; "duplicates" lists the ids skipped
        because they were already recorded (a re-sent batch is safe).
        """
        check_owner(items, owner)
        with memory.tenant_lock(owner):
            now = time.time()
            return ingest([to_turn(item, owner, now) for item in items], owner)

    @app.post("/v1/messages", responses=_ERRORS)
    def observe_messages(body: MessagesIn, owner: Tenant) -> ClosedOut:
        """Observe chat messages (role, content) of one session as turns, all-or-nothing.

        A message without ts is stamped now (in order); see POST /v1/turns:batch.
        """
        raw = [m.model_dump(exclude_none=True) for m in body.messages]
        with memory.tenant_lock(owner):
            turns = turns_from_messages(raw, user=owner, session=body.session, ts=time.time())
            return ingest(turns, owner)

    @app.post("/v1/flush", responses=_READ_ERRORS)
    def flush(owner: Tenant, body: FlushIn | None = None) -> ClosedOut:
        """Close the tenant's open episodes (one session, or all of its sessions)."""
        return _closed(memory.flush(owner, body.session if body else None), 0)

    @app.get("/v1/episodes", responses=_READ_ERRORS)
    def episodes(
        owner: Tenant,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
        include_archived: bool = False,
    ) -> EpisodesOut:
        """The tenant's stored episodes, one page."""
        page = memory.episodes(owner, limit=limit, offset=offset, include_archived=include_archived)
        return EpisodesOut(episodes=[EpisodeOut.model_validate(episode_view(e)) for e in page])

    @app.post("/v1/recall", responses=_READ_ERRORS)
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
        )
        return RecallOut(results=[RecallHitOut.model_validate(scored_view(h)) for h in hits])

    @app.get("/v1/healthz", responses={503: _ERRORS[503]})
    def healthz() -> dict[str, str]:
        """Liveness, store reachability and journal writability (no key needed)."""
        memory.backend.heartbeat()
        problem = health.problem()
        if problem is not None:
            raise HTTPException(503, problem)
        return {"status": "ok"}

    add_extra_routes(app, memory, tenant, metrics, _READ_ERRORS)
    install_error_handlers(app, health)
    return app


def serve(
    memory: Memory,
    keys: KeyRing,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    max_body_bytes: int = DEFAULT_MAX_BODY,
) -> None:
    """Run the service with uvicorn (one worker) until interrupted."""
    import uvicorn

    uvicorn.run(
        create_app(memory, keys, max_body_bytes=max_body_bytes),
        host=host,
        port=port,
        workers=1,
        log_level="info",
        log_config=None,  # uvicorn's loggers propagate to the root (plain or JSON, see cli)
    )
