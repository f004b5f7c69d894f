"""EpisegStore listing reads what the page needs, not the tenant (F145).

A search without a query, the unscored fill-up after recall, and
``list_namespaces`` used to read every stored episode of the tenant: at 10^5
items each such call read them all. They now order and place episodes by the
recall index (id, session and close time) and read only pages of the newest
episodes under the prefix (``list_namespaces``: none).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra: pip install 'episeg[langgraph]'")

from episeg.adapters.langgraph_store import EpisegStore
from episeg.memory import Memory
from episeg.recall.index import IndexedStore
from episeg.testing import HashingEmbedder

NOTES = ("alice", "notes")
N = 60


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EpisegStore]:
    path: Path = tmp_path_factory.mktemp("listing")
    memory = Memory(path=path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    ours = EpisegStore(memory)
    for n in range(N):  # one put at a time: each closes later than the one before
        ours.put(NOTES, f"k{n:03d}", {"text": f"note {n} about the deploy", "tens": n % 10 == 0})
    ours.put(("alice", "other"), "o1", {"text": "elsewhere"})
    yield ours
    memory.close()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many episodes each store read asked for (a listing counts as its limit)."""
    counts: list[int] = []
    get, listing = IndexedStore.get, IndexedStore.list_episodes

    def counted_get(self: IndexedStore, ids: Sequence[str]) -> Any:
        counts.append(len(ids))
        return get(self, ids)

    def counted_list(self: IndexedStore, **kw: Any) -> Any:
        counts.append(kw.get("limit", 100))
        return listing(self, **kw)

    monkeypatch.setattr(IndexedStore, "get", counted_get)
    monkeypatch.setattr(IndexedStore, "list_episodes", counted_list)
    return counts


def test_a_page_without_a_query_reads_one_page_newest_first(
    store: EpisegStore, reads: list[int]
) -> None:
    items = store.search(NOTES, limit=5, offset=3)
    assert [i.key for i in items] == [f"k{n:03d}" for n in (56, 55, 54, 53, 52)]
    assert all(i.score is None and i.namespace == NOTES for i in items)
    assert sum(reads) <= 16


def test_a_filter_reads_pages_until_enough_pass(store: EpisegStore, reads: list[int]) -> None:
    items = store.search(NOTES, limit=3, filter={"tens": True})
    assert [i.key for i in items] == ["k050", "k040", "k030"]
    assert sum(reads) < N  # 16, then 32 ids: not the whole tenant
    assert [i.key for i in store.search(("alice",), limit=2)] == ["o1", "k059"]


def test_list_namespaces_reads_no_episode(store: EpisegStore, reads: list[int]) -> None:
    assert store.list_namespaces(prefix=("alice",)) == [("alice", "notes"), ("alice", "other")]
    assert reads == []


def test_the_fill_up_after_recall_reads_a_page(store: EpisegStore, reads: list[int]) -> None:
    items = store.search(NOTES, query="zebra quantum violin", limit=4)
    scored = [i for i in items if i.score is not None]
    assert len(items) == 4 and len({i.key for i in items}) == 4
    assert all(i.score is None for i in items[len(scored) :])  # the fill-up follows, unscored
    filled = [i.key for i in items[len(scored) :]]
    assert filled and filled == sorted(filled, reverse=True)  # newest first
    assert sum(reads) < N
    everything = store.search(NOTES, query="note about the deploy", limit=N + 5)
    assert len({i.key for i in everything}) == len(everything) == N  # each item once


def test_a_blank_query_lists_as_no_query_does(store: EpisegStore) -> None:
    """Recall refuses a blank query (F155); the store lists instead, newest first."""
    blank = store.search(NOTES, query="   ", limit=3)
    assert [i.key for i in blank] == [i.key for i in store.search(NOTES, limit=3)]
    assert all(i.score is None for i in blank)
