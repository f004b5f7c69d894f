"""Service routes that manage stored episodes: get, edit, unarchive; and the admin's tenant list.

The episode id is a query parameter (``?id=``), so every id an episode may
have can be named: ids made from a LangGraph namespace hold "/", and "." or
".." would be removed from a path by clients and proxies. The older forms
with the id in the path (``/v1/episodes/{episode_id}``, ``.../unarchive``)
still work for ids a path can carry.

``GET /v1/episode?id=``
    One of the key's tenant's episodes (404 when the tenant has none by that
    id: another tenant's id is "not found" too, so ids cannot be probed).
``PATCH /v1/episode?id=``
    Edit it: any of ``summary``, ``pinned``, ``salience`` (1-10, set by the
    user: scorer ``"user"``), ``metadata`` (replaces the user metadata whole;
    a flat ``{str: str | int | float | bool}``, see
    :mod:`episeg.store.usermeta`). All fields or none; 422 for a malformed
    body (a blank summary too; nothing changed, and checked before the id is
    looked up), 404 as above.
``POST /v1/episode/unarchive?id=``
    Bring an archived episode back into recall.
``GET /v1/admin/tenants``
    Every tenant with stored episodes or open turns. Only an admin key
    (``{"admin": true}`` in the keys file) may call it: 401 for a missing or
    unknown key, 403 for a tenant's key.

>>> EpisodeEditIn(salience=7).model_dump(exclude_none=True)
{'salience': 7}
"""

# No `from __future__ import annotations`: FastAPI reads the annotations at runtime.
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Security
from fastapi.exceptions import RequestValidationError
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from episeg.errors import EpisodeEditError, EpisodeNotFoundError
from episeg.interfaces.service_auth import KeyRing
from episeg.interfaces.service_models import (
    EpisodeIdPath,
    EpisodeIdQuery,
    EpisodeOut,
    MetadataValue,
    checked_metadata,
)
from episeg.interfaces.views import episode_view
from episeg.memory import Memory
from episeg.store.edit import MAX_SUMMARY_LENGTH, EpisodeEdit
from episeg.types import Episode

__all__ = ["EpisodeEditIn", "TenantsOut", "add_manage_routes"]


class EpisodeEditIn(BaseModel):
    """An edit: the fields given change, all together; at least one is needed."""

    model_config = ConfigDict(extra="forbid")
    summary: Annotated[str, Field(min_length=1, max_length=MAX_SUMMARY_LENGTH)] | None = None
    pinned: Annotated[bool, Field(strict=True)] | None = None
    salience: Annotated[int, Field(strict=True, ge=1, le=10)] | None = Field(
        None, description="1-10, set by the user; replaces the scored salience"
    )
    metadata: dict[str, MetadataValue] | None = Field(
        None, description="replaces the episode's user metadata ({} clears it)"
    )

    _metadata = field_validator("metadata")(checked_metadata)

    @field_validator("summary")
    @classmethod
    def _summary(cls, value: str | None) -> str | None:
        """The library's summary rules (not blank, valid text) as a 422, before any lookup."""
        if value is not None:
            EpisodeEdit(summary=value)  # an EpisodeEditError is a ValueError: pydantic's 422
        return value

    @model_validator(mode="after")
    def _something(self) -> "EpisodeEditIn":
        if all(v is None for v in (self.summary, self.pinned, self.salience, self.metadata)):
            raise ValueError("give at least one of summary, pinned, salience, metadata")
        return self


class TenantsOut(BaseModel):
    tenants: list[str]


