"""Hierarchical recall over embedded Chroma (turn vectors + BM25, fused), hashing embedder."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from episeg.config import EpisegConfig, RecallConfig
from episeg.errors import ConfigError, StoreError
from episeg.recall.hierarchical import Expand, HierarchicalRecaller, RecallHit
from episeg.recall.index import IndexedStore
from episeg.store import ChromaBackend
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Episode, Salience, Turn

DAY = 86400.0
EMB = HashingEmbedder(dim=256)

CONVERSATION = {
    # episode id: (session, day, turns)
    "pasta": ("s1", 0, ["what goes into a tomato pasta sauce?", "garlic, olive oil and basil"]),
    "deploy": (
        "s1",
        0,
        ["roll out release 2.4 to production", "the canary pods crashed", "rolled back to 2.3"],
    ),
    "garden": ("s2", 3, ["my tomato plants need more sun", "move them to the south wall"]),
    "zebra": ("s3", 9, ["we saw a zebra at the zoo", "the zebra foal was born in May"]),
}


def episode(user: str, eid: str, session: str, day: float, texts: list[str]) -> Episode:
    t0 = 1.7e9 + day * DAY + (100.0 if eid == "deploy" else 0.0)
    turns = tuple(
        Turn(
            actor=Actor.USER if i % 2 == 0 else Actor.ASSISTANT,
            text=t,
            ts=t0 + i,
            id=f"{eid}:t{i}",
            user=user,
            session=session,
        )
        for i, t in enumerate(texts)
    )
    vectors = EMB.embed(texts)
    mean = vectors.mean(axis=0)
    return Episode(
        id=f"{user}-{eid}",
        user=user,
        session=session,
        turns=turns,
        summary=texts[0],
        opened_at=turns[0].ts,
        closed_at=turns[-1].ts,
        embedding=mean / np.linalg.norm(mean),
        turn_embeddings=vectors,
        salience=Salience.scored(5, scorer="test"),
    )


def fill(backend: ChromaBackend, user: str) -> IndexedStore:
    store = IndexedStore(backend.store_for(user), check_interval=0.0)
    store.add([episode(user, e, s, d, t) for e, (s, d, t) in CONVERSATION.items()])
    return store


@pytest.fixture
def backend(tmp_path: Path) -> ChromaBackend:
    return ChromaBackend.persistent(tmp_path / "chroma")


@pytest.fixture
def recaller(backend: ChromaBackend) -> HierarchicalRecaller:
    return HierarchicalRecaller(fill(backend, "alice"), EMB, clock=lambda: 1.7e9 + 30 * DAY)


class TestHits:
    def test_hit_carries_episode_dates_summary_and_matching_turns(
        self, recaller: HierarchicalRecaller
    ) -> None:
        hits = recaller.recall("did the canary pods crash?", k=1)
        assert len(hits) == 1
        hit = hits[0]
        assert isinstance(hit, RecallHit)
        assert hit.episode_id == "alice-deploy" and hit.episode.user == "alice"
        assert hit.start == "2023-11-14T22:15:00Z" and hit.end.startswith("2023-11-14T22:15")
        assert hit.summary == "roll out release 2.4 to production"
        assert "deploy:t1" in hit.turn_ids
        assert all(t.id in hit.turn_ids for t in hit.turns)
        assert hit.score == pytest.approx(
            hit.similarity + hit.recency + hit.importance + hit.reinforcement
        )
        assert hit.recency == 0.0 and hit.importance == 0.0  # weights 0 by default

    def test_word_budget_across_hits_and_k(self, recaller: HierarchicalRecaller) -> None:
        for budget in (3, 8, 15, 40):
            hits = recaller.recall("tomato zebra production", k=10, max_words=budget)
            assert sum(h.words for h in hits) <= budget
        assert len(recaller.recall("tomato zebra production", k=2)) <= 2

    def test_expand_episode_returns_whole_episodes(self, recaller: HierarchicalRecaller) -> None:
        hits = recaller.recall("canary pods", k=1, expand="episode")
        assert [t.id for t in hits[0].turns] == ["deploy:t0", "deploy:t1", "deploy:t2"]
        with pytest.raises(ValueError, match="valid: turns, episode"):
            recaller.recall("x", expand="everything")
        assert Expand.parse("EPISODE") is Expand.EPISODE

    def test_context_adds_neighbouring_turns(self, recaller: HierarchicalRecaller) -> None:
        plain = recaller.recall("canary pods crashed", k=1, max_words=6)
        assert plain[0].positions == (1,)
        wide = recaller.recall("canary pods crashed", k=1, context=1)
        assert wide[0].positions == (0, 1, 2)

    def test_neighbours_are_adjacent_episodes_of_the_session(
        self, recaller: HierarchicalRecaller
    ) -> None:
        hit = recaller.recall("tomato pasta sauce garlic", k=1, neighbours=1)[0]
        assert hit.episode_id == "alice-pasta"
        assert hit.neighbours_before == () and hit.neighbours_after == ("alice-deploy",)

    def test_recall_without_neighbours_leaves_the_session_order_unbuilt(
        self, recaller: HierarchicalRecaller
    ) -> None:
        # the order is rebuilt over every card after a write: only a recall asking for
        # neighbours may pay for that (at 10^5 episodes it cost more than the recall)
        index = recaller.store.index
        assert index._sessions_dirty  # written, never asked
        assert recaller.recall("tomato pasta sauce garlic", k=2)
        assert index._sessions_dirty
        recaller.recall("tomato pasta sauce garlic", k=1, neighbours=1)
        assert not index._sessions_dirty

    def test_time_range_and_session(self, recaller: HierarchicalRecaller) -> None:
        t0 = 1.7e9
        ids = {h.episode_id for h in recaller.recall("tomato", k=5, since=t0 + 2 * DAY)}
        assert ids == {"alice-garden"}
        ids = {h.episode_id for h in recaller.recall("tomato", k=5, until=t0 + DAY)}
        assert ids == {"alice-pasta"}
        ids = {h.episode_id for h in recaller.recall("tomato", k=5, session="s2")}
        assert ids == {"alice-garden"}

    def test_nothing_below_minimum_relevance(self, recaller: HierarchicalRecaller) -> None:
        assert recaller.recall("xyzzy plugh", k=5) == []

    def test_bad_arguments(self, recaller: HierarchicalRecaller) -> None:
        for kwargs in ({"k": 0}, {"max_words": 0}, {"context": -1}, {"neighbours": -1}):
            with pytest.raises(ValueError):
                recaller.recall("x", **kwargs)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=r"recall\.weights"):
            RecallConfig(weights=(1.0, -1.0, 1.0))
        with pytest.raises(ConfigError, match=r"recall\.min_similarity"):
            RecallConfig(min_similarity=1.5)


class TestReinforcement:
    def test_recall_never_writes(self, recaller: HierarchicalRecaller) -> None:
        recaller.recall("canary pods", k=3)
        stored = recaller.store.list_episodes(limit=10)
        assert all(ep.recall_count == 0 and ep.last_accessed is None for ep in stored)

    @pytest.mark.slow  # 1,000 recalls: 5-8 s
    def test_same_question_same_answer_after_many_others(
        self, recaller: HierarchicalRecaller
    ) -> None:
        first = [(h.episode_id, h.positions) for h in recaller.recall("tomato sauce", k=3)]
        for i in range(1000):
            recaller.recall(["zebra foal", "canary", "sun wall", "basil"][i % 4], k=3)
        assert [(h.episode_id, h.positions) for h in recaller.recall("tomato sauce", k=3)] == first

    def test_confirm_used_reinforces_and_refuses_other_tenants(
        self, backend: ChromaBackend, recaller: HierarchicalRecaller
    ) -> None:
        fill(backend, "bob")
        (updated,) = recaller.confirm_used(["alice-zebra"])
        assert updated.recall_count == 1 and updated.last_accessed == 1.7e9 + 30 * DAY
        assert recaller.store.get(["alice-zebra"])[0].recall_count == 1
        with pytest.raises(StoreError, match="bob-zebra"):
            recaller.confirm_used(["bob-zebra"])
        assert backend.store_for("bob").get(["bob-zebra"])[0].recall_count == 0

    def test_reinforcement_weight_lifts_confirmed_episodes(self, backend: ChromaBackend) -> None:
        store = fill(backend, "carol")
        now = 1.7e9 + 30 * DAY
        plain = HierarchicalRecaller(store, EMB, clock=lambda: now)
        query = "tomato"
        ranked = [h.episode_id for h in plain.recall(query, k=2)]
        loser = ranked[-1]
        plain.confirm_used([loser] * 1)
        for _ in range(3):
            plain.confirm_used([loser])
        boosted = HierarchicalRecaller(
            store,
            EMB,
            clock=lambda: now,
            config=EpisegConfig(recall=RecallConfig(reinforcement_weight=5.0)),
        )
        assert boosted.recall(query, k=2)[0].episode_id == loser
        assert [h.episode_id for h in plain.recall(query, k=2)] == ranked


class TestIsolationAndFreshness:
    def test_hits_never_from_another_tenant(self, backend: ChromaBackend) -> None:
        alice = fill(backend, "alice")
        bob = IndexedStore(backend.store_for("bob"), check_interval=0.0)
        bob.add([episode("bob", "only-bob", "s9", 1, ["the quokka stole my sandwich"])])
        rec = HierarchicalRecaller(alice, EMB, clock=lambda: 2e9)
        assert rec.recall("quokka sandwich", k=5) == []  # neither lexical nor dense leaks
        for query in ("zebra", "tomato", "production"):
            assert all(h.episode.user == "alice" for h in rec.recall(query, k=5))
        assert all(key[0].startswith("alice-") for key, _ in alice.index.turns.top("zebra", 9))

    def test_a_foreign_turn_row_never_surfaces(self, backend: ChromaBackend) -> None:
        alice = fill(backend, "alice")
        intruder = episode("mallory", "quokka", "s9", 1, ["the quokka stole my sandwich"])
        alice.inner._handles.create()[1].upsert([intruder])  # type: ignore[attr-defined]  # tampering
        rec = HierarchicalRecaller(alice, EMB, clock=lambda: 2e9)
        assert rec.recall("quokka sandwich", k=5) == []

    def test_writes_by_another_writer_are_noticed(self, backend: ChromaBackend) -> None:
        alice = fill(backend, "alice")
        rec = HierarchicalRecaller(alice, EMB, clock=lambda: 2e9)
        assert rec.recall("quokka", k=5) == []
        backend.store_for("alice").add([episode("alice", "q", "s9", 1, ["a quokka smiled"])])
        assert [h.episode_id for h in rec.recall("quokka", k=5)] == ["alice-q"]
        alice.delete(["alice-q"])
        assert rec.recall("quokka", k=5) == []

    def test_turn_vectors_are_filled_in_when_missing(self, backend: ChromaBackend) -> None:
        store = IndexedStore(backend.store_for("dave"), embed_turns=EMB.embed)
        bare = episode("dave", "x", "s1", 1, ["the walrus sings at night"])
        store.add([dataclasses.replace(bare, turn_embeddings=None)])
        matches = store.query_turns(EMB.embed(["walrus sings"])[0], 3)
        assert matches and matches[0].episode_id == "dave-x"


class TestTimeRangeEdges:
    """since/until keep exactly the episodes overlapping the range, ends included."""

    @pytest.fixture
    def recaller(self, backend: ChromaBackend) -> HierarchicalRecaller:
        # a three-day episode whose zebra turn is its first, and a one-day-later short one
        t0 = 1.7e9
        long = episode("alice", "long", "s1", 0, ["zebra stripes", "lunch", "dinner"])
        long = dataclasses.replace(
            long,
            turns=tuple(
                dataclasses.replace(t, ts=t0 + i * 1.5 * DAY) for i, t in enumerate(long.turns)
            ),
            opened_at=t0,
            closed_at=t0 + 3 * DAY,
        )
        short = episode("alice", "short", "s1", 5, ["zebra crossing", "green light"])
        store = IndexedStore(backend.store_for("alice"), check_interval=0.0)
        store.add([long, short])
        return HierarchicalRecaller(store, EMB, clock=lambda: t0 + 30 * DAY)

    def ids(
        self, recaller: HierarchicalRecaller, since: float | None = None, until: float | None = None
    ) -> set[str]:
        vector = EMB.embed(["zebra stripes"])[0]  # a vector alone: the dense list only
        return {h.episode_id for h in recaller.recall(vector, k=5, since=since, until=until)}

    def test_a_long_episode_is_found_by_a_turn_far_outside_the_range(
        self, recaller: HierarchicalRecaller
    ) -> None:
        # its matching turn is 2.9 days before `since` (the former one-day pad dropped it)
        assert "alice-long" in self.ids(recaller, since=1.7e9 + 2.9 * DAY)

    def test_ends_are_exact(self, recaller: HierarchicalRecaller) -> None:
        t0 = 1.7e9
        closed, opened = t0 + 3 * DAY, t0 + 5 * DAY  # long closes, short opens
        assert "alice-long" in self.ids(recaller, since=closed)
        assert "alice-long" not in self.ids(recaller, since=closed + 1.0)
        assert "alice-short" in self.ids(recaller, until=opened)
        assert "alice-short" not in self.ids(recaller, until=opened - 1.0)
        assert self.ids(recaller, since=closed + 1.0, until=opened - 1.0) == set()
