"""EpisodeCache: recall's decoded episodes, served only while their index card is current."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pytest

from episeg.recall.episode_cache import EpisodeCache
from episeg.recall.hierarchical import HierarchicalRecaller, RecallHit
from episeg.recall.index import EpisodeCard, IndexedStore
from episeg.store import ChromaBackend
from episeg.types import Episode
from episeg.typing import EpisodeStore
from tests.recall.test_hierarchical import CONVERSATION, DAY, EMB, episode, fill


def ep(i: str) -> Episode:
    return Episode(id=i, user="u", session="s", turns=(), summary=i, opened_at=0.0, closed_at=0.0)


class Reads:
    """A store ``get`` that records what it was asked."""

    def __init__(self, episodes: Sequence[Episode]) -> None:
        self.episodes = {e.id: e for e in episodes}
        self.asked: list[list[str]] = []

    def __call__(self, ids: Sequence[str]) -> list[Episode]:
        self.asked.append(list(ids))
        return [self.episodes[i] for i in ids if i in self.episodes]


class TestUnit:
    def test_order_unknown_ids_and_served_while_the_card_is_the_same(self) -> None:
        read = Reads([ep("a"), ep("b")])
        cards = {i: EpisodeCard.of(e) for i, e in read.episodes.items()}
        cache = EpisodeCache()
        assert [e.id for e in cache.get(["b", "x", "a", "b"], cards, read)] == ["b", "a"]
        assert read.asked == [["b", "x", "a"]]
        assert [e.id for e in cache.get(["a", "b"], cards, read)] == ["a", "b"]
        assert len(read.asked) == 1  # both served
        cards["a"] = dataclasses.replace(cards["a"], recall_count=1)  # a write replaced it
        cache.get(["a", "b"], cards, read)
        assert read.asked[-1] == ["a"]
        del cards["b"]  # deleted from the index: never served again
        assert [e.id for e in cache.get(["b"], cards, read)] == ["b"]
        assert read.asked[-1] == ["b"]

    def test_a_write_during_the_read_leaves_no_servable_entry(self) -> None:
        cards = {"a": EpisodeCard.of(ep("a"))}
        read = Reads([ep("a")])

        def racing(ids: Sequence[str]) -> list[Episode]:
            found = read(ids)  # the store answered, then a write replaced the card
            cards["a"] = dataclasses.replace(cards["a"], strength=2.0)
            return found

        cache = EpisodeCache()
        cache.get(["a"], cards, racing)
        cache.get(["a"], cards, read)
        assert len(read.asked) == 2

    def test_least_recently_used_out_drop_clear_and_capacity_zero(self) -> None:
        read = Reads([ep(str(i)) for i in range(5)])
        cards = {i: EpisodeCard.of(e) for i, e in read.episodes.items()}
        cache = EpisodeCache(capacity=3)
        cache.get(["0", "1", "2"], cards, read)
        cache.get(["0"], cards, read)  # 0 is now the most recent
        cache.get(["3"], cards, read)  # 1 goes out
        assert len(cache) == 3
        cache.get(["0", "2", "3"], cards, read)
        assert read.asked[-1] == ["3"]
        cache.get(["1"], cards, read)
        assert read.asked[-1] == ["1"]
        cache.drop(["1", "unknown"])
        assert len(cache) == 2
        cache.clear()
        assert len(cache) == 0
        none = EpisodeCache(capacity=0)
        none.get(["0"], cards, read)
        assert len(none) == 0
        with pytest.raises(ValueError):
            EpisodeCache(capacity=-1)


class Counting:
    """Wraps a tenant store and counts its ``get`` calls."""

    def __init__(self, inner: EpisodeStore) -> None:
        self.inner = inner
        self.gets = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def get(self, ids: Sequence[str]) -> list[Episode]:
        self.gets += 1
        return self.inner.get(ids)


Setup = tuple[HierarchicalRecaller, IndexedStore, Counting]


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    backend = ChromaBackend.persistent(tmp_path / "chroma")
    filled = fill(backend, "alice")
    counting = Counting(filled.inner)
    store = IndexedStore(counting, check_interval=0.0)  # type: ignore[arg-type]
    recaller = HierarchicalRecaller(store, EMB, clock=lambda: 1.7e9 + 30 * DAY)
    return recaller, store, counting


def summary(hits: list[RecallHit]) -> list[tuple[str, str, int]]:
    return [(h.episode_id, h.summary, h.episode.recall_count) for h in hits]


class TestThroughRecall:
    """Real Chroma: a repeated recall skips the read, and every write shows at once."""

    def test_repeated_recall_is_served_and_equal(self, setup: Setup) -> None:
        recaller, store, counting = setup
        first = recaller.recall("canary pods crashed", k=2)
        gets = counting.gets
        again = recaller.recall("canary pods crashed", k=2)
        assert counting.gets == gets and len(store.recent) >= 1
        assert again == first

    def test_update_revise_delete_and_another_writer_are_seen(self, setup: Setup) -> None:
        recaller, store, counting = setup
        query = "canary pods crashed"
        assert summary(recaller.recall(query, k=1)) == [
            ("alice-deploy", "roll out release 2.4 to production", 0)
        ]
        recaller.confirm_used(["alice-deploy"])  # update(): recall state
        assert summary(recaller.recall(query, k=1))[0][2] == 1
        (stored,) = store.get(["alice-deploy"])
        store.revise([dataclasses.replace(stored, summary="the 2.4 rollout")])
        assert summary(recaller.recall(query, k=1))[0][1] == "the 2.4 rollout"
        store.delete(["alice-deploy"])
        assert "alice-deploy" not in {h.episode_id for h in recaller.recall(query, k=5)}
        assert all(i != "alice-deploy" for i in store.recent._entries)  # text not kept
        # another writer (not through this wrapper): seen with the index, via the count
        other = IndexedStore(counting.inner)
        session, day, texts = CONVERSATION["deploy"]
        other.add([episode("alice", "deploy", session, day, texts)])
        assert summary(recaller.recall(query, k=1))[0][1] == "roll out release 2.4 to production"
