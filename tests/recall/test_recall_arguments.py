"""Malformed ``expand`` and ``session`` are RecallArgumentError, not a ValueError or no hits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from episeg.errors import RecallArgumentError
from episeg.memory import Memory
from episeg.recall.arguments import check_recall_arguments
from episeg.recall.hits import Expand
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Episode, Turn

EMB = HashingEmbedder(dim=256)


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    mem = Memory(path=tmp_path, embedder=EMB, judge=None, scorer=None)
    text = "deploy the billing service"
    vectors = EMB.embed([text])
    turn = Turn(actor=Actor.USER, text=text, ts=1.7e9, id="e1:t0", user="alice", session="s")
    mem.store("alice").add(
        [
            Episode(
                id="e1",
                user="alice",
                session="s",
                turns=(turn,),
                summary=text,
                opened_at=1.7e9,
                closed_at=1.7e9,
                embedding=vectors[0],
                turn_embeddings=vectors,
            )
        ]
    )
    return mem


class TestRecallArguments:
    def test_unknown_expand(self, memory: Memory) -> None:
        with pytest.raises(RecallArgumentError, match="unknown expand 'whole'"):
            memory.recall("alice", "deploy", expand="whole")
        with pytest.raises(RecallArgumentError):
            memory.recaller("alice").recall("deploy", expand="whole")

    def test_session_that_is_not_a_string(self, memory: Memory) -> None:
        with pytest.raises(RecallArgumentError, match="session must be a string"):
            memory.recall("alice", "deploy", session=7)  # type: ignore[arg-type]
        with pytest.raises(RecallArgumentError, match="session must be a string"):
            memory.recaller("alice").recall("deploy", session=7)  # type: ignore[arg-type]

    def test_well_formed_ones_still_recall(self, memory: Memory) -> None:
        assert [h.episode_id for h in memory.recall("alice", "deploy", session="s")] == ["e1"]
        hits = memory.recall("alice", "deploy", expand="EPISODE")
        assert [h.episode_id for h in hits] == ["e1"]

    def test_checker_covers_expand_and_session(self) -> None:
        check_recall_arguments("q", 1, session="s", expand=Expand.EPISODE)
        check_recall_arguments("q", 1, session=None, expand="turns")
        with pytest.raises(RecallArgumentError, match="session"):
            check_recall_arguments("q", 1, session=b"s")
        with pytest.raises(RecallArgumentError, match="expand"):
            check_recall_arguments("q", 1, expand="all")

    def test_still_a_value_error_for_callers_catching_that(self) -> None:
        with pytest.raises(ValueError):
            Expand.parse(np.float32(1.0))
