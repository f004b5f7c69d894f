"""The load generator shared by :mod:`episeg.benchmarks.load_bench` (one service) and
:mod:`episeg.benchmarks.proxy_bench` (replicas behind HAProxy).

Sessions and posting them (one client thread per session), the latency
summary, the exactly-once check, the in-process baseline, and the command
line both benches share.

>>> sessions = make_sessions(["a", "b"], 2, 3, seed=0)
>>> sorted(sessions), len(sessions["a", "s1"])
([('a', 's0'), ('a', 's1'), ('b', 's0'), ('b', 's1')], 3)
>>> latency_summary({"a": [(0.0, 0.010), (1.0, 0.030)], "b": []})[2]["b"]
0.0
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import httpx

from episeg.benchmarks import percentiles_ms
from episeg.types import Actor, Turn

__all__ = [
    "TOPICS",
    "Latencies",
    "Sessions",
    "baseline_turns_per_s",
    "bench_parser",
    "check_exactly_once",
    "client_threads",
    "latency_summary",
    "make_session",
    "make_sessions",
    "print_result",
    "run_clients",
    "send_session",
    "stored_turns",
    "with_baseline",
    "workdir_for",
]

#: (tenant, session) -> its turns, in order
Sessions = dict[tuple[str, str], list[Turn]]
#: tenant -> (start time, seconds) of each of its posts
Latencies = dict[str, list[tuple[float, float]]]

TOPICS = [
    "oauth login returns 401 after the jwt signing key rotation",
    "deploy the prod release with terraform apply and watch the rollout",
    "postgres replication lag on the read replica during the nightly batch",
    "flaky pytest fixture leaks a temp directory between test modules",
    "kubernetes pod stuck in crashloopbackoff right after start",
    "retry logging for the payment webhook with exponential backoff",
]
_OPENERS = ["can you check", "the log says", "next step for", "what about", "done with"]


def make_session(tenant: str, session: str, n: int, *, seed: int) -> list[Turn]:
    """``n`` user/assistant turns moving through a few topics, with unique ids.

    >>> turns = make_session("alice", "s0", 4, seed=1)
    >>> [t.id for t in turns], turns[1].actor.value
    (['alice-s0-0', 'alice-s0-1', 'alice-s0-2', 'alice-s0-3'], 'assistant')
    """
    rng = random.Random(f"{seed}-{tenant}-{session}")
    topic = rng.randrange(len(TOPICS))
    turns = []
    for i in range(n):
        if i and i % 12 == 0:
            topic = (topic + 1 + rng.randrange(len(TOPICS) - 1)) % len(TOPICS)
        actor = Actor.USER if i % 2 == 0 else Actor.ASSISTANT
        text = f"{rng.choice(_OPENERS)} {TOPICS[topic]} (step {rng.randrange(100)})"
        turns.append(
            Turn(
                actor=actor,
                text=text,
                ts=1.7e9 + i,
                user=tenant,
                session=session,
                id=f"{tenant}-{session}-{i}",
            )
        )
    return turns


def send_session(
    url: str,
    key: str,
    turns: list[Turn],
    latencies: list[tuple[float, float]],
    errors: list[str],
    replicas: set[str] | None = None,
) -> None:
    """Post ``turns`` in order; (start time, seconds) per post, and the replica header seen."""
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120
    ) as client:
        for turn in turns:
            body = {
                "actor": turn.actor.value,
                "text": turn.text,
                "ts": turn.ts,
                "id": turn.id,
                "session": turn.session,
            }
            t0 = time.perf_counter()
            try:
                reply = client.post("/v1/turns", json=body)
            except httpx.HTTPError as exc:
                errors.append(f"{turn.id}: {exc!r}")
                continue
            latencies.append((t0, time.perf_counter() - t0))
            if replicas is not None:
                replicas.add(reply.headers.get("x-episeg-replica", "?"))
            if reply.status_code != 200:
                errors.append(f"{turn.id}: HTTP {reply.status_code} {reply.text[:200]}")


def stored_turns(
    url: str, key: str, replicas: set[str] | None = None
) -> list[tuple[str, str, str]]:
    """(turn id, episode's user, episode's session) for every stored turn of the key's tenant.

    Flushes the tenant first; ``replicas`` collects the replica header of each answer.
    """
    out: list[tuple[str, str, str]] = []
    seen = replicas if replicas is not None else set()
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=600
    ) as client:
        flushed = client.post("/v1/flush")
        flushed.raise_for_status()
        seen.add(flushed.headers.get("x-episeg-replica", "?"))
        offset = 0
        while True:
            page = client.get("/v1/episodes", params={"limit": 1000, "offset": offset})
            page.raise_for_status()
            seen.add(page.headers.get("x-episeg-replica", "?"))
            episodes = page.json()["episodes"]
            out.extend((t["id"], e["user"], e["session"]) for e in episodes for t in e["turns"])
            if len(episodes) < 1000:
                return out
            offset += len(episodes)


def check_exactly_once(sent: list[Turn], stored: list[tuple[str, str, str]]) -> dict[str, int]:
    """Counts of sent turns missing or stored twice, and of stored turns foreign or misplaced."""
    where = {t.id or "": (t.user, t.session) for t in sent}
    seen = Counter(tid for tid, _, _ in stored)
    return {
        "missing": sum(seen[tid] == 0 for tid in where),
        "duplicated": sum(seen[tid] > 1 for tid in where),
        "foreign": sum(1 for tid, _, _ in stored if tid not in where),
        "misplaced": sum(
            1 for tid, user, sess in stored if tid in where and where[tid] != (user, sess)
        ),
    }


def with_baseline(figures: dict[str, Any], workdir: Path, sessions: Sessions, ratio: str) -> None:
    """Add ``baseline_turns_per_s`` (in-process) and ``ratio`` (the bench's turns/s over it)."""
    figures["baseline_turns_per_s"] = baseline_turns_per_s(workdir, list(sessions.values()))
    figures[ratio] = figures["turns_per_s"] / figures["baseline_turns_per_s"]


def baseline_turns_per_s(workdir: Path, sessions: list[list[Turn]]) -> float:
    """Turns/s of the same turns through an in-process Memory, one at a time."""
    from episeg.interfaces.runtime import open_memory

    memory = open_memory(workdir / "baseline")
    turns = [t for session in sessions for t in session]
    memory.observe(turns[0])  # warm-up: loads the model
    t0 = time.perf_counter()
    for turn in turns[1:]:
        memory.observe(turn)
    seconds = time.perf_counter() - t0
    memory.close()
    return (len(turns) - 1) / seconds


def make_sessions(tenants: Iterable[str], per_tenant: int, turns: int, *, seed: int) -> Sessions:
    """``per_tenant`` sessions ``s0, s1, ...`` of ``turns`` turns for each tenant."""
    return {
        (tenant, f"s{s}"): make_session(tenant, f"s{s}", turns, seed=seed)
        for tenant in tenants
        for s in range(per_tenant)
    }


def client_threads(
    url: str,
    keys: dict[str, str],
    sessions: Sessions,
    latencies: Latencies,
    errors: list[str],
    served_by: dict[str, set[str]] | None = None,
) -> list[threading.Thread]:
    """One (unstarted) thread per session posting it with its tenant's key (:func:`send_session`).

    ``served_by``, if given, collects the replica header each tenant's answers carried.
    """
    return [
        threading.Thread(
            target=send_session,
            args=(
                url,
                keys[tenant],
                turns,
                latencies[tenant],
                errors,
                None if served_by is None else served_by[tenant],
            ),
        )
        for (tenant, _), turns in sessions.items()
    ]


def run_clients(threads: Sequence[threading.Thread]) -> float:
    """Start every client thread, wait for all; the wall seconds it took."""
    t0 = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - t0


def latency_summary(latencies: Latencies) -> tuple[float, float, dict[str, float]]:
    """p50 and p99 of every post (ms), and each tenant's p99 (0.0 for a tenant without posts)."""
    p50, p99 = percentiles_ms([s for samples in latencies.values() for _, s in samples] or [0.0])
    tenant_p99 = {t: percentiles_ms([s for _, s in v] or [0.0])[1] for t, v in latencies.items()}
    return p50, p99, tenant_p99


def workdir_for(path: str | Path | None, prefix: str) -> Path:
    """``path`` (created if missing), or a new temporary folder named ``prefix...``."""
    workdir = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix=prefix))
    workdir.mkdir(parents=True, exist_ok=True)
    return workdir


def bench_parser(
    prog: str, doc: str | None, *, sessions: int, turns: int
) -> argparse.ArgumentParser:
    """The options both benches take (a bench adds its own before parsing)."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0] if doc else None)
    parser.add_argument("--tenants", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=sessions, help="sessions per tenant")
    parser.add_argument("--turns", type=int, default=turns, help="turns per session")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--path", type=Path, default=None, help="work folder (default: temp)")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    return parser


def print_result(result: dict[str, Any], json_path: Path | None) -> None:
    """Print the figures as JSON, and write them to ``json_path`` if given."""
    print(json.dumps(result, indent=2))
    if json_path is not None:
        json_path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
