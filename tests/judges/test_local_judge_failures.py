"""The local judge's embedder failing is a judge failure (abstain), never a lost turn.

``LocalJudge`` embeds with the segmenter's own embedder. An error there used to
escape ``Segmenter.observe`` after the turn's id was taken, so the re-sent turn
was skipped as a duplicate and ended in no episode.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pytest

from episeg.config import EpisegConfig, JudgeConfig
from episeg.errors import JudgeError
from episeg.judges.local import LocalJudge
from episeg.segmentation import Segmenter
from episeg.testing import HashingEmbedder
from episeg.types import Episode, Turn

_TEXTS = ["deploy prod api", "run terraform apply", "check the jwt key"]


class _Flaky(HashingEmbedder):
    """Fails the ``fail_on``-th call to ``embed`` (1-based), once."""

    def __init__(self, fail_on: int | None = None) -> None:
        super().__init__()
        self.fail_on = fail_on

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.calls + 1 == self.fail_on:
            self.calls += 1
            raise RuntimeError("embedding backend hiccup")
        return super().embed(texts)


def _turns() -> list[Turn]:
    return [Turn(actor="user", text=t, ts=float(i), id=f"t{i}") for i, t in enumerate(_TEXTS)]


def _segmenter(embedder: HashingEmbedder) -> Segmenter:
    config = EpisegConfig(judge=JudgeConfig(gate="periodic", every=1))
    return Segmenter(embedder=embedder, judge=LocalJudge(embedder), config=config)


def test_an_embedder_failure_is_a_judge_error() -> None:
    judge = LocalJudge(_Flaky(fail_on=1))
    recent = [Turn(actor="user", text="auth returns 401", ts=0.0)]
    with pytest.raises(JudgeError, match="embedder failed") as info:
        judge.judge("auth", recent, Turn(actor="user", text="deploy prod", ts=1.0))
    assert isinstance(info.value.__cause__, RuntimeError)


def test_the_turn_is_kept_and_the_judge_abstains(caplog: pytest.LogCaptureFixture) -> None:
    embedder = _Flaky()
    seg = _segmenter(embedder)
    turns = _turns()
    episodes: list[Episode] = list(seg.observe(turns[0]))
    embedder.fail_on = embedder.calls + 2  # the turn's embedding, then the judge's: fails
    with caplog.at_level(logging.WARNING):
        step = seg.observe(turns[1])
    assert step.accepted
    judged = [v for v in step.verdicts if v.signal == "prediction"]
    assert [v.decision.value for v in judged] == ["abstain"]
    assert "judge failed" in judged[0].reason
    assert "embedder failed" in caplog.text
    assert not seg.observe(turns[1]).accepted  # it was taken: a re-send is a duplicate
    episodes += seg.observe(turns[2])
    episodes += seg.flush()
    assert sorted(t.id or "" for e in episodes for t in e.turns) == ["t0", "t1", "t2"]
    assert seg.stats["judge_failures"] == 1
    assert seg.stats["turns"] == 3
