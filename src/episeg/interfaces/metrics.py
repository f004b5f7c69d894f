"""Prometheus metrics for the HTTP service (``GET /metrics``).

Each app gets its own :class:`prometheus_client.CollectorRegistry` (two apps
in one process, as in tests, never clash). Exported series:

``episeg_turns_total``
    Turns accepted through the API (counter).
``episeg_episodes_closed_total``
    Episodes closed, scored and handed to the store (counter).
``episeg_judge_calls``
    Calls the prediction-error judge has made since start (read at scrape time).
``episeg_outbox_depth``
    Closed episodes waiting for the store; above zero means degraded.
``episeg_request_seconds``
    Request latency by method, route template and status (histogram).

>>> metrics = ServiceMetrics(judge_calls=lambda: 3, outbox_depth=lambda: 0)
>>> metrics.record(accepted=2, closed=1)
>>> text = metrics.exposition().decode()
>>> "episeg_turns_total 2.0" in text, "episeg_judge_calls 3.0" in text
(True, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CONTENT_TYPE_LATEST", "MetricsMiddleware", "ServiceMetrics"]


class _Live:
    """A collector that reads gauges from the running service when scraped."""

    def __init__(self, judge_calls: Callable[[], int], outbox_depth: Callable[[], int]) -> None:
        self._judge_calls = judge_calls
        self._outbox_depth = outbox_depth

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "episeg_judge_calls", "Judge calls since start", value=self._judge_calls()
        )
        yield GaugeMetricFamily(
            "episeg_outbox_depth",
            "Closed episodes waiting for the store",
            value=self._outbox_depth(),
        )


class ServiceMetrics:
    """The service's counters, histogram and scrape-time gauges in one registry.

    Parameters
    ----------
    judge_calls
        Returns the judge's call count (0 when there is no judge).
    outbox_depth
        Returns the number of pending store writes.
    """

    def __init__(self, *, judge_calls: Callable[[], int], outbox_depth: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        self._turns = Counter("episeg_turns", "Turns accepted", registry=self.registry)
        self._episodes = Counter(
            "episeg_episodes_closed", "Episodes closed and stored", registry=self.registry
        )
        self.latency = Histogram(
            "episeg_request_seconds",
            "HTTP request latency",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.registry.register(_Live(judge_calls, outbox_depth))

    def record(self, *, accepted: int, closed: int) -> None:
        """Count turns accepted and episodes closed by one request."""
        self._turns.inc(accepted)
        self._episodes.inc(closed)

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format."""
        return generate_latest(self.registry)


class MetricsMiddleware:
    """ASGI middleware timing every HTTP request into ``metrics.latency``.

    The route label is the matched path template (``/v1/sessions/{session}``
    for the older forget form), never the raw path, so ids do not explode the
    label set.
    """

    def __init__(
        self, app: ASGIApp, *, metrics: ServiceMetrics, routes: Callable[[], Sequence[BaseRoute]]
    ) -> None:
        self.app = app
        self.metrics = metrics
        self._routes = routes

    def _template(self, scope: Scope) -> str:
        for route in self._routes():
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return str(getattr(route, "path", "unmatched"))
        return "unmatched"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = self._template(scope)
            self.metrics.latency.labels(scope["method"], route, str(status)).observe(
                time.perf_counter() - start
            )
