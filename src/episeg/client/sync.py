"""The synchronous HTTP client for ``episeg serve``: :class:`Client`.

>>> import httpx
>>> def answer(request: httpx.Request) -> httpx.Response:
...     return httpx.Response(200, json={"status": "ok"})
>>> with Client("http://service", transport=httpx.MockTransport(answer)) as c:
...     c.healthz()
{'status': 'ok'}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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
from episeg.client.manage import ManageCalls
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

__all__ = ["Client"]


class Client(ManageCalls):
    """Synchronous client; usable as a context manager (closes its connection pool).

    Parameters
    ----------
    base_url
        Where ``episeg serve`` listens, e.g. ``http://127.0.0.1:8080``.
    api_key
        The tenant's API key (``None`` only reaches ``healthz``).
    timeout
        Seconds per request.
    transport
        An httpx transport (tests pass ``httpx.ASGITransport`` or a mock).
    retry
        What is retried and how often (:class:`~episeg.client.retrying.RetryPolicy`;
        default: twice, for the failures that cannot record anything twice;
        ``RetryPolicy(retries=0)``: never). Every turn and message is sent with an
        id (one is made when it has none), so a re-sent turn is recorded once.

    Raises
    ------
    APIError
        From every method, when the service answers 4xx/5xx or with something
        that is not its answer (a redirect, a proxy's page).
    NoAnswerError
        (an ``APIError`` with status 0) when no answer came after the retries:
        refused, timed out or cut off; ``.applied`` says whether the request may
        have been applied, ``.sent_ids`` the turn ids it carried.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._retry = retry if retry is not None else RetryPolicy()
        self._http = httpx.Client(
            base_url=base_url, headers=_headers(api_key), timeout=timeout, transport=transport
        )

    def _attempts(self, name: str, once: Callable[[], T], body: Any = None) -> T:
        """``once()`` under the retry policy; a transport failure left becomes ``NoAnswerError``."""
        try:
            for attempt in self._retry.retrying(name):
                with attempt:
                    result = once()
        except httpx.RequestError as exc:  # transport, an undecodable body, redirects
            raise no_answer(exc, sent_ids(body)) from exc
        return result

    def _call(self, name: str, path: Mapping[str, str] | None = None, **kw: Any) -> Any:
        method, url = _request(name, **(path or {}))
        return self._attempts(
            name, lambda: _decode(self._http.request(method, url, **kw)), kw.get("json")
        )

    def observe(self, turn: TurnInput) -> Closed:
        """Observe one turn; the episodes it closed."""
        return cast(Closed, self._call("observe", json=turn_body(turn)))

    def observe_batch(self, turns: Iterable[TurnInput]) -> Closed:
        """Observe turns in order (at most 1000; all validated before any is observed)."""
        return cast(Closed, self._call("observe_batch", json=turns_body(turns)))

    def observe_messages(
        self, messages: Iterable[Mapping[str, Any]], session: str = "default"
    ) -> Closed:
        """Observe chat messages (``{"role", "content"}``, OpenAI style) of one session."""
        body = messages_body(messages, session)
        return cast(Closed, self._call("observe_messages", json=body))

    def flush(self, session: str | None = None) -> Closed:
        """Close the open episodes of one session (default: all of the tenant's)."""
        return cast(Closed, self._call("flush", json={"session": session}))

    def episodes(
        self, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> list[EpisodeView]:
        """One page of the tenant's stored episodes."""
        params = {"limit": limit, "offset": offset, "include_archived": include_archived}
        return cast(list[EpisodeView], self._call("episodes", params=params)["episodes"])

    def forget(self, episode_id: str) -> Forgotten:
        """Erase one of the tenant's episodes everywhere (404 ``APIError`` if it has none)."""
        return cast(Forgotten, self._call("forget", params={"id": episode_id}))

    def forget_session(self, session: str) -> Forgotten:
        """Erase one session of the tenant everywhere (stored episodes and open turns)."""
        return cast(Forgotten, self._call("forget_session", params={"session": session}))

    def forget_all(self) -> Forgotten:
        """Erase everything of the key's tenant (the key stays valid)."""
        return cast(Forgotten, self._call("forget_all", params={"confirm": "true"}))

    def recall(self, query: str, k: int = 5, **options: Any) -> list[RecallHit]:
        """The ``k`` best episodes for ``query`` with each score term.

        ``options`` are the service's other recall fields (``max_words``,
        ``since``, ``until``, ``session``, ``expand``, ``context``,
        ``neighbours``); ``None`` values are left out.
        """
        body = recall_body(query, k, options)
        return cast(list[RecallHit], self._call("recall", json=body)["results"])

    def used(self, episode_ids: Iterable[str]) -> Confirmed:
        """Confirm these recalled episodes were used: reinforces them (404 for an unknown id)."""
        return cast(Confirmed, self._call("used", json=used_body(episode_ids)))

    def maintain(self, *, archive: bool = False) -> Maintained:
        """The tenant's maintenance pass: unconfirmed episodes decay; with ``archive`` the
        faded ones are archived (out of recall until unarchived)."""
        return cast(Maintained, self._call("maintain", json={"archive": archive}))

    def export(self) -> str:
        """The tenant's export file (JSONL: a header, one line per episode, a trailer)."""
        method, url = _request("export")

        def once() -> str:
            response = _export_answer(self._http.request(method, url))
            return response.text

        return self._attempts("export", once)

    def export_to(self, file: IO[bytes]) -> int:
        """Stream the tenant's export file into a binary file; the number of bytes written.

        A stream cut after bytes were written raises ``APIError`` (the file then
        holds an incomplete export without its trailer, which import refuses).
        """
        method, url = _request("export")

        def once() -> int:
            with self._http.stream(method, url) as response:
                if not response.is_success:
                    response.read()
                _export_answer(response)
                written = 0
                try:
                    for chunk in response.iter_bytes():
                        written += file.write(chunk)
                except httpx.RequestError as exc:  # transport, an undecodable body, redirects
                    raise _cut(written, exc) from exc
                return written

        return self._attempts("export", once)

    def import_episodes(self, data: ExportData) -> Imported:
        """Import an export file into the tenant, all or nothing (``APIError`` 422 or 409)."""
        body = export_body(data)
        return cast(Imported, self._call("import_episodes", content=body, headers=NDJSON))

    def healthz(self) -> dict[str, str]:
        """``{"status": "ok"}``; ``APIError`` 503 when the store is unreachable."""
        return cast(dict[str, str], self._call("healthz"))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()
