"""A cap on each tenant's requests in flight, so one tenant cannot hold the service's threads.

The service's routes are synchronous: each request holds one of the server's worker
threads (anyio's pool, 40 by default) while it waits for its tenant's lock. One tenant
posting 50 turns at once, each waiting behind a slow judge call, held every thread,
and another tenant's request and ``/v1/healthz`` waited for one (docs/RELIABILITY.md
F177). A :class:`TenantGate` admits at most ``limit`` requests of a tenant at a time
and answers the next one 429 with ``Retry-After`` at once, without a thread: the
gate is taken in the async authentication dependency, before the route runs. The
HTTP client retries such an answer by itself.

>>> gate = TenantGate(limit=1)
>>> with gate.slot("alice"):
...     try:
...         with gate.slot("alice"):
...             pass
...     except GateFull as full:
...         print(full.tenant, full.limit)
...     with gate.slot("bob"):
...         print("bob is served")
alice 1
bob is served
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from episeg.errors import ConfigError

__all__ = ["DEFAULT_TENANT_REQUESTS", "GateFull", "TenantGate"]

DEFAULT_TENANT_REQUESTS = 8
"""A fifth of anyio's 40 worker threads: five busy tenants still leave threads to others."""


class GateFull(Exception):
    """``tenant`` already has ``limit`` requests in flight."""

    def __init__(self, tenant: str, limit: int) -> None:
        super().__init__(f"tenant {tenant!r} has {limit} requests in flight")
        self.tenant, self.limit = tenant, limit


class TenantGate:
    """At most ``limit`` requests of each tenant at a time (see the module docstring)."""

    def __init__(self, limit: int = DEFAULT_TENANT_REQUESTS) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigError(f"the requests in flight per tenant must be >= 1, got {limit!r}")
        self.limit = limit
        self._in_flight: dict[str, int] = {}
        self._lock = threading.Lock()

    @contextmanager
    def slot(self, tenant: str) -> Iterator[None]:
        """Hold one of ``tenant``'s slots; :class:`GateFull` at once if none is free."""
        with self._lock:
            held = self._in_flight.get(tenant, 0)
            if held >= self.limit:
                raise GateFull(tenant, self.limit)
            self._in_flight[tenant] = held + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._in_flight[tenant] - 1
                if left:
                    self._in_flight[tenant] = left
                else:  # an idle tenant holds no memory here
                    del self._in_flight[tenant]