def add_manage_routes(
    app: FastAPI,
    memory: Memory,
    tenant: Callable[..., AsyncIterator[str]],
    ring: KeyRing,
    errors: dict[int | str, dict[str, Any]],
) -> None:
    """Add the get / edit / unarchive routes and the admin tenant list to ``app``.

    ``tenant`` is the service's key -> tenant dependency, ``ring`` its keys
    (for the admin check) and ``errors`` the documented error answers of a
    keyed route.
    """
    Tenant = Annotated[str, Depends(tenant)]
    missing = {**errors, 404: {**errors[401], "description": "no such episode"}}
    admin_bearer = HTTPBearer(
        auto_error=False,
        scheme_name="AdminKey",
        description='an admin API key ({"admin": true} in the keys file)',
    )

    def admin(
        creds: Annotated[HTTPAuthorizationCredentials | None, Security(admin_bearer)],
    ) -> None:
        key = creds.credentials if creds is not None else ""
        if not ring.is_admin(key):
            if ring.tenant_for(key) is None:
                raise HTTPException(
                    401, "missing or unknown API key", headers={"WWW-Authenticate": "Bearer"}
                )
            raise HTTPException(403, "this API key is not an admin key")

    def view(episode: Episode) -> EpisodeOut:
        return EpisodeOut.model_validate(episode_view(episode))

    def get_one(owner: str, episode_id: str) -> EpisodeOut:
        try:
            return view(memory.episode(owner, episode_id))
        except EpisodeNotFoundError:
            raise HTTPException(404, "no such episode") from None

    def edit_one(owner: str, episode_id: str, body: EpisodeEditIn) -> EpisodeOut:
        try:
            edited = memory.update_episode(
                owner,
                episode_id,
                summary=body.summary,
                pinned=body.pinned,
                salience=body.salience,
                metadata=body.metadata,
            )
        except EpisodeNotFoundError:
            raise HTTPException(404, "no such episode") from None
        except EpisodeEditError as exc:  # the model checks these first; the library has the say
            raise RequestValidationError(
                [{"loc": ("body",), "msg": str(exc), "type": "episode_edit"}]
            ) from None
        return view(edited)

    def unarchive_one(owner: str, episode_id: str) -> EpisodeOut:
        try:
            return view(memory.unarchive(owner, episode_id))
        except EpisodeNotFoundError:
            raise HTTPException(404, "no such episode") from None

    @app.get("/v1/episode", responses=missing)
    def get_episode(episode_id: EpisodeIdQuery, owner: Tenant) -> EpisodeOut:
        """One of the tenant's stored episodes, archived or not."""
        return get_one(owner, episode_id)

    @app.patch("/v1/episode", responses=missing)
    def update_episode(
        episode_id: EpisodeIdQuery, body: EpisodeEditIn, owner: Tenant
    ) -> EpisodeOut:
        """Edit one of the tenant's episodes: summary, pin, salience (1-10), user metadata.

        All given fields change together or none does. A pinned episode is
        never decayed nor archived by maintenance; a salience set here is
        marked as the user's (scorer "user") and no scorer overwrites it.
        """
        return edit_one(owner, episode_id, body)

    @app.post("/v1/episode/unarchive", responses=missing)
    def unarchive(episode_id: EpisodeIdQuery, owner: Tenant) -> EpisodeOut:
        """Bring an archived episode back into recall (it counts as accessed now)."""
        return unarchive_one(owner, episode_id)

    # The older forms, the id in the path: an id with "/", or "." / "..", cannot be named there.
    @app.get("/v1/episodes/{episode_id}", responses=missing, include_in_schema=False)
    def get_episode_in_path(episode_id: EpisodeIdPath, owner: Tenant) -> EpisodeOut:
        return get_one(owner, episode_id)

    @app.patch("/v1/episodes/{episode_id}", responses=missing, include_in_schema=False)
    def update_episode_in_path(
        episode_id: EpisodeIdPath, body: EpisodeEditIn, owner: Tenant
    ) -> EpisodeOut:
        return edit_one(owner, episode_id, body)

    @app.post("/v1/episodes/{episode_id}/unarchive", responses=missing, include_in_schema=False)
    def unarchive_in_path(episode_id: EpisodeIdPath, owner: Tenant) -> EpisodeOut:
        return unarchive_one(owner, episode_id)

    admin_errors: dict[int | str, dict[str, Any]] = {
        **{code: errors[code] for code in (401, 503) if code in errors},
        403: {**errors[401], "description": "the API key is not an admin key"},
    }

    @app.get("/v1/admin/tenants", responses=admin_errors, dependencies=[Depends(admin)])
    def tenants(
        limit: Annotated[int, Query(ge=1, le=100_000)] = 1000,
        offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
    ) -> TenantsOut:
        """Tenants with stored episodes or open turns, sorted, one page (admin keys only)."""
        return TenantsOut(tenants=memory.tenants()[offset : offset + limit])
