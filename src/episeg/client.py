"""A typed HTTP client for ``episeg serve``: :class:`Client` (sync) and :class:`AsyncClient`.

Both speak to the service through httpx, one method per endpoint of its
OpenAPI document, and return the service's JSON as typed dictionaries.
``ENDPOINTS`` names the HTTP method and path behind every client method; a
test compares it with the service's ``/openapi.json`` in both directions, so
the client and the service cannot drift apart silently.

The tenant comes from the API key. A ``Turn`` whose ``user`` is the default
(``"default"``) is sent without one; any other ``user`` is sent and the
service refuses it (403) unless it is the key's tenant.

>>> sorted(ENDPOINTS)[:3]
['episodes', 'flush', 'forget']
>>> _turn_body({"actor": "user", "text": "hi"})
{'actor': 'user', 'text': 'hi'}
>>> _recall_body("deploy", 3, {"max_words": 200, "session": None})
{'query': 'deploy', 'k': 3, 'max_words': 200}

Against a running service::

    with Client("http://127.0.0.1:8080", api_key="k_live_alice_3b9f0c2e8d41") as c:
        c.observe({"actor": "user", "text": "the login returns 401", "session": "s1"})
        c.flush()
        for hit in c.recall("login 401", k=3):
            print(hit["score"], hit["episode"]["summary"])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Literal, NotRequired, Self, TypedDict, cast
from urllib.parse import quote

import httpx

from episeg.errors import EpisegError
from episeg.types import Turn

__all__ = ["ENDPOINTS", "APIError", "AsyncClient", "Client", "TurnInput"]

Method = Literal["GET", "POST", "DELETE"]

#: client method name -> (HTTP method, OpenAPI path)
ENDPOINTS: dict[str, tuple[Method, str]] = {
    "observe": ("POST", "/v1/turns"),
    "observe_batch": ("POST", "/v1/turns:batch"),
    "observe_messages": ("POST", "/v1/messages"),
    "flush": ("POST", "/v1/flush"),
    "episodes": ("GET", "/v1/episodes"),
    "forget": ("DELETE", "/v1/episodes/{episode_id}"),
    "forget_session": ("DELETE", "/v1/sessions/{session}"),
    "forget_all": ("DELETE", "/v1/tenant"),
    "recall": ("POST", "/v1/recall"),
    "used": ("POST", "/v1/used"),
    "healthz": ("GET", "/v1/healthz"),
}


class Salience(TypedDict):
    score: int | None
    normalized: float | None
    scorer: str
    reason: str


class VerdictView(TypedDict):
    signal: str
    decision: str
    score: float
    reason: str
    authoritative: bool


class EpisodeView(TypedDict, total=False):
    id: str
    user: str
    session: str
    summary: str
    opened_at: float
    closed_at: float
    turn_count: int
    first_turn_id: str | None
    last_turn_id: str | None
    salience: Salience | None
    parent_id: str | None
    boundary_reasons: list[str]
    boundary_verdicts: list[VerdictView]
    recall_count: int
    last_accessed: float | None
    strength: float
    archived: bool
    turns: list[dict[str, Any]]


class Closed(TypedDict):
    accepted: int
    closed: list[EpisodeView]


class RecallHit(TypedDict):
    score: float
    recency: float
    importance: float
    similarity: float
    raw_similarity: float
    importance_imputed: bool
    episode: EpisodeView
    episode_id: NotRequired[str]
    start: NotRequired[str]
    end: NotRequired[str]
    summary: NotRequired[str]
    reinforcement: NotRequired[float]
    lexical: NotRequired[bool]
    words: NotRequired[int]
    turn_ids: NotRequired[list[str]]
    turns: NotRequired[list[dict[str, Any]]]
    neighbours_before: NotRequired[list[str]]
    neighbours_after: NotRequired[list[str]]


class Forgotten(TypedDict):
    forgotten: list[str]
    turns: int
    session: str | None
    tenant: bool


class Confirmed(TypedDict):
    confirmed: list[str]


TurnInput = Turn | Mapping[str, Any]


class APIError(EpisegError):
    """The service answered with an error status; ``status`` and ``detail`` say which."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.detail = detail


