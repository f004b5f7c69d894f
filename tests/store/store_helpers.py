"""Episode builders and the `chroma run` server helper shared by the store tests."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from episeg.errors import StoreUnavailableError
from episeg.store import ChromaBackend
from episeg.types import Decision, Episode, Salience, Turn, Verdict


def unit(v: list[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(v, dtype=np.float32)
    return arr / np.linalg.norm(arr)


def make_episode(id: str, vec: list[float] | np.ndarray, *, text: str = "hello",
                 closed_at: float = 1000.0, score: int | None = 5,
                 **kw: object) -> Episode:
    sal = None if score is None else Salience.scored(score, scorer="test")
    return Episode(
        id=id, user="u", session="s",
        turns=(Turn(actor="user", text=text, ts=closed_at - 10, id=f"{id}:0"),
               Turn(actor="assistant", text="ok " + text, ts=closed_at, type="assistant-answer")),
        summary=text, opened_at=closed_at - 10, closed_at=closed_at, embedding=unit(vec),
        salience=sal, closing_verdicts=(Verdict("window", Decision.BOUNDARY, 0.9, "max turns"),),
        **kw,  # type: ignore[arg-type]
    )


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
