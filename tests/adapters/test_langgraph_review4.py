"""EpisegStore, review 4: whole batches, exact values, keys, archiving and search results."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra: pip install 'episeg[langgraph]'")

from langgraph.store.base import GetOp, IndexConfig, PutOp
from langgraph.store.memory import InMemoryStore

from episeg.adapters.langgraph_store import EpisegStore
from episeg.errors import ArgumentError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn

NS = ("alice", "prefs")


@pytest.fixture
def store(tmp_path: Path) -> EpisegStore:
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    return EpisegStore(memory)


def test_a_batch_with_one_bad_put_writes_nothing(store: EpisegStore) -> None:
    ops = [
        PutOp(NS, "g1", {"text": "good one"}),
        PutOp(NS, "bad", {"v": {1, 2}}),
        PutOp(NS, "g2", {"text": "good two"}),
    ]
    with pytest.raises(ArgumentError, match="'bad'"):
        store.batch(ops)
    assert store.get(NS, "g1") is None and store.get(NS, "g2") is None
    with pytest.raises(ArgumentError, match="key"):
        store.batch([PutOp(NS, "g1", {"text": "good one"}), PutOp(NS, "", {"e": 1})])
    assert store.get(NS, "g1") is None


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"by_id": {1: "vim", 2: "emacs"}}, "value['by_id'] has the key 1"),
        ({True: "yes"}, "has the key True"),
        ({None: "x"}, "has the key None"),
        ({"point": (1, 2)}, "value['point'] is a tuple"),
        ({"deep": [{"a": {1.5: "x"}}]}, "value['deep'][0]['a'] has the key 1.5"),
    ],
)
def test_a_value_json_would_change_is_refused(
    store: EpisegStore, value: dict[Any, Any], where: str
) -> None:
    with pytest.raises(ArgumentError, match="'k'") as err:
        store.put(NS, "k", value)
    assert where in str(err.value)
    assert store.get(NS, "k") is None


def test_a_value_json_keeps_reads_back_equal(store: EpisegStore) -> None:
    value: dict[str, Any] = {"a": [1, 2.5, None, True, "x", {"b": []}], "c": {"d": {}}}
    store.put(NS, "k", value)
    got = store.get(NS, "k")
    assert got is not None and got.value == value


@pytest.mark.parametrize("key", ["", "a\nb", "k" * 2000])
def test_a_key_no_id_can_hold_is_refused_naming_the_key(store: EpisegStore, key: str) -> None:
    with pytest.raises(ArgumentError, match=r"^the key .* of namespace \('alice', 'prefs'\)"):
        store.put(NS, key, {"e": 1})
    assert store.search(NS) == []


def _store_at(tmp_path: Path, now: list[float]) -> tuple[Memory, EpisegStore]:
    """A memory on a settable clock with one item put in it."""
    memory = Memory(
        path=tmp_path,
        embedder=HashingEmbedder(dim=64),
        judge=None,
        scorer=None,
        clock=lambda: now[0],
    )
    store = EpisegStore(memory)
    store.put(NS, "editor", {"text": "alice edits in vim"})
    return memory, store


def test_an_item_is_never_archived_by_maintenance(tmp_path: Path) -> None:
    now = [1_800_000_000.0]
    memory, store = _store_at(tmp_path, now)
    now[0] += 400 * 86400
    memory.maintain("alice", archive=True)
    got = store.get(NS, "editor")
    listed = store.search(NS)
    assert got is not None and [i.key for i in listed] == ["editor"]
    assert store.list_namespaces(prefix=("alice",)) == [NS]


def _conversation(store: EpisegStore) -> tuple[tuple[str, ...], str]:
    memory = store.memory
    for n, text in enumerate(["The deploy of billing failed", "Release the migration lock"]):
        actor = "user" if n == 0 else "assistant"
        memory.observe(Turn(actor=actor, text=text, ts=1.0 + n, user="alice", session="chat-1"))
    memory.flush("alice")
    [hit] = store.search(("alice",), query="billing deploy migration lock")
    return tuple(hit.namespace), hit.key


def test_a_conversation_episode_found_by_search_can_be_read_and_deleted(
    store: EpisegStore,
) -> None:
    namespace, key = _conversation(store)
    assert namespace == ("alice", "chat-1")
    got = store.get(namespace, key)
    assert got is not None and got.value["turns"][0]["text"] == "The deploy of billing failed"
    with pytest.raises(ArgumentError, match="episode of a conversation"):
        store.put(namespace, key, {"text": "replaced"})
    with pytest.raises(ArgumentError, match="episode of a conversation"):
        store.batch([PutOp(NS, "other", {"t": 1}), PutOp(namespace, key, {"text": "x"})])
    assert store.get(NS, "other") is None
    assert [i.key for i in store.search(("alice",))] == [key]  # no second item under the key
    store.delete(namespace, key)
    assert store.get(namespace, key) is None
    assert store.search(("alice",)) == [] and store.memory.episodes("alice") == []
    assert store.batch([GetOp(("alice", "other"), key)]) == [None]  # another namespace


@pytest.mark.parametrize(
    ("query", "kw"),
    [
        ("postgres replica", {"limit": 10}),
        ("zebra giraffe", {"limit": 10}),
        ("postgres replica", {"limit": 3, "filter": {"n": {"$gte": 3}}}),
        ("vim", {"limit": 2, "offset": 2}),
    ],
)
def test_a_query_ranks_and_the_filter_selects_as_in_langgraph(
    store: EpisegStore, query: str, kw: dict[str, Any]
) -> None:
    embedder = HashingEmbedder(dim=64)

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [[float(x) for x in v] for v in embedder.embed(list(texts))]

    reference = InMemoryStore(index=IndexConfig(dims=64, embed=embed, fields=["$"]))
    docs = [
        "postgres replica lag alarm",
        "vim keybindings",
        "lunch on friday",
        "vim colours",
        "kubernetes node drain",
        "emacs org mode",
    ]
    for n, text in enumerate(docs):
        store.put(("carol", "docs"), f"d{n}", {"text": text, "n": n})
        reference.put(("carol", "docs"), f"d{n}", {"text": text, "n": n})
    ours = store.search(("carol", "docs"), query=query, **kw)
    theirs = reference.search(("carol", "docs"), query=query, **kw)
    assert len(ours) == len(theirs)
    everything = store.search(("carol", "docs"), query=query, limit=10)
    assert sorted(i.key for i in everything) == [f"d{n}" for n in range(6)]
    scored = [i.score is not None for i in everything]
    assert scored == sorted(scored, reverse=True)  # recall's hits first, the rest unscored


def test_an_item_archived_before_items_were_pinned_reads_as_absent_everywhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    now = [1_800_000_000.0]
    memory, store = _store_at(tmp_path, now)
    memory.update_episode("alice", "lg:prefs:editor", pinned=False)  # as an older version stored it
    now[0] += 400 * 86400
    assert memory.maintain("alice", archive=True).archived == 1
    with caplog.at_level("WARNING", logger="episeg.adapters.langgraph_store"):
        assert store.get(NS, "editor") is None
    assert "archived by maintenance" in caplog.text
    assert store.search(NS) == [] and store.search(NS, query="vim") == []
    store.put(NS, "editor", {"text": "alice edits in helix"})  # a put brings it back
    got = store.get(NS, "editor")
    assert got is not None and got.value == {"text": "alice edits in helix"}
