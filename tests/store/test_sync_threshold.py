"""``store.sync_threshold``: how many writes Chroma takes before it persists and purges its log.

Through real Chroma (embedded; the server path once in the slow tier): new
collections get the threshold, a store opened with another one reconfigures
its own tenant's collections and says so, and never touches a collection
stamped with another tenant.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from chromadb.errors import InternalError

from episeg.errors import ConfigError, StoreError, TenantError
from episeg.store import ChromaBackend
from episeg.store.chroma_io import OPEN_ATTEMPTS
from episeg.store.tenants import collection_name
from episeg.store.turns import turn_collection_name
from episeg.testing import ChromaServer


def _thresholds(backend: ChromaBackend, tenant: str) -> list[Any]:
    client = backend._client
    return [
        client.get_collection(name).configuration_json["hnsw"]["sync_threshold"]
        for name in (collection_name(tenant), turn_collection_name(tenant))
    ]


def _made(backend: ChromaBackend, tenant: str) -> None:
    """Open ``tenant``'s store and make its collections, as its first write would."""
    backend.store_for(tenant)._handles.create()


def test_new_collections_get_the_threshold(tmp_path: Path) -> None:
    default = ChromaBackend.persistent(tmp_path / "a")
    _made(default, "alice")
    assert default.sync_threshold == 1 and _thresholds(default, "alice") == [1, 1]
    larger = ChromaBackend.persistent(tmp_path / "b", sync_threshold=250)
    _made(larger, "alice")
    assert _thresholds(larger, "alice") == [250, 250]


def test_reopening_with_another_threshold_reconfigures_and_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _made(ChromaBackend.persistent(tmp_path), "alice")
    with caplog.at_level(logging.INFO, logger="episeg.store"):
        again = ChromaBackend.persistent(tmp_path, sync_threshold=100)
        _made(again, "alice")
    assert _thresholds(again, "alice") == [100, 100]
    changes = [
        r.getMessage() for r in caplog.records if "sync_threshold 1 -> 100" in r.getMessage()
    ]
    assert len(changes) == 2  # the episode and the turn collection
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="episeg.store"):
        _made(ChromaBackend.persistent(tmp_path, sync_threshold=100), "alice")
    assert not [r for r in caplog.records if "sync_threshold" in r.getMessage()]  # nothing to do


def test_another_tenants_collection_is_never_reconfigured(tmp_path: Path) -> None:
    backend = ChromaBackend.persistent(tmp_path, sync_threshold=50)
    client = backend._client
    client.create_collection(  # a collision: alice's name, stamped with mallory
        collection_name("alice"),
        embedding_function=None,
        configuration={"hnsw": {"space": "cosine", "sync_threshold": 7}},
        metadata={"episeg_tenant": "mallory"},
    )
    with pytest.raises(TenantError, match="belongs to 'mallory'"):
        _made(backend, "alice")
    config = client.get_collection(collection_name("alice")).configuration_json
    assert config["hnsw"]["sync_threshold"] == 7


class _FailingOpens:
    """A real Chroma client whose first ``n`` collection opens raise ``message``."""

    def __init__(self, client: Any, n: int, message: str) -> None:
        self._client, self.left, self.message, self.calls = client, n, message, 0

    def get_or_create_collection(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.left:
            self.left -= 1
            raise InternalError(self.message)
        return self._client.get_or_create_collection(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


_LOCKED = "Database error: error returned from database: (code: 5) database is locked"


def test_a_locked_database_on_open_is_tried_again_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    real = ChromaBackend.persistent(tmp_path)
    client = _FailingOpens(real._client, 2, _LOCKED)
    with caplog.at_level(logging.WARNING, logger="episeg.store"):
        _made(ChromaBackend(client, sync_threshold=30), "alice")
    assert client.calls == 4  # two refused, then the episode and the turn collection
    assert _thresholds(real, "alice") == [30, 30]
    retries = [r.getMessage() for r in caplog.records if "locked" in r.getMessage()]
    assert len(retries) == 2 and "attempt 1 of" in retries[0]


def test_a_lock_that_persists_is_raised_after_the_last_attempt(tmp_path: Path) -> None:
    client = _FailingOpens(ChromaBackend.persistent(tmp_path)._client, 99, _LOCKED)
    with pytest.raises(StoreError, match="database is locked"):
        _made(ChromaBackend(client), "alice")
    assert client.calls == OPEN_ATTEMPTS


def test_any_other_refusal_on_open_is_not_tried_again(tmp_path: Path) -> None:
    client = _FailingOpens(ChromaBackend.persistent(tmp_path)._client, 1, "disk I/O error")
    with pytest.raises(StoreError, match="disk I/O error"):
        _made(ChromaBackend(client), "alice")
    assert client.calls == 1


@pytest.mark.parametrize("bad", [0, -3, 1.5, True])
def test_a_bad_threshold_is_refused(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(ConfigError, match=r"store\.sync_threshold"):
        ChromaBackend.persistent(tmp_path, sync_threshold=bad)


@pytest.mark.slow
def test_a_server_store_gets_and_keeps_the_threshold(
    chroma_server: ChromaServer, tenant_name: Any, caplog: pytest.LogCaptureFixture
) -> None:
    tenant = tenant_name("sync")
    first = ChromaBackend.http("127.0.0.1", chroma_server.port, sync_threshold=40)
    _made(first, tenant)
    assert _thresholds(first, tenant) == [40, 40]
    with caplog.at_level(logging.INFO, logger="episeg.store"):
        _made(ChromaBackend.http("127.0.0.1", chroma_server.port, sync_threshold=40), tenant)
    assert not [r for r in caplog.records if "sync_threshold" in r.getMessage()]
