"""Malformed ``expand`` and ``session`` are RecallArgumentError, not a ValueError or no hits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from episeg.errors import RecallArgumentError
from episeg.memory import Memory
from episeg.recall.arguments import check_recall_arguments
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.hits import Expand
from episeg.recall.index import IndexedStore
from episeg.testing import HashingEmbedder, InMemoryBackend
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

    def test_a_lone_surrogate_in_the_query(self, memory: Memory) -> None:
        """R2-6: refused like ``Turn`` refuses one, before the embedder sees it."""
        with pytest.raises(RecallArgumentError, match="query holds a lone surrogate"):
            memory.recall("alice", "login \ud800 401")
        with pytest.raises(RecallArgumentError, match="lone surrogate '\\\\udc80'"):
            check_recall_arguments("deploy \udc80", 1)
        assert [h.episode_id for h in memory.recall("alice", "deploy \U0001f680")] == ["e1"]

    @pytest.mark.slow
    def test_a_lone_surrogate_never_reaches_the_onnx_tokenizer(self, tmp_path: Path) -> None:
        """R2-6 as found: the real ONNX embedder's tokenizer raised a bare ``TypeError``."""
        from episeg.embedders import OnnxMiniLMEmbedder

        embedder = OnnxMiniLMEmbedder.default(threads=1)
        with pytest.raises(TypeError):  # what the query met before the check
            embedder.embed(["login \ud800 401"])
        mem = Memory(path=tmp_path / "onnx", embedder=embedder, judge=None, scorer=None)
        try:
            with pytest.raises(RecallArgumentError, match="lone surrogate"):
                mem.recall("alice", "login \ud800 401")
        finally:
            mem.close()

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


def test_the_recaller_itself_refuses_a_query_that_is_not_utf8() -> None:
    """HierarchicalRecaller.recall checks its own arguments (AsyncMemory, adapters call it)."""
    store = IndexedStore(InMemoryBackend().store_for("u"))
    recaller = HierarchicalRecaller(store, HashingEmbedder(), clock=lambda: 0.0)
    with pytest.raises(RecallArgumentError, match="lone surrogate"):
        recaller.recall("login \ud800 401", k=3)
