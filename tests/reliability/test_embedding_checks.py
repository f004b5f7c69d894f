"""F185: the embedder's output is checked before a turn is accepted.

A custom embedder returned NaN for one text: the turn was accepted, and every flush of
its session then failed (the journal refuses an episode with a non-finite embedding),
so the episode could never be closed. An embedder changed under open sessions gave a
raw numpy error deep in the step on every turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from episeg.errors import EmbeddingError
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.memory import Memory
from episeg.segmentation.segmenter import Segmenter
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.interfaces.helpers import KEY_A, KEYS, LiveServer


class _Poisoned(HashingEmbedder):
    """NaN for any text holding "poison" (a model fault), else the hashing vectors."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.asarray(super().embed(list(texts)), dtype=np.float32)
        vectors[["poison" in t for t in texts]] = np.nan
        return vectors


def _turn(n: int, text: str) -> Turn:
    return Turn(actor="user", text=text, ts=float(n), user="u", id=f"t{n}")


def test_a_nan_vector_refuses_its_turn_and_the_session_still_closes(tmp_path: Path) -> None:
    memory = Memory(path=tmp_path, embedder=_Poisoned(), judge=None, scorer=None)
    memory.observe(_turn(0, "deploy prod"))
    with pytest.raises(EmbeddingError, match="NaN"):
        memory.observe(_turn(1, "poison text"))
    memory.observe(_turn(2, "more deploy"))
    (episode,) = memory.flush("u")
    assert [t.id for t in episode.turns] == ["t0", "t2"]
    memory.observe(_turn(3, "clean again"))  # the session goes on


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (np.zeros((2, 8)), "shape"),
        (np.zeros((1, 0)), "shape"),
        ([["a", "b"]], "no array of numbers"),
        (np.full((1, 8), np.inf), "infinite"),
    ],
)
def test_malformed_embedder_answers_are_typed(answer: object, says: str) -> None:
    class Broken(HashingEmbedder):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            return answer  # type: ignore[return-value]

    segmenter = Segmenter(embedder=Broken(), signals={"window"})
    with pytest.raises(EmbeddingError, match=says):
        segmenter.observe(_turn(0, "hello"))
    assert segmenter.open_turns("u", "default") == ()


def test_an_embedder_changed_under_open_sessions_is_a_typed_error(tmp_path: Path) -> None:
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    memory.observe(_turn(0, "deploy prod"))
    memory.close()
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=32), judge=None, scorer=None)
    with pytest.raises(EmbeddingError, match="64"):
        memory.observe(_turn(1, "more deploy"))


def test_the_service_answers_500_for_the_embedder_and_keeps_the_turn_out(
    tmp_path: Path,
) -> None:
    memory = open_memory(tmp_path, embedder=_Poisoned())
    server = LiveServer(create_app(memory, KEYS))
    try:
        with server.client(KEY_A) as http:
            turn = {"actor": "user", "text": "poison here", "session": "s", "id": "p1"}
            answer = http.post("/v1/turns", json=turn)
            assert answer.status_code == 500 and "NaN" in answer.json()["detail"]
            ok = http.post("/v1/turns", json={**turn, "text": "fine now"})
            assert ok.status_code == 200, ok.text  # the id was not taken
    finally:
        server.stop()
        memory.close()
