"""Export / import through the HTTP service (real client, loopback) and the CLI (subprocess)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from episeg import defaults
from episeg import memory as memory_module
from episeg.client import APIError, Client
from episeg.interfaces.cli import main
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.memory import Memory
from episeg.store.import_check import read_export
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Turn
from tests.interfaces.helpers import KEY_A, KEY_B, KEYS, SAMPLE, LiveServer

TURNS = [
    {"actor": "user", "text": "the login returns 401 after the key rotation", "session": "s1"},
    {"actor": "assistant", "text": "Reload the jwt key. <episode_boundary>", "session": "s1"},
    {"actor": "user", "text": "now bump the prod deploy version", "session": "s1"},
    {"actor": "assistant", "text": "Deploy v2.14 is rolling out.", "session": "s1"},
]


def _without_vectors(text: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in text.splitlines()]
    for row in rows:
        row.pop("embedding", None)
        row.pop("turn_embeddings", None)
    return rows


def _same_vectors(first: str, second: str) -> bool:
    a, b = read_export(first.splitlines(), tenant="x"), read_export(second.splitlines(), tenant="x")
    pairs = [(x.embedding, y.embedding) for x, y in zip(a, b, strict=True)]
    pairs += [(x.turn_embeddings, y.turn_embeddings) for x, y in zip(a, b, strict=True)]
    return all(
        u is not None and v is not None and np.allclose(u, v, atol=1e-6, rtol=0) for u, v in pairs
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    memory = open_memory(tmp_path_factory.mktemp("transfer"), embedder=HashingEmbedder(dim=64))
    live = LiveServer(create_app(memory, KEYS))
    with Client(live.url, KEY_A) as alice:
        alice.observe_batch(TURNS)
        alice.flush("s1")
    yield live
    live.stop()


@pytest.mark.slow
class TestService:
    def test_export_import_round_trip_between_tenants(self, server: LiveServer) -> None:
        with Client(server.url, KEY_A) as alice, Client(server.url, KEY_B) as bob:
            first = alice.export()
            assert bob.export().count("\n") == 2  # the caller's tenant only: bob has none yet
            assert json.loads(first.splitlines()[-1])["episodes"] == len(alice.episodes()) >= 2
            done = bob.import_episodes(first)
            assert sorted(done["imported"]) == sorted(e["id"] for e in alice.episodes())
            second = bob.export()
            assert _without_vectors(second) == _without_vectors(first)
            assert _same_vectors(first, second)
            for query in ("how did we fix the 401?", "deploy version"):
                ids = [h["episode"]["id"] for h in alice.recall(query, k=3)]
                assert [h["episode"]["id"] for h in bob.recall(query, k=3)] == ids
            again = bob.import_episodes(io.BytesIO(first.encode()))
            assert again["imported"] == [] and len(again["unchanged"]) == len(done["imported"])
            assert alice.export() == first  # alice is untouched
            streamed = io.BytesIO()
            assert bob.export_to(streamed) == len(second.encode())
            assert streamed.getvalue().decode() == second

    def test_bad_files_conflicts_and_keys(self, server: LiveServer) -> None:
        with Client(server.url, KEY_A) as alice, Client(server.url, KEY_B) as bob:
            lines = alice.export().splitlines(keepends=True)
            with pytest.raises(APIError) as bad:
                bob.import_episodes([*lines[:2], "{broken\n", *lines[3:]])
            assert bad.value.status == 422 and bad.value.detail[0]["loc"] == ["body", 3]
            with pytest.raises(APIError) as cut:
                bob.import_episodes(lines[:-1])
            assert cut.value.status == 422 and "trailer" in cut.value.detail[0]["msg"]
            bob.import_episodes(lines)
            edited = [
                lines[0],
                lines[1].replace('"summary":"', '"summary":"edited ', 1),
                *lines[2:],
            ]
            with pytest.raises(APIError) as conflict:
                bob.import_episodes(edited)
            assert conflict.value.status == 409
        with Client(server.url) as nobody:
            for call in (nobody.export, lambda: nobody.import_episodes(lines)):
                with pytest.raises(APIError) as denied:
                    call()
                assert denied.value.status == 401


def _no_model(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("export loaded the embedding model")


def test_cli_export_reads_a_held_store_without_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None)
    memory.observe(Turn(actor=Actor.USER, text="deploy step", ts=1.0, user="alice"))
    memory.flush()
    monkeypatch.setattr(defaults, "default_embedder", _no_model)
    monkeypatch.setattr(memory_module, "default_embedder", _no_model)
    try:
        assert main(["export", "--path", str(tmp_path), "--user", "alice"]) == 0
        out = capsys.readouterr().out
        assert [e.summary for e in read_export(out.splitlines(), tenant="x")] == ["deploy step"]
        target = tmp_path / "alice.jsonl"
        argv = [
            "export",
            "--path",
            str(tmp_path),
            "--user",
            "alice",
            "--out",
            str(target),
            "--json",
        ]
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out)["episodes"] == 1
        assert target.read_text(encoding="utf-8") == out and not list(tmp_path.glob("*.partial"))
    finally:
        memory.close()


def _episeg(*args: str, path: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "episeg.interfaces.cli", *args, "--path", str(path)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_cli_round_trip_as_subprocesses(tmp_path: Path) -> None:
    store, out = tmp_path / "store", tmp_path / "alice.jsonl"
    assert _episeg("ingest", str(SAMPLE), "--user", "alice", path=store).returncode == 0
    done = _episeg("export", "--user", "alice", "--out", str(out), path=store)
    assert done.returncode == 0, done.stderr
    first = out.read_text(encoding="utf-8")
    done = _episeg("import", "--user", "bob", str(out), "--json", path=store)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["imported"]) == len(first.splitlines()) - 2
    second = _episeg("export", "--user", "bob", path=store).stdout
    assert _without_vectors(second) == _without_vectors(first) and _same_vectors(first, second)
    again = _episeg("import", "--user", "bob", str(out), "--json", path=store)
    assert json.loads(again.stdout)["imported"] == []
    lines = first.splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join([*lines[:2], "{oops\n", *lines[3:]]), encoding="utf-8")
    failed = _episeg("import", "--user", "carol", str(broken), path=store)
    assert failed.returncode == 2 and "line 3" in failed.stderr
    listed = _episeg("episodes", "--user", "carol", "--json", path=store)
    assert json.loads(listed.stdout) == []
