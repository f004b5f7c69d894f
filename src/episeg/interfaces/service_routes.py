"""Routes the service adds beside its core API: forget, the memory browser, metrics.

``DELETE /v1/episode?id=<episode id>``
    Erases one of the key's tenant's episodes everywhere
    (:meth:`Memory.forget`: both collections, recall's index, the journal).
    404 when the tenant has no episode by that id, so one tenant cannot probe
    another's ids. The id is a query parameter, so every id can be named
    ("a/b", ".."); the older ``DELETE /v1/episodes/{episode_id}`` still works
    for an id a URL path can carry.
``DELETE /v1/sessions?session=<name>`` / ``DELETE /v1/tenant``
    Erase one session (stored episodes and open turns) / everything of the
    key's tenant (``?confirm=true`` required: 422 without it, 400 if false). 200 with what was
    erased, also when nothing was there. The session is a query parameter so
    that every name a turn may carry can be erased ("a/b", ".", ".."); the
    older ``DELETE /v1/sessions/{session}`` still works for a name a URL path
    can carry (not "." or ".."), and is left out of the OpenAPI document.
``POST /v1/used``
    Confirms that recalled episodes were used (``Memory.confirm_used``):
    reinforcement follows use, not retrieval. 404 for an id the tenant lacks.
``POST /v1/maintain``
    The tenant's maintenance pass (``Memory.maintain``): decay of unconfirmed
    episodes, and with ``{"archive": true}`` archiving of the faded ones.
``GET /ui``
    The memory browser: a static page plus a small script (``static/``) that
    asks for the API key and then reads only through the API above, so it
    shows the key's tenant and nothing else. A Content-Security-Policy allows
    scripts and styles from this origin only.
``GET /metrics``
    Prometheus text format (:mod:`episeg.interfaces.metrics`); no key, like
    ``/v1/healthz`` (put it behind the network boundary you scrape from).

>>> sorted(STATIC)
['browser.css', 'browser.html', 'browser.js']
"""

# No `from __future__ import annotations`: FastAPI reads the annotations at runtime.
import dataclasses
from collections.abc import AsyncIterator, Callable
from importlib import resources
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Path, Query
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from episeg.errors import StoreError, StoreUnavailableError
from episeg.interfaces.metrics import CONTENT_TYPE_LATEST, ServiceMetrics
from episeg.interfaces.service_models import EpisodeIdPath, EpisodeIdQuery
from episeg.interfaces.service_transfer import add_transfer_routes
from episeg.memory import Memory
from episeg.store.erase import ForgetReport
from episeg.types.episode import MAX_EPISODE_ID

__all__ = ["STATIC", "ForgottenOut", "add_extra_routes"]

STATIC = {
    name: resources.files("episeg.interfaces").joinpath("static", name).read_bytes()
    for name in ("browser.css", "browser.html", "browser.js")
}
_TYPES = {"html": "text/html; charset=utf-8", "css": "text/css", "js": "text/javascript"}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class ForgottenOut(BaseModel):
    forgotten: list[str]
    turns: int = 0
    session: str | None = None
    tenant: bool = False


class UsedIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    episode_ids: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_EPISODE_ID)]],
        Field(min_length=1, max_length=100),
    ]


class UsedOut(BaseModel):
    confirmed: list[str]


class MaintainIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    archive: StrictBool = False


class MaintainOut(BaseModel):
    """What the maintenance pass saw and changed (episeg's MaintenanceReport)."""

    total: int
    recalled: int
    never_recalled: int
    decayed: int
    below_floor: int
    archived: int
    already_archived: int
    mean_retention: float


def _forgotten(report: ForgetReport) -> ForgottenOut:
    return ForgottenOut(
        forgotten=list(report.episodes),
        turns=report.turns,
        session=report.session,
        tenant=report.tenant,
    )


def _static(name: str) -> Response:
    return Response(
        STATIC[name],
        media_type=_TYPES[name.rsplit(".", 1)[1]],
        headers={
            "Content-Security-Policy": _CSP,
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
        },
    )


