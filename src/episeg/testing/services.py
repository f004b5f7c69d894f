"""Real ``episeg serve`` processes and a real HAProxy in front of them, on loopback ports.

The load benchmarks and the scale-out test start the service exactly as a
deployment does (``python -m episeg.interfaces.cli serve``) and, for the
replicated setup, HAProxy with the configuration shipped in
``episeg/interfaces/deploy/haproxy.cfg`` (the one ``docs/DEPLOYMENT.md``
shows), filled in through its environment variables.

>>> "balance hdr(Authorization)" in haproxy_config().read_text()
True
"""

from __future__ import annotations

import importlib.resources
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from episeg.errors import EpisegError
from episeg.testing.chroma_server import free_port, stop_process

__all__ = ["HAProxy", "ServiceProcess", "haproxy_config"]


def haproxy_config() -> Path:
    """The HAProxy configuration template shipped with episeg (two replicas)."""
    return Path(str(importlib.resources.files("episeg.interfaces") / "deploy" / "haproxy.cfg"))


def _wait(url: str, proc: subprocess.Popen[bytes], timeout: float, what: str) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise EpisegError(f"{what} did not come up on {url}")
        time.sleep(0.25)


class _Process:
    _proc: subprocess.Popen[bytes]
    _log: IO[bytes]

    def stop(self) -> None:
        """Terminate the process (SIGKILL after 20 s) and close its log."""
        stop_process(self._proc, timeout=20)
        self._log.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class ServiceProcess(_Process):
    """``episeg serve`` in a subprocess on a free 127.0.0.1 port, waited for on its health check.

    Parameters
    ----------
    path
        Work folder: the journal (and embedded store) go to ``path/store``, the
        keys file and ``server.log`` next to it.
    keys
        API key -> tenant.
    chroma_url
        A ``chroma run`` server to share (default: an embedded store).
    serve_args
        More ``episeg serve`` options (e.g. ``["--max-tenant-requests", "32"]``).
    """

    def __init__(
        self,
        path: str | Path,
        keys: Mapping[str, str],
        *,
        chroma_url: str | None = None,
        timeout: float = 240.0,
        serve_args: Sequence[str] = (),
    ) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        keys_file = self.path / "keys.json"
        keys_file.write_text(json.dumps(dict(keys)), encoding="utf-8")
        keys_file.chmod(0o600)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        src = str(Path(__file__).resolve().parents[2])
        paths = [src, *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        store = ["--chroma-url", chroma_url] if chroma_url else []
        argv = [sys.executable, "-m", "episeg.interfaces.cli", "serve", "--path"]
        argv += [str(self.path / "store"), *store, "--keys-file", str(keys_file), *serve_args]
        self._log = (self.path / "server.log").open("wb")
        self._proc = subprocess.Popen(
            [*argv, "--port", str(self.port)], stdout=self._log, stderr=subprocess.STDOUT, env=env
        )
        try:
            _wait(f"{self.url}/v1/healthz", self._proc, timeout, "episeg serve")
        except EpisegError:
            self.stop()
            log = self.path / "server.log"
            raise EpisegError(f"episeg serve did not come up; see {log}") from None


class HAProxy(_Process):
    """HAProxy (foreground) routing to ``replicas`` with the shipped configuration.

    Parameters
    ----------
    replicas
        ``host:port`` of each replica, as many as the configuration has
        ``server`` lines (two for the shipped one).
    log
        Where HAProxy's own output goes.

    Raises
    ------
    EpisegError
        When the ``haproxy`` binary is missing or the proxy does not answer.
    """

    def __init__(
        self,
        replicas: Sequence[str],
        log: str | Path,
        *,
        config: Path | None = None,
        timeout: float = 30.0,
    ) -> None:
        exe = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
        if exe is None:
            raise EpisegError("the haproxy binary is missing (apt-get install haproxy)")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "EPISEG_PROXY_BIND": f"127.0.0.1:{self.port}"}
        env.update({f"EPISEG_REPLICA{n}": r for n, r in enumerate(replicas, start=1)})
        self._log = open(log, "wb")  # noqa: SIM115 - closed by stop()
        cfg = str(config or haproxy_config())
        self._proc = subprocess.Popen(
            [exe, "-db", "-f", cfg], stdout=self._log, stderr=subprocess.STDOUT, env=env
        )
        deadline = time.monotonic() + timeout
        while not _listening(self.port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise EpisegError(f"haproxy did not come up; see {log}")
            time.sleep(0.1)
        try:
            _wait(f"{self.url}/v1/healthz", self._proc, timeout, "haproxy")
        except EpisegError:
            self.stop()
            raise


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0
