"""A real ``chroma run`` server on a free 127.0.0.1 port, for integration tests.

The store, service and reliability tests run the same code against embedded
Chroma and against this server; the outage tests kill it and start it again on
the same port and data folder. It needs the ``chroma`` CLI that the
``chromadb`` package installs next to the interpreter.

Starting a server takes seconds, so the example is not run by the doctests (the
store conformance suite runs it, marked slow):

>>> import tempfile
>>> with ChromaServer(tempfile.mkdtemp()) as server:  # doctest: +SKIP
...     server.backend().store_for("alice").count()
0
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

from episeg.errors import StoreUnavailableError
from episeg.store import ChromaBackend

__all__ = ["ChromaServer", "free_port", "stop_process"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Terminate ``proc`` and wait; SIGKILL it if it has not exited after ``timeout`` s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _chroma_cli() -> str:
    local = Path(sys.executable).parent / "chroma"
    exe = str(local) if local.exists() else shutil.which("chroma")
    if exe is None:
        raise StoreUnavailableError("the `chroma` CLI (installed by chromadb) is missing")
    return exe


class ChromaServer:
    """A ``chroma run`` subprocess storing under ``path``; started on construction.

    ``start()`` after ``kill()``/``stop()`` restarts it on the same port and
    data, which is how the outage tests bring the store back.

    Raises
    ------
    StoreUnavailableError
        If the CLI is missing or the server does not answer within ``timeout``.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        port: int | None = None,
        start: bool = True,
        timeout: float = 60.0,
    ) -> None:
        self.exe = _chroma_cli()
        self.path = Path(path)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        if start:
            self.start()

    def start(self) -> float:
        """Start the server and wait for its heartbeat; returns the seconds that took."""
        started = time.monotonic()
        self._proc = subprocess.Popen(
            [
                self.exe,
                "run",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--path",
                str(self.path),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while True:
            try:
                self.backend().heartbeat()
                return time.monotonic() - started
            except StoreUnavailableError:
                if self._proc.poll() is not None or time.monotonic() - started > self._timeout:
                    self.kill()
                    raise StoreUnavailableError(
                        f"chroma run did not answer on port {self.port}"
                    ) from None
                time.sleep(0.1)

    def backend(self) -> ChromaBackend:
        """An ``HttpClient`` backend talking to this server."""
        return ChromaBackend.http("127.0.0.1", self.port)

    def kill(self) -> None:
        """SIGKILL the server (an outage, not a clean shutdown)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def stop(self) -> None:
        """Terminate the server cleanly (SIGKILL after 10 s)."""
        if self._proc is not None:
            stop_process(self._proc, timeout=10)

    def __enter__(self) -> ChromaServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
