"""Review 3 of the durability layer, live paths (R3-D1..D3): each test failed before its fix.

Real embedded Chroma and the hashing embedder throughout; store outages are a
``StoreUnavailableError`` raised by the tenant's store, as in
``test_idle_timeout.py``. The clock is injected where time matters; the
ticker tests wait (polling) only until the background thread did its work.
Start-up and input findings (R3-D4..D7): ``test_review3_startup.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from episeg.durability.idle import IdleTicker
from episeg.errors import JournalError
from episeg.recall.persistent_store import PersistentIndexedStore
from episeg.types import Episode

from .helpers import one_turn_episode
from .review3_helpers import TIMEOUT, Clock, down, memory_for, stored_of, turn, wait_for


class TestR3D1IdleCloseOverTheCap:
    def test_more_idle_sessions_than_the_cap_all_close(self, tmp_path: Path) -> None:
        clock = Clock()
        memory = memory_for(tmp_path, clock=clock, max_sessions=3)
        for i in range(6):
            memory.observe(turn(f"topic {i} deploy the thing", f"s{i}", f"t{i}"))
        clock.now += TIMEOUT + 1
        closed = memory.close_idle()  # was a bare KeyError, memory and journal apart
        assert sorted(e.session for e in closed) == [f"s{i}" for i in range(6)]
        assert memory.journal.open_sessions() == [] and memory.sessions.resident <= 3
        memory.observe(turn("follow-up on the thing", "s5", "t5b", ts=2.0))
        memory.flush("alice")
        assert stored_of(memory, "alice") == [
            *[(f"s{i}", (f"t{i}",)) for i in range(6)],
            ("s5", ("t5b",)),  # a new episode: t5 closed by the timeout stays closed
        ]
        memory.close()

    def test_a_flush_failing_with_any_error_leaves_memory_as_the_journal(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        memory = memory_for(tmp_path)
        memory.observe(turn("book the flight to Oslo", "s1", "t1"))

        def broken(*_: object, **__: object) -> None:
            raise RuntimeError("not a JournalError")

        monkeypatch.setattr(memory.journal, "close_episodes", broken)
        with pytest.raises(RuntimeError):
            memory.flush("alice")
        monkeypatch.undo()
        segmenter = memory.segmenter.for_tenant("alice")
        assert [t.id for t in segmenter.open_turns("alice", "s1")] == ["t1"]  # as journaled
        memory.observe(turn("book the flight to Oslo, window seat", "s1", "t2", ts=2.0))
        memory.flush("alice")
        assert stored_of(memory, "alice") == [("s1", ("t1", "t2"))]
        memory.close()

    def test_the_ticker_survives_any_exception(self, tmp_path: Path) -> None:
        memory = memory_for(tmp_path, timeout=1.0)  # checks every 0.1 s
        calls: list[int] = []

        def failing(*_: object, **__: object) -> list[Episode]:
            calls.append(1)
            raise KeyError(("alice", "s0"))

        memory.close_idle = failing  # type: ignore[method-assign]
        ticker = IdleTicker(memory).start()
        try:
            assert wait_for(lambda: len(calls) >= 3), "the ticker thread died"
        finally:
            ticker.stop()
            memory.close()


class TestR3D2StoreEpisodesTakesTheTenantLock:
    def test_an_overlapping_forget_that_reports_the_episode_erased_wins(
        self, tmp_path: Path
    ) -> None:
        memory = memory_for(tmp_path)
        episode = one_turn_episode("alice", "secret-1", "my card number is 4111")
        writing, forgot = threading.Event(), threading.Event()
        real_write = memory._writer.write

        def slow_write(episodes: Sequence[Episode]) -> list[Episode]:
            writing.set()  # journaled, not yet written
            forgot.wait(timeout=0.5)  # under the tenant lock, the forget cannot finish
            return real_write(episodes)

        memory._writer.write = slow_write  # type: ignore[method-assign]
        out: dict[str, list[Episode]] = {}
        worker = threading.Thread(
            target=lambda: out.setdefault("s", memory.store_episodes([episode]))
        )
        worker.start()
        assert writing.wait(timeout=5)
        report = memory.forget("alice", episode="secret-1")
        forgot.set()
        worker.join(timeout=10)
        assert report.episodes == ("secret-1",)
        assert [e.id for e in memory.episodes("alice")] == []  # it was: ['secret-1']
        assert memory.pending_writes() == []
        memory.close()

    def test_a_broken_memory_refuses_it(self, tmp_path: Path) -> None:
        memory = memory_for(tmp_path)
        memory._broken = JournalError("disk gone")
        with pytest.raises(JournalError, match="lost its journal state"):
            memory.store_episodes([one_turn_episode("alice", "e1", "deploy prod")])
        assert memory.journal.pending() == [] and memory.journal.counts()["outbox"] == 0
        memory.close()

    def test_two_tenants_in_one_batch_both_stored_in_the_order_given(self, tmp_path: Path) -> None:
        memory = memory_for(tmp_path)
        batch = [
            one_turn_episode("bob", "e1", "water the ferns"),
            one_turn_episode("alice", "e2", "deploy prod"),
            one_turn_episode("bob", "e3", "renew the passport", turn_id="t1"),
        ]
        assert [(e.user, e.id) for e in memory.store_episodes(batch)] == [
            ("bob", "e1"),
            ("alice", "e2"),
            ("bob", "e3"),
        ]
        free: list[bool] = []  # asked from another thread: every tenant lock was released
        probe = threading.Thread(
            target=lambda: free.extend(
                memory.sessions.lock(u).acquire(blocking=False) for u in ("alice", "bob")
            )
        )
        probe.start()
        probe.join()
        assert free == [True, True]
        memory.close()


class TestR3D3OutboxRetriedWithoutTheTenant:
    def test_flush_of_all_tenants_retries_one_with_only_outbox_rows(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        memory = memory_for(tmp_path)
        memory.observe(turn("book the flight to Oslo", "b", "b1", user="bob"))
        monkeypatch.setattr(memory.store("bob"), "add", down)
        assert memory.flush("bob") == []  # closed; waits in the outbox
        memory.close()
        monkeypatch.undo()
        monkeypatch.setattr(PersistentIndexedStore, "add", down)
        again = memory_for(tmp_path)  # restarted while the store is down
        assert again.recovery.pending_found == 1 and again.recovery.pending_stored == 0
        monkeypatch.undo()
        assert [(e.user, e.turn_ids) for e in again.flush()] == [("bob", ("b1",))]  # it was []
        assert again.pending_writes() == [] and stored_of(again, "bob") == [("b", ("b1",))]
        again.close()

    @pytest.mark.parametrize("timeout", [0.0, 1.0])
    def test_the_ticker_writes_a_waiting_episode_once_the_store_is_back(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, timeout: float
    ) -> None:
        memory = memory_for(tmp_path, timeout=timeout, retry_interval=0.1)
        memory.observe(turn("book the flight to Oslo", "b", "b1", user="bob"))
        monkeypatch.setattr(memory.store("bob"), "add", down)
        assert memory.flush("bob") == []
        monkeypatch.undo()  # the store is back; bob sends nothing more
        ticker = IdleTicker(memory).start()
        try:
            assert wait_for(lambda: not memory.pending_writes()), "still in the outbox"
        finally:
            ticker.stop()
        assert stored_of(memory, "bob") == [("b", ("b1",))]
        memory.close()
