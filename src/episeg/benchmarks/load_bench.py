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

Run ``python -m episeg.benchmarks.load_bench --tenants 8 --sessions 4 --turns 50``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from episeg.benchmarks import percentiles_ms
from episeg.errors import EpisegError
from episeg.testing import free_port, stop_process
from episeg.types import Actor, Turn

__all__ = ["main", "make_session", "run_load_bench"]

_TOPICS = [
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
    topic = rng.randrange(len(_TOPICS))
    turns = []
    for i in range(n):
        if i and i % 12 == 0:
            topic = (topic + 1 + rng.randrange(len(_TOPICS) - 1)) % len(_TOPICS)
        actor = Actor.USER if i % 2 == 0 else Actor.ASSISTANT
        text = f"{rng.choice(_OPENERS)} {_TOPICS[topic]} (step {rng.randrange(100)})"
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


class _Server:
    """``episeg serve`` in a subprocess, waited for on ``/v1/healthz``."""

    def __init__(self, path: Path, keys: dict[str, str], timeout: float = 180.0) -> None:
        keys_file = path / "keys.json"
        keys_file.write_text(json.dumps(keys), encoding="utf-8")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        src = str(Path(__file__).resolve().parents[2])
        paths = [src, *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        self._log = (path / "server.log").open("wb")
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "episeg.interfaces.cli",
                "serve",
                "--path",
                str(path / "store"),
                "--keys-file",
                str(keys_file),
                "--port",
                str(self.port),
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(f"{self.url}/v1/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise EpisegError(f"episeg serve did not come up; see {path / 'server.log'}")
            time.sleep(0.25)

    def stop(self) -> None:
        stop_process(self._proc, timeout=20)
        self._log.close()


def _send_session(
    url: str, key: str, turns: list[Turn], latencies: list[float], errors: list[str]
) -> None:
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
            latencies.append(time.perf_counter() - t0)
            if reply.status_code != 200:
                errors.append(f"{turn.id}: HTTP {reply.status_code} {reply.text[:200]}")


def _stored_turns(url: str, key: str) -> list[tuple[str, str, str]]:
    """(turn id, episode's user, episode's session) for every stored turn of the key's tenant."""
    out: list[tuple[str, str, str]] = []
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120
    ) as client:
        client.post("/v1/flush").raise_for_status()
        offset = 0
        while True:
            page = client.get("/v1/episodes", params={"limit": 1000, "offset": offset})
            page.raise_for_status()
            episodes = page.json()["episodes"]
            out.extend((t["id"], e["user"], e["session"]) for e in episodes for t in e["turns"])
            if len(episodes) < 1000:
                return out
            offset += len(episodes)


def _check_exactly_once(sent: list[Turn], stored: list[tuple[str, str, str]]) -> dict[str, int]:
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


def _baseline(workdir: Path, sessions: list[list[Turn]]) -> float:
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


def run_load_bench(
    tenants: int = 8,
    sessions_per_tenant: int = 4,
    turns_per_session: int = 50,
    *,
    seed: int = 0,
    path: str | Path | None = None,
    baseline: bool = True,
) -> dict[str, Any]:
    """Run the load and the exactly-once check; returns a JSON-ready dict of figures."""
    if min(tenants, sessions_per_tenant, turns_per_session) < 1:
        raise ValueError("tenants, sessions_per_tenant and turns_per_session must be >= 1")
    workdir = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="episeg-load-"))
    workdir.mkdir(parents=True, exist_ok=True)
    keys = {f"tenant{t}": secrets.token_hex(16) for t in range(tenants)}
    sessions = {
        (tenant, f"s{s}"): make_session(tenant, f"s{s}", turns_per_session, seed=seed)
        for tenant in keys
        for s in range(sessions_per_tenant)
    }
    latencies: list[float] = []
    errors: list[str] = []
    server = _Server(workdir, {key: tenant for tenant, key in keys.items()})
    try:
        threads = [
            threading.Thread(
                target=_send_session, args=(server.url, keys[tenant], turns, latencies, errors)
            )
            for (tenant, _), turns in sessions.items()
        ]
        t0 = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - t0
        sent = [t for turns in sessions.values() for t in turns]
        stored = [row for key in keys.values() for row in _stored_turns(server.url, key)]
    finally:
        server.stop()
    p50, p99 = percentiles_ms(latencies or [0.0])
    figures: dict[str, Any] = {
        "tenants": tenants,
        "sessions": len(sessions),
        "turns": len(sent),
        "seed": seed,
        "wall_s": wall,
        "turns_per_s": len(sent) / wall,
        "latency_p50_ms": p50,
        "latency_p99_ms": p99,
        "errors": len(errors),
        "error_samples": errors[:5],
        **_check_exactly_once(sent, stored),
    }
    if baseline:
        figures["baseline_turns_per_s"] = _baseline(workdir, list(sessions.values()))
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
