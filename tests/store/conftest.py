"""Fixtures: the same store suite against embedded Chroma and a real `chroma run` server."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from episeg.errors import StoreUnavailableError
from episeg.store import ChromaBackend

CHROMA_BIN = Path(sys.executable).parent / "chroma"


class ChromaServer:
    """A `chroma run` subprocess on a free loopback port."""

    def __init__(self, path: Path) -> None:
        exe = str(CHROMA_BIN) if CHROMA_BIN.exists() else shutil.which("chroma")
        if exe is None:
            pytest.fail("the `chroma` CLI is missing: the HTTP store tests cannot run",
                        pytrace=False)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self._proc = subprocess.Popen(
            [exe, "run", "--host", "127.0.0.1", "--port", str(self.port), "--path", str(path)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                ChromaBackend.http("127.0.0.1", self.port).heartbeat()
                return
            except StoreUnavailableError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"chroma run did not answer on port {self.port}", pytrace=False)
                time.sleep(0.1)

    def backend(self) -> ChromaBackend:
        return ChromaBackend.http("127.0.0.1", self.port)

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


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
