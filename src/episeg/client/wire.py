"""What the client and ``episeg serve`` exchange: endpoints, typed JSON views, request bodies.

``ENDPOINTS`` names the HTTP method and path behind every client method (a
test compares it with the service's ``/openapi.json``); the ``TypedDict``
views type the service's JSON answers; :class:`APIError` is what every client
method raises for a 4xx/5xx answer. The request bodies are built in
:mod:`episeg.client.bodies`.

>>> ENDPOINTS["flush"]
('POST', '/v1/flush')
>>> _request("forget")
('DELETE', '/v1/episode')
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NotRequired, TypedDict
from urllib.parse import quote

import httpx

from episeg.errors import EpisegError
from episeg.types import Turn

__all__ = [
    "ENDPOINTS",
    "APIError",
    "Closed",
    "Confirmed",
    "EpisodeView",
    "ExportData",
    "Forgotten",
    "Imported",
    "Maintained",
    "Method",
    "RecallHit",
    "Salience",
    "TurnInput",
    "VerdictView",
]

Method = Literal["GET", "POST", "PATCH", "DELETE"]

#: client method name -> (HTTP method, OpenAPI path)
ENDPOINTS: dict[str, tuple[Method, str]] = {
    "observe": ("POST", "/v1/turns"),
    "observe_batch": ("POST", "/v1/turns:batch"),
    "observe_messages": ("POST", "/v1/messages"),
    "flush": ("POST", "/v1/flush"),
    "episodes": ("GET", "/v1/episodes"),
    "episode": ("GET", "/v1/episode"),  # ?id=: every id, "a/b" and ".." too
    "update_episode": ("PATCH", "/v1/episode"),
    "unarchive": ("POST", "/v1/episode/unarchive"),
    "tenants": ("GET", "/v1/admin/tenants"),
    "forget": ("DELETE", "/v1/episode"),
    "forget_session": ("DELETE", "/v1/sessions"),  # ?session=: any name, "a/b" and ".." too
    "forget_all": ("DELETE", "/v1/tenant"),
    "recall": ("POST", "/v1/recall"),
    "used": ("POST", "/v1/used"),
    "maintain": ("POST", "/v1/maintain"),
    "export": ("GET", "/v1/export"),
    "import_episodes": ("POST", "/v1/import"),
    "healthz": ("GET", "/v1/healthz"),
}


class Salience(TypedDict):
    score: int | None
    normalized: float | None
    scorer: str
    reason: str
    by_user: NotRequired[bool]


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
    start: str
    end: str
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
    pinned: bool
    metadata: dict[str, str | int | float | bool]
    turns: list[dict[str, Any]]


class Closed(TypedDict):
    accepted: int
    closed: list[EpisodeView]
    duplicates: list[str]
    """Ids of turns the service had recorded already and skipped (a re-send)."""


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
    open: NotRequired[bool]


class Forgotten(TypedDict):
    forgotten: list[str]
    turns: int
    session: str | None
    tenant: bool


class Confirmed(TypedDict):
    confirmed: list[str]


class Maintained(TypedDict):
    total: int
    recalled: int
    never_recalled: int
    decayed: int
    below_floor: int
    archived: int
    already_archived: int
    mean_retention: float


class Imported(TypedDict):
    imported: list[str]
    unchanged: list[str]


#: an export file: its text, its bytes, or its lines (an open file, a list)
ExportData = str | bytes | Iterable[str | bytes]
NDJSON = {"content-type": "application/x-ndjson"}


TurnInput = Turn | Mapping[str, Any]


class APIError(EpisegError):
    """The service answered with an error status, or with an answer that is not its JSON.

    ``status`` and ``detail`` say which; ``body`` is the parsed JSON answer
    (``None`` if it was not JSON), with what a 409 adds (``turn_id``, ``ids``);
    ``retry_after`` the seconds a 503 or 429 asks to wait (``None`` if not given).
    """

    def __init__(
        self, status: int, detail: Any, *, body: Any = None, retry_after: float | None = None
    ) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.detail = detail
        self.body = body
        self.retry_after = retry_after


def _request(name: str, **path: str) -> tuple[Method, str]:
    method, template = ENDPOINTS[name]
    return method, template.format(**{k: quote(v, safe="") for k, v in path.items()})


def _decode(response: httpx.Response) -> Any:
    """The service's JSON answer; :class:`APIError` for an error status or any other answer.

    >>> _decode(httpx.Response(200, json={"accepted": 1}))
    {'accepted': 1}
    >>> err = _decode_error(httpx.Response(502, text="Bad Gateway"))
    >>> err.status, err.detail, err.body
    (502, 'Bad Gateway', None)
    """
    if response.is_error or not response.is_success:  # a redirect is not the service's answer
        raise _decode_error(response)
    try:
        return response.json()
    except ValueError:
        raise APIError(
            response.status_code, f"not a JSON answer: {response.text[:200]!r}"
        ) from None


def _export_answer(response: httpx.Response) -> httpx.Response:
    """``response`` if it is the service's export stream; else its :class:`APIError`.

    An error status or a redirect raises as :func:`_decode` does; a 2xx answer
    that is not NDJSON (a proxy's login page answered 200) would otherwise
    become the export file.

    >>> try:
    ...     _export_answer(httpx.Response(200, text="<html>log in</html>"))
    ... except APIError as err:
    ...     print(err.status, err.detail)
    200 not the service's export (content-type 'text/plain; charset=utf-8')
    >>> _export_answer(httpx.Response(200, content=b"{}", headers=NDJSON)).status_code
    200
    """
    if not response.is_success:
        raise _decode_error(response)
    kind = response.headers.get("content-type", "")
    if kind.split(";")[0].strip() != NDJSON["content-type"]:
        raise APIError(response.status_code, f"not the service's export (content-type {kind!r})")
    return response


def _decode_error(response: httpx.Response) -> APIError:
    try:
        body = response.json()
    except ValueError:
        body = None
    detail = body.get("detail", response.text) if isinstance(body, dict) else response.text
    if response.is_redirect:
        detail = f"redirected to {response.headers.get('location')!r}; check the base URL"
    try:
        retry_after: float | None = float(response.headers["retry-after"])
    except (KeyError, ValueError):
        retry_after = None
    if retry_after is not None and not 0 <= retry_after < math.inf:
        retry_after = None  # "nan", "-1": not a wait
    return APIError(response.status_code, detail, body=body, retry_after=retry_after)


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _cut(written: int, exc: httpx.RequestError) -> APIError:
    return APIError(
        200,
        f"the export stream broke after {written} bytes ({type(exc).__name__}: {exc}); "
        "what was written is an incomplete export (no trailer: import refuses it)",
    )
