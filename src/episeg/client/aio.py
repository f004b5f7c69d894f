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

from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import TracebackType
from typing import IO, Any, Self, TypeVar, cast

import httpx

from episeg.client.bodies import (
    export_body,
    messages_body,
    recall_body,
    sent_ids,
    turn_body,
    turns_body,
    used_body,
)
from episeg.client.manage import AsyncManageCalls
from episeg.client.retrying import RetryPolicy, no_answer
from episeg.client.wire import (
    NDJSON,
    Closed,
    Confirmed,
    EpisodeView,
    ExportData,
    Forgotten,
    Imported,
    Maintained,
    RecallHit,
    TurnInput,
    _cut,
    _decode,
    _export_answer,
    _headers,
    _request,
)

T = TypeVar("T")

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
        retry: RetryPolicy | None = None,
    ) -> None:
        self._retry = retry if retry is not None else RetryPolicy()
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=_headers(api_key), timeout=timeout, transport=transport
        )

    async def _attempts(self, name: str, once: Callable[[], Awaitable[T]], body: Any = None) -> T:
        try:
            async for attempt in self._retry.async_retrying(name):
                with attempt:
                    result = await once()
        except httpx.RequestError as exc:  # transport, an undecodable body, redirects
            raise no_answer(exc, sent_ids(body)) from exc
        return result

    async def _call(self, name: str, path: Mapping[str, str] | None = None, **kw: Any) -> Any:
        method, url = _request(name, **(path or {}))

        async def once() -> Any:
            return _decode(await self._http.request(method, url, **kw))

        return await self._attempts(name, once, kw.get("json"))

    async def observe(self, turn: TurnInput) -> Closed:
        return cast(Closed, await self._call("observe", json=turn_body(turn)))

    async def observe_batch(self, turns: Iterable[TurnInput]) -> Closed:
        return cast(Closed, await self._call("observe_batch", json=turns_body(turns)))

    async def observe_messages(
        self, messages: Iterable[Mapping[str, Any]], session: str = "default"
    ) -> Closed:
        body = messages_body(messages, session)
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
        body = recall_body(query, k, options)
        return cast(list[RecallHit], (await self._call("recall", json=body))["results"])

    async def used(self, episode_ids: Iterable[str]) -> Confirmed:
        return cast(Confirmed, await self._call("used", json=used_body(episode_ids)))

    async def maintain(self, *, archive: bool = False) -> Maintained:
        return cast(Maintained, await self._call("maintain", json={"archive": archive}))

    async def export(self) -> str:
        method, url = _request("export")

        async def once() -> str:
            return _export_answer(await self._http.request(method, url)).text

        return await self._attempts("export", once)

    async def export_to(self, file: IO[bytes]) -> int:
        method, url = _request("export")

        async def once() -> int:
            async with self._http.stream(method, url) as response:
                if not response.is_success:
                    await response.aread()
                _export_answer(response)
                written = 0
                try:
                    async for chunk in response.aiter_bytes():
                        written += file.write(chunk)
                except httpx.RequestError as exc:  # transport, an undecodable body, redirects
                    raise _cut(written, exc) from exc
                return written

        return await self._attempts("export", once)

    async def import_episodes(self, data: ExportData) -> Imported:
        body = export_body(data)
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
