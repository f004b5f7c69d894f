"""Bearer API keys (one per request) and the request-size limit of :mod:`~.service`.

Keys come from a JSON file ``{"<key>": "<tenant>"}``. A key may instead map to
``{"tenant": "<tenant>", "admin": true}`` (a tenant's key that is also an
admin key) or ``{"admin": true}`` (an operator's key with no tenant: it can
only call the admin routes, e.g. ``GET /v1/admin/tenants``). A key is a bearer token
(RFC 6750 ``b64token``: ASCII letters, digits and ``-._~+/``, then ``=``
padding) of at least 16 characters; a key listed twice, a key no client could
send (non-ASCII, padded with spaces) and a keys file others can write are
configuration errors, and a file others can read is logged as a warning.
Only the SHA-256 of each key is kept in memory; a presented key is hashed and
compared against every stored digest with :func:`hmac.compare_digest` (no
early exit), so timing reveals neither which key nor how much of one matched.

>>> ring = KeyRing({"k-alice-0123456789": "alice", "k-ops-0123456789ab": {"admin": True}})
>>> ring.tenant_for("k-alice-0123456789"), ring.tenant_for("nope")
('alice', None)
>>> ring.is_admin("k-ops-0123456789ab"), ring.is_admin("k-alice-0123456789")
(True, False)
>>> "k-alice" in repr(ring)
False
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import stat
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from episeg.errors import ConfigError, EpisegError
from episeg.store.tenants import validate_tenant

__all__ = ["BodyLimit", "KeyRing", "replaying"]

MIN_KEY_LENGTH = 16
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
log = logging.getLogger(__name__)


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


class KeyRing:
    """Maps API keys (held as SHA-256 digests) to tenants.

    Parameters
    ----------
    keys
        ``{key: tenant}`` or ``{key: {"tenant": tenant, "admin": bool}}``
        (``tenant`` optional for an admin key); keys must be at least 16
        characters, tenants valid tenant ids (see
        :func:`episeg.store.tenants.validate_tenant`).
    """

    def __init__(self, keys: Mapping[str, str | Mapping[str, Any]]) -> None:
        entries: list[tuple[bytes, str | None, bool]] = []
        for key, value in keys.items():
            if not isinstance(key, str) or len(key) < MIN_KEY_LENGTH:
                raise ConfigError(f"API keys must be strings of >= {MIN_KEY_LENGTH} characters")
            if not _B64TOKEN.fullmatch(key):
                raise ConfigError(
                    f"API key {_masked(key)} cannot be sent as a bearer token: use ASCII "
                    "letters, digits and -._~+/ only (no spaces or other characters)"
                )
            tenant, admin = _entry(key, value)
            try:
                entries.append(
                    (_digest(key), None if tenant is None else validate_tenant(tenant), admin)
                )
            except EpisegError as exc:
                raise ConfigError(f"invalid tenant in keys: {exc}") from None
        if not entries:
            raise ConfigError("the keys file holds no keys")
        self._entries = tuple(entries)

    @classmethod
    def from_file(cls, path: str | Path) -> KeyRing:
        """Load ``{key: tenant}`` JSON; ``ConfigError`` naming the file if malformed.

        Refused: a key listed twice (JSON would silently keep the last tenant),
        a file that group or others may write. A file they may read is logged.
        """
        try:
            mode = Path(path).stat().st_mode
            data: Any = json.loads(
                Path(path).read_text(encoding="utf-8"), object_pairs_hook=_no_duplicates
            )
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, ConfigError) as exc:
            raise ConfigError(f"cannot read keys file {path}: {exc}") from None
        if mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ConfigError(
                f"keys file {path} is writable by group or others (mode {mode & 0o777:o}): "
                f"anyone could add a key; chmod 600 {path}"
            )
        if mode & (stat.S_IRGRP | stat.S_IROTH):
            log.warning("keys file %s is readable by group or others; chmod 600 it", path)
        if not isinstance(data, dict):
            raise ConfigError(f"keys file {path} must hold a JSON object {{key: tenant}}")
        return cls(data)

    @property
    def tenants(self) -> frozenset[str]:
        return frozenset(tenant for _, tenant, _ in self._entries if tenant is not None)

    def shared_tenants(self) -> list[str]:
        """Tenants reached by more than one key (a proxy hashing keys may split them).

        >>> KeyRing({"a" * 16: "alice", "b" * 16: "alice", "c" * 16: "bob"}).shared_tenants()
        ['alice']
        """
        seen = Counter(tenant for _, tenant, _ in self._entries if tenant is not None)
        return sorted(tenant for tenant, keys in seen.items() if keys > 1)

    def tenant_for(self, key: str) -> str | None:
        """The tenant of ``key``, or ``None`` (unknown key, or an admin key with no tenant)."""
        return self._lookup(key)[0]

    def is_admin(self, key: str) -> bool:
        """Whether ``key`` is an admin key; constant work whatever matches."""
        return self._lookup(key)[1]

    def lookup(self, key: str) -> tuple[str | None, bool]:
        """(:meth:`tenant_for`, :meth:`is_admin`) of ``key`` in one pass."""
        return self._lookup(key)

    def _lookup(self, key: str) -> tuple[str | None, bool]:
        presented = _digest(key)
        found: tuple[str | None, bool] = (None, False)
        for digest, tenant, admin in self._entries:  # no early exit: timing reveals nothing
            if hmac.compare_digest(presented, digest):
                found = (tenant, admin)
        return found

    def __repr__(self) -> str:
        admins = sum(1 for *_, admin in self._entries if admin)
        return f"KeyRing({len(self._entries)} keys, {len(self.tenants)} tenants, {admins} admin)"


def _entry(key: str, value: object) -> tuple[str | None, bool]:
    """``(tenant, admin)`` of one keys-file value: a tenant, or ``{"tenant"?, "admin"?}``."""
    if isinstance(value, str):
        return value, False
    if isinstance(value, Mapping):
        extra = set(value) - {"tenant", "admin"}
        admin = value.get("admin", False)
        tenant = value.get("tenant")
        if extra or not isinstance(admin, bool) or not (tenant is None or isinstance(tenant, str)):
            raise ConfigError(
                f"key {_masked(key)}: an entry is a tenant or "
                '{"tenant": "<tenant>", "admin": true|false}, got ' + repr(dict(value))[:80]
            )
        if tenant is None and not admin:
            raise ConfigError(f"key {_masked(key)} names no tenant and is not an admin key")
        return tenant, admin
    raise ConfigError(f"tenant must be a string, got {type(value).__name__}")


def _masked(key: str) -> str:
    return repr(key[:4] + "…") if len(key) > 4 else "(short)"


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ConfigError(
                f"key {_masked(key)} is listed twice (tenants {seen[key]!r}, {value!r})"
            )
        seen[key] = value
    return seen


class BodyLimit:
    """ASGI middleware: answer 413 to any request body over ``max_bytes``.

    Checks ``Content-Length`` up front and counts streamed chunks too (a
    chunked upload cannot slip past); the accepted body is replayed to the app.
    Before it answers 413 it reads and drops the rest of the body, up to
    ``drain_factor`` times ``max_bytes``: a client still sending when the
    answer came (httpx's async client with a body of a few MB) would otherwise
    lose the 413 to a reset connection and see a bare network error. A body
    larger still gets the 413 at once.
    """

    drain_factor = 32

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        if max_bytes < 1:
            raise ConfigError(f"max_bytes must be >= 1, got {max_bytes}")
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            if declared.isdigit() and int(declared) <= self.max_bytes * self.drain_factor:
                await self._drain(receive, 0)
            await self._reject(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                if message.get("more_body", False):
                    await self._drain(receive, size)
                await self._reject(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        await self.app(scope, replaying(b"".join(chunks), receive), send)

    async def _drain(self, receive: Receive, size: int) -> None:
        """Read and drop the rest of the body, up to ``drain_factor`` x ``max_bytes`` in all."""
        while size <= self.max_bytes * self.drain_factor:
            message = await receive()
            if message["type"] != "http.request":
                return
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                return

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = f"request body over {self.max_bytes} bytes"
        answer = JSONResponse({"detail": detail}, status_code=413, headers={"connection": "close"})
        await answer(scope, receive, send)


class OneAuthorization:
    """ASGI middleware: answer 400 to a request that carries more than one ``Authorization``.

    The service reads the first such header; HAProxy's ``balance hdr(Authorization)``
    hashes the last one (``deploy/haproxy.cfg``). A request with two keys could
    be routed by one tenant's key and served under another's, so one tenant's
    turns would reach two replicas (two journals). The proxy config refuses such a
    request too; this keeps a replica safe behind any proxy.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = (scope.get("headers") or []) if scope["type"] == "http" else []
        if sum(1 for name, _ in headers if name.lower() == b"authorization") > 1:
            detail = "more than one Authorization header: send exactly one API key"
            await JSONResponse({"detail": detail}, status_code=400)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app ``body`` (read already) once, then defers to ``receive``."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
