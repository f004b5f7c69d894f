"""Chroma plumbing shared by the store modules: error translation and collection settings.

:func:`translate` maps chromadb / httpx failures to episeg's typed errors
(:class:`~episeg.errors.StoreUnavailableError` when the store cannot be
reached, :class:`~episeg.errors.StoreError` when it refuses).

>>> with translate("a test"):
...     raise ConnectionError("refused")
Traceback (most recent call last):
...
episeg.errors.StoreUnavailableError: Chroma store unreachable during a test: refused
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import httpx
from chromadb.errors import ChromaError
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from episeg.errors import StoreError, StoreUnavailableError
from episeg.store.access import CHROMA_ACCESS

__all__ = [
    "CHROMA_MAX_INT",
    "COLLECTION_CONFIG",
    "READ_INCLUDE",
    "TORN_HINT",
    "TORN_SEGMENT",
    "is_locked",
    "is_torn",
    "open_collection",
    "rebuilt_retry",
    "translate",
]

log = logging.getLogger("episeg.store")
_T = TypeVar("_T")

# limit/offset/n_results cross into Chroma's Rust core as 32-bit integers (OverflowError above)
CHROMA_MAX_INT = 2**31 - 1
# The document (the transcript, for people browsing the collection) is derivable
# from the turns in the metadata, so reads skip it: ~20% faster queries.
READ_INCLUDE: Any = ["metadatas", "embeddings"]
# sync_threshold=1: the vector index persists after every write, so Chroma purges its
# write-ahead log (table embeddings_queue, which holds each record's document and
# metadata) at once; with the default 1,000 a forgotten text stays in that log until
# 1,000 more writes (issue 12, forget). Costs ~40% per small write (measured 2026-12-03).
COLLECTION_CONFIG: Any = {"hnsw": {"space": "cosine", "sync_threshold": 1}}
# ... and every write then rewrites the whole vector index: ~120 ms per episode at 10^5
# episodes, ~18 ms on average at sync_threshold 100 (episeg bench write; EpisegConfig.store).


# Chroma's SQLite can refuse a write at once with SQLITE_BUSY ("database is locked",
# code 5) when two of its own connections want to write at the same time: seen on 2 of
# 50 runs of the write benchmark's doctest under load, when a fresh process reconfigured
# a collection (2026-12-06). Opening a collection is idempotent, so it is tried again.
OPEN_ATTEMPTS = 5


def is_locked(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) is SQLite's transient "database is locked".

    >>> is_locked(Exception("error returned from database: (code: 5) database is locked"))
    True
    >>> is_locked(Exception("no such table: collections"))
    False
    """
    return _says(exc, ("database is locked",))


def _says(exc: BaseException, words: tuple[str, ...]) -> bool:
    """Whether ``exc`` or an exception it was raised from says one of ``words`` (lower case)."""
    seen: BaseException | None = exc
    while seen is not None:
        if any(w in str(seen).lower() for w in words):
            return True
        seen = seen.__cause__
    return False


def vanished_retry(call: Callable[[], _T]) -> _T:
    """``call()`` (a read by id), tried again when Chroma lost an id it was deleting meanwhile.

    A ``get`` by id beside a ``delete`` of one of those ids (a recall beside a
    ``forget``) can fail inside Chroma with "Error finding id": the record was
    gone between two of Chroma's own lookups. Read again, it is simply absent.
    Up to :data:`OPEN_ATTEMPTS` attempts, each retry logged; then raised as it is.
    The first attempt runs without the retry machinery (recall's every read).
    """
    try:
        return call()
    except Exception as exc:
        if not _vanished(exc):
            raise
    retrying = Retrying(
        retry=retry_if_exception(_vanished),
        stop=stop_after_attempt(OPEN_ATTEMPTS - 1),
        wait=wait_random(0, 0.005),
        before_sleep=_log_vanished,
        reraise=True,
    )
    return retrying(call)


def _vanished(exc: BaseException) -> bool:
    return _says(exc, ("error finding id",))


