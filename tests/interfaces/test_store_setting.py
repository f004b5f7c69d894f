"""``store.sync_threshold`` reaches the collections the interfaces make (review 2, R2-2).

``open_memory`` (the CLI, ``episeg serve`` and the MCP server) built its backend
with Chroma's threshold 1 whatever the config said, and the settings had no
way to give another. Checked on real Chroma: the embedded store, a ``chroma
run`` server, and the CLI entry point.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings

from episeg.config import EpisegConfig, StoreConfig
from episeg.errors import ConfigError
from episeg.interfaces.cli import main
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.settings import load_settings
from episeg.memory import Memory
from episeg.store import ChromaBackend
from episeg.testing import ChromaServer, HashingEmbedder
from episeg.types import Actor, Turn


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("EPISEG_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no stray ./episeg.toml
    yield


def _write_one(memory: Memory) -> None:
    """Store one episode of alice, which makes her two collections."""
    memory.observe(Turn(actor=Actor.USER, text="deploy prod 2.14", ts=1.0, user="alice", id="a"))
    assert memory.flush()


def _backend_threshold(memory: Memory) -> int:
    backend = memory.backend
    assert isinstance(backend, ChromaBackend)
    return backend.sync_threshold


def _embedded(path: Path) -> Any:
    """Another client of the embedded store (Chroma's settings as episeg gives them)."""
    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    return chromadb.PersistentClient(path=str(path), settings=settings)


def _thresholds(client: Any) -> dict[str, Any]:
    """Each collection's ``hnsw.sync_threshold`` as Chroma stored it."""
    return {
        c.name: (c.configuration_json or {}).get("hnsw", {}).get("sync_threshold")
        for c in client.list_collections()
    }


def test_the_config_given_to_open_memory_reaches_the_collections(tmp_path: Path) -> None:
    config = EpisegConfig(store=StoreConfig(sync_threshold=100))
    memory = open_memory(tmp_path / "m", embedder=HashingEmbedder(dim=32), config=config)
    try:
        assert _backend_threshold(memory) == 100
        _write_one(memory)
    finally:
        memory.close()
    client = _embedded(tmp_path / "m" / "chroma")
    assert list(_thresholds(client).values()) == [100, 100]


def test_the_settings_file_and_environment_set_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert load_settings().config().store == StoreConfig()
    (tmp_path / "episeg.toml").write_text("[store]\nsync_threshold = 100\n")
    assert load_settings().config().store.sync_threshold == 100
    monkeypatch.setenv("EPISEG_STORE__SYNC_THRESHOLD", "7")
    assert load_settings().config().store.sync_threshold == 7
    monkeypatch.delenv("EPISEG_STORE__SYNC_THRESHOLD")
    for bad in ("sync_threshold = 0", "sync_threshold = -3", "sync_treshold = 5"):
        (tmp_path / "episeg.toml").write_text(f"[store]\n{bad}\n")
        with pytest.raises(ConfigError, match="invalid episeg settings"):
            load_settings()


def test_the_cli_keeps_the_setting_on_every_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write through ``open_memory`` and a read-only ``episeg episodes`` both keep 100.

    A store opened with another threshold reconfigures the collections it opens,
    so a read-only command opening them with 1 would undo the setting.
    """
    (tmp_path / "episeg.toml").write_text("[store]\nsync_threshold = 100\n")
    memory = open_memory(tmp_path / "m", embedder=HashingEmbedder(dim=32))
    try:
        assert _backend_threshold(memory) == 100
        _write_one(memory)
    finally:
        memory.close()
    assert main(["episodes", "--user", "alice", "--path", str(tmp_path / "m"), "--json"]) == 0
    client = _embedded(tmp_path / "m" / "chroma")
    assert list(_thresholds(client).values()) == [100, 100]


@pytest.mark.slow
def test_a_chroma_run_server_gets_it_too(tmp_path: Path) -> None:
    config = EpisegConfig(store=StoreConfig(sync_threshold=50))
    with ChromaServer(tmp_path / "chroma") as chroma:
        memory = open_memory(
            tmp_path / "m", chroma_url=chroma.url, embedder=HashingEmbedder(dim=32), config=config
        )
        try:
            assert _backend_threshold(memory) == 50
            _write_one(memory)
        finally:
            memory.close()
        client = chromadb.HttpClient(host="127.0.0.1", port=chroma.port)
        assert list(_thresholds(client).values()) == [50, 50]
