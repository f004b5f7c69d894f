"""EpisegStore: unambiguous item ids, old ids still served, safe puts, exact namespace search."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra: pip install 'episeg[langgraph]'")

from episeg.adapters._langgraph_ids import decode, episode_id, legacy_id
from episeg.adapters.langgraph_store import EpisegStore
from episeg.errors import ArgumentError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Episode, Turn


@pytest.fixture
def store(tmp_path: Path) -> EpisegStore:
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    return EpisegStore(memory)


def _value(store: EpisegStore, namespace: tuple[str, ...], key: str) -> object:
    item = store.get(namespace, key)
    if item is None:
        return None
    assert tuple(item.namespace) == namespace and item.key == key  # round-trips exactly
    return item.value


def _store_as_before(
    store: EpisegStore, namespace: tuple[str, ...], key: str, value: dict[str, object]
) -> str:
    """Write an item the way earlier versions did (id ``lg:<plain join>:<key>``)."""
    session = "/".join(namespace[1:]) or "default"
    text = json.dumps(value, sort_keys=True)
    turn = Turn(actor=Actor.USER, text=text, ts=1.0, id=key, user=namespace[0], session=session)
    vector = store.memory.embedder.embed([text])
    old_id = f"lg:{session}:{key}"
    store.memory.store_episodes(
        [
            Episode(
                id=old_id,
                user=namespace[0],
                session=session,
                turns=(turn,),
                summary=text,
                opened_at=1.0,
                closed_at=1.0,
                embedding=vector[0],
                turn_embeddings=vector,
            )
        ]
    )
    return old_id


Pair = tuple[tuple[tuple[str, ...], str], tuple[tuple[str, ...], str]]
CLASHING: list[Pair] = [  # each pair shared one episode id before
    ((("alice", "a"), "b:c"), (("alice", "a:b"), "c")),
    ((("alice", "x/y"), "k"), (("alice", "x", "y"), "k")),
    ((("alice",), "k"), (("alice", "default"), "k")),
    ((("alice", "p%2Fq"), "k"), (("alice", "p/q"), "k")),
]


class TestIds:
    def test_plain_namespaces_keep_their_old_ids(self) -> None:
        for namespace, key in [
            (("alice", "prefs"), "editor"),
            (("alice",), "k"),
            (("u", "a", "b"), "k/1"),
        ]:
            assert episode_id(namespace, key) == legacy_id(namespace, key)

    @pytest.mark.parametrize("pair", [*CLASHING, ((("alice",), "k"), (("alice", ""), "k"))])
    def test_ids_are_unambiguous_and_decode(self, pair: Pair) -> None:
        (ns1, k1), (ns2, k2) = pair
        assert episode_id(ns1, k1) != episode_id(ns2, k2)
        assert decode(episode_id(ns1, k1)) == (ns1[1:], k1)
        assert decode(episode_id(ns2, k2)) == (ns2[1:], k2)

    @pytest.mark.parametrize("pair", CLASHING)
    def test_items_of_clashing_namespaces_stay_apart(self, store: EpisegStore, pair: Pair) -> None:
        (ns1, k1), (ns2, k2) = pair
        store.put(ns1, k1, {"who": 1})
        store.put(ns2, k2, {"who": 2})
        assert _value(store, ns1, k1) == {"who": 1}
        assert _value(store, ns2, k2) == {"who": 2}
        listed = {(tuple(i.namespace), i.key, i.value["who"]) for i in store.search(("alice",))}
        assert listed == {(ns1, k1, 1), (ns2, k2, 2)}
        assert set(store.list_namespaces(prefix=("alice",))) == {ns1, ns2}
        store.delete(ns2, k2)
        assert _value(store, ns1, k1) == {"who": 1}
        assert _value(store, ns2, k2) is None


class TestItemsStoredByEarlierVersions:
    def test_plain_old_item_is_read_updated_and_deleted(self, store: EpisegStore) -> None:
        old_id = _store_as_before(store, ("alice", "prefs"), "editor", {"text": "vim"})
        assert _value(store, ("alice", "prefs"), "editor") == {"text": "vim"}
        store.put(("alice", "prefs"), "editor", {"text": "emacs"})
        assert _value(store, ("alice", "prefs"), "editor") == {"text": "emacs"}
        assert [e.id for e in store.memory.episodes("alice")] == [old_id]
        store.delete(("alice", "prefs"), "editor")
        assert store.memory.episodes("alice") == []

    def test_old_item_with_a_percent_moves_to_its_new_id_on_put(self, store: EpisegStore) -> None:
        _store_as_before(store, ("alice", "50%"), "k", {"n": 1})
        assert _value(store, ("alice", "50%"), "k") == {"n": 1}
        store.put(("alice", "50%"), "k", {"n": 2})
        assert _value(store, ("alice", "50%"), "k") == {"n": 2}
        assert [e.id for e in store.memory.episodes("alice")] == ["lg:50%25:k"]
        store.delete(("alice", "50%"), "k")
        assert store.memory.episodes("alice") == []

    def test_old_item_under_a_shared_id_keeps_its_own_namespace(self, store: EpisegStore) -> None:
        _store_as_before(store, ("alice", "a:b"), "c", {"who": "a:b/c"})
        assert _value(store, ("alice", "a:b"), "c") == {"who": "a:b/c"}
        assert _value(store, ("alice", "a"), "b:c") is None  # not another item's value
        store.delete(("alice", "a"), "b:c")  # erases nothing of ("alice", "a:b")
        assert _value(store, ("alice", "a:b"), "c") == {"who": "a:b/c"}
        store.put(("alice", "a"), "b:c", {"who": "a/b:c"})  # takes the id: the old item moves
        assert _value(store, ("alice", "a"), "b:c") == {"who": "a/b:c"}
        assert _value(store, ("alice", "a:b"), "c") == {"who": "a:b/c"}
        assert len(store.memory.episodes("alice")) == 2

    def test_old_item_of_a_slash_element_reads_as_it_was_listed(self, store: EpisegStore) -> None:
        _store_as_before(store, ("alice", "x/y"), "k", {"n": 1})  # ambiguous: also (x, y)'s id
        assert _value(store, ("alice", "x", "y"), "k") == {"n": 1}
        assert _value(store, ("alice", "x/y"), "k") is None
        store.put(("alice", "x/y"), "k", {"n": 2})  # its own id now, the old item untouched
        assert _value(store, ("alice", "x/y"), "k") == {"n": 2}
        assert _value(store, ("alice", "x", "y"), "k") == {"n": 1}


class TestFailedPut:
    def test_a_value_that_is_not_json_leaves_the_old_value(self, store: EpisegStore) -> None:
        store.put(("alice", "prefs"), "editor", {"text": "vim"})
        with pytest.raises(ArgumentError, match="not JSON"):
            store.put(("alice", "prefs"), "editor", {"since": datetime.date(2025, 1, 1)})
        assert _value(store, ("alice", "prefs"), "editor") == {"text": "vim"}
        with pytest.raises(ArgumentError):
            store.put(("alice", "prefs"), "new", {"since": datetime.date(2025, 1, 1)})
        assert _value(store, ("alice", "prefs"), "new") is None
        assert len(store.memory.episodes("alice")) == 1


class TestSearchWithinANamespace:
    def test_does_not_depend_on_limit_or_other_namespaces(self, store: EpisegStore) -> None:
        store.put(("alice", "prefs"), "editor", {"text": "alice edits code in vim"})
        store.put(("alice", "prefs", "ui"), "theme", {"text": "alice edits code in a dark theme"})
        for n in range(40):
            text = f"note {n}: alice edits code in vim editor today"
            store.put(("alice", "notes"), f"n{n}", {"text": text})
        query = "which editor does alice use today"
        for limit in (1, 2, 10):
            hits = store.search(("alice", "prefs"), query=query, limit=limit)
            assert len(hits) == min(limit, 2)
            assert {tuple(h.namespace) for h in hits} <= {
                ("alice", "prefs"),
                ("alice", "prefs", "ui"),
            }
        exact = store.search(("alice", "prefs", "ui"), query=query, limit=1)
        assert [h.key for h in exact] == ["theme"]
        filtered = store.search(
            ("alice", "notes"),
            query=query,
            filter={"text": "note 7: alice edits code in vim editor today"},
        )
        assert [h.key for h in filtered] == ["n7"]
        assert store.search(("bob", "prefs"), query=query) == []

    def test_more_than_fifty_hits_are_returned(self, store: EpisegStore) -> None:
        for n in range(60):
            store.put(("alice", "notes"), f"n{n}", {"text": f"deploy checklist step {n}"})
        assert len(store.search(("alice",), query="deploy checklist step", limit=60)) == 60
        assert len(store.search(("alice", "notes"), query="deploy checklist step", limit=60)) == 60
