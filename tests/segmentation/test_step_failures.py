"""A step that raises takes nothing: the same turn re-sent is new, not a lost duplicate.

``Segmenter.observe`` undoes the intake (id, sequence, timestamp) and the
position of a turn whose embedding or per-turn step raised before the turn
joined the open episode; a judge raising outside its contract is a failed
judge call (abstain), as a ``JudgeError`` is.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

import numpy as np
import pytest

from episeg.config import EpisegConfig, JudgeConfig
from episeg.errors import JudgeError
from episeg.segmentation import Segmenter
from episeg.segmentation.tap import JudgeTap
from episeg.testing import HashingEmbedder
from episeg.types import Episode, JudgeAnswer, Turn

_TEXTS = [
    "auth login returns 401",
    "Rotate the jwt key. <episode_boundary>",
    "how do I deploy prod?",
    "Edit version.tf, then apply.",
]


def _turns() -> list[Turn]:
    return [
        Turn(actor="user" if i % 2 == 0 else "assistant", text=t, ts=float(i))
        for i, t in enumerate(_TEXTS)
    ]


def _ids(episodes: list[Episode]) -> list[list[str | None]]:
    return [[t.id for t in e.turns] for e in episodes]


class _Once:
    """Raises on its first call, then calls ``inner``."""

    def __init__(self, inner: object) -> None:
        self.inner, self.raised = inner, False

    def __call__(self, *args: object, **kwargs: object) -> object:
        if not self.raised:
            self.raised = True
            raise RuntimeError("a bug in a signal")
        return self.inner(*args, **kwargs)  # type: ignore[operator]


def test_a_signal_raising_before_the_turn_joined_takes_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    turns = _turns()
    live = Segmenter(embedder=HashingEmbedder())
    expected = [e for t in turns for e in live.observe(t)] + live.flush()

    seg = Segmenter(embedder=HashingEmbedder())
    episodes = list(seg.observe(turns[0]))
    state = seg._sessions[("default", "default")]
    first = next(iter(state.signals.values()))  # the first signal to run: nothing else moved
    first.update = _Once(first.update)  # type: ignore[method-assign,assignment]
    with caplog.at_level(logging.ERROR), pytest.raises(RuntimeError, match="a bug"):
        seg.observe(turns[1])
    assert "send it again" in caplog.text
    assert state.positions == 1 and seg.stats["turns"] == 1 and state.intake.seq == 1
    for turn in turns[1:]:  # the caller re-sends the turn, then goes on
        episodes += seg.observe(turn)
    episodes += seg.flush()
    assert (
        _ids(episodes) == _ids(expected) == [["default:0", "default:1"], ["default:2", "default:3"]]
    )
    assert seg.stats["turns"] == 4 and seg.stats["duplicates"] == 0


def test_a_step_raising_after_the_turn_joined_keeps_it(caplog: pytest.LogCaptureFixture) -> None:
    seg = Segmenter(embedder=HashingEmbedder())
    turn = dataclasses.replace(_turns()[0], id="q1")
    seg.observe(turn)  # builds the session; then break its first signal's reset
    seg.forget("default", "default")
    state = seg._session(turn)
    first = next(iter(state.signals.values()))
    first.reset = _Once(first.reset)  # type: ignore[method-assign,assignment]
    with caplog.at_level(logging.ERROR), pytest.raises(RuntimeError):
        seg.observe(turn)  # the session's first turn: opened, then the reset raised
    assert "joined the open episode" in caplog.text
    assert not seg.observe(turn).accepted  # in the open episode already: a duplicate
    assert _ids(seg.flush()) == [["q1"]]


def test_an_embedder_error_takes_nothing() -> None:
    class Failing(HashingEmbedder):
        fail = True

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            if self.fail:
                self.fail = False
                raise RuntimeError("embedder down")
            return super().embed(texts)

    seg = Segmenter(embedder=Failing())
    turn = _turns()[0]
    with pytest.raises(RuntimeError, match="embedder down"):
        seg.observe(turn)
    assert seg.stats["turns"] == 0
    assert seg.observe(turn).accepted


class _BuggyJudge:
    """A plug-in judge that raises what no judge should (not a ``JudgeError``)."""

    name = "buggy"
    calls = 0

    def judge(self, summary: str, recent: Sequence[Turn], turn: Turn) -> JudgeAnswer:
        self.calls += 1
        raise KeyError("summary")


def test_a_judge_raising_outside_its_contract_is_a_failed_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = EpisegConfig(judge=JudgeConfig(gate="periodic", every=1))
    seg = Segmenter(embedder=HashingEmbedder(), judge=_BuggyJudge(), config=config)
    texts = ["deploy prod api", "run terraform apply", "check the jwt key"]
    turns = [Turn(actor="user", text=t, ts=float(i)) for i, t in enumerate(texts)]
    with caplog.at_level(logging.ERROR):
        episodes = [e for t in turns for e in seg.observe(t)] + seg.flush()
    assert sorted(t.id or "" for e in episodes for t in e.turns) == [
        f"default:{i}" for i in range(3)
    ]
    assert seg.stats["judge_failures"] == seg.stats["judge_calls"] == 2
    assert "KeyError" in caplog.text


def test_a_judge_raising_outside_its_contract_is_recorded_for_the_replay() -> None:
    # the journal keeps the failure, so a replay abstains at the same turn without asking
    tap = JudgeTap(_BuggyJudge())
    turn = Turn(actor="user", text="deploy prod api", ts=0.0, id="s:0")
    with pytest.raises(KeyError):
        tap.judge("", [], turn)
    record = tap.take("s:0")
    assert record is not None and "summary" in record
    with tap.replaying({"s:0": record}), pytest.raises(JudgeError, match="summary"):
        tap.judge("", [], turn)
    assert tap.calls == 1 and tap.replay_misses == 0
