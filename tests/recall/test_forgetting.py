"""Retention, decay of unused memories and archiving, with an injected clock."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from episeg.config import EpisegConfig, ForgettingConfig
from episeg.recall.card import EpisodeCard
from episeg.recall.forgetting import maintain, reinforce, retention, starting_strength
from episeg.recall.ranking import card_retention
from episeg.recall.rerank import Recaller
from episeg.store import ChromaBackend
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Episode, Salience, Turn

DAY = 86400.0


def ep(id: str, vec: list[float], *, closed_at: float = 0.0, score: int = 8) -> Episode:
    return Episode(
        id=id,
        user="u",
        session="s",
        summary=id,
        opened_at=closed_at,
        closed_at=closed_at,
        turns=(Turn(actor=Actor.USER, text=id, ts=closed_at),),
        embedding=np.asarray(vec, np.float32) / np.linalg.norm(vec),
        salience=Salience.scored(score, scorer="t"),
    )


class TestRetention:
    def test_formulas(self) -> None:
        forgetting = ForgettingConfig(initial_days=2.0, growth_days=3.0, salience_boost=0.0)
        cfg = EpisegConfig(forgetting=forgetting)
        fresh = ep("a", [1, 0])
        s_never = 2.0 * (1 + math.exp(-1.0)) / 2  # t = 2 days, S0 = 2
        assert retention(fresh, config=cfg, now=2 * DAY) == pytest.approx(math.exp(-2 / s_never))
        once = reinforce(fresh, config=cfg, now=DAY)
        assert once.strength == 5.0
        assert retention(once, config=cfg, now=DAY + 5 * DAY) == pytest.approx(math.exp(-1))


class TestSalienceSetsTheStartingStrength:
    """The seed: "The write-time score is the starting weight; the read pattern adjusts it."
    Before, a salience-10 incident nobody confirmed was archived with a salience-1 chat,
    ~1.8 days after both closed (review 11)."""

    def test_a_salient_episode_outlives_a_mundane_one(self, tmp_path: Path) -> None:
        store = ChromaBackend.persistent(tmp_path / "db").store_for("alice")
        store.add([ep("chat", [1, 0], score=1), ep("outage", [0, 1], score=10)])
        cfg = EpisegConfig()  # defaults: S0 = score days
        assert maintain(store, cfg, 2 * DAY, archive=True).archived == 1
        assert [e.archived for e in store.get(["chat", "outage"])] == [True, False]
        assert maintain(store, cfg, 10 * DAY, archive=True).archived == 0  # R ~ 0.23
        assert maintain(store, cfg, 20 * DAY, archive=True).archived == 1  # R ~ 0.03: it fades too

    def test_starting_strength_by_score_and_unscored(self) -> None:
        cfg = EpisegConfig()
        strengths = [starting_strength(ep("e", [1, 0], score=n), config=cfg) for n in (1, 5, 10)]
        assert strengths == pytest.approx([1.0, 5.0, 10.0])
        plain = Episode(
            id="p", user="u", session="s", summary="", opened_at=0.0, closed_at=0.0, turns=()
        )
        assert starting_strength(plain, config=cfg) == 1.0
        off = EpisegConfig(forgetting=ForgettingConfig(salience_boost=0.0))
        assert starting_strength(ep("e", [1, 0], score=10), config=off) == 1.0

    def test_a_confirmed_use_grows_from_the_salient_start(self) -> None:
        used = reinforce(ep("e", [1, 0], score=7), config=EpisegConfig(), now=DAY)
        assert used.strength == 7.0 + 1.0

    @pytest.mark.parametrize("score", [1, 6, 10])
    @pytest.mark.parametrize("pinned", [False, True])
    @pytest.mark.parametrize("used", [False, True])
    def test_the_recall_cards_retention_is_the_episodes(
        self, score: int, pinned: bool, used: bool
    ) -> None:
        """Ranking reads retention from cards: a pinned card read as unpinned (its
        reinforcement term fell to 0 in 30 days, review 11), and salience was ignored."""
        episode = dataclasses.replace(ep("e", [1, 0], score=score), pinned=pinned)
        if used:
            episode = reinforce(episode, config=EpisegConfig(), now=DAY)
        for now in (1.5 * DAY, 3 * DAY, 30 * DAY):
            expected = retention(episode, config=EpisegConfig(), now=now)
            got = card_retention(EpisodeCard.of(episode), EpisegConfig(), now)
            assert got == pytest.approx(expected)
            assert (got == 1.0) if pinned else (got < 1.0)


class TestMaintain:
    def test_decay_archive_and_idempotence(self, tmp_path: Path) -> None:
        store = ChromaBackend.persistent(tmp_path / "db").store_for("alice")
        store.add([ep("used", [1, 0]), ep("unused", [0, 1]), ep("new", [1, 1], closed_at=4 * DAY)])
        cfg = EpisegConfig(
            forgetting=ForgettingConfig(
                initial_days=1.0, growth_days=1.0, archive_floor=0.05, salience_boost=0.0
            )
        )
        by_similarity = cfg.with_overrides(**{"recall.weights": (0.0, 0.0, 1.0)})
        out = Recaller(
            store, HashingEmbedder(dim=2), config=by_similarity, clock=lambda: 3 * DAY
        ).recall(np.array([1.0, 0.0]), k=1)
        assert [se.episode.id for se in out] == ["used"]
        now = 4 * DAY
        report = maintain(store, cfg, now)
        # used: S=2, t=1 -> R=e^-0.5. unused: t=4, S=(1+e^-4)/2 -> R~3e-4. new: t=0 -> R=1.
        assert (report.total, report.recalled, report.never_recalled) == (3, 1, 2)
        assert (report.decayed, report.below_floor, report.archived) == (1, 1, 0)
        s_unused = (1 + math.exp(-4)) / 2
        expected_mean = (math.exp(-0.5) + math.exp(-4 / s_unused) + 1.0) / 3
        assert report.mean_retention == pytest.approx(expected_mean)
        used, unused, new = store.get(["used", "unused", "new"])
        assert unused.strength == pytest.approx(s_unused) and not unused.archived
        assert used.strength == 2.0 and new.strength == 1.0
        assert unused.salience == Salience.scored(8, scorer="t")  # write-time score kept
        again = maintain(store, cfg, now)
        assert again.decayed == 0  # same clock: nothing left to decay
        archived = maintain(store, cfg, now, archive=True)
        assert (archived.archived, archived.already_archived) == (1, 0)
        assert store.get(["unused"])[0].archived and store.count() == 3
        assert "unused" not in {e.id for e, _ in store.query(np.array([0.0, 1.0]), k=3)}
        final = maintain(store, cfg, now, archive=True)
        assert (final.archived, final.already_archived) == (0, 1)

    def test_empty_store(self, tmp_path: Path) -> None:
        store = ChromaBackend.persistent(tmp_path / "db").store_for("nobody")
        report = maintain(store, EpisegConfig(), 0.0, archive=True)
        assert (report.total, report.mean_retention) == (0, 0.0)
