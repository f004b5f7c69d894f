"""Real servers for the interface tests: uvicorn on a free loopback port, `chroma run`."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from episeg.errors import StoreUnavailableError
from episeg.store import ChromaBackend

SAMPLE = Path(__file__).resolve().parents[2] / "src/episeg/data/sample_conversation.jsonl"
KEY_A = "key-alice-0123456789abcdef"
KEY_B = "key-bob-0123456789abcdef"
KEYS = {KEY_A: "alice", KEY_B: "bob"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """uvicorn serving ``app`` in a thread on 127.0.0.1 (one worker, real HTTP)."""

    def __init__(self, app: FastAPI) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                workers=1)
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


class ChromaServer:
    """A real `chroma run` subprocess on a free loopback port."""

    def __init__(self, path: Path) -> None:
        local = Path(sys.executable).parent / "chroma"
        exe = str(local) if local.exists() else shutil.which("chroma")
        if exe is None:
            pytest.fail("the `chroma` CLI is missing", pytrace=False)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._proc = subprocess.Popen(
            [exe, "run", "--host", "127.0.0.1", "--port", str(self.port), "--path", str(path)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                ChromaBackend.http("127.0.0.1", self.port).heartbeat()
                return
            except StoreUnavailableError:
                if time.monotonic() > deadline or self._proc.poll() is not None:
                    self.stop()
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
