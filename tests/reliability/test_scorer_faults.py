"""A salience scorer that raises, or any failure after the segmenter took a turn, never
costs the turn: the episode is stored unscored with the reason, or the turn can be re-sent.

Found by review: a scorer raising a non-episeg exception (here ``TimeoutError``) escaped
``Memory.observe`` after the segmenter had accepted the turn and before the journal
recorded it, so the re-sent turn was skipped as a duplicate and was in no episode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Episode, Salience, Turn

from .memstore import MemBackend

TURNS = [
    Turn(actor="user", text="deploy the prod api", ts=0.0, id="t0"),
    Turn(actor="assistant", text="done <episode_boundary>", ts=1.0, id="t1"),
    Turn(actor="user", text="now rotate the jwt key", ts=2.0, id="t2"),
    Turn(actor="assistant", text="rotated", ts=3.0, id="t3"),
]


class FlakyScorer:
    name = "flaky"

    def __init__(self) -> None:
        self.fail_next = False

    def score(self, episode: Episode) -> Salience:
        if self.fail_next:
            self.fail_next = False
            raise TimeoutError("scoring service timed out")
        return Salience(score=5, scorer=self.name, reason="fine")


def _stored_turns(backend: MemBackend) -> list[list[str]]:
    return sorted([t.id or "" for t in e.turns] for e in backend.rows.values())


def test_a_scorer_that_raises_leaves_the_episode_unscored_and_loses_nothing(
    tmp_path: Path,
) -> None:
    backend, scorer = MemBackend(), FlakyScorer()
    mem = Memory(
        path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=scorer, backend=backend
    )
    mem.ingest(TURNS[:2])
    scorer.fail_next = True
    closed = mem.observe(TURNS[2])  # closes [t0, t1]; its scoring raises
    assert [e.turn_ids for e in closed] == [("t0", "t1")]
    salience = closed[0].salience
    assert salience is not None and salience.score is None
    assert "TimeoutError" in salience.reason and salience.scorer == "flaky"
    mem.observe(TURNS[3])
    mem.flush()
    assert _stored_turns(backend) == [["t0", "t1"], ["t2", "t3"]]


def test_a_failure_after_the_segmenter_took_the_turn_lets_it_be_sent_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = MemBackend()
    mem = Memory(
        path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None, backend=backend
    )
    mem.ingest(TURNS[:2])
    finish = mem._finish

    def fail_once(episode: Episode) -> Any:
        monkeypatch.setattr(mem, "_finish", finish)
        raise RuntimeError("extractive summary failed")

    monkeypatch.setattr(mem, "_finish", fail_once)
    with pytest.raises(RuntimeError):
        mem.observe(TURNS[2])
    assert [e.turn_ids for e in mem.observe(TURNS[2])] == [("t0", "t1")]  # new, not a duplicate
    mem.observe(TURNS[3])
    mem.flush()
    mem.close()
    assert _stored_turns(backend) == [["t0", "t1"], ["t2", "t3"]]
