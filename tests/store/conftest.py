"""Fixtures: the same store suite against embedded Chroma and a real `chroma run` server."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from episeg.store import ChromaBackend
from episeg.testing import ChromaServer


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server"))
    yield server
    server.stop()


@pytest.fixture(params=["embedded", pytest.param("http", marks=pytest.mark.slow)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> ChromaBackend:
    if request.param == "embedded":
        return ChromaBackend.persistent(tmp_path / "chroma")
    server: ChromaServer = request.getfixturevalue("chroma_server")
    return server.backend()


_counter = iter(range(10**9))


@pytest.fixture
def tenant_name() -> Callable[[str], str]:
    """Unique tenant ids per test, so tests can share one server."""
    run = f"{time.time_ns()}"

    def make(base: str) -> str:
        return f"{base}-{run}-{next(_counter)}"

    return make
