"""A warm episode cache (``recall.warm_cache``): hits from memory, the same hits, never stale."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from episeg.config import EpisegConfig, RecallConfig
from episeg.errors import ConfigError, StoreError
from episeg.memory import Memory
from episeg.recall.episode_cache import EpisodeCache
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.index import EpisodeCard, IndexedStore, TenantIndex
from episeg.recall.persistent_store import PersistentIndexedStore
from episeg.recall.resident import fill_cache
from episeg.store import ChromaBackend
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Episode, Turn
from tests.recall.test_episode_cache import Counting, ep
from tests.recall.test_hierarchical import DAY, EMB, fill

NOW = 1.7e9 + 30 * DAY
QUERIES = ["canary pods crashed", "tomato sauce", "zebra foal", "south wall sun", "release"]


class TestUnit:
    def test_put_fills_only_the_free_room_and_needs_a_card(self) -> None:
        episodes = [ep(str(i)) for i in range(4)]
        cards = {e.id: EpisodeCard.of(e) for e in episodes[:3]}
        cache = EpisodeCache(capacity=2)
        assert cache.put(episodes[3:], cards) == 0  # no card: not kept
        assert cache.put(episodes, cards) == 2 and len(cache) == 2
        assert cache.put([ep("0")], cards) == 1  # already held: replaced, nothing evicted
        read_ids: list[list[str]] = []

        def read(ids: Sequence[str]) -> list[Episode]:
            read_ids.append(list(ids))
            return []

        served = cache.get(["0", "1"], cards, read)
        assert [e.id for e in served] == ["0", "1"] and read_ids == []
        assert EpisodeCache(capacity=0).put(episodes, cards) == 0

    def test_refresh_moves_a_current_entry_to_the_new_card_with_the_written_state(self) -> None:
        a, b = ep("a"), ep("b")
        cards: dict[str, EpisodeCard] = {"a": EpisodeCard.of(a), "b": EpisodeCard.of(b)}
        cache = EpisodeCache()
        cache.put([a, b], cards)
        stale_b = dataclasses.replace(cards["b"], strength=9.0)  # b's entry is under another card
        cache._entries["b"] = (stale_b, b)
        before = dict(cards)
        written = [
            dataclasses.replace(a, recall_count=3, last_accessed=5.0, strength=2.5),
            dataclasses.replace(b, recall_count=1),
        ]
        for w in written:
            cards[w.id] = dataclasses.replace(
                cards[w.id], recall_count=w.recall_count, last_accessed=w.last_accessed
            )
        cache.refresh(written, before, cards)

        def fail(ids: object) -> list[Episode]:
            raise AssertionError(f"read {ids}")

        (served,) = cache.get(["a"], cards, fail)
        assert (served.recall_count, served.last_accessed, served.strength) == (3, 5.0, 2.5)
        assert cache._entries["b"] == (stale_b, b)  # untouched, and never served
        assert cache.get(["b"], cards, lambda ids: [b]) == [b]


def _backend(tmp_path: Path) -> ChromaBackend:
    backend = ChromaBackend.persistent(tmp_path / "chroma")
    fill(backend, "alice")
    fill(backend, "bob")
    return backend


class TestThroughChroma:
    """Real Chroma: the warm cache is filled on build and on load, and recall reads nothing."""

    def test_built_index_fills_the_cache_and_recall_reads_nothing(self, tmp_path: Path) -> None:
        backend = _backend(tmp_path)
        counting = Counting(backend.store_for("alice"))
        warm = IndexedStore(counting, warm_cache=True)  # type: ignore[arg-type]
        cold = IndexedStore(backend.store_for("alice"), cache_episodes=0)
        warm_recaller = HierarchicalRecaller(warm, EMB, clock=lambda: NOW)
        cold_recaller = HierarchicalRecaller(cold, EMB, clock=lambda: NOW)
        assert len(warm.index) == len(warm.recent) == 4
        assert {e.user for _, e in warm.recent._entries.values()} == {"alice"}  # tenant-bound
        for query in QUERIES:
            assert warm_recaller.recall(query, k=3) == cold_recaller.recall(query, k=3)
        assert counting.gets == 0

    def test_loaded_snapshot_fills_from_the_store(self, tmp_path: Path) -> None:
        backend = _backend(tmp_path)
        folder = tmp_path / "index"
        first = PersistentIndexedStore(backend.store_for("alice"), folder)
        assert len(first.index) == 4  # built and saved
        assert len(first.recent) == 0  # not warm: filled only by recall
        counting = Counting(backend.store_for("alice"))
        warm = PersistentIndexedStore(counting, folder, warm_cache=True)  # type: ignore[arg-type]
        assert len(warm.index) == len(warm.recent) == 4
        stored = {e.id: e for e in backend.store_for("alice").get(list(warm.index.cards))}
        assert {i: e for i, (_, e) in warm.recent._entries.items()} == stored
        recaller = HierarchicalRecaller(warm, EMB, clock=lambda: NOW)
        assert recaller.recall("canary pods crashed", k=2)
        assert counting.gets == 0

    def test_write_back_keeps_the_entry_and_matches_the_store(self, tmp_path: Path) -> None:
        backend = _backend(tmp_path)
        counting = Counting(backend.store_for("alice"))
        store = IndexedStore(counting, warm_cache=True, check_interval=0.0)  # type: ignore[arg-type]
        recaller = HierarchicalRecaller(store, EMB, clock=lambda: NOW)
        recaller.confirm_used(["alice-deploy"])  # the reinforcement write-back: update()
        gets = counting.gets
        (hit,) = recaller.recall("canary pods crashed", k=1)
        assert counting.gets == gets  # still served from memory
        (stored,) = backend.store_for("alice").get(["alice-deploy"])
        assert hit.episode == stored and hit.episode.recall_count == 1
        (edited,) = store.get(["alice-deploy"])
        store.revise([dataclasses.replace(edited, summary="the 2.4 rollout")])
        assert "alice-deploy" not in store.recent._entries  # edited: read again, not served
        assert recaller.recall("canary pods crashed", k=1)[0].summary == "the 2.4 rollout"

    def test_stale_cards_are_skipped_and_a_small_cache_stops_reading(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        backend = _backend(tmp_path)
        store = backend.store_for("alice")
        index = TenantIndex.build(store)
        (deploy,) = store.get(["alice-deploy"])
        index.update_state([dataclasses.replace(deploy, recall_count=7)])  # not in the store
        cache = EpisodeCache(capacity=10)
        with caplog.at_level(logging.WARNING):
            assert fill_cache(store, index, cache) == 3
        assert "alice-deploy" not in cache._entries and "differ" in caplog.text
        small = EpisodeCache(capacity=2)
        assert fill_cache(store, TenantIndex.build(store), small) == 2 and len(small) == 2


class _FailingReads(Counting):
    def get(self, ids: Sequence[str]) -> list[Episode]:
        raise StoreError("store unreachable")


def test_a_failed_read_back_after_add_keeps_the_write_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    backend = _backend(tmp_path)
    (deploy,) = backend.store_for("alice").get(["alice-deploy"])
    inner = backend.store_for("alice")
    store = IndexedStore(_FailingReads(inner), warm_cache=True)  # type: ignore[arg-type]
    assert len(store.index) == len(store.recent) == 4  # the build's pages, no get
    new = dataclasses.replace(deploy, id="alice-new", summary="a new one")
    with caplog.at_level(logging.WARNING):
        store.add([new])  # no exception: the write stands
    assert "not cached" in caplog.text and "alice-new" not in store.recent._entries
    assert [e.summary for e in inner.get(["alice-new"])] == ["a new one"]


class TestMemory:
    def test_config_reaches_every_tenant_store_and_is_checked(self, tmp_path: Path) -> None:
        config = dataclasses.replace(
            EpisegConfig(), recall=RecallConfig(cache_episodes=10_000, warm_cache=True)
        )
        memory = Memory(
            path=tmp_path, config=config, embedder=HashingEmbedder(dim=64), judge=None, scorer=None
        )
        for i, text in enumerate(["deploy v2 to prod", "the canary pods crashed"]):
            memory.observe(
                Turn(actor=Actor.USER, text=text, ts=1.7e9 + i, user="alice", session="s")
            )
        memory.flush()
        store = memory.store("alice")
        assert (store.recent.capacity, store.warm_cache) == (10_000, True)
        assert len(store.recent) == len(store.index) >= 1
        assert memory.recall("alice", "canary pods", k=1)
        memory.close()
        with pytest.raises(ConfigError, match=r"recall\.cache_episodes"):
            RecallConfig(cache_episodes=-1)
        with pytest.raises(ConfigError, match=r"recall\.warm_cache"):
            RecallConfig(warm_cache="yes")  # type: ignore[arg-type]
