"""The recall window is exact: archived episodes and a metadata filter never empty recall.

Many archived (or filtered-out) episodes that match a query better than the
one live, allowed episode used to fill every candidate list before the window
dropped them, so recall returned nothing. Small ``turn_candidates`` /
``episode_candidates`` make a few dozen episodes enough to show it; real
embedded Chroma, hashing embedder.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from episeg.config import EpisegConfig, RecallConfig
from episeg.recall.candidates import dense_list, lexical_lists
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.index import IndexedStore
from episeg.recall.window import RecallWindow
from episeg.store import ChromaBackend
from episeg.store.usermeta import MetaScalar
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Episode, Turn

EMB = HashingEmbedder(dim=256)
T0 = 1.7e9
CROWD = 30  # well above turn_candidates * 4: widening alone cannot reach the live one
QUERY = "deploy the billing service"


def episode(
    eid: str, text: str, t0: float, metadata: dict[str, MetaScalar] | None = None
) -> Episode:
    turns = (Turn(actor=Actor.USER, text=text, ts=t0, id=f"{eid}:t0", user="alice", session="s"),)
    vectors = EMB.embed([text])
    return Episode(
        id=eid,
        user="alice",
        session="s",
        turns=turns,
        summary=text,
        opened_at=t0,
        closed_at=t0,
        embedding=vectors[0],
        turn_embeddings=vectors,
        metadata=metadata or {},
    )


def recaller(tmp_path: Path, *, overlap: bool = True) -> HierarchicalRecaller:
    store = IndexedStore(
        ChromaBackend.persistent(tmp_path / "chroma").store_for("alice"), check_interval=0.0
    )
    config = EpisegConfig(
        recall=RecallConfig(turn_candidates=4, episode_candidates=2, overlap_reads=overlap)
    )
    return HierarchicalRecaller(store, EMB, config=config, clock=lambda: T0 + 1e6)


def crowd(r: HierarchicalRecaller, *, archived: bool) -> None:
    """``CROWD`` old episodes matching QUERY best (team a), one live longer match (team b)."""
    old = [episode(f"old{i}", QUERY, T0 + i, {"team": "a"}) for i in range(CROWD)]
    r.store.add(old)
    r.store.add([episode("live", f"{QUERY} to staging tomorrow night", T0 + 1e5, {"team": "b"})])
    if archived:  # what maintain(archive=True) writes
        r.store.update([dataclasses.replace(ep, archived=True) for ep in old])


def window(r: HierarchicalRecaller, **metadata: MetaScalar) -> RecallWindow:
    index = r.store.index
    return RecallWindow(index.cards, None, None, None, metadata or None, span=index.max_span)


def vector(text: str) -> np.ndarray:
    return np.asarray(EMB.embed([text])[0], dtype=np.float32)


def count_turn_queries(r: HierarchicalRecaller, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``k`` of every turn query the store answers from now on."""
    asked: list[int] = []
    real = r.store.query_turns

    def spy(embedding: np.ndarray, k: int, *, where: Any = None) -> Any:
        asked.append(k)
        return real(embedding, k, where=where)

    monkeypatch.setattr(r.store, "query_turns", spy)
    return asked


class TestArchivedDoNotCrowdOut:
    @pytest.mark.parametrize("overlap", [True, False])
    def test_live_match_is_recalled_past_many_archived_ones(
        self, tmp_path: Path, overlap: bool
    ) -> None:
        r = recaller(tmp_path, overlap=overlap)
        crowd(r, archived=True)
        assert [h.episode_id for h in r.recall(QUERY, k=3)] == ["live"]

    def test_dense_list_alone_skips_archived_turns(self, tmp_path: Path) -> None:
        r = recaller(tmp_path)
        crowd(r, archived=True)
        # a vector without a text: the dense list is the only list
        assert [h.episode_id for h in r.recall(vector(QUERY), k=3)] == ["live"]
        dense = dense_list(r.store, r.params, vector(QUERY), window(r))
        assert [(e, p) for e, p, _ in dense] == [("live", 0)]

    def test_lexical_lists_skip_archived_keys(self, tmp_path: Path) -> None:
        r = recaller(tmp_path)
        crowd(r, archived=True)
        turns, episodes = lexical_lists(r.params, QUERY, r.store.index, window(r))
        assert turns == [("live", 0)] and episodes == ["live"]

    def test_without_archived_episodes_one_query_as_before(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        r = recaller(tmp_path)
        crowd(r, archived=False)
        asked = count_turn_queries(r, monkeypatch)
        hits = r.recall(QUERY, k=3)
        assert asked == [4]  # turn_candidates, once: no widening when nothing is dropped
        assert len(hits) == 3 and "live" not in {h.episode_id for h in hits}

    def test_archived_episodes_widen_the_dense_query(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        r = recaller(tmp_path)
        crowd(r, archived=True)
        asked = count_turn_queries(r, monkeypatch)
        r.recall(QUERY, k=3)
        assert asked[:3] == [4, 8, 16] and len(asked) >= 4  # doubled until "live" is reached


class TestMetadataFilterIsExact:
    @pytest.mark.parametrize("overlap", [True, False])
    def test_matching_episode_is_recalled_past_many_filtered_out(
        self, tmp_path: Path, overlap: bool
    ) -> None:
        r = recaller(tmp_path, overlap=overlap)
        crowd(r, archived=False)
        hits = r.recall(QUERY, k=5, metadata={"team": "b"})
        assert [h.episode_id for h in hits] == ["live"]
        assert r.recall(QUERY, k=5, metadata={"team": "c"}) == []

    def test_each_list_holds_the_matching_episode(self, tmp_path: Path) -> None:
        r = recaller(tmp_path)
        crowd(r, archived=False)
        only_b = window(r, team="b")
        dense = dense_list(r.store, r.params, vector(QUERY), only_b)
        assert [(e, p) for e, p, _ in dense] == [("live", 0)]
        assert lexical_lists(r.params, QUERY, r.store.index, only_b) == ([("live", 0)], ["live"])

    def test_filter_keeping_many_stops_at_the_candidate_count(self, tmp_path: Path) -> None:
        r = recaller(tmp_path)
        crowd(r, archived=False)
        only_a = window(r, team="a")
        turns, episodes = lexical_lists(r.params, QUERY, r.store.index, only_a)
        assert len(turns) == 4 and len(episodes) == 2
        assert all(e.startswith("old") for e, _ in turns) and all(
            e.startswith("old") for e in episodes
        )
        assert len(dense_list(r.store, r.params, vector(QUERY), only_a)) == 4
