"""EpisegStore through LangGraph's own BaseStore API (real langgraph, real Memory)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra: pip install 'episeg[langgraph]'")

from langgraph.store.base import BaseStore, GetOp, Item, ListNamespacesOp, Op, PutOp, SearchOp

from episeg.adapters.langgraph_store import EpisegStore
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn


@pytest.fixture
def store(tmp_path: Path) -> EpisegStore:
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    return EpisegStore(memory)


class TestEpisegStore:
    def test_is_a_base_store(self, store: EpisegStore) -> None:
        assert isinstance(store, BaseStore)

    def test_put_get_replace_delete(self, store: EpisegStore) -> None:
        store.put(("alice", "prefs"), "editor", {"text": "vim", "since": 2019})
        item = store.get(("alice", "prefs"), "editor")
        assert item is not None and item.value == {"text": "vim", "since": 2019}
        assert item.namespace == ("alice", "prefs") and item.key == "editor"
        store.put(("alice", "prefs"), "editor", {"text": "emacs"})
        assert store.get(("alice", "prefs"), "editor").value == {"text": "emacs"}  # type: ignore[union-attr]
        assert len(store.memory.episodes("alice")) == 1  # replaced, not duplicated
        store.delete(("alice", "prefs"), "editor")
        assert store.get(("alice", "prefs"), "editor") is None
        assert store.memory.episodes("alice") == []

    def test_namespaces_are_tenants(self, store: EpisegStore) -> None:
        store.put(("alice",), "secret", {"text": "alice zebra password hint"})
        assert store.get(("bob",), "secret") is None
        assert store.search(("bob",), query="zebra password") == []
        assert [i.key for i in store.search(("alice",), query="zebra password")] == ["secret"]
        with pytest.raises(ValueError):  # LangGraph refuses it before episeg sees it
            store.put((), "x", {"text": "y"})

    def test_search_is_recall_and_also_finds_conversation_episodes(
        self, store: EpisegStore
    ) -> None:
        memory = store.memory
        memory.observe(Turn(actor="user", text="terraform lock held by CI", ts=1.0, user="alice"))
        memory.flush("alice")
        store.put(("alice", "notes"), "n1", {"text": "deploy needs a terraform apply", "k": 1})
        hits = store.search(("alice",), query="terraform lock", limit=5)
        assert {h.key for h in hits} >= {"n1"} and len(hits) == 2
        assert all(h.score is not None for h in hits)
        conversation = next(h for h in hits if h.key != "n1")
        assert conversation.value["turns"][0]["text"] == "terraform lock held by CI"
        only_notes = store.search(("alice", "notes"), query="terraform lock")
        assert [h.key for h in only_notes] == ["n1"]
        assert [h.key for h in store.search(("alice",), filter={"k": 1})] == ["n1"]
        assert store.search(("alice",), query="terraform", limit=1, offset=1)[0].key in {
            h.key for h in hits
        }

    def test_batch_and_abatch_run_every_operation(self, store: EpisegStore) -> None:
        ops: list[Op] = [
            PutOp(("carol", "a"), "k1", {"text": "first note"}),
            PutOp(("carol", "b"), "k2", {"text": "second note"}),
            GetOp(("carol", "a"), "k1"),
            SearchOp(("carol",), query="note", limit=10),
            ListNamespacesOp(max_depth=None),
            PutOp(("carol", "a"), "k1", None),
            GetOp(("carol", "a"), "k1"),
        ]
        put1, put2, got, found, spaces, deleted, gone = asyncio.run(store.abatch(ops))
        assert put1 is None and put2 is None and deleted is None
        assert isinstance(got, Item) and got.value == {"text": "first note"}
        assert isinstance(found, list)
        assert {h.key for h in found if isinstance(h, Item)} == {"k1", "k2"}
        assert spaces == [("carol", "a"), ("carol", "b")]
        assert gone is None
        assert store.list_namespaces(prefix=("carol",)) == [("carol", "b")]
        assert store.list_namespaces(suffix=("b",)) == [("carol", "b")]
