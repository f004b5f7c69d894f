"""The Chroma server dies mid-ingest: observe keeps accepting turns, closed episodes wait
in the journal's outbox (warning logged, ``pending_writes`` shows it), and after the
server is back every episode arrives exactly once."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from episeg.memory import Memory
from episeg.store import ChromaBackend
from episeg.testing import ChromaServer, HashingEmbedder

from .helpers import assert_same_store, make_transcript, snapshot

FIGURES: dict[str, float] = {}


@pytest.mark.slow
def test_chroma_server_killed_mid_ingest(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    turns = make_transcript(240, seed=3, users=2, sessions=2)
    users = sorted({t.user for t in turns})
    reference = Memory(
        path=tmp_path / "ref", embedder=HashingEmbedder(), judge=None, scorer=None, journal=False
    )
    reference.ingest(turns)
    reference.flush()
    want = snapshot(reference.backend, users)

    server = ChromaServer(tmp_path / "srv", start=False)
    server.start()
    try:
        mem = Memory(
            path=tmp_path / "mem",
            embedder=HashingEmbedder(),
            judge=None,
            scorer=None,
            backend=ChromaBackend.http("127.0.0.1", server.port),
            retry_interval=0.2,
        )
        mem.ingest(turns[:80])
        assert mem.pending_writes() == []
        server.kill()
        caplog.set_level(logging.WARNING, logger="episeg.memory")
        t0 = time.perf_counter()
        mem.ingest(turns[80:160])  # must not raise
        FIGURES["outage_observe_ms_per_turn"] = (time.perf_counter() - t0) / 80 * 1000
        pending = mem.pending_writes()
        assert pending, "episodes closed during the outage should be pending"
        assert any("kept in the outbox" in r.message for r in caplog.records)
        FIGURES["pending_during_outage"] = len(pending)

        FIGURES["server_restart_s"] = server.start()
        time.sleep(0.25)  # past retry_interval: the next observe retries by itself
        mem.ingest(turns[160:])
        assert mem.pending_writes() == [], "the next observe should have drained the outbox"
        mem.flush()
        mem.retry_pending()
        assert mem.pending_writes() == []
        got = snapshot(ChromaBackend.http("127.0.0.1", server.port), users)
    finally:
        server.kill()
    assert_same_store(got, want)
    ids = sorted(tid for e in got.values() for tid in e.turn_ids)
    assert ids == sorted(t.id or "" for t in turns)
    print("outage figures:", FIGURES)


def test_retry_pending_after_outage_in_process(tmp_path: Path) -> None:
    """Same property against the in-memory backend, with an explicit retry_pending."""
    from .memstore import MemBackend

    turns = make_transcript(120, seed=5, users=1, sessions=2)
    backend = MemBackend()
    mem = Memory(
        path=tmp_path,
        embedder=HashingEmbedder(),
        judge=None,
        scorer=None,
        backend=backend,
        retry_interval=3600,
    )
    mem.ingest(turns[:40])
    backend.down = True
    mem.ingest(turns[40:100])
    mem.flush()
    pending = mem.pending_writes()
    assert pending
    backend.down = False
    mem.ingest(turns[100:])  # retry_interval not elapsed: stays pending, no error
    assert len(mem.retry_pending()) >= len(pending)
    mem.flush()
    assert mem.pending_writes() == []
    ids = sorted(tid for e in backend.rows.values() for tid in e.turn_ids)
    assert ids == sorted(t.id or "" for t in turns)
    assert len(backend.writes) == len(set(backend.writes)), "an episode was written twice"


def test_flush_retries_the_outbox_at_once(tmp_path: Path) -> None:
    """F15: after an outage, a flush stores the waiting episodes (no later observe needed)."""
    from .memstore import MemBackend

    turns = make_transcript(60, seed=6, users=1, sessions=1)
    backend = MemBackend()
    mem = Memory(
        path=tmp_path,
        embedder=HashingEmbedder(),
        judge=None,
        scorer=None,
        backend=backend,
        retry_interval=3600,  # an automatic retry would not come for an hour
    )
    backend.down = True
    mem.ingest(turns)
    mem.flush()
    waiting = mem.pending_writes()
    assert waiting
    backend.down = False
    stored = mem.flush()
    assert mem.pending_writes() == []
    assert {e.id for e in waiting} <= {e.id for e in stored}
    ids = sorted(tid for e in backend.rows.values() for tid in e.turn_ids)
    assert ids == sorted(t.id or "" for t in turns)
