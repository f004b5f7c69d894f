"""Review 7 of the intake paths (F166-F168).

- F166: ``episeg ingest`` reported a user that is no valid tenant id without its line, and a
  pipe kept the turns before it without saying so.
- F167: a lowered ``intake.max_turn_chars`` refused, at start-up, the journaled open turns it
  had accepted before: ``Memory`` could not open until the setting was reverted.
- F168: ``Segmenter.resume`` took turns of another user or session into the checkpoint's.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from episeg.config import EpisegConfig, IntakeConfig
from episeg.errors import ArgumentError
from episeg.interfaces.cli import EXIT_BAD_INPUT, main
from episeg.memory import Memory
from episeg.segmentation.checkpoint import SessionCheckpoint
from episeg.segmentation.segmenter import Segmenter
from episeg.testing import HashingEmbedder
from episeg.types import Turn

LINES = [
    {"actor": "user", "text": "deploy prod v2", "ts": 1, "user": "alice", "id": "a1"},
    {"actor": "assistant", "text": "done", "ts": 2, "user": "alice", "id": "a2"},
    {"actor": "user", "text": "hello", "ts": 3, "user": " bob", "id": "b1"},
]


def _counts(path: Path) -> dict[str, int]:
    memory = Memory(path=path, embedder=HashingEmbedder(), judge=None, scorer=None)
    try:
        return dict(memory.journal.counts())
    finally:
        memory.close()


def test_a_user_no_tenant_can_be_names_its_line_in_a_file_and_nothing_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("episeg.interfaces.runtime.default_embedder", HashingEmbedder)
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in LINES) + "\n", encoding="utf-8")
    capsys.readouterr()
    store = tmp_path / "store"
    assert main(["ingest", str(path), "--path", str(store), "--no-flush"]) == EXIT_BAD_INPUT
    assert "line 3: user: tenant id must not start or end with whitespace" in (
        capsys.readouterr().err
    )
    assert _counts(store)["open_turns"] == 0


def test_a_user_no_tenant_can_be_on_a_pipe_says_which_turns_were_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("episeg.interfaces.runtime.default_embedder", HashingEmbedder)
    data = "\n".join(json.dumps(line) for line in LINES).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    capsys.readouterr()
    store = tmp_path / "store"
    assert main(["ingest", "-", "--path", str(store), "--no-flush"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "line 3: user: tenant id" in err and "the 2 turn(s) before line 3 were ingested" in err
    assert _counts(store)["open_turns"] == 2


def test_a_lowered_length_limit_still_replays_the_open_turns_it_accepted(tmp_path: Path) -> None:
    long_text = "deploy " * 300
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None)
    memory.observe(Turn(actor="user", text=long_text, ts=1.0, user="alice", id="t1"))
    memory.close()
    config = EpisegConfig(intake=IntakeConfig(max_turn_chars=1000))
    memory = Memory(
        path=tmp_path, config=config, embedder=HashingEmbedder(), judge=None, scorer=None
    )
    assert memory.recovery.turns_replayed == 1
    (episode,) = memory.flush("alice")
    assert [t.text for t in episode.turns] == [long_text]  # nothing lost
    with pytest.raises(Exception, match="limit is 1000"):  # a new turn meets the new limit
        memory.observe(Turn(actor="user", text=long_text, ts=2.0, user="alice", id="t2"))
    memory.close()


def test_resume_refuses_a_turn_of_another_user_or_session() -> None:
    embedder = HashingEmbedder()
    segmenter = Segmenter(embedder=embedder, signals={"window"})
    checkpoint = SessionCheckpoint(user="alice", session="s1", seq=0, position=0)
    for user, session in [("bob", "s1"), ("alice", "s9")]:
        turn = Turn(actor="user", text="plan", ts=1.0, id="b1", user=user, session=session)
        with pytest.raises(ArgumentError, match="item 0 is a turn of user"):
            segmenter.resume(checkpoint, [(turn, embedder.embed([turn.text])[0])])
    assert segmenter.open_turns("alice", "s1") == ()
