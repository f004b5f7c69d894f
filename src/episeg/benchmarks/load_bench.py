"""Load on the HTTP service: many concurrent sessions, then check every turn landed once.

Starts the real service (``python -m episeg.interfaces.cli serve``: MiniLM, the offline judge
and scorer, embedded Chroma, the journal) as a subprocess on 127.0.0.1, one API
key per tenant. ``tenants x sessions_per_tenant`` client threads each stream one
session's turns in order (``POST /v1/turns``, one turn per request, so the
number of sessions bounds the requests in flight). After the load, every tenant
flushes and pages through ``GET /v1/episodes``; each sent turn id must appear in
exactly one episode of its own tenant and session.

The baseline, timed in the same run after the server has stopped, is the same
turns through an in-process :class:`~episeg.memory.Memory` with the same parts,
one turn at a time: ``http_ratio`` is the service's sustained turns/s over it.
Latency is reported over all posts and per tenant (p99 of each tenant's posts).

With ``--heavy-sessions N`` one more tenant, ``heavy``, first posts one turn
to each of ``N`` sessions (batches, not timed), then flushes all of them while
the small tenants' load runs: the figures then say what one heavy tenant costs
the others (``during_heavy_flush_p99_ms``: the small tenants' posts made while
that flush ran; issue 12, F12).

Run ``python -m episeg.benchmarks.load_bench --tenants 8 --sessions 4 --turns 50``.
"""

from __future__ import annotations

import secrets
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from episeg.benchmarks import percentiles_ms
from episeg.benchmarks.load_client import (
    TOPICS,
    Latencies,
    bench_parser,
    check_exactly_once,
    client_threads,
    latency_summary,
    make_session,
    make_sessions,
    print_result,
    run_clients,
    stored_turns,
    with_baseline,
    workdir_for,
)
from episeg.testing.services import ServiceProcess

__all__ = ["check_exactly_once", "main", "make_session", "run_load_bench"]


def _heavy(url: str, key: str, sessions: int, window: list[float], errors: list[str]) -> None:
    """One turn in each of ``sessions`` sessions (batches), then one flush of them all."""
    turns = [
        {"actor": "user", "text": f"{TOPICS[n % len(TOPICS)]} ({n})", "ts": 1.7e9,
         "id": f"heavy-{n}", "session": f"h{n}"}
        for n in range(sessions)
    ]  # fmt: skip
    auth = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=auth, timeout=3600) as client:
        for start in range(0, sessions, 500):
            reply = client.post("/v1/turns:batch", json=turns[start : start + 500])
            if reply.status_code != 200:
                errors.append(f"heavy batch: HTTP {reply.status_code} {reply.text[:200]}")
        window.append(time.perf_counter())
        reply = client.post("/v1/flush", json={})
        window.append(time.perf_counter())
        if reply.status_code != 200 or len(reply.json()["closed"]) != sessions:
            errors.append(f"heavy flush: HTTP {reply.status_code} {reply.text[:200]}")


def _latency_figures(latencies: Latencies, window: list[float]) -> dict[str, Any]:
    p50, p99, tenant_p99 = latency_summary(latencies)
    out: dict[str, Any] = {
        "latency_p50_ms": p50,
        "latency_p99_ms": p99,
        "tenant_p99_ms": tenant_p99,
    }
    out["worst_tenant_p99_ms"] = max(out["tenant_p99_ms"].values(), default=0.0)
    if len(window) == 2:
        during = [s for v in latencies.values() for t0, s in v if window[0] <= t0 <= window[1]]
        out["heavy_flush_s"] = window[1] - window[0]
        out["posts_during_heavy_flush"] = len(during)
        out["during_heavy_flush_p99_ms"] = percentiles_ms(during or [0.0])[1]
    return out


def run_load_bench(
    tenants: int = 8,
    sessions_per_tenant: int = 4,
    turns_per_session: int = 50,
    *,
    seed: int = 0,
    path: str | Path | None = None,
    baseline: bool = True,
    heavy_sessions: int = 0,
) -> dict[str, Any]:
    """Run the load and the exactly-once check; returns a JSON-ready dict of figures."""
    if min(tenants, sessions_per_tenant, turns_per_session) < 1 or heavy_sessions < 0:
        raise ValueError(
            "tenants, sessions_per_tenant and turns_per_session must be >= 1, heavy_sessions >= 0"
        )
    workdir = workdir_for(path, "episeg-load-")
    keys = {f"tenant{t}": secrets.token_hex(16) for t in range(tenants)}
    heavy_key = secrets.token_hex(16)
    sessions = make_sessions(keys, sessions_per_tenant, turns_per_session, seed=seed)
    latencies: Latencies = {tenant: [] for tenant in keys}
    errors: list[str] = []
    window: list[float] = []
    owners = {key: tenant for tenant, key in keys.items()} | {heavy_key: "heavy"}
    # one request in flight per session: a tenant's sessions never meet its cap (F177)
    cap = ["--max-tenant-requests", str(max(8, sessions_per_tenant))]
    with ServiceProcess(workdir, owners, serve_args=cap) as server:
        threads = client_threads(server.url, keys, sessions, latencies, errors)
        heavy = threading.Thread(
            target=_heavy, args=(server.url, heavy_key, heavy_sessions, window, errors)
        )
        if heavy_sessions:
            heavy.start()
            while not window and heavy.is_alive():  # the small tenants start with the flush
                time.sleep(0.05)
        wall = run_clients(threads)
        if heavy_sessions:
            heavy.join()
        sent = [t for turns in sessions.values() for t in turns]
        stored = [row for key in keys.values() for row in stored_turns(server.url, key)]
    figures: dict[str, Any] = {
        "tenants": tenants,
        "sessions": len(sessions),
        "turns": len(sent),
        "heavy_sessions": heavy_sessions,
        "seed": seed,
        "wall_s": wall,
        "turns_per_s": len(sent) / wall,
        **_latency_figures(latencies, window),
        "errors": len(errors),
        "error_samples": errors[:5],
        **check_exactly_once(sent, stored),
    }
    if baseline:
        with_baseline(figures, workdir, sessions, "http_ratio")
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """CLI; exit status 1 when a turn was lost, duplicated, misplaced or refused."""
    parser = bench_parser("python -m episeg.benchmarks.load_bench", __doc__, sessions=4, turns=50)
    parser.add_argument(
        "--heavy-sessions",
        type=int,
        default=0,
        help="one more tenant flushes this many sessions during the load (default 0: none)",
    )
    args = parser.parse_args(argv)
    try:
        res = run_load_bench(
            args.tenants,
            args.sessions,
            args.turns,
            seed=args.seed,
            path=args.path,
            baseline=not args.no_baseline,
            heavy_sessions=args.heavy_sessions,
        )
    except ValueError as exc:
        parser.error(str(exc))
    print_result(res, args.json)
    bad = res["errors"] + res["missing"] + res["duplicated"] + res["foreign"] + res["misplaced"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
