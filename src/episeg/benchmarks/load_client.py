"""The load generator's client side: sessions, posting them, and the exactly-once check.

Shared by :mod:`episeg.benchmarks.load_bench` (one service) and
:mod:`episeg.benchmarks.proxy_bench` (replicas behind HAProxy).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import httpx

from episeg.types import Actor, Turn

__all__ = [
    "TOPICS",
    "baseline_turns_per_s",
    "check_exactly_once",
    "make_session",
    "send_session",
    "stored_turns",
]

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
