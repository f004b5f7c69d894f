"""Issue 12: recall sees the open segment (turns of an episode that has not closed yet).

Through ``Memory`` (real journal, embedded Chroma) and through the HTTP service on
a real uvicorn server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.memory import Memory
from episeg.recall.open_segments import OpenHit, OpenSegment, merge_open
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.interfaces.helpers import KEY_A, KEY_B, KEYS, LiveServer


def _turn(text: str, ts: float, session: str = "s1", user: str = "alice", **kw: str) -> Turn:
    return Turn(actor=kw.pop("actor", "user"), text=text, ts=ts, user=user, session=session, **kw)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    mem = Memory(path=tmp_path, embedder=HashingEmbedder(dim=256), judge=None, scorer=None)
    yield mem
    mem.close()


def _stored_deploy(mem: Memory) -> None:
    mem.observe(_turn("deploy prod version 2.14 with terraform apply", 1.0, session="old"))
    mem.observe(_turn("terraform apply finished, prod runs 2.14", 2.0, session="old"))
    mem.flush("alice", "old")


class TestThroughMemory:
    def test_an_unflushed_turn_is_recalled_as_open_under_its_future_id(
        self, memory: Memory
    ) -> None:
        memory.observe(_turn("water the ferns on friday", 10.0))
        hits = memory.recall("alice", "ferns")
        assert [(h.open, [t.text for t in h.turns]) for h in hits] == [
            (True, ["water the ferns on friday"])
        ]
        (stored,) = memory.flush("alice")
        assert stored.id == hits[0].episode_id  # the id it is stored under
        again = memory.recall("alice", "ferns")
        assert [(h.open, h.episode_id) for h in again] == [(False, stored.id)]

    def test_a_new_open_turn_is_seen_at_once(self, memory: Memory) -> None:
        memory.observe(_turn("water the ferns on friday", 10.0))
        assert memory.recall("alice", "orchid bark") == []  # the corpus is now cached
        memory.observe(_turn("and repot the orchid in bark", 11.0))
        texts = [t.text for h in memory.recall("alice", "orchid bark") for t in h.turns]
        assert "and repot the orchid in bark" in texts

    def test_tenant_bound(self, memory: Memory) -> None:
        memory.observe(_turn("water the ferns on friday", 10.0))
        assert memory.recall("bob", "water the ferns on friday") == []

    def test_ranked_with_stored_episodes(self, memory: Memory) -> None:
        _stored_deploy(memory)
        memory.observe(_turn("water the ferns on friday", 10.0))
        ferns = memory.recall("alice", "water the ferns", k=2)
        deploy = memory.recall("alice", "terraform apply prod 2.14", k=2)
        assert ferns[0].open and not deploy[0].open
        assert [h.open for h in memory.recall("alice", "ferns", k=1)] == [True]

    def test_word_budget_is_shared(self, memory: Memory) -> None:
        _stored_deploy(memory)
        memory.observe(_turn("terraform apply of prod 2.15 is still running", 10.0))
        for budget in (5, 9, 12, 40):
            hits = memory.recall("alice", "terraform apply prod", k=5, max_words=budget)
            assert sum(h.words for h in hits) <= budget
        both = memory.recall("alice", "terraform apply prod", k=5)
        assert {h.open for h in both} == {True, False}

    def test_filters(self, memory: Memory) -> None:
        memory.observe(_turn("water the ferns on friday", 10.0, session="garden"))
        assert memory.recall("alice", "ferns", session="kitchen") == []
        assert memory.recall("alice", "ferns", since=11.0) == []
        assert memory.recall("alice", "ferns", until=9.0) == []
        assert [h.open for h in memory.recall("alice", "ferns", session="garden")] == [True]

    def test_forget_drops_the_cached_open_corpus(self, memory: Memory) -> None:
        memory.observe(_turn("water the ferns on friday", 10.0, session="garden"))
        memory.observe(_turn("repot the orchid in bark", 10.0, session="kitchen", user="bob"))
        assert memory.recall("alice", "ferns") and memory.recall("bob", "orchid")  # both cached
        memory.forget("alice", session="garden")
        assert "alice" not in memory._open_corpora  # the erased text is not kept in memory
        assert "bob" in memory._open_corpora  # another tenant's cache stays
        assert memory.recall("alice", "water the ferns on friday") == []

    def test_markers_are_stripped_as_in_stored_episodes(self, memory: Memory) -> None:
        memory.observe(_turn("repot the orchid?", 1.0))
        memory.observe(_turn("<new_subtask> repot the orchid in bark", 2.0, actor="assistant"))
        texts = [t.text for h in memory.recall("alice", "orchid bark") for t in h.turns]
        assert texts and all("<" not in t for t in texts)


class TestMerge:
    def test_k_and_expand(self) -> None:
        seg = OpenSegment(
            id="e1",
            user="u",
            session="s",
            turns=tuple(Turn(actor="user", text=f"turn number {i}", ts=float(i)) for i in range(4)),
            vectors=np.ones((4, 2), np.float32),
        )
        hit = OpenHit(segment=seg, score=1.0, relevance=1.0, recency=0.0, importance=0.0)
        hit.ranked = [2, 0]
        assert [h.positions for h in merge_open([], [hit], 5, None)] == [(0, 2)]
        assert [h.positions for h in merge_open([], [hit], 5, 4)] == [(2,)]
        assert merge_open([], [hit], 5, 2) == []
        assert [h.positions for h in merge_open([], [hit], 5, None, context=1)] == [(0, 1, 2, 3)]
        assert [h.positions for h in merge_open([], [hit], 5, None, expand="episode")] == [
            (0, 1, 2, 3)
        ]


@pytest.mark.slow
def test_http_recall_marks_open_hits(tmp_path: Path) -> None:
    memory = open_memory(tmp_path, embedder=HashingEmbedder(dim=256))
    server = LiveServer(create_app(memory, KEYS))
    try:
        with server.client(KEY_A) as c:
            c.post("/v1/turns", json={"actor": "user", "text": "water the ferns on friday"})
            hits = c.post("/v1/recall", json={"query": "ferns"}).json()["results"]
        with server.client(KEY_B) as c:
            theirs = c.post("/v1/recall", json={"query": "ferns"}).json()["results"]
        assert [(h["open"], h["turns"][0]["text"]) for h in hits] == [
            (True, "water the ferns on friday")
        ]
        assert theirs == []
    finally:
        server.stop()
        memory.close()
