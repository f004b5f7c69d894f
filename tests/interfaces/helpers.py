"""Real servers for the interface tests: uvicorn on a free loopback port (and `chroma run`,
from :mod:`episeg.testing`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from episeg.testing import ChromaServer, free_port

__all__ = [
    "KEYS",
    "KEY_A",
    "KEY_B",
    "SAMPLE",
    "ChromaServer",
    "InProcessServer",
    "LiveServer",
    "free_port",
    "live_memory",
]

SAMPLE = Path(__file__).resolve().parents[2] / "src/episeg/data/sample_conversation.jsonl"
KEY_A = "key-alice-0123456789abcdef"
KEY_B = "key-bob-0123456789abcdef"
KEYS = {KEY_A: "alice", KEY_B: "bob"}


class LiveServer:
    """uvicorn serving ``app`` in a thread on 127.0.0.1 (one worker, real HTTP)."""

    def __init__(self, app: FastAPI) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", workers=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


class InProcessServer:
    """``app`` served in-process through Starlette's ``TestClient`` (the fast tier).

    The same ASGI app, middleware, validation and lifespan as :class:`LiveServer`,
    without uvicorn and a socket; an unhandled error is a 500 answer, as over HTTP.
    """

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    def client(self, key: str | None = None) -> TestClient:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return TestClient(self.app, headers=headers, raise_server_exceptions=False)

    def stop(self) -> None:
        """Nothing to stop: each ``with client(...)`` block ran the app's lifespan itself."""


@contextmanager
def live_memory(path: Path, **app: Any) -> Iterator[tuple[LiveServer, Any]]:
    """A ``Memory`` on ``path`` (hashing embedder) served by uvicorn to :data:`KEYS`;
    ``app`` goes to ``create_app``. Stops the server and closes the memory after."""
    from episeg.interfaces.runtime import open_memory
    from episeg.interfaces.service import create_app
    from episeg.testing import HashingEmbedder

    memory = open_memory(path, embedder=HashingEmbedder(dim=64))
    server = LiveServer(create_app(memory, KEYS, **app))
    try:
        yield server, memory
    finally:
        server.stop()
        memory.close()
