"""``episeg forget --user U (--episode ID | --session S | --all)`` (issue 12).

In-process ``main`` with the real bundled embedder and an embedded store; each
erasure is checked in the bytes of the store folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from episeg.interfaces.cli import EXIT_BAD_INPUT, main
from episeg.typing import Embedder
from tests.erased_bytes import files_with, reopened_files_with

pytestmark = pytest.mark.slow

LINES = [
    {"actor": "user", "text": "the heronvault login fails", "ts": 0, "session": "s1"},
    {"actor": "assistant", "text": "Rotate the key. <episode_boundary>", "ts": 1, "session": "s1"},
    {"actor": "user", "text": "bump the quokkadeploy version", "ts": 2, "session": "s2"},
    {"actor": "user", "text": "keep the lynxnotes file", "ts": 3, "session": "s3"},
]


def _files_with(folder: Path, needle: str) -> list[str]:
    """Everywhere but Chroma's unused slots: each command ran in this process (erased_bytes)."""
    return files_with(folder, needle, unused_slots=False)


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_forget_episode_session_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], real_embedder: Embedder
) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps({**t, "user": "ann"}) for t in LINES) + "\n")
    store = tmp_path / "store"
    assert main(["ingest", str(transcript), "--path", str(store), "--progress-every", "0"]) == 0
    episodes = _json(capsys, "episodes", "--user", "ann", "--path", str(store))
    first = next(e["id"] for e in episodes if e["session"] == "s1")

    capsys.readouterr()
    assert main(["forget", "--user", "bob", "--episode", first, "--path", str(store)]) == (
        EXIT_BAD_INPUT
    )
    assert "nothing erased" in capsys.readouterr().err
    assert _files_with(store, "heronvault")

    out = _json(capsys, "forget", "--user", "ann", "--episode", first, "--path", str(store))
    assert out["forgotten"] == [first] and out["vacuumed"] is True
    assert _files_with(store, "heronvault") == []

    out = _json(capsys, "forget", "--user", "ann", "--session", "s2", "--path", str(store))
    assert out["session"] == "s2"
    assert _files_with(store, "quokkadeploy") == []
    assert _files_with(store, "lynxnotes")

    assert _json(capsys, "forget", "--user", "ann", "--all", "--path", str(store))["tenant"]
    assert _files_with(store, "lynxnotes") == []
    assert _json(capsys, "episodes", "--user", "ann", "--path", str(store)) == []
    for erased in ("heronvault", "quokkadeploy", "lynxnotes"):  # opened again, as next time
        assert reopened_files_with(store, erased) == []


def test_exactly_one_target_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["forget", "--user", "ann", "--session", "s", "--all"])
    assert "not allowed with" in capsys.readouterr().err
