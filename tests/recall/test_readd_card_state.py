"""Re-adding a stored episode keeps its stored recall state, and so does its catalogue card.

Before the fix the card was built from the object re-added: an archived
episode read as live in the catalogue, took a k slot and was dropped at the
end (recall returned fewer hits, or none), and the wrong card was saved.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from episeg.memory import Memory
from episeg.recall.index import IndexedStore
from episeg.store import ChromaBackend
from episeg.testing import HashingEmbedder, InMemoryBackend
from episeg.types import Episode
from tests.recall.helpers import embedded_episode

EMB = HashingEmbedder(dim=64)
STATE = ("recall_count", "last_accessed", "strength", "archived")


def episode(eid: str, texts: list[str], t0: float = 1.7e9) -> Episode:
    return embedded_episode(eid, texts, t0, EMB)


E1 = episode("e1", ["deploy the billing service"])
E2 = episode("e2", ["deploy the billing service to staging tomorrow night"], t0=1.7e9 + 50)


def state(item: Any) -> tuple[Any, ...]:
    return tuple(getattr(item, f) for f in STATE)


def reinforce(store: IndexedStore) -> Episode:
    """Archive e1 with some recall history, through the store (as ``maintain`` does)."""
    stored = store.get(["e1"])[0]
    kept = dataclasses.replace(stored, recall_count=3, strength=0.5, last_accessed=9.0)
    store.update([dataclasses.replace(kept, archived=True)])
    return store.get(["e1"])[0]


@pytest.fixture(params=["chroma", "in-memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> IndexedStore:
    if request.param == "chroma":  # the store tells what it kept (add_merged)
        inner: Any = ChromaBackend.persistent(tmp_path).store_for("alice")
    else:  # a store without add_merged: the rule is applied from the replaced card
        inner = InMemoryBackend().store_for("alice")
    return IndexedStore(inner, embed_turns=EMB.embed)


def test_readd_keeps_the_stored_state_on_the_card(store: IndexedStore) -> None:
    store.add([E1, E2])
    _ = store.index
    stored = reinforce(store)
    store.add([E1])  # the same write replayed: the store keeps the recall state
    again = store.get(["e1"])[0]
    assert state(again) == state(stored) == (3, 9.0, 0.5, True)
    assert state(store.index.cards["e1"]) == state(again)
    assert state(store.index.cards["e2"]) == state(E2)


def test_revise_keeps_the_cards_state(store: IndexedStore) -> None:
    store.add([E1, E2])
    _ = store.index
    reinforce(store)
    store.revise([dataclasses.replace(E1, summary="billing", pinned=True)])  # a stale object
    assert state(store.index.cards["e1"]) == (3, 9.0, 0.5, True)


def test_add_merged_returns_new_episodes_as_passed(tmp_path: Path) -> None:
    inner = ChromaBackend.persistent(tmp_path).store_for("alice")
    written = inner.add_merged([E1, E2, dataclasses.replace(E1, summary="later")])
    assert [e.id for e in written] == ["e1", "e2"] and written[1] is E2
    assert written[0].summary == "later"


def test_snapshot_keeps_the_state_after_a_restart(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path, embedder=EMB, judge=None, scorer=None)
    store = mem.store("alice")  # its index is saved on disk and loaded at the next start
    store.add([E1, E2])
    reinforce(store)
    store.add([E1])
    mem.close()
    mem = Memory(path=tmp_path, embedder=EMB, judge=None, scorer=None)
    assert state(mem.store("alice").index.cards["e1"]) == (3, 9.0, 0.5, True)
    mem.close()


def test_recall_after_replaying_an_archived_episode(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path, embedder=EMB, judge=None, scorer=None)
    st = mem.store("alice")
    st.add([E1, E2])
    st.update([dataclasses.replace(st.get(["e1"])[0], archived=True)])
    st.add([E1])
    assert [h.episode_id for h in mem.recall("alice", "deploy the billing service", k=1)] == ["e2"]
    mem.close()
    mem = Memory(path=tmp_path, embedder=EMB, judge=None, scorer=None)
    assert [h.episode_id for h in mem.recall("alice", "deploy the billing service", k=1)] == ["e2"]
    mem.close()
