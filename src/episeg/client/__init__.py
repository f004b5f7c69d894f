"""A typed HTTP client for ``episeg serve``: :class:`Client` (sync) and :class:`AsyncClient`.

Both speak to the service through httpx, one method per endpoint of its
OpenAPI document, and return the service's JSON as typed dictionaries.
``ENDPOINTS`` names the HTTP method and path behind every client method; a
test compares it with the service's ``/openapi.json`` in both directions, so
the client and the service cannot drift apart silently.

Every turn and chat message is sent with an id (the client makes one when it
has none), so the service records a re-sent turn once, and the clients retry
what cannot be recorded twice (:class:`RetryPolicy`; :mod:`episeg.client.retrying`
says which calls after which failures). No answer after the retries raises
:class:`NoAnswerError`, an :class:`APIError` with status 0.

The tenant comes from the API key. A ``Turn`` whose ``user`` is the default
(``"default"``) is sent without one; any other ``user`` is sent and the
service refuses it (403) unless it is the key's tenant.

>>> ENDPOINTS["episode"], ENDPOINTS["update_episode"]
(('GET', '/v1/episode'), ('PATCH', '/v1/episode'))

The wire format (endpoints, typed views, :class:`APIError`) is in
:mod:`episeg.client.wire`, the request bodies in :mod:`episeg.client.bodies`,
:class:`Client` in :mod:`episeg.client.sync` and :class:`AsyncClient` in
:mod:`episeg.client.aio`.

Against a running service::

    with Client("http://127.0.0.1:8080", api_key="k_live_alice_3b9f0c2e8d41") as c:
        c.observe({"actor": "user", "text": "the login returns 401", "session": "s1"})
        c.flush()
        for hit in c.recall("login 401", k=3):
            print(hit["score"], hit["episode"]["summary"])
"""

from __future__ import annotations

from episeg.client.aio import AsyncClient
from episeg.client.retrying import NoAnswerError, RetryPolicy
from episeg.client.sync import Client
from episeg.client.wire import (
    ENDPOINTS,
    APIError,
    Closed,
    Confirmed,
    EpisodeView,
    ExportData,
    Forgotten,
    Imported,
    Maintained,
    RecallHit,
    Salience,
    TurnInput,
    VerdictView,
)

__all__ = [
    "ENDPOINTS",
    "APIError",
    "AsyncClient",
    "Client",
    "Closed",
    "Confirmed",
    "EpisodeView",
    "ExportData",
    "Forgotten",
    "Imported",
    "Maintained",
    "NoAnswerError",
    "RecallHit",
    "RetryPolicy",
    "Salience",
    "TurnInput",
    "VerdictView",
]
