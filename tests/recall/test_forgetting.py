"""Retention, decay of unused memories and archiving, with an injected clock."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from episeg.config import EpisegConfig, ForgettingConfig
from episeg.recall.forgetting import maintain, reinforce, retention
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
        cfg = EpisegConfig(forgetting=ForgettingConfig(initial_days=2.0, growth_days=3.0))
        fresh = ep("a", [1, 0])
        s_never = 2.0 * (1 + math.exp(-1.0)) / 2  # t = 2 days, S0 = 2
        assert retention(fresh, config=cfg, now=2 * DAY) == pytest.approx(math.exp(-2 / s_never))
        once = reinforce(fresh, config=cfg, now=DAY)
        assert once.strength == 5.0
        assert retention(once, config=cfg, now=DAY + 5 * DAY) == pytest.approx(math.exp(-1))


class TestMaintain:
    def test_decay_archive_and_idempotence(self, tmp_path: Path) -> None:
        store = ChromaBackend.persistent(tmp_path / "db").store_for("alice")
        store.add([ep("used", [1, 0]), ep("unused", [0, 1]), ep("new", [1, 1], closed_at=4 * DAY)])
        cfg = EpisegConfig(
            forgetting=ForgettingConfig(initial_days=1.0, growth_days=1.0, archive_floor=0.05)
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
