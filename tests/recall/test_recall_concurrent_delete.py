"""Recall beside a concurrent delete / forget: a vanished episode is skipped, never an error.

Recall reads the tenant's live catalogue (``TenantIndex.cards``) without the
store's lock, so a delete can remove a card between any two steps. Each test
removes it at one such point, deterministically (the clock recall reads between
fusing the lists and ranking them is one); real embedded Chroma, hashing embedder.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import episeg.recall.lexical as lexical_module
from episeg.config import RecallConfig
from episeg.recall.candidates import fuse
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.hits import Expand
from episeg.recall.index import IndexedStore, TenantIndex
from episeg.recall.lexical import LexicalIndex
from episeg.recall.ranking import select
from episeg.store import ChromaBackend
from episeg.testing import HashingEmbedder
from episeg.types import Episode
from tests.recall.helpers import embedded_episode

EMB = HashingEmbedder(dim=256)
T0 = 1.7e9


def episode(eid: str, texts: list[str], t0: float) -> Episode:
    return embedded_episode(eid, texts, t0, EMB)


EPISODES = [
    episode(f"e{i}", [f"deploy the billing service step {i}", "ok done"], T0 + 100 * i)
    for i in range(4)
]


@pytest.fixture
def store(tmp_path: Path) -> IndexedStore:
    indexed = IndexedStore(
        ChromaBackend.persistent(tmp_path / "chroma").store_for("alice"), check_interval=60.0
    )
    indexed.add(EPISODES)
    return indexed


def deleting_clock(store: IndexedStore, ids: list[str]) -> Any:
    """A clock deleting ``ids`` when recall first reads it (after fusing, before ranking)."""
    done: list[bool] = []

    def clock() -> float:
        if not done:
            done.append(True)
            store.delete(ids)
        return T0 + 1e6

    return clock


class TestDeletedDuringRecall:
    @pytest.mark.parametrize("neighbours", [0, 1])
    def test_episode_deleted_after_the_lists_is_not_returned(
        self, store: IndexedStore, neighbours: int
    ) -> None:
        r = HierarchicalRecaller(store, EMB, clock=deleting_clock(store, ["e1", "e2"]))
        hits = r.recall("deploy billing service", k=4, neighbours=neighbours)
        assert {h.episode_id for h in hits} == {"e0", "e3"}

    def test_episode_list_entry_without_a_card_is_skipped(self) -> None:
        index = TenantIndex()
        index.add(EPISODES[:1])
        cands, found = fuse(RecallConfig(), [], ([], ["gone", "e0"]), index)
        assert set(cands) == {("e0", 0), ("e0", 1)}
        assert found == {"gone", "e0"}  # as listed; the hit itself is never built for "gone"

    def test_select_skips_a_candidate_whose_card_vanished(self) -> None:
        index = TenantIndex()
        index.add(EPISODES[:2])
        ranked = [(2.0, 2.0, ("e1", 0)), (1.0, 1.0, ("e0", 0))]
        del index.cards["e1"]
        for expand in Expand:
            chosen = select(ranked, index.cards, 5, None, expand, 0)
            assert list(chosen) == ["e0"]

    def test_stale_session_order_leaves_neighbours_out_not_the_hit(
        self, store: IndexedStore
    ) -> None:
        r = HierarchicalRecaller(store, EMB, clock=lambda: T0 + 1e6)
        assert r.recall("deploy billing service step 2", k=1, neighbours=1)
        # a session order older than this add (the add's "dirty" mark seen before it landed)
        store.add([episode("e9", ["deploy the billing service to zanzibar"], T0 + 900)])
        store.index._sessions_dirty = False
        hits = r.recall("billing service zanzibar", k=1, neighbours=1)
        assert [h.episode_id for h in hits] == ["e9"]
        assert hits[0].neighbours_before == () and hits[0].neighbours_after == ()


class TestLexicalIndexBesideWrites:
    def test_add_during_a_rebuild_is_not_lost(self, monkeypatch: pytest.MonkeyPatch) -> None:
        idx: LexicalIndex[str] = LexicalIndex()
        idx.add(["a"], ["pasta recipe"])
        real_part = lexical_module._Part
        writer: list[threading.Thread] = []

        def part_with_a_write_beside(keys: list[str], tokens: list[list[str]]) -> Any:
            if not writer:  # the first rebuild: another thread adds a document meanwhile
                writer.append(threading.Thread(target=idx.add, args=(["b"], ["deploy prod"])))
                writer[0].start()
                writer[0].join(timeout=0.3)  # without the lock the add completes here
            return real_part(keys, tokens)

        monkeypatch.setattr(lexical_module, "_Part", part_with_a_write_beside)
        assert [key for key, _ in idx.top("pasta", k=3)] == ["a"]
        writer[0].join()
        assert [key for key, _ in idx.top("deploy", k=3)] == ["b"]
