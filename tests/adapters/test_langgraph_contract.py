"""EpisegStore's ``filter`` and ``list_namespaces`` next to LangGraph's own InMemoryStore.

Review 3: R3-S5 (comparison operators matched nothing) and R3-S8 (``max_depth`` cut
namespaces before the suffix was matched). Real langgraph, real Memory on Chroma.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra: pip install 'episeg[langgraph]'")

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from episeg.adapters.langgraph_store import EpisegStore
from episeg.errors import ArgumentError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn

ITEMS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (("alice", "docs"), "a", {"text": "deploy guide", "score": 5, "status": "published"}),
    (("alice", "docs"), "b", {"text": "deploy draft", "score": 3, "status": "draft"}),
    (("alice", "docs"), "c", {"text": "deploy notes", "score": 4.5, "status": "published"}),
    (("alice", "notes"), "d", {"text": "deploy log", "score": "7", "meta": {"lang": "en", "n": 2}}),
    (("alice", "notes"), "e", {"text": "deploy plan", "score": 0, "tags": ["ops", "ci"]}),
]
FILTERS: list[dict[str, Any]] = [
    {"score": {"$gt": 4}},
    {"score": {"$gte": 4.5}},
    {"score": {"$lt": 4}},
    {"score": {"$lte": "3"}},  # float("3"), as LangGraph
    {"score": {"$gt": 2, "$lt": 5}},
    {"score": {"$eq": 5}},
    {"score": {"$eq": "7"}},
    {"status": {"$ne": "draft"}},  # items without the field pass, as in LangGraph
    {"status": {"$eq": "published"}, "score": {"$gt": 4.6}},
    {"status": "published"},
    {"meta": {"lang": "en"}},  # a nested dict matches the fields it lists
    {"meta": {"n": {"$gte": 2}}},
    {"tags": ["ops", "ci"]},
    {"tags": ("ops", "ci")},
]


@pytest.fixture
def stores(tmp_path: Path) -> tuple[EpisegStore, InMemoryStore]:
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    ours, reference = EpisegStore(memory), InMemoryStore()
    for namespace, key, value in ITEMS:
        ours.put(namespace, key, value)
        reference.put(namespace, key, value)
    return ours, reference


def _keys(store: BaseStore, prefix: tuple[str, ...], **kw: Any) -> list[str]:
    return sorted(item.key for item in store.search(prefix, limit=50, **kw))


class TestFilterOperators:
    """R3-S5: ``$eq $ne $gt $gte $lt $lte`` select what InMemoryStore selects."""

    @pytest.mark.parametrize("where", FILTERS, ids=repr)
    @pytest.mark.parametrize("prefix", [("alice",), ("alice", "docs")], ids=repr)
    def test_a_listing_selects_what_langgraph_selects(
        self, stores: tuple[EpisegStore, InMemoryStore], where: dict[str, Any], prefix: Any
    ) -> None:
        ours, reference = stores
        expected = _keys(reference, prefix, filter=where)
        assert _keys(ours, prefix, filter=where) == expected

    @pytest.mark.parametrize("where", FILTERS[:9], ids=repr)
    def test_a_search_with_a_query_selects_what_langgraph_selects(
        self, stores: tuple[EpisegStore, InMemoryStore], where: dict[str, Any]
    ) -> None:
        ours, reference = stores
        expected = _keys(reference, ("alice",), filter=where)
        assert expected  # every filter here selects something
        assert _keys(ours, ("alice",), query="deploy", filter=where) == expected

    def test_conversation_episodes_without_the_field_do_not_match_an_ordering(
        self, stores: tuple[EpisegStore, InMemoryStore]
    ) -> None:
        """InMemoryStore raises TypeError on an item lacking the field; episeg skips it."""
        ours, _ = stores
        ours.memory.observe(Turn(actor="user", text="deploy failed", ts=1.0, user="alice"))
        ours.memory.flush("alice")
        assert _keys(ours, ("alice",), filter={"score": {"$gt": 4}}) == ["a", "c", "d"]
        assert _keys(ours, ("alice",), query="deploy", filter={"score": {"$gt": 4}}) == [
            "a",
            "c",
            "d",
        ]

    @pytest.mark.parametrize(
        "where",
        [
            {"score": {"$in": [5]}},
            {"score": {"$gt": 4, "x": 1}},  # LangGraph reads every key of it as an operator
            {"meta": {"n": {"$regex": "2"}}},
            {"score": {"$gt": "high"}},
            {"score": {"$lt": None}},
        ],
        ids=repr,
    )
    def test_an_unknown_operator_or_operand_is_an_argument_error(
        self, stores: tuple[EpisegStore, InMemoryStore], where: dict[str, Any]
    ) -> None:
        ours, _ = stores
        with pytest.raises(ArgumentError):
            ours.search(("alice",), filter=where)
        with pytest.raises(ArgumentError):
            ours.search(("alice",), query="deploy", filter=where)
        with pytest.raises(ArgumentError):  # even where nothing would be compared
            ours.search(("nobody",), filter=where)


NAMESPACES = [
    ("alice", "docs", "v1"),
    ("alice", "docs", "v2"),
    ("alice", "docs", "drafts", "v1"),
    ("alice", "notes"),
    ("bob", "docs", "v1"),
    ("bob",),
]
LISTINGS: list[dict[str, Any]] = [
    {"suffix": ("v1",), "max_depth": 2},
    {"suffix": ("v1",), "max_depth": 1},
    {"suffix": ("*", "v1"), "max_depth": 3},
    {"prefix": ("alice",), "suffix": ("v1",), "max_depth": 2},
    {"prefix": ("*", "docs"), "max_depth": 2},
    {"prefix": ("alice", "docs"), "max_depth": 3},
    {"suffix": ("notes",), "max_depth": 5},
    {"max_depth": 2},
    {"max_depth": 0},
    {"suffix": ("v1",)},
    {"max_depth": 2, "limit": 1, "offset": 1},
]


class TestListNamespaces:
    """R3-S8: conditions see whole namespaces, then ``max_depth`` cuts and deduplicates."""

    @pytest.mark.parametrize("listing", LISTINGS, ids=repr)
    def test_lists_what_langgraph_lists(self, tmp_path: Path, listing: dict[str, Any]) -> None:
        memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
        ours, reference = EpisegStore(memory), InMemoryStore()
        for namespace in NAMESPACES:
            ours.put(namespace, "k", {"text": "x"})
            reference.put(namespace, "k", {"text": "x"})
        assert ours.list_namespaces(**listing) == reference.list_namespaces(**listing)
