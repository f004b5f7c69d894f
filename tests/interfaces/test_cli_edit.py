"""``episeg episode / edit / unarchive / tenants`` and ``recall --meta/--min-score`` (issue 12),
in-process ``main`` with the real bundled embedder and an embedded store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from episeg.interfaces.cli import EXIT_BAD_INPUT, main
from episeg.typing import Embedder

pytestmark = pytest.mark.slow

LINES = [
    {"actor": "user", "text": "the heronvault login fails", "ts": 0, "session": "s1"},
    {"actor": "assistant", "text": "Rotate the key. <episode_boundary>", "ts": 1, "session": "s1"},
    {"actor": "user", "text": "the heronvault css is broken", "ts": 2, "session": "s2"},
]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_show_edit_unarchive_tenants_and_filtered_recall(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], real_embedder: Embedder
) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps({**t, "user": "ann"}) for t in LINES) + "\n")
    store = str(tmp_path / "store")
    assert main(["ingest", transcript.as_posix(), "--path", store, "--progress-every", "0"]) == 0
    first = next(
        e["id"]
        for e in _json(capsys, "episodes", "--user", "ann", "--path", store)
        if e["session"] == "s1"
    )

    shown = _json(capsys, "episode", "--user", "ann", first, "--path", store)
    assert shown["id"] == first and shown["pinned"] is False

    edited = _json(
        capsys, "edit", "--user", "ann", first, "--pin", "--salience", "9",
        "--summary", "heronvault login fix", "--meta", "project=auth", "--meta", "ticket=4211",
        "--path", store,
    )  # fmt: skip
    assert edited["pinned"] is True and edited["salience"]["by_user"] is True
    assert edited["metadata"] == {"project": "auth", "ticket": 4211}
    assert _json(capsys, "episode", "--user", "ann", first, "--path", store) == edited

    capsys.readouterr()
    assert main(["episode", "--user", "ann", first, "--path", store]) == 0
    text = capsys.readouterr().out
    assert "[pinned]" in text and "9/10 (set by the user)" in text and "project='auth'" in text

    hits = _json(
        capsys, "recall", "--user", "ann", "heronvault", "--meta", "project=auth",
        "--path", store,
    )  # fmt: skip
    assert [h["episode"]["id"] for h in hits] == [first]
    none = _json(
        capsys, "recall", "--user", "ann", "heronvault", "--min-score", "10", "--path", store
    )
    assert none == []

    back = _json(capsys, "unarchive", "--user", "ann", first, "--path", store)
    assert back["archived"] is False
    assert _json(capsys, "tenants", "--path", store) == {"tenants": ["ann"]}

    for argv, says in [
        (["episode", "--user", "bob", first], "no episode"),
        (["edit", "--user", "bob", first, "--pin"], "no episode"),
        (["edit", "--user", "ann", first, "--salience", "11"], "1-10"),
        (["edit", "--user", "ann", first, "--meta", "bad key=1"], "bad key"),
        (["edit", "--user", "ann", first], "nothing to edit"),
    ]:
        capsys.readouterr()
        assert main([*argv, "--path", store]) == EXIT_BAD_INPUT, argv
        assert says in capsys.readouterr().err, argv
    assert _json(capsys, "episode", "--user", "ann", first, "--path", store) == edited
