"""Rerank with hand-computed scores, reinforcement, feedback and learned weights."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from episeg.config import EpisegConfig, ForgettingConfig, RecallConfig
from episeg.errors import TenantError
from episeg.recall.rerank import Recaller, feedback, rerank
from episeg.store import ChromaBackend, ChromaEpisodeStore
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Episode, Salience, ScoredEpisode, Turn

H = 3600.0


def ep(
    id: str,
    *,
    closed_at: float = 0.0,
    score: int | None = 5,
    vec: list[float] | None = None,
    last_accessed: float | None = None,
    unscored: bool = False,
) -> Episode:
    sal = (
        Salience.unscored("judge timed out", scorer="t")
        if unscored
        else None
        if score is None
        else Salience.scored(score, scorer="t")
    )
    v = None if vec is None else np.asarray(vec, np.float32) / np.linalg.norm(vec)
    return Episode(
        id=id,
        user="u",
        session="s",
        summary=id,
        opened_at=closed_at,
        closed_at=closed_at,
        turns=(Turn(actor=Actor.USER, text=id, ts=closed_at),),
        embedding=v,
        salience=sal,
        last_accessed=last_accessed,
    )


class TestRerank:
    def test_hand_computed_scores(self) -> None:
        now = 10 * H
        # recency raw: 0.5**0=1, 0.5**1=.5, 0.5**2=.25 (base 0.5 per hour) -> norm 1, 1/3, 0
        # importance raw: (10-1)/9=1, (4-1)/9=1/3, (1-1)/9=0               -> norm 1, 1/3, 0
        # similarity raw: .2, .6, 1.0                                       -> norm 0, .5, 1
        cands = [
            (ep("a", closed_at=now, score=10), 0.2),
            (ep("b", closed_at=now - H, score=4), 0.6),
            (ep("c", closed_at=0.0, score=1, last_accessed=now - 2 * H), 1.0),
        ]
        out = rerank(cands, weights=(1.0, 2.0, 3.0), recency_base=0.5, now=now)
        got = {se.episode.id: se for se in out}
        assert got["a"].score == pytest.approx(1 + 2)
        assert got["b"].score == pytest.approx(1 / 3 + 2 / 3 + 1.5)
        assert got["c"].score == pytest.approx(3.0)
        assert (got["b"].recency, got["b"].importance, got["b"].similarity) == pytest.approx(
            (1 / 3, 2 / 3, 1.5)
        )
        assert got["b"].raw_similarity == 0.6
        # a and c tie at 3.0; the tie goes to the higher raw similarity (c), b is last.
        assert [se.episode.id for se in out] == ["c", "a", "b"]

    def test_equal_terms_contribute_zero(self) -> None:
        cands = [(ep("a"), 0.5), (ep("b"), 0.5)]
        out = rerank(cands, weights=(1.0, 1.0, 1.0), recency_base=0.995, now=0.0)
        assert all(
            se.score == 0.0 and se.recency == se.importance == se.similarity == 0.0 for se in out
        )
        assert [se.episode.id for se in out] == ["a", "b"]  # tie broken by id
        single = rerank([(ep("x"), 0.9)], weights=(1.0, 1.0, 1.0), recency_base=0.9, now=5.0)
        assert single[0].score == 0.0

    def test_unscored_gets_median_and_is_flagged(self) -> None:
        # scored importances 0, 4/9, 1 -> median 4/9 -> normalised 4/9 for the unscored ones
        cands = [
            (ep("lo", score=1), 0.5),
            (ep("mid", score=5), 0.5),
            (ep("hi", score=10), 0.5),
            (ep("none", score=None), 0.5),
            (ep("failed", unscored=True), 0.5),
        ]
        out = {
            se.episode.id: se
            for se in rerank(cands, weights=(0.0, 1.0, 0.0), recency_base=0.995, now=0.0)
        }
        assert out["none"].importance == pytest.approx(4 / 9)
        assert out["failed"].importance == pytest.approx(4 / 9)
        assert out["none"].importance_imputed and out["failed"].importance_imputed
        assert not out["mid"].importance_imputed
        everyone_unscored = rerank(
            [(ep("p", score=None), 0.1), (ep("q", unscored=True), 0.9)],
            weights=(0.0, 1.0, 1.0),
            recency_base=0.995,
            now=0.0,
        )
        assert [se.importance for se in everyone_unscored] == [0.0, 0.0]

    def test_future_access_counts_as_now(self) -> None:
        out = rerank(
            [(ep("f", closed_at=100 * H), 0.5), (ep("p", closed_at=0.0), 0.5)],
            weights=(1.0, 0.0, 0.0),
            recency_base=0.5,
            now=H,
        )
        assert [se.episode.id for se in out] == ["f", "p"]


@pytest.fixture
def store(tmp_path: Path) -> ChromaEpisodeStore:
    return ChromaBackend.persistent(tmp_path / "db").store_for("alice")


class TestRecaller:
    def test_reinforcement_grows_and_recency_resets(self, store: ChromaEpisodeStore) -> None:
        store.add([ep("a", vec=[1, 0, 0], closed_at=0.0), ep("b", vec=[0, 1, 0], closed_at=0.0)])
        clock = iter([10 * H, 30 * H])
        # the MemoryBank arithmetic alone: salience plays no part in the starting strength
        cfg = EpisegConfig(
            forgetting=ForgettingConfig(initial_days=1.0, growth_days=2.0, salience_boost=0.0)
        )
        rec = Recaller(store, HashingEmbedder(dim=3), config=cfg, clock=lambda: next(clock))
        first = rec.recall(np.array([1.0, 0.0, 0.0]), k=1)
        assert [se.episode.id for se in first] == ["a"]
        (a1,) = store.get(["a"])
        assert (a1.recall_count, a1.strength, a1.last_accessed) == (1, 3.0, 10 * H)
        rec.recall(np.array([1.0, 0.0, 0.0]), k=1)
        a2, b2 = store.get(["a", "b"])
        assert (a2.recall_count, a2.strength, a2.last_accessed) == (2, 5.0, 30 * H)
        assert (b2.recall_count, b2.last_accessed, b2.strength) == (0, None, 1.0)
        # a was just accessed, so on recency alone it now beats the untouched b.
        only_recency = Recaller(
            store,
            HashingEmbedder(dim=3),
            reinforce=False,
            clock=lambda: 31 * H,
            config=cfg.with_overrides(**{"recall.weights": (1.0, 0.0, 0.0)}),
        )
        assert only_recency.recall(np.array([0.0, 1.0, 0.0]), k=2)[0].episode.id == "a"

    def test_candidates_at_least_k_and_archived_skipped(self, store: ChromaEpisodeStore) -> None:
        store.add([ep(f"e{i}", vec=[1, i / 10, 0]) for i in range(6)])
        store.update([dataclasses.replace(store.get(["e0"])[0], archived=True)])
        rec = Recaller(
            store,
            HashingEmbedder(dim=3),
            clock=lambda: 0.0,
            reinforce=False,
            config=EpisegConfig(recall=RecallConfig(candidates=1)),
        )
        out = rec.recall(np.array([1.0, 0.0, 0.0]), k=4)
        assert len(out) == 4 and "e0" not in {se.episode.id for se in out}

    def test_text_query_uses_embedder(self, store: ChromaEpisodeStore) -> None:
        emb = HashingEmbedder(dim=64)
        store.add(
            [
                dataclasses.replace(ep(t), embedding=emb.embed([t])[0])
                for t in ("deploy version two", "bake bread", "train a cat")
            ]
        )
        rec = Recaller(
            store,
            emb,
            clock=lambda: 0.0,
            config=EpisegConfig(recall=RecallConfig(weights=(0.0, 0.0, 1.0))),
        )
        assert rec.recall("bread baking", k=1)[0].episode.id == "bake bread"
        with pytest.raises(ValueError):
            rec.recall("x", k=0)


def _se(id: str, rec: float, imp: float, sim: float) -> ScoredEpisode:
    return ScoredEpisode(ep(id), rec + imp + sim, rec, imp, sim, sim)


class TestFeedback:
    def test_moves_toward_terms_of_used_episodes(self) -> None:
        res = [_se("sim-top", 0.0, 0.0, 1.0), _se("recent", 1.0, 0.0, 0.0)]
        w = feedback(res, {"recent"}, weights=(1.0, 1.0, 1.0), rate=0.5)
        a, b, c = np.exp(0.25), 1.0, np.exp(-0.25)
        s = 3.0 / (a + b + c)
        assert w == pytest.approx((a * s, b * s, c * s))
        assert sum(w) == pytest.approx(3.0)

    def test_bounded_and_zero_stays_zero(self) -> None:
        res = [_se("x", 0.0, 0.0, 1.0), _se("y", 1.0, 0.0, 0.0)]
        w: tuple[float, float, float] = (1.0, 0.0, 1.0)
        for _ in range(200):
            w = feedback(res, {"y"}, weights=w, rate=1.0, min_share=0.05)
        assert w[1] == 0.0 and w[2] == pytest.approx(0.05 * 2.0, rel=0.05)
        assert sum(w) == pytest.approx(2.0)

    def test_rejects_unknown_ids_and_ignores_empty(self) -> None:
        res = [_se("x", 0.0, 0.0, 1.0)]
        assert feedback(res, set(), weights=(1.0, 2.0, 3.0)) == (1.0, 2.0, 3.0)
        with pytest.raises(ValueError, match="not among"):
            feedback(res, {"ghost"}, weights=(1.0, 1.0, 1.0))

    def test_learned_weights_persist_per_tenant(self, tmp_path: Path) -> None:
        backend = ChromaBackend.persistent(tmp_path / "db")
        alice = backend.store_for("alice")
        alice.add([ep("old", vec=[1, 0], closed_at=0.0), ep("new", vec=[0.8, 0.6], closed_at=H)])
        path = tmp_path / "alice-weights.json"
        gen_agents = EpisegConfig(recall=RecallConfig(weights=(1.0, 1.0, 1.0)))
        rec = Recaller(
            alice,
            HashingEmbedder(dim=2),
            config=gen_agents,
            clock=lambda: 2 * H,
            weights_path=path,
            reinforce=False,
        )
        res = rec.recall(np.array([1.0, 0.0]), k=2)
        w = rec.feedback(res, {"new"})
        assert w[0] > 1.0 > w[2]
        assert json.loads(path.read_text())["tenant"] == "alice"
        again = Recaller(alice, HashingEmbedder(dim=2), weights_path=path)
        assert again.weights == pytest.approx(w)
        with pytest.raises(TenantError):
            Recaller(backend.store_for("bob"), HashingEmbedder(dim=2), weights_path=path)


class TestMinimumSpan:
    """Near-equal raw values must not be stretched into a full 0-to-1 gap."""

    def test_seconds_of_recency_do_not_outvote_a_clear_similarity_winner(self):
        just_recalled = dataclasses.replace(ep("old", closed_at=0.0), last_accessed=1000.0)
        fresh = ep("new", closed_at=940.0)
        cands = [(just_recalled, 0.10), (fresh, 0.60)]
        plain = rerank(cands, weights=(1.0, 1.0, 1.0), recency_base=0.995, now=1000.0)
        spanned = rerank(
            cands, weights=(1.0, 1.0, 1.0), recency_base=0.995, now=1000.0, min_span=(0.1, 0.3, 0.2)
        )
        plain_old = next(se for se in plain if se.episode.id == "old")
        assert plain_old.recency == pytest.approx(1.0)  # 60 s of age became the whole range
        assert spanned[0].episode.id == "new"
        by_id = {se.episode.id: se for se in spanned}
        assert by_id["old"].recency < 0.01 and by_id["new"].similarity == pytest.approx(1.0)

    def test_wide_ranges_are_plain_min_max(self):
        cands = [(ep("a"), 0.9), (ep("b"), 0.1)]
        spanned = rerank(
            cands, weights=(0.0, 0.0, 1.0), recency_base=0.995, now=0.0, min_span=(0.1, 0.3, 0.2)
        )
        assert [se.similarity for se in spanned] == pytest.approx([1.0, 0.0])
