"""Fixtures for the interface tests: the real MiniLM (loaded once), live servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from episeg.interfaces.runtime import default_embedder, open_memory
from episeg.interfaces.service import create_app
from episeg.testing import HashingEmbedder
from episeg.typing import Embedder
from tests.interfaces.helpers import KEYS, LiveServer


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    """The bundled MiniLM, shared with the in-process CLI (``default_embedder`` caches it)."""
    return default_embedder()


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The real app under uvicorn; HashingEmbedder for speed, everything else real."""
    path: Path = tmp_path_factory.mktemp("served")
    memory = open_memory(path, embedder=HashingEmbedder(dim=64))
    server = LiveServer(create_app(memory, KEYS, max_body_bytes=64 * 1024))
    yield server
    server.stop()
