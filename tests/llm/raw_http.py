"""A raw-socket loopback HTTP server for replies the loopback LLM server cannot make.

Bytes that are not UTF-8, any header, and a body trickled one byte at a time
(each gap shorter than the client's read timeout). Every request gets the same
programmed answer.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class RawHTTPServer:
    """Answers every request with ``body`` (bytes), one byte every ``gap`` seconds if > 0."""

    def __init__(
        self, body: bytes, *, gap: float = 0.0, headers: dict[str, str] | None = None
    ) -> None:
        self.body = body
        self.gap = gap
        self.headers = {"content-type": "application/json", **(headers or {})}
        self.requests = 0
        self._stop = threading.Event()
        self._sock = socket.socket()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> RawHTTPServer:
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._sock.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(5.0)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, rest = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    key, _, value = line.partition(b":")
                    if key.strip().lower() == b"content-length":
                        length = int(value)
                while len(rest) < length:
                    rest += conn.recv(65536)
                self.requests += 1
                lines = [b"HTTP/1.1 200 OK", b"content-length: %d" % len(self.body)]
                lines += [f"{k}: {v}".encode() for k, v in self.headers.items()]
                conn.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
                if self.gap <= 0:
                    conn.sendall(self.body)
                    return
                for i in range(len(self.body)):
                    if self._stop.wait(self.gap):
                        return
                    conn.sendall(self.body[i : i + 1])
            except OSError:
                return
