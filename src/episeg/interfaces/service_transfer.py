"""Export and import routes of the HTTP service: the key's tenant as JSONL, and back.

``GET /v1/export``
    Streams the key's tenant's episodes (archived too) in the export format
    (:mod:`episeg.store.portability`) as ``application/x-ndjson``: a header,
    one line per episode, a trailer. Pages are read from the store as the
    answer is sent; if the store fails midway the stream stops before the
    trailer, and an import of what arrived is refused (cut off).
``POST /v1/import``
    Imports such a file (the raw body, any content type) into the key's
    tenant, whatever tenant it was exported from. All or nothing: 422 naming
    the line (``loc: ["body", <line>]``) for a malformed file or another
    embedder, 409 with the ``ids`` already stored with other content, 413
    over ``--max-body``. ``{"imported": [...], "unchanged": [...]}``: ids
    already stored with the same content are unchanged, so posting a file
    twice changes nothing.

>>> sorted(ImportOut.model_fields)
['imported', 'unchanged']
"""

# No `from __future__ import annotations`: FastAPI reads the annotations at runtime.
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from episeg.errors import ExportFormatError, ImportConflictError
from episeg.memory import Memory

__all__ = ["ImportOut", "add_transfer_routes"]

NDJSON = "application/x-ndjson"


class ImportOut(BaseModel):
    imported: list[str]
    unchanged: list[str]


class ImportConflictOut(BaseModel):
    detail: str
    ids: list[str]


def add_transfer_routes(
    app: FastAPI,
    memory: Memory,
    tenant: Callable[..., AsyncIterator[str]],
    errors: dict[int | str, dict[str, Any]],
) -> None:
    """Add ``GET /v1/export`` and ``POST /v1/import`` to ``app`` (``tenant``: key -> tenant)."""
    Tenant = Annotated[str, Depends(tenant)]
    exported = {
        200: {
            "description": "the export file: header, one line per episode, trailer",
            "content": {NDJSON: {"schema": {"type": "string"}}},
        },
        **errors,
        422: {"description": "malformed request"},
    }
    imported = {
        **errors,
        409: {"model": ImportConflictOut, "description": "ids already stored with other content"},
        422: {"description": "malformed export file or another embedder (loc names the line)"},
    }

    @app.get("/v1/export", responses=exported, response_class=StreamingResponse)
    def export(owner: Tenant) -> StreamingResponse:
        """The key's tenant's episodes as an export file (JSONL), streamed."""
        lines = memory.export(owner)
        header = next(lines)  # reads the first page: a store outage is a 503, not a cut stream
        return StreamingResponse(
            itertools.chain([header], lines),
            media_type=NDJSON,
            headers={"Content-Disposition": 'attachment; filename="episeg-export.jsonl"'},
        )

    @app.post(
        "/v1/import",
        response_model=ImportOut,
        responses=imported,
        openapi_extra={
            "requestBody": {"required": True, "content": {NDJSON: {"schema": {"type": "string"}}}}
        },
    )
    async def import_episodes(request: Request, owner: Tenant) -> Any:
        """Import an export file into the key's tenant, all or nothing (idempotent)."""
        body = await request.body()
        try:
            report = await run_in_threadpool(
                memory.import_episodes, owner, body.splitlines(keepends=True)
            )
        except ExportFormatError as exc:
            detail = [{"loc": ["body", exc.line], "msg": exc.message, "type": "export_format"}]
            return JSONResponse({"detail": detail}, status_code=422)
        except ImportConflictError as exc:
            return JSONResponse({"detail": str(exc), "ids": list(exc.ids)}, status_code=409)
        return ImportOut(imported=list(report.imported), unchanged=list(report.unchanged))
