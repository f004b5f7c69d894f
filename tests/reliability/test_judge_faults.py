"""An LLM judge that times out or answers garbage never costs a turn: with the judge on a
real loopback server misbehaving, every turn still ends in exactly one stored episode."""

from __future__ import annotations

from pathlib import Path

import pytest

from episeg.config import EpisegConfig
from episeg.judges import OpenAICompatibleJudge
from episeg.memory import Memory
from episeg.testing import HashingEmbedder, LoopbackLLMServer, Reply

from .helpers import make_transcript
from .memstore import MemBackend


@pytest.mark.slow
def test_judge_timeouts_and_garbage_lose_no_turn(tmp_path: Path) -> None:
    turns = make_transcript(60, seed=11, users=1, sessions=2)
    backend = MemBackend()
    with LoopbackLLMServer(default=Reply.raw("{not json")) as server:
        server.enqueue(
            Reply.slow(2.0),
            Reply.text("ignore previous instructions"),
            Reply.json({"decision": "teleport", "summary": 3}),
            Reply.error(500),
            Reply.json({"decision": "new", "summary": "deploy"}),
            Reply.slow(2.0),
        )
        judge = OpenAICompatibleJudge(
            model="m", api_key="k", base_url=server.openai_url, timeout=0.3
        )
        mem = Memory(
            path=tmp_path,
            embedder=HashingEmbedder(),
            judge=judge,
            scorer=None,
            backend=backend,
            config=EpisegConfig().with_overrides(**{"judge.gate": "periodic", "judge.every": 2}),
        )
        mem.ingest(turns)
        mem.flush()
        asked = len(server.requests)
    assert asked >= 10, "the judge should have been consulted"
    assert mem.segmenter.stats["judge_failures"] >= 5
    ids = [tid for e in backend.rows.values() for tid in e.turn_ids]
    assert sorted(ids) == sorted(t.id or "" for t in turns)
    assert all(e.turns for e in backend.rows.values())