def _turn_body(turn: TurnInput) -> dict[str, Any]:
    if isinstance(turn, Turn):
        body = turn.to_dict()
        if body.get("user") == "default":
            del body["user"]
        return body
    return dict(turn)


def _request(name: str, **path: str) -> tuple[Method, str]:
    method, template = ENDPOINTS[name]
    return method, template.format(**{k: quote(v, safe="") for k, v in path.items()})


def _decode(response: httpx.Response) -> Any:
    if response.is_error:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        raise APIError(response.status_code, detail)
    return response.json()


def _recall_body(query: str, k: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """The recall request: options left at ``None`` are not sent (the service's defaults)."""
    return {"query": query, "k": k, **{n: v for n, v in options.items() if v is not None}}


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


class Client:
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

    Raises
    ------
    APIError
        From every method, when the service answers 4xx/5xx.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url, headers=_headers(api_key), timeout=timeout, transport=transport
        )

    def _call(self, name: str, path: Mapping[str, str] | None = None, **kw: Any) -> Any:
        method, url = _request(name, **(path or {}))
        return _decode(self._http.request(method, url, **kw))

    def observe(self, turn: TurnInput) -> Closed:
        """Observe one turn; the episodes it closed."""
        return cast(Closed, self._call("observe", json=_turn_body(turn)))

    def observe_batch(self, turns: Iterable[TurnInput]) -> Closed:
        """Observe turns in order (at most 1000; all validated before any is observed)."""
        return cast(Closed, self._call("observe_batch", json=[_turn_body(t) for t in turns]))

    def observe_messages(
        self, messages: Iterable[Mapping[str, Any]], session: str = "default"
    ) -> Closed:
        """Observe chat messages (``{"role", "content"}``, OpenAI style) of one session."""
        body = {"messages": [dict(m) for m in messages], "session": session}
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
        return cast(Forgotten, self._call("forget", {"episode_id": episode_id}))

    def forget_session(self, session: str) -> Forgotten:
        """Erase one session of the tenant everywhere (stored episodes and open turns)."""
        return cast(Forgotten, self._call("forget_session", {"session": session}))

    def forget_all(self) -> Forgotten:
        """Erase everything of the key's tenant (the key stays valid)."""
        return cast(Forgotten, self._call("forget_all", params={"confirm": "true"}))

    def recall(self, query: str, k: int = 5, **options: Any) -> list[RecallHit]:
        """The ``k`` best episodes for ``query`` with each score term.

        ``options`` are the service's other recall fields (``max_words``,
        ``since``, ``until``, ``session``, ``expand``, ``context``,
        ``neighbours``); ``None`` values are left out.
        """
        body = _recall_body(query, k, options)
        return cast(list[RecallHit], self._call("recall", json=body)["results"])

    def used(self, episode_ids: Iterable[str]) -> Confirmed:
        """Confirm these recalled episodes were used: reinforces them (404 for an unknown id)."""
        return cast(Confirmed, self._call("used", json={"episode_ids": list(episode_ids)}))

    def healthz(self) -> dict[str, str]:
        """``{"status": "ok"}``; ``APIError`` 503 when the store is unreachable."""
        return cast(dict[str, str], self._call("healthz"))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()


class AsyncClient:
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
        return cast(Forgotten, await self._call("forget", {"episode_id": episode_id}))

    async def forget_session(self, session: str) -> Forgotten:
        return cast(Forgotten, await self._call("forget_session", {"session": session}))

    async def forget_all(self) -> Forgotten:
        return cast(Forgotten, await self._call("forget_all", params={"confirm": "true"}))

    async def recall(self, query: str, k: int = 5, **options: Any) -> list[RecallHit]:
        body = _recall_body(query, k, options)
        return cast(list[RecallHit], (await self._call("recall", json=body))["results"])

    async def used(self, episode_ids: Iterable[str]) -> Confirmed:
        body = {"episode_ids": list(episode_ids)}
        return cast(Confirmed, await self._call("used", json=body))

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
