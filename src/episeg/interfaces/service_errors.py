"""The HTTP service's error answers: every refusal is JSON a client can parse and act on.

============================  ======  ==============================================
raised                        status  meaning for the client
============================  ======  ==============================================
malformed body / turn         422     FastAPI's ``{"detail": [{"loc", "msg", "type"}]}``
``TurnConflictError``         409     a turn id already recorded with other content;
                                      ``{"detail", "turn_id"}``; nothing of the
                                      request was accepted (F6)
``TenantError``               403     the turn names another tenant
``BackendUnavailableError``   503     the store (or a model server) is unreachable
``JournalError``              503     not accepted (disk full, I/O error): re-send
                                      after ``Retry-After`` seconds
``EmbeddingError``            500     the service's embedder gave unusable vectors:
                                      the turn was not accepted
other ``EpisegError``         400     refused; the message says why
============================  ======  ==============================================

A body that is not JSON, or not UTF-8, is a 422 like any malformed body (F19;
FastAPI itself answers 400 for undecodable bytes). A 422 echoes the offending
input, which may hold what JSON cannot carry back (``NaN``, ``Infinity``,
``1e400`` read as infinity, lone surrogates): :func:`json_safe` writes those as
their ``repr`` so the answer is a 422, never a 500 (issue 12, F9); it cuts what
is nested deeper than :data:`MAX_ECHO_DEPTH` levels. A journal
failure also fails ``/v1/healthz`` for :data:`UNHEALTHY_FOR` seconds (or until
a write succeeds), and so does a journal disk with less than
:data:`MIN_FREE_BYTES` free (F11), so a load balancer stops sending turns.

>>> json_safe({"ts": float("nan"), "text": "a\\udc80", "n": [1, float("inf")]})
{'ts': 'nan', 'text': "'a\\\\udc80'", 'n': [1, 'inf']}
>>> json_safe([[[["deep"]]]], _depth=MAX_ECHO_DEPTH - 2)
[['...(nested too deep)']]
"""

from __future__ import annotations

import math
import os
import threading
import time
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from episeg.errors import (
    BackendUnavailableError,
    EmbeddingError,
    EpisegError,
    JournalError,
    TenantError,
    TurnConflictError,
    TurnValidationError,
)

__all__ = [
    "CUT",
    "MAX_ECHO_DEPTH",
    "MIN_FREE_BYTES",
    "RETRY_AFTER",
    "UNHEALTHY_FOR",
    "JournalHealth",
    "install_error_handlers",
    "json_safe",
]

MIN_FREE_BYTES = 1 << 20
MAX_ECHO_DEPTH = 32
CUT = "...(nested too deep)"
UNHEALTHY_FOR = 30.0
RETRY_AFTER = 5
_UNPARSEABLE = "There was an error parsing the body"  # FastAPI's 400 for a body it cannot decode


def json_safe(value: Any, _depth: int = 0) -> Any:
    """``value`` with non-finite floats and unencodable strings replaced by their ``repr``.

    Arrays and objects nested deeper than :data:`MAX_ECHO_DEPTH` are cut: each is
    written as :data:`CUT`, so neither this walk nor the JSON encoder after it can
    run into Python's recursion limit.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return repr(value)
        return value
    if isinstance(value, dict | list | tuple) and _depth >= MAX_ECHO_DEPTH:
        return CUT
    if isinstance(value, dict):
        return {str(json_safe(k, _depth + 1)): json_safe(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v, _depth + 1) for v in value]
    return value


class JournalHealth:
    """Whether the journal can take writes, as far as the service can tell.

    Parameters
    ----------
    folder
        The folder holding the journal (its filesystem's free space is checked).
    clock
        Monotonic seconds; injectable for tests.
    """

    def __init__(self, folder: str | Path, *, clock: Any = time.monotonic) -> None:
        self.folder = Path(folder)
        self._clock = clock
        self._failed: tuple[float, str] | None = None
        self._lock = threading.Lock()

    def failed(self, message: str) -> None:
        """Record a failed journal write."""
        with self._lock:
            self._failed = (self._clock(), message)

    def succeeded(self) -> None:
        """Record a successful write: the journal works again."""
        with self._lock:
            self._failed = None

    def problem(self) -> str | None:
        """Why the journal cannot take writes now, or ``None`` if it looks healthy."""
        with self._lock:
            failed = self._failed
        if failed is not None and self._clock() - failed[0] < UNHEALTHY_FOR:
            return f"journal write failed: {failed[1]}"
        try:
            stat = os.statvfs(self.folder)
        except OSError as exc:
            return f"journal folder unreadable: {exc}"
        free = stat.f_bavail * stat.f_frsize
        if free < MIN_FREE_BYTES:
            return f"journal disk nearly full: {free} bytes free"
        return None


def install_error_handlers(app: FastAPI, health: JournalHealth) -> None:
    """Answer every episeg error, and malformed bodies, as the table above says."""

    def answer(status: int, detail: Any, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse({"detail": json_safe(detail)}, status_code=status, headers=headers)

    async def malformed(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        # cut the echoed input first: jsonable_encoder recurses once per level too
        return answer(422, jsonable_encoder(json_safe(exc.errors())))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 400 and exc.detail == _UNPARSEABLE:  # e.g. invalid UTF-8 (F19)
            return answer(422, [{"loc": ["body"], "msg": _UNPARSEABLE, "type": "json_invalid"}])
        return await http_exception_handler(request, exc)

    async def invalid_turn(_: Request, exc: Exception) -> JSONResponse:
        # Same shape as FastAPI's own 422 (HTTPValidationError), so clients parse one format.
        return answer(422, [{"loc": ["body"], "msg": str(exc), "type": "turn_validation"}])

    async def conflict(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, TurnConflictError)
        body = {"detail": json_safe(str(exc)), "turn_id": json_safe(exc.turn_id)}
        return JSONResponse(body, status_code=409)

    async def journal(_: Request, exc: Exception) -> JSONResponse:
        health.failed(str(exc))
        return answer(
            503,
            f"not accepted, retry later: {exc}",
            headers={"Retry-After": str(RETRY_AFTER)},
        )

    def plain(status: int) -> Any:
        async def handle(_: Request, exc: Exception) -> JSONResponse:
            return answer(status, str(exc))

        return handle

    app.add_exception_handler(RequestValidationError, malformed)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(TurnConflictError, conflict)
    app.add_exception_handler(TurnValidationError, invalid_turn)
    app.add_exception_handler(JournalError, journal)
    app.add_exception_handler(TenantError, plain(403))
    app.add_exception_handler(BackendUnavailableError, plain(503))
    app.add_exception_handler(EmbeddingError, plain(500))  # the server's fault, not the input's
    app.add_exception_handler(EpisegError, plain(400))