def add_extra_routes(
    app: FastAPI,
    memory: Memory,
    tenant: Callable[..., AsyncIterator[str]],
    metrics: ServiceMetrics,
    errors: dict[int | str, dict[str, Any]],
) -> None:
    """Add the forget, browser and metrics routes to ``app``.

    ``tenant`` is the service's key -> tenant dependency; ``errors`` the
    documented error answers of a keyed route. Routes go on ``app`` itself
    (not a nested router) so the metrics middleware sees their templates.
    """
    Tenant = Annotated[str, Depends(tenant)]
    add_transfer_routes(app, memory, tenant, errors)  # GET /v1/export, POST /v1/import
    missing = {**errors, 404: {**errors[401], "description": "no such episode"}}

    def forget_one(owner: str, episode_id: str) -> ForgottenOut:
        report = memory.forget(owner, episode=episode_id)
        if report.missing:
            raise HTTPException(404, "no such episode")
        return _forgotten(report)

    @app.delete("/v1/episode", responses=missing)
    def forget(episode_id: EpisodeIdQuery, owner: Tenant) -> ForgottenOut:
        """Erase one of the tenant's episodes everywhere (store, index, journal), for good.

        The id is a query parameter (?id=), so every id ("a/b", "..") can be erased.
        """
        return forget_one(owner, episode_id)

    @app.delete("/v1/episodes/{episode_id}", responses=missing, include_in_schema=False)
    def forget_in_path(episode_id: EpisodeIdPath, owner: Tenant) -> ForgottenOut:
        """The older form: the id in the path (not one with "/", nor "." or "..")."""
        return forget_one(owner, episode_id)

    @app.delete("/v1/sessions", responses=errors)
    def forget_session(session: Annotated[str, Query(min_length=1)], owner: Tenant) -> ForgottenOut:
        """Erase one session of the tenant everywhere: stored episodes and open turns.

        The session is a query parameter, so every name a turn may carry ("a/b", "..",
        one longer than a turn sent here may name, from MCP, the CLI or the library)
        can be erased.
        """
        return _forgotten(memory.forget(owner, session=session))

    @app.delete("/v1/sessions/{session:path}", responses=errors, include_in_schema=False)
    def forget_session_in_path(
        session: Annotated[str, Path(min_length=1)], owner: Tenant
    ) -> ForgottenOut:
        """The older form: the name in the path (one with "/" too; "." and ".." not)."""
        return _forgotten(memory.forget(owner, session=session))

    @app.delete("/v1/tenant", responses=errors)
    def forget_tenant(owner: Tenant, confirm: Annotated[bool, Query()]) -> ForgottenOut:
        """Erase everything of the key's tenant; needs ?confirm=true (the key stays valid)."""
        if not confirm:
            raise HTTPException(400, "erasing a whole tenant needs confirm=true")
        return _forgotten(memory.forget(owner, all=True))

    @app.post("/v1/used", responses=missing)
    def used(body: UsedIn, owner: Tenant) -> UsedOut:
        """Confirm that these recalled episodes were used: reinforces them (strength grows)."""
        try:
            updated = memory.confirm_used(owner, body.episode_ids)
        except StoreUnavailableError:
            raise  # a 503 like every route's, not "no such episode"
        except StoreError as exc:
            raise HTTPException(404, str(exc)) from None
        return UsedOut(confirmed=[e.id for e in updated])

    @app.post("/v1/maintain", responses=errors)
    def maintain(owner: Tenant, body: MaintainIn | None = None) -> MaintainOut:
        """Decay the tenant's episodes never confirmed used; with archive, archive the
        faded ones (out of recall until unarchived). A service cannot run `episeg
        maintain` beside it on its own folder (the journal is its), so it is a route."""
        report = memory.maintain(owner, archive=body.archive if body is not None else False)
        return MaintainOut(**dataclasses.asdict(report))

    @app.get("/ui", include_in_schema=False)
    def browser_page() -> Response:
        return _static("browser.html")

    @app.get("/ui/{name}", include_in_schema=False)
    def browser_asset(name: str) -> Response:
        if name not in STATIC or name.endswith(".html"):
            raise HTTPException(404, "not found")
        return _static(name)

    @app.get("/metrics", include_in_schema=False)
    def scrape() -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
