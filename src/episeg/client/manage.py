"""Client methods that manage stored episodes: get, edit, unarchive, and the admin's tenants.

Mixed into :class:`~episeg.client.Client` (:class:`ManageCalls`) and
:class:`~episeg.client.AsyncClient` (:class:`AsyncManageCalls`); each class
supplies ``_call(name, path, **httpx_options)``.

>>> edit_body(None, True, None, {"k": 1})
{'pinned': True, 'metadata': {'k': 1}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from episeg.client.wire import EpisodeView

__all__ = ["AsyncManageCalls", "ManageCalls", "MetaValue", "edit_body"]

MetaValue = str | int | float | bool


def edit_body(
    summary: str | None,
    pinned: bool | None,
    salience: int | None,
    metadata: Mapping[str, MetaValue] | None,
) -> dict[str, Any]:
    """The edit request: only the fields given (``None`` leaves a field unchanged)."""
    body = {"summary": summary, "pinned": pinned, "salience": salience}
    out: dict[str, Any] = {k: v for k, v in body.items() if v is not None}
    if metadata is not None:
        out["metadata"] = dict(metadata)
    return out


class ManageCalls:
    """``episode``, ``update_episode``, ``unarchive``, ``tenants`` for the sync client."""

    def _call(self, name: str, path: Mapping[str, str] | None = None, **kw: Any) -> Any:
        raise NotImplementedError  # pragma: no cover - the client class provides it

    def episode(self, episode_id: str) -> EpisodeView:
        """One of the tenant's stored episodes (404 ``APIError`` if it has none by that id)."""
        return cast(EpisodeView, self._call("episode", params={"id": episode_id}))

    def update_episode(
        self,
        episode_id: str,
        *,
        summary: str | None = None,
        pinned: bool | None = None,
        salience: int | None = None,
        metadata: Mapping[str, MetaValue] | None = None,
    ) -> EpisodeView:
        """Edit an episode: the fields given change together, or none does (422, 404).

        ``salience`` 1-10 is the user's own (no scorer overwrites it);
        ``metadata`` replaces the episode's user metadata (``{}`` clears it).
        """
        body = edit_body(summary, pinned, salience, metadata)
        return cast(EpisodeView, self._call("update_episode", params={"id": episode_id}, json=body))

    def unarchive(self, episode_id: str) -> EpisodeView:
        """Bring an archived episode back into recall."""
        return cast(EpisodeView, self._call("unarchive", params={"id": episode_id}))

    def tenants(self, *, limit: int = 1000, offset: int = 0) -> list[str]:
        """Tenants with stored episodes or open turns (an admin key only: 403 otherwise)."""
        params = {"limit": limit, "offset": offset}
        return cast(list[str], self._call("tenants", params=params)["tenants"])


class AsyncManageCalls:
    """The same four methods as coroutines, for the async client."""

    async def _call(self, name: str, path: Mapping[str, str] | None = None, **kw: Any) -> Any:
        raise NotImplementedError  # pragma: no cover - the client class provides it

    async def episode(self, episode_id: str) -> EpisodeView:
        return cast(EpisodeView, await self._call("episode", params={"id": episode_id}))

    async def update_episode(
        self,
        episode_id: str,
        *,
        summary: str | None = None,
        pinned: bool | None = None,
        salience: int | None = None,
        metadata: Mapping[str, MetaValue] | None = None,
    ) -> EpisodeView:
        body = edit_body(summary, pinned, salience, metadata)
        params = {"id": episode_id}
        return cast(EpisodeView, await self._call("update_episode", params=params, json=body))

    async def unarchive(self, episode_id: str) -> EpisodeView:
        return cast(EpisodeView, await self._call("unarchive", params={"id": episode_id}))

    async def tenants(self, *, limit: int = 1000, offset: int = 0) -> list[str]:
        params = {"limit": limit, "offset": offset}
        return cast(list[str], (await self._call("tenants", params=params))["tenants"])
