"""A real loopback HTTP server that speaks enough Anthropic and OpenAI for their SDKs.

Tests queue :class:`Reply` behaviours; each POST to ``/v1/messages`` (Anthropic
Messages API) or ``/v1/chat/completions`` (OpenAI chat completions) takes the
next one. Every request is recorded so a test can assert what was sent
(temperature 0, the forced tool, the anchors in the prompt). A strict schema using a
keyword the real APIs refuse in strict mode (string lengths, numeric bounds) gets
their HTTP 400 before any queued behaviour is taken.

>>> import anthropic
>>> from episeg.testing import LoopbackLLMServer, Reply
>>> with LoopbackLLMServer() as server:
...     server.enqueue(Reply.overloaded(retry_after=0.1), Reply.json({"score": 4}))
...     client = anthropic.Anthropic(base_url=server.anthropic_url, api_key="k", max_retries=0)
...     try:
...         client.messages.create(model="m", max_tokens=8,
...                                messages=[{"role": "user", "content": "hi"}])
...     except anthropic.APIStatusError as err:
...         print(err.status_code, err.response.headers["retry-after"])
...     msg = client.messages.create(model="m", max_tokens=8,
...                                  messages=[{"role": "user", "content": "hi"}])
529 0.1
>>> msg.content[0].type, msg.content[0].input, len(server.requests)
('tool_use', {'score': 4}, 2)
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
from collections import deque
from collections.abc import Collection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from episeg.testing.llm_replies import (
    RecordedRequest,
    Reply,
    _anthropic_body,
    _dialect,
    _error_body,
    _openai_body,
    _parameter_refusal,
    _schema_refusal,
)

__all__ = ["LoopbackLLMServer", "RecordedRequest", "Reply"]

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20


class LoopbackLLMServer:
    """A threaded HTTP server on ``127.0.0.1`` with an ephemeral port; a context manager.

    Parameters
    ----------
    default : Reply or None
        Served when the queue is empty; ``None`` answers HTTP 400 naming the
        problem, so a test that under-programs the server fails loudly.
    tls : ssl.SSLContext or None
        A server-side context (certificate loaded): the server speaks HTTPS and
        its URLs start with ``https://``; ``None`` (default) is plain HTTP.
    refuses : collection of {"temperature", "max_tokens", "tool_choice"}
        Request parameters the served "model" refuses, as newer models do: a
        request carrying one gets the API's HTTP 400 for it (Anthropic: a
        deprecated ``temperature``, a forced ``tool_choice`` on a model that
        thinks by default; OpenAI reasoning models: ``temperature`` 0 and
        ``max_tokens``), before any queued behaviour is taken.
    """

    def __init__(
        self,
        *,
        default: Reply | None = None,
        tls: ssl.SSLContext | None = None,
        refuses: Collection[str] = (),
    ) -> None:
        unknown = sorted(set(refuses) - {"temperature", "max_tokens", "tool_choice"})
        if unknown:
            raise ValueError(f"can refuse temperature, max_tokens or tool_choice, not {unknown}")
        self.refuses = frozenset(refuses)
        self._default = default
        self._tls = tls
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server is not running; use it as a context manager")
        host, port = self._httpd.server_address[:2]
        scheme = "http" if self._tls is None else "https"
        return f"{scheme}://{host!s}:{port}"

    @property
    def anthropic_url(self) -> str:
        """``base_url`` for ``anthropic.Anthropic`` (it appends ``/v1/messages``)."""
        return self.url

    @property
    def openai_url(self) -> str:
        """``base_url`` for ``openai.OpenAI`` (it appends ``/chat/completions``)."""
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def enqueue(self, *replies: Reply) -> None:
        """Append behaviours; each request consumes one, in order."""
        with self._lock:
            self._queue.extend(replies)

    def pending(self) -> int:
        """Behaviours not consumed yet."""
        with self._lock:
            return len(self._queue)

    def __enter__(self) -> LoopbackLLMServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        if self._tls is not None:  # the handshake runs in the handler thread, on first read
            self._httpd.socket = self._tls.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},  # shutdown() waits up to one interval
            name="episeg-loopback-llm",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)

    def _next(self, record: RecordedRequest) -> Reply | None:
        with self._lock:
            self._requests.append(record)
            return self._queue.popleft() if self._queue else self._default


def _handler_for(server: LoopbackLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            log.debug("loopback: " + format, *args)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length > MAX_BODY_BYTES:
                self._send(413, {"error": {"message": "body too large"}})
                return
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_unparseable": raw.decode("utf-8", "replace")}
            record = RecordedRequest(
                self.path, {k.lower(): v for k, v in self.headers.items()}, body
            )
            dialect = _dialect(self.path)
            if dialect is None:
                self._send(404, {"error": {"message": f"unknown path {self.path}"}})
                return
            refusal = _schema_refusal(dialect, body)
            param = None
            if refusal is None:
                refusal, param = _parameter_refusal(dialect, body, server.refuses) or (None, None)
            if refusal is not None:  # as the real APIs do, before any queued behaviour
                server._record(record)
                error = Reply.error(400, message=refusal)
                self._send(400, _error_body(dialect, error, param))
                return
            reply = server._next(record)
            if reply is None:
                reply = Reply.error(
                    400, message=f"loopback server: no reply queued for POST {self.path}"
                )
            if reply.delay and server._stop.wait(reply.delay):
                return
            try:
                self._serve(reply, dialect, body)
            except (BrokenPipeError, ConnectionResetError) as exc:
                log.debug("loopback: client went away before the reply: %s", exc)

        def _serve(self, reply: Reply, dialect: str, body: dict[str, Any]) -> None:
            if reply.kind == "raw":
                self._send(reply.status, str(reply.payload).encode())
            elif reply.kind == "error":
                headers = {}
                if reply.retry_after is not None:
                    after = reply.retry_after
                    headers["retry-after"] = after if isinstance(after, str) else f"{after:g}"
                if reply.should_retry is not None:
                    headers["x-should-retry"] = "true" if reply.should_retry else "false"
                self._send(reply.status, _error_body(dialect, reply), headers)
            elif dialect == "anthropic":
                self._send(200, _anthropic_body(reply, body))
            else:
                self._send(200, _openai_body(reply, body))

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
