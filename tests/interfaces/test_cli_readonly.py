"""Read-only CLI commands (``episodes``, ``calibration``) load no model and take no journal.

So they answer at once and can read a store whose journal a running service
holds (a second ``Memory`` on the path would be refused by the journal lock).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from episeg import defaults
from episeg import memory as memory_module
from episeg.interfaces.cli import main
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Turn


def _no_model(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a read-only command loaded the embedding model")


@pytest.fixture
def held_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Two stored episodes of alice; the writing Memory stays open, holding the journal."""
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None)
    for n, session in enumerate(["s1", "s2"]):
        memory.observe(
            Turn(
                actor=Actor.USER,
                text=f"deploy step {n}",
                ts=float(n),
                user="alice",
                session=session,
            )
        )
    memory.flush()
    monkeypatch.setattr(defaults, "default_embedder", _no_model)
    monkeypatch.setattr(memory_module, "default_embedder", _no_model)
    yield tmp_path
    memory.close()


def test_episodes_reads_a_held_store_without_the_model(
    held_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["episodes", "--path", str(held_store), "--user", "alice", "--json"]
    assert main(argv) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(e["session"] for e in listed) == ["s1", "s2"]


def test_calibration_reads_a_held_store_without_the_model(
    held_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["calibration", "--path", str(held_store), "--user", "alice", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scored"] == 2


def test_an_invalid_user_is_exit_2(held_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["episodes", "--path", str(held_store), "--user", " alice"]) == 2
    assert "whitespace" in capsys.readouterr().err