def _log_vanished(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome is not None else None
    log.warning(  # the first attempt ran before the retry machinery: one more than it counts
        "a Chroma read lost an id deleted meanwhile (attempt %d of %d): %s; reading again",
        state.attempt_number + 1,
        OPEN_ATTEMPTS,
        exc,
    )


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome is not None else None
    log.warning(
        "Chroma's database was locked opening a collection (attempt %d of %d): %s; trying again",
        state.attempt_number,
        OPEN_ATTEMPTS,
        exc,
    )


def open_collection(client: Any, name: str, tenant: str, *, sync_threshold: int = 1) -> Any:
    """Get or create ``name`` for ``tenant`` with ``sync_threshold`` (set on an existing one).

    An existing collection of ``tenant`` made with another threshold is
    reconfigured and the change logged; Chroma applies it from the next time
    it opens the collection (its open index keeps the old one until then).
    A collection stamped with another tenant is returned untouched: the
    caller refuses it. A transient "database is locked" from Chroma's SQLite
    is tried again (up to :data:`OPEN_ATTEMPTS` times in all, backing off
    from 50 ms, each logged); the last failure is raised as it is.
    """
    retrying = Retrying(
        retry=retry_if_exception(is_locked),
        stop=stop_after_attempt(OPEN_ATTEMPTS),
        wait=wait_exponential(multiplier=0.05, max=1.0) + wait_random(0, 0.05),
        before_sleep=_log_retry,
        reraise=True,
    )
    return retrying(_open_collection, client, name, tenant, sync_threshold)


def _open_collection(client: Any, name: str, tenant: str, sync_threshold: int) -> Any:
    config = {"hnsw": {**COLLECTION_CONFIG["hnsw"], "sync_threshold": sync_threshold}}
    col = client.get_or_create_collection(
        name, embedding_function=None, configuration=config, metadata={"episeg_tenant": tenant}
    )
    if (col.metadata or {}).get("episeg_tenant") != tenant:
        return col
    current = (getattr(col, "configuration_json", None) or {}).get("hnsw") or {}
    if current.get("sync_threshold") != sync_threshold:
        with warnings.catch_warnings():
            # modify() re-reads the stored config; a collection made with
            # embedding_function=None (all of episeg's) is "legacy" to Chroma there.
            warnings.filterwarnings("ignore", "legacy embedding function config")
            col.modify(configuration={"hnsw": {"sync_threshold": sync_threshold}})
        log.info(
            "collection %s: sync_threshold %s -> %d (applied when Chroma next opens it)",
            name,
            current.get("sync_threshold"),
            sync_threshold,
        )
    return col


# Chroma's words for a vector segment a kill -9 tore (see episeg.store.repair).
TORN_SEGMENT = ("hnsw segment", "pickle file")
TORN_HINT = (
    " (a kill -9 tore this tenant's vector index: Memory's writes, recall and listing "
    "rebuild it by themselves; else run `episeg repair --user USER` / Memory.rebuild_store(user))"
)


def is_torn(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) says a Chroma vector segment is torn.

    >>> is_torn(Exception("Error in compaction: Failed to apply logs to the hnsw segment writer"))
    True
    """
    return _says(exc, TORN_SEGMENT)


def rebuilt_retry(call: Callable[[], _T], rebuild: Callable[[], object], tenant: str) -> _T:
    """``call()``; if it fails on ``tenant``'s torn segment, ``rebuild()`` and call once more.

    Any other failure, and a failure of the second call, is raised as it is.
    ``rebuild`` is :meth:`~episeg.memory.Memory.rebuild_store` (:mod:`episeg.store.repair`).

    >>> rebuilt_retry(lambda: "read", lambda: print("never: nothing was torn"), "alice")
    'read'
    """
    try:
        return call()
    except StoreError as exc:
        if not is_torn(exc):
            raise
        log.error(
            "tenant %r's Chroma vector segment is torn (%s); rebuilding its collections",
            tenant,
            exc,
        )
        rebuild()
        return call()


@contextmanager
def translate(what: str) -> Iterator[None]:
    """Map chromadb/httpx failures to :class:`StoreUnavailableError` / :class:`StoreError`.

    The call runs holding :data:`~episeg.store.access.CHROMA_ACCESS` shared, so
    episeg's own access to an embedded store's SQLite file never overlaps it.
    """
    with CHROMA_ACCESS.shared():
        try:
            yield
        except (httpx.TransportError, ConnectionError, TimeoutError) as exc:
            raise StoreUnavailableError(f"Chroma store unreachable during {what}: {exc}") from exc
        except ChromaError as exc:
            hint = TORN_HINT if is_torn(exc) else ""
            raise StoreError(f"Chroma rejected {what}: {exc}{hint}") from exc
        except httpx.HTTPStatusError as exc:
            raise StoreError(f"Chroma server refused {what}: {exc}") from exc
        except ValueError as exc:
            if "could not connect" in str(exc).lower():
                raise StoreUnavailableError(
                    f"Chroma store unreachable during {what}: {exc}"
                ) from exc
            raise StoreError(f"Chroma rejected {what}: {exc}") from exc
