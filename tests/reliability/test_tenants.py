"""Tenants do not wait on each other; one session's turns keep their order; idle state is bounded.

Issue 12: F12 (a tenant's flush of many sessions held another tenant's post for minutes),
F7 (concurrent posts to one session without ``ts`` were refused: the time was stamped
before the lock), F13 (every session's state kept for the process lifetime).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from episeg.errors import TurnValidationError
from episeg.interfaces.service import create_app
from episeg.memory import Memory
from episeg.testing import HashingEmbedder, free_port
from episeg.types import Actor, Episode, Turn

from .helpers import by_turns, make_transcript
from .memstore import MemBackend, MemStore


class _SlowStore(MemStore):
    def add(self, episodes: Sequence[Episode]) -> None:
        time.sleep(0.05 * len(episodes))
        super().add(episodes)


class _SlowForOne(MemBackend):
    """Writes of tenant ``slow`` take 50 ms per episode (a heavy tenant on a busy store)."""

    def __init__(self, slow: str) -> None:
        super().__init__()
        self.slow = slow

    def store_for(self, tenant: str) -> MemStore:
        return _SlowStore(tenant, self) if tenant == self.slow else super().store_for(tenant)


def _memory(path: Path, backend: MemBackend, **kw: int) -> Memory:
    return Memory(
        path=path,
        embedder=HashingEmbedder(),
        judge=None,
        scorer=None,
        backend=backend,
        **kw,  # type: ignore[arg-type]
    )


def _turn(user: str, session: str, n: int, text: str = "deploy the prod release") -> Turn:
    return Turn(
        actor=Actor.USER, text=f"{text} {n}", ts=float(n), user=user, session=session, id=f"t{n}"
    )


@pytest.mark.slow  # slow stores sleep on purpose: 1-3 s a test
class TestTenantsDoNotWait:
    def test_a_small_tenant_is_served_while_a_heavy_tenant_flushes(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path, _SlowForOne("heavy"))
        for s in range(60):
            mem.ingest([_turn("heavy", f"s{s}", 0), _turn("heavy", f"s{s}", 1)])
        flushed: list[Episode] = []
        flusher = threading.Thread(target=lambda: flushed.extend(mem.flush("heavy")))
        t0 = time.perf_counter()
        flusher.start()
        time.sleep(0.2)  # the flush is under way (it takes >= 60 x 50 ms)
        waits = []
        for n in range(10):
            t1 = time.perf_counter()
            mem.observe(_turn("small", "s0", n, "a short question"))
            waits.append(time.perf_counter() - t1)
        still_flushing = flusher.is_alive()
        flusher.join()
        assert still_flushing and time.perf_counter() - t0 >= 3.0
        assert len(flushed) == 60
        assert max(waits) < 0.5, waits  # a global lock made each wait up to the whole flush
        mem.close()

    def test_the_heavy_tenant_waits_for_its_own_flush(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path, _SlowForOne("heavy"))
        for s in range(20):
            mem.observe(_turn("heavy", f"s{s}", 0))
        flusher = threading.Thread(target=mem.flush, args=("heavy",))
        flusher.start()
        time.sleep(0.1)
        t1 = time.perf_counter()
        mem.observe(_turn("heavy", "s0", 1))  # same tenant: serialised behind the flush
        assert time.perf_counter() - t1 > 0.3
        flusher.join()
        mem.close()

    def test_opening_one_tenants_store_does_not_hold_the_others(self, tmp_path: Path) -> None:
        class SlowToOpen(MemBackend):
            def store_for(self, tenant: str) -> MemStore:
                if tenant == "slow":
                    time.sleep(2.0)  # e.g. a collection created on a distant, busy server
                return super().store_for(tenant)

        mem = _memory(tmp_path, SlowToOpen())
        opener = threading.Thread(target=mem.episodes, args=("slow",))
        opener.start()
        time.sleep(0.2)
        t1 = time.perf_counter()
        mem.observe(_turn("small", "s0", 0))
        stored = mem.flush("small")  # writes through the small tenant's store
        waited = time.perf_counter() - t1
        opener.join()
        assert len(stored) == 1 and waited < 1.0, waited
        mem.close()


@contextlib.contextmanager
def _serving(app: FastAPI) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@pytest.mark.slow  # starts uvicorn
def test_concurrent_posts_to_one_session_without_ts_are_all_accepted(tmp_path: Path) -> None:
    """F7: 8 clients x 20 posts to one session, no ``ts``: none refused, each turn once."""
    backend = MemBackend()
    mem = _memory(tmp_path, backend)
    key = "alice-key-0123456789abcdef"
    statuses: list[int] = []

    def client(c: int, url: str) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as http:
            for n in range(20):
                body = {"actor": "user", "text": f"step {n} of {c}", "id": f"c{c}-{n}"}
                statuses.append(http.post("/v1/turns", json=body, timeout=30).status_code)

    with _serving(create_app(mem, {key: "alice"})) as url:
        threads = [threading.Thread(target=client, args=(c, url)) for c in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert statuses.count(200) == 160, sorted(set(statuses))
    mem.flush("alice")
    ids = sorted(tid for e in backend.rows.values() for tid in e.turn_ids)
    assert ids == sorted(f"c{c}-{n}" for c in range(8) for n in range(20))
    mem.close()


class TestIdleSessionsBounded:
    def test_capped_sessions_give_the_same_episodes(self, tmp_path: Path) -> None:
        turns = make_transcript(240, seed=5, users=2, sessions=4)
        want, got = MemBackend(), MemBackend()
        full = _memory(tmp_path / "full", want)
        full.ingest(turns)
        full.flush()
        capped = _memory(tmp_path / "capped", got, max_sessions=2)
        capped.ingest(turns)
        assert capped.sessions.resident <= 2
        assert capped.sessions.evicted > 50 and capped.sessions.reloaded > 50
        capped.ingest(turns[:30])  # re-sent after eviction: still refused as duplicates
        capped.flush()
        assert by_turns(got.rows) == by_turns(want.rows)
        assert capped.journal.counts()["open_turns"] == 0
        full.close()
        capped.close()

    def test_a_dropped_session_keeps_its_time_order(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path, MemBackend(), max_sessions=1)
        mem.observe(_turn("u", "a", 5))
        mem.observe(_turn("u", "b", 0))  # drops session a
        late = Turn(actor=Actor.USER, text="late", ts=1.0, user="u", session="a")
        with pytest.raises(TurnValidationError, match="earlier than the previous"):
            mem.observe(late)  # session a was reloaded with its last timestamp
        assert mem.sessions.evicted >= 1
        mem.close()
