"""Scale-out on loopback: replicas with their own journals, one Chroma server, HAProxy in front.

Starts a ``chroma run`` server, ``replicas`` ``episeg serve`` processes (each
with its own journal under its own folder, all with ``--chroma-url`` of that
server) and HAProxy with the configuration shipped in
``episeg/interfaces/deploy/haproxy.cfg`` (consistent hashing of the
``Authorization`` header; ``docs/DEPLOYMENT.md``). Then the load generator of
:mod:`episeg.benchmarks.load_bench` runs through the proxy: one client thread
per session, one turn per request. Afterwards every tenant flushes and lists its
episodes through the proxy.

Checks (the command exits 1 if one fails): every sent turn is in exactly one
episode of its own tenant and session; every answer to one tenant came from one
replica (the ``X-Episeg-Replica`` header the proxy sets); no episode id is
shared by two tenants (tenant isolation in the shared store). The baseline is
the same turns through one in-process :class:`~episeg.memory.Memory`, timed in
the same run after the servers have stopped.

Run ``python -m episeg.benchmarks.proxy_bench --tenants 8 --sessions 2 --turns 40``.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from episeg.benchmarks.load_client import (
    Latencies,
    bench_parser,
    check_exactly_once,
    client_threads,
    latency_summary,
    make_sessions,
    print_result,
    run_clients,
    stored_turns,
    with_baseline,
    workdir_for,
)
from episeg.testing import ChromaServer
from episeg.testing.services import HAProxy, ServiceProcess

__all__ = ["main", "run_proxy_bench"]


def _store_ids(server: ChromaServer, tenants: Sequence[str]) -> dict[str, set[str]]:
    """Episode ids per tenant, read from the Chroma server directly (not through episeg)."""
    backend = server.backend()
    out = {}
    for tenant in tenants:
        store = backend.store_for(tenant)
        out[tenant] = {e.id for e in store.list_episodes(limit=max(store.count(), 1))}
    return out


def run_proxy_bench(
    tenants: int = 8,
    sessions_per_tenant: int = 2,
    turns_per_session: int = 40,
    *,
    replicas: int = 2,
    seed: int = 0,
    path: str | Path | None = None,
    baseline: bool = True,
) -> dict[str, Any]:
    """Run the replicated setup under load; returns a JSON-ready dict of figures and checks."""
    if min(tenants, sessions_per_tenant, turns_per_session) < 1 or replicas != 2:
        raise ValueError(
            "tenants, sessions and turns must be >= 1; the shipped config has 2 replicas"
        )
    workdir = workdir_for(path, "episeg-proxy-")
    # Keys follow the seed, so which replica each tenant hashes to is the same on every run.
    rng = random.Random(seed)
    keys = {f"tenant{t}": f"{rng.getrandbits(128):032x}" for t in range(tenants)}
    owners = {key: tenant for tenant, key in keys.items()}
    sessions = make_sessions(keys, sessions_per_tenant, turns_per_session, seed=seed)
    latencies: Latencies = {tenant: [] for tenant in keys}
    served_by: dict[str, set[str]] = {tenant: set() for tenant in keys}
    errors: list[str] = []
    with ChromaServer(workdir / "chroma") as chroma:
        # one request in flight per session: a tenant's sessions never meet its cap (F177)
        cap = ["--max-tenant-requests", str(max(8, sessions_per_tenant))]
        services = [
            ServiceProcess(workdir / f"replica{n}", owners, chroma_url=chroma.url, serve_args=cap)
            for n in range(1, replicas + 1)
        ]
        try:
            addresses = [s.url.removeprefix("http://") for s in services]
            with HAProxy(addresses, workdir / "haproxy.log") as proxy:
                threads = client_threads(proxy.url, keys, sessions, latencies, errors, served_by)
                wall = run_clients(threads)
                stored = [
                    row
                    for t, key in keys.items()
                    for row in stored_turns(proxy.url, key, served_by[t])
                ]
        finally:
            for service in services:
                service.stop()
        ids = _store_ids(chroma, list(keys))
    sent = [t for turns in sessions.values() for t in turns]
    p50, p99, tenant_p99 = latency_summary(latencies)
    shared = sum(len(ids[a] & ids[b]) for a in ids for b in ids if a < b)
    figures: dict[str, Any] = {
        "replicas": replicas,
        "tenants": tenants,
        "sessions": len(sessions),
        "turns": len(sent),
        "seed": seed,
        "wall_s": wall,
        "turns_per_s": len(sent) / wall,
        "latency_p50_ms": p50,
        "latency_p99_ms": p99,
        "worst_tenant_p99_ms": max(tenant_p99.values()),
        "replica_of_tenant": {t: sorted(r) for t, r in served_by.items()},
        "tenants_per_replica": {
            r: sum(1 for rs in served_by.values() if r in rs)
            for r in sorted(set().union(*served_by.values()))
        },
        "tenants_on_two_replicas": sum(len(r) != 1 for r in served_by.values()),
        "ids_shared_between_tenants": shared,
        "errors": len(errors),
        "error_samples": errors[:5],
        **check_exactly_once(sent, stored),
    }
    if baseline:
        with_baseline(figures, workdir, sessions, "ratio_to_in_process")
    return figures


def failures(res: dict[str, Any]) -> int:
    """How many checks failed (lost, duplicated, foreign, misplaced, split tenants, errors)."""
    return int(
        res["errors"]
        + res["missing"]
        + res["duplicated"]
        + res["foreign"]
        + res["misplaced"]
        + res["tenants_on_two_replicas"]
        + res["ids_shared_between_tenants"]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """CLI; exit status 1 when a check failed."""
    parser = bench_parser("python -m episeg.benchmarks.proxy_bench", __doc__, sessions=2, turns=40)
    args = parser.parse_args(argv)
    try:
        res = run_proxy_bench(
            args.tenants,
            args.sessions,
            args.turns,
            seed=args.seed,
            path=args.path,
            baseline=not args.no_baseline,
        )
    except ValueError as exc:
        parser.error(str(exc))
    print_result(res, args.json)
    return 1 if failures(res) else 0


if __name__ == "__main__":
    sys.exit(main())
