"""The store a real SIGKILL tore, kept as found: start-up rebuilds it and loses nothing.

``data/torn_hnsw_after_sigkill.tgz`` is the ``crashy`` folder (journal + embedded
Chroma) of a run of the kill -9 loop (``test_kill9.py``, transcript
``make_transcript(700, seed=7)``) at the moment its last worker finished, on the
code before ``episeg.store.repair`` existed: a kill landed between Chroma's HNSW
index write and its ``index_metadata.pickle`` write (chroma-core/chroma#7238), so
user0's turn collection refused every write ("Failed to apply logs to the hnsw
segment writer") and 8 closed episodes waited in the journal's outbox. This is
the state stop 9's CI run failed on. Chroma 1.5's on-disk format (pinned <1.6).
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from episeg.memory import Memory
from episeg.testing import HashingEmbedder

from .helpers import assert_same_store, make_transcript, snapshot

TORN = Path(__file__).with_name("data") / "torn_hnsw_after_sigkill.tgz"


@pytest.mark.slow
def test_the_store_a_real_sigkill_tore_is_rebuilt_at_start_up(tmp_path: Path) -> None:
    with tarfile.open(TORN) as archive:
        archive.extractall(tmp_path, filter="data")
    turns = make_transcript(700, seed=7)
    users = sorted({t.user for t in turns})
    reference = Memory(
        path=tmp_path / "ref", embedder=HashingEmbedder(), judge=None, scorer=None, journal=False
    )
    reference.ingest(turns)
    reference.flush()

    memory = Memory(path=tmp_path / "crashy", embedder=HashingEmbedder(), judge=None, scorer=None)
    assert (memory.recovery.pending_found, memory.recovery.pending_stored) == (8, 8)
    assert memory.pending_writes() == []
    assert_same_store(snapshot(memory.backend, users), snapshot(reference.backend, users))
    stored = sorted(t for e in snapshot(memory.backend, users).values() for t in e.turn_ids)
    assert stored == sorted(t.id or "" for t in turns)  # each turn exactly once
    memory.close()
