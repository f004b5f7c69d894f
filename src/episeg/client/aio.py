"""The asyncio HTTP client for ``episeg serve``: :class:`AsyncClient`.

>>> import asyncio, httpx
>>> async def health() -> dict[str, str]:
...     transport = httpx.MockTransport(lambda r: httpx.Response(200, json={"status": "ok"}))
...     async with AsyncClient("http://service", transport=transport) as c:
...         return await c.healthz()
>>> asyncio.run(health())
{'status': 'ok'}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import IO, Any, Self, cast

import httpx

from episeg.client.manage import AsyncManageCalls
from episeg.client.wire import (
    NDJSON,
    Closed,
    Confirmed,
    EpisodeView,
    ExportData,
    Forgotten,
    Imported,
    RecallHit,
    TurnInput,
    _decode,
    _export_body,
    _headers,
    _recall_body,
    _request,
    _turn_body,
)

__all__ = ["AsyncClient"]


class AsyncClient(AsyncManageCalls):
    """The same methods as :class:`Client`, as coroutines (``async with AsyncClient(...)``)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=_headers(api_key), timeout=timeout, transport=transport
        )

    async def _call(self, name: str, path: Mapping[str, str] | None = None, **kw: Any) -> Any:
        method, url = _request(name, **(path or {}))
        return _decode(await self._http.request(method, url, **kw))

    async def observe(self, turn: TurnInput) -> Closed:
        return cast(Closed, await self._call("observe", json=_turn_body(turn)))

    async def observe_batch(self, turns: Iterable[TurnInput]) -> Closed:
        body = [_turn_body(t) for t in turns]
        return cast(Closed, await self._call("observe_batch", json=body))

    async def observe_messages(
        self, messages: Iterable[Mapping[str, Any]], session: str = "default"
    ) -> Closed:
        body = {"messages": [dict(m) for m in messages], "session": session}
        return cast(Closed, await self._call("observe_messages", json=body))

    async def flush(self, session: str | None = None) -> Closed:
        return cast(Closed, await self._call("flush", json={"session": session}))

    async def episodes(
        self, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> list[EpisodeView]:
        params = {"limit": limit, "offset": offset, "include_archived": include_archived}
        return cast(list[EpisodeView], (await self._call("episodes", params=params))["episodes"])

    async def forget(self, episode_id: str) -> Forgotten:
        return cast(Forgotten, await self._call("forget", params={"id": episode_id}))

    async def forget_session(self, session: str) -> Forgotten:
        return cast(Forgotten, await self._call("forget_session", params={"session": session}))

    async def forget_all(self) -> Forgotten:
        return cast(Forgotten, await self._call("forget_all", params={"confirm": "true"}))

    async def recall(self, query: str, k: int = 5, **options: Any) -> list[RecallHit]:
        body = _recall_body(query, k, options)
        return cast(list[RecallHit], (await self._call("recall", json=body))["results"])

    async def used(self, episode_ids: Iterable[str]) -> Confirmed:
        body = {"episode_ids": list(episode_ids)}
        return cast(Confirmed, await self._call("used", json=body))

    async def export(self) -> str:
        method, url = _request("export")
        response = await self._http.request(method, url)
        if response.is_error:
            _decode(response)
        return response.text

    async def export_to(self, file: IO[bytes]) -> int:
        method, url = _request("export")
        async with self._http.stream(method, url) as response:
            if response.is_error:
                await response.aread()
                _decode(response)
            return sum([file.write(chunk) async for chunk in response.aiter_bytes()])

    async def import_episodes(self, data: ExportData) -> Imported:
        body = _export_body(data)
        return cast(Imported, await self._call("import_episodes", content=body, headers=NDJSON))

    async def healthz(self) -> dict[str, str]:
        return cast(dict[str, str], await self._call("healthz"))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, *exc: type[BaseException] | BaseException | TracebackType | None
    ) -> None:
        await self.aclose()
