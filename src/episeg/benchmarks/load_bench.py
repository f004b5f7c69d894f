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

import argparse
import json
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from episeg.benchmarks import percentiles_ms
from episeg.benchmarks.load_client import (
    TOPICS,
    baseline_turns_per_s,
    check_exactly_once,
    make_session,
    send_session,
    stored_turns,
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


def _latency_figures(
    latencies: dict[str, list[tuple[float, float]]], window: list[float]
) -> dict[str, Any]:
    every = [s for samples in latencies.values() for _, s in samples]
    p50, p99 = percentiles_ms(every or [0.0])
    out: dict[str, Any] = {
        "latency_p50_ms": p50,
        "latency_p99_ms": p99,
        "tenant_p99_ms": {
            t: percentiles_ms([s for _, s in v] or [0.0])[1] for t, v in latencies.items()
        },
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
    workdir = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="episeg-load-"))
    workdir.mkdir(parents=True, exist_ok=True)
    keys = {f"tenant{t}": secrets.token_hex(16) for t in range(tenants)}
    heavy_key = secrets.token_hex(16)
    sessions = {
        (tenant, f"s{s}"): make_session(tenant, f"s{s}", turns_per_session, seed=seed)
        for tenant in keys
        for s in range(sessions_per_tenant)
    }
    latencies: dict[str, list[tuple[float, float]]] = {tenant: [] for tenant in keys}
    errors: list[str] = []
    window: list[float] = []
    owners = {key: tenant for tenant, key in keys.items()} | {heavy_key: "heavy"}
    with ServiceProcess(workdir, owners) as server:
        threads = [
            threading.Thread(
                target=send_session,
                args=(server.url, keys[tenant], turns, latencies[tenant], errors),
            )
            for (tenant, _), turns in sessions.items()
        ]
        heavy = threading.Thread(
            target=_heavy, args=(server.url, heavy_key, heavy_sessions, window, errors)
        )
        if heavy_sessions:
            heavy.start()
            while not window and heavy.is_alive():  # the small tenants start with the flush
                time.sleep(0.05)
        t0 = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - t0
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
        figures["baseline_turns_per_s"] = baseline_turns_per_s(workdir, list(sessions.values()))
        figures["http_ratio"] = figures["turns_per_s"] / figures["baseline_turns_per_s"]
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """CLI; exit status 1 when a turn was lost, duplicated, misplaced or refused."""
    parser = argparse.ArgumentParser(
        prog="python -m episeg.benchmarks.load_bench",
        description=__doc__.split("\n")[0] if __doc__ else None,
    )
    parser.add_argument("--tenants", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=4, help="sessions per tenant")
    parser.add_argument("--turns", type=int, default=50, help="turns per session")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--heavy-sessions",
        type=int,
        default=0,
        help="one more tenant flushes this many sessions during the load (default 0: none)",
    )
    parser.add_argument("--path", type=Path, default=None, help="work folder (default: temp)")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
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
    print(json.dumps(res, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    bad = res["errors"] + res["missing"] + res["duplicated"] + res["foreign"] + res["misplaced"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
