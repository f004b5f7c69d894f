"""F108: an edit, or a re-add of an episode, never leaves a moment in which recall misses it.

Before the fix, replacing an indexed episode first removed its card and BM25
rows and then added them back; a recall ranking in between treated it as
deleted (5 of 1,115 recalls beside a pin loop in review 4). A user's edit
also re-indexed the episode at the end of the lexical index, which reordered
ties with an identical episode.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from episeg.memory import Memory
from episeg.recall.index import IndexedStore
from episeg.recall.lexical import LexicalIndex
from episeg.store import ChromaBackend
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.recall.helpers import embedded_episode

EMB = HashingEmbedder(dim=64)


def findable(store: IndexedStore, eid: str) -> bool:
    index = store.index
    return eid in index.cards and (eid, 0) in index.turns and eid in index.episodes


@pytest.fixture
def store() -> Iterator[IndexedStore]:
    yield IndexedStore(ChromaBackend.persistent(tempfile.mkdtemp()).store_for("alice"))


def watching(monkeypatch: pytest.MonkeyPatch, store: IndexedStore, eid: str) -> list[bool]:
    """Whether ``eid`` is findable at every lexical-index change from now on."""
    seen: list[bool] = []
    for name in ("add_tokens", "remove"):
        real = getattr(LexicalIndex, name)

        def spy(self: LexicalIndex[Any], *args: Any, _real: Any = real) -> None:
            seen.append(findable(store, eid))
            _real(self, *args)
            seen.append(findable(store, eid))

        monkeypatch.setattr(LexicalIndex, name, spy)
    return seen


class TestNoGap:
    def test_a_re_add_swaps_in_place(self, store, monkeypatch) -> None:
        store.add([embedded_episode("e1", ["zebra quartz invoice", "thanks, paid"], 1e9, EMB)])
        assert findable(store, "e1")  # the index is built (it is built on first use)
        seen = watching(monkeypatch, store, "e1")
        store.add([embedded_episode("e1", ["zebra quartz invoice 4411"], 1e9, EMB)])
        assert seen and all(seen)
        assert ("e1", 1) not in store.index.turns  # the turn the new version lacks is gone
        assert [k for k, _ in store.index.turns.top("4411", k=3)] == [("e1", 0)]

    def test_an_edit_only_swaps_the_card(self, store, monkeypatch) -> None:
        ep = embedded_episode("e1", ["zebra quartz invoice"], 1e9, EMB)
        store.add([ep])
        assert findable(store, "e1")
        seen = watching(monkeypatch, store, "e1")
        store.revise([dataclasses.replace(ep, metadata={"ticket": 4411})])
        assert seen == [] and findable(store, "e1")  # the BM25 rows were not touched
        assert store.index.cards["e1"].metadata == {"ticket": 4411}


def test_a_pin_does_not_reorder_identical_episodes(tmp_path) -> None:
    memory = Memory(path=tmp_path, embedder=EMB, judge=None, scorer=None)
    ids = []
    for session, t0 in (("a", 1000.0), ("b", 9000.0)):
        for n, text in enumerate(["zebra quartz invoice", "paid"]):
            actor = "user" if n == 0 else "assistant"
            memory.observe(Turn(actor=actor, text=text, ts=t0 + n, user="u", session=session))
        [closed] = memory.flush("u")
        ids.append(closed.id)

    def ranked() -> list[tuple[str, float]]:
        return [(h.episode.id, h.score) for h in memory.recall("u", "zebra quartz invoice", k=2)]

    before = ranked()
    for eid in ids:
        memory.update_episode("u", eid, pinned=True)
        assert ranked() == before
    memory.close()
