"""F177: one tenant's requests in flight are capped, so they cannot hold every worker thread.

Through uvicorn over real HTTP: alice's lock is held (as by a slow judge call), her
requests pile up, and bob and ``/v1/healthz`` are still answered at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from episeg.errors import ConfigError
from episeg.interfaces.service_gate import TenantGate
from episeg.memory import Memory
from tests.interfaces.helpers import KEY_A, KEY_B, LiveServer, live_memory


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, Memory]]:
    with live_memory(tmp_path, max_tenant_requests=2) as pair:
        yield pair


def test_a_busy_tenant_gets_429_and_leaves_threads_to_others(
    served: tuple[LiveServer, Memory],
) -> None:
    server, memory = served
    turn = {"actor": "user", "text": "deploy prod", "session": "s"}
    lock = memory.tenant_lock("alice")
    lock.acquire()  # alice's writes wait, as behind a slow judge call
    try:
        with ThreadPoolExecutor(max_workers=60) as pool:
            alice = [
                pool.submit(
                    httpx.post,
                    f"{server.url}/v1/turns",
                    json={**turn, "id": f"t{n}"},
                    headers={"Authorization": f"Bearer {KEY_A}"},
                    timeout=60,
                )
                for n in range(50)
            ]
            time.sleep(1.0)  # every request of alice's has reached the server
            started = time.monotonic()
            with server.client(KEY_B) as bob:
                answer = bob.post("/v1/turns", json={**turn, "id": "b1"})
                health = bob.get("/v1/healthz")
            waited = time.monotonic() - started
            assert answer.status_code == 200 and health.status_code == 200
            assert waited < 5.0, waited
            lock.release()
            answers = [f.result() for f in alice]
    finally:
        if lock._is_owned():  # type: ignore[attr-defined]
            lock.release()
    codes = sorted(a.status_code for a in answers)
    assert set(codes) == {200, 429} and codes.count(429) >= 40, codes
    assert all(a.headers.get("Retry-After") == "1" for a in answers if a.status_code == 429)
    accepted = sum(len(e.turns) for e in memory.flush("alice"))
    assert accepted == codes.count(200)  # every 200 was taken, no 429 was


def test_the_gate_frees_a_slot_when_a_request_ends() -> None:
    gate = TenantGate(limit=1)
    for _ in range(3):
        with gate.slot("alice"):
            pass
    assert gate._in_flight == {}
    with pytest.raises(ConfigError):
        TenantGate(limit=0)


def test_concurrent_slots_never_exceed_the_limit() -> None:
    gate, peak, now = TenantGate(limit=3), [0], [0]
    guard = threading.Lock()

    def work() -> None:
        try:
            with gate.slot("alice"):
                with guard:
                    now[0] += 1
                    peak[0] = max(peak[0], now[0])
                time.sleep(0.01)
                with guard:
                    now[0] -= 1
        except Exception:
            pass

    threads = [threading.Thread(target=work) for _ in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 1 <= peak[0] <= 3
