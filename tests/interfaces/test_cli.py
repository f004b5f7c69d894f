"""The CLI through ``main([...])`` (real MiniLM, real Chroma) and as a real subprocess."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from episeg.errors import EpisegError
from episeg.interfaces.cli import EXIT_BAD_INPUT, EXIT_STORE_DOWN, main
from episeg.interfaces.cli_commands import COMMANDS
from episeg.typing import Embedder
from tests.interfaces.helpers import SAMPLE, free_port

pytestmark = pytest.mark.slow


SHORT = [
    {"actor": "user", "text": "the login returns 401 after the key rotation", "ts": 0},
    {"actor": "assistant", "text": "Reload the jwt public key. <episode_boundary>", "ts": 1},
    {"actor": "user", "text": "now bump the prod deploy version", "ts": 2},
    {"actor": "assistant", "text": "Edit version.tf and apply.", "ts": 3},
    {"actor": "user", "text": "thanks, that worked", "ts": 4},
    {"actor": "assistant", "text": "Great.", "ts": 5},
]


@pytest.fixture
def short(tmp_path: Path) -> Path:
    """Six turns, two episodes (an agent marker after turn 2)."""
    path = tmp_path / "short.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in SHORT) + "\n")
    return path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, real_embedder: Embedder) -> str:
    """A store holding the bundled sample conversation (user alice), ingested once."""
    path = str(tmp_path_factory.mktemp("cli-store"))
    assert main(["ingest", str(SAMPLE), "--path", path, "--progress-every", "0"]) == 0
    return path


class TestCliIngest:
    def test_sample_is_stored_and_tiles_the_transcript(
        self, store: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        episodes = run_json(capsys, "episodes", "--path", store, "--user", "alice")
        assert len(episodes) >= 2
        assert sum(e["turn_count"] for e in episodes) == 20
        assert {e["user"] for e in episodes} == {"alice"}

    def test_the_ids_the_text_listing_prints_are_the_ids_commands_take(
        self, store: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The listing printed 8 characters, which `episode`, `used`, `edit` and `forget`
        refused ("has no episode"), though the docs say to take the ID from it."""
        capsys.readouterr()
        assert main(["episodes", "--path", store, "--user", "alice"]) == 0
        first = next(
            line for line in capsys.readouterr().out.splitlines() if line.startswith("[1]")
        )
        printed = first.split()[1]
        episode = run_json(capsys, "episode", "--path", store, "--user", "alice", printed)
        assert episode["id"] == printed

    def test_stdin_defaults_and_assigned_timestamps(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        lines = [
            {"actor": "user", "text": "how do I rotate the jwt key?"},
            {"actor": "assistant", "text": "Edit auth.yml and reload."},
            {"actor": "user", "text": "thanks", "user": "carol", "session": "x"},
        ]
        data = "\n".join(json.dumps(line) for line in lines).encode()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        out = run_json(
            capsys,
            "ingest",
            "-",
            "--path",
            str(tmp_path),
            "--user",
            "bob",
            "--session",
            "s1",
            "--assign-ts",
        )
        assert out["turns"] == 3 and out["users"] == ["bob", "carol"] and out["flushed"] == 2
        [bob] = run_json(capsys, "episodes", "--path", str(tmp_path), "--user", "bob", "--turns")
        assert bob["session"] == "s1"
        assert [t["ts"] for t in bob["turns"]] == [0.0, 1.0]
        [carol] = run_json(
            capsys, "episodes", "--path", str(tmp_path), "--user", "carol", "--turns"
        )
        assert carol["session"] == "x" and carol["turns"][0]["ts"] == 2.0

    def test_no_flush_leaves_the_open_episode_unstored(
        self, tmp_path: Path, short: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = run_json(capsys, "ingest", str(short), "--path", str(tmp_path), "--no-flush")
        stored = run_json(capsys, "episodes", "--path", str(tmp_path))
        assert out["flushed"] == 0 and out["episodes"] == len(stored) == 1
        assert stored[0]["turn_count"] == 2

    def test_progress_goes_to_stderr(
        self, tmp_path: Path, short: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert main(["ingest", str(short), "--path", str(tmp_path), "--progress-every", "2"]) == 0
        captured = capsys.readouterr()
        progress = [line for line in captured.err.splitlines() if "turns/s" in line]
        assert [line.split()[1] for line in progress] == ["2", "4", "6"]
        assert "turns/s" not in captured.out and "ingested 6 turns" in captured.out


class TestCliEpisodes:
    def test_human_listing_names_salience_range_and_reasons(
        self, store: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        capsys.readouterr()
        assert main(["episodes", "--path", store, "--user", "alice"]) == 0
        out = capsys.readouterr().out
        assert out.count("salience ") >= 2 and "turns demo-00.." in out
        assert "opened by: start of the session" in out
        assert "opened by: semantic" in out or "opened by: marker" in out

    def test_another_user_sees_nothing(
        self, store: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert run_json(capsys, "episodes", "--path", store, "--user", "mallory") == []


class TestCliRecall:
    def test_breakdown_sums_to_score(self, store: str, capsys: pytest.CaptureFixture[str]) -> None:
        hits = run_json(
            capsys,
            "recall",
            "--path",
            store,
            "--user",
            "alice",
            # two topics: with a minimum relevance, a one-topic query may return one hit
            "terraform state lock and the retry log",
            "--k",
            "2",
        )
        assert len(hits) == 2
        assert "lock" in " ".join(t["text"] for t in hits[0]["episode"]["turns"])
        for hit in hits:
            assert hit["score"] == pytest.approx(
                hit["recency"] + hit["importance"] + hit["similarity"]
            )
        capsys.readouterr()
        assert main(["recall", "--path", store, "--user", "alice", "401 login", "--k", "1"]) == 0
        assert "relevance" in capsys.readouterr().out

    def test_budget_dates_turns_and_used(
        self, store: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        args = ["recall", "--path", store, "--user", "alice", "terraform state lock"]
        hits = run_json(capsys, *args, "--k", "5", "--max-words", "40")
        assert hits and sum(h["words"] for h in hits) <= 40
        hit = hits[0]
        assert hit["start"].endswith("Z") and hit["turn_ids"] == [t["id"] for t in hit["turns"]]
        assert "lock" in " ".join(t["text"] for t in hit["turns"]).lower()
        assert run_json(capsys, *args, "--until", "1970-01-02") == []
        used = run_json(capsys, "used", "--path", store, "--user", "alice", hit["episode_id"])
        assert [(e["id"], e["recall_count"]) for e in used] == [(hit["episode_id"], 1)]
        # the same question gets the same answer after use was confirmed (weights 0)
        again = run_json(capsys, *args, "--k", "5", "--max-words", "40")
        assert [h["turn_ids"] for h in again] == [h["turn_ids"] for h in hits]
        code = main(["used", "--path", store, "--user", "mallory", hit["episode_id"]])
        assert code == 2 and "mallory" in capsys.readouterr().err


class TestCliMaintenanceAndCalibration:
    def test_maintain_and_calibration(self, store: str, capsys: pytest.CaptureFixture[str]) -> None:
        report = run_json(capsys, "maintain", "--path", store, "--user", "alice")
        assert report["total"] >= 2 and report["archived"] == 0
        calibration = run_json(capsys, "calibration", "--path", store, "--user", "alice")
        assert sum(calibration["histogram"]) == calibration["scored"] == report["total"]


class TestCliErrors:
    def test_bad_line_is_exit_2_naming_the_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"actor": "user", "text": "hi", "ts": 1}\n{"actor": "robot"}\n')
        assert main(["ingest", str(bad), "--path", str(tmp_path / "s")]) == EXIT_BAD_INPUT
        assert "line 2" in capsys.readouterr().err

    @pytest.mark.parametrize(
        "argv",
        [
            ["report", "/nonexistent/x.jsonl"],
            ["recall", "q", "--k", "0"],
            ["episodes", "--chroma-url", "ftp://nowhere"],
            ["episodes", "--limit", "0"],
        ],
    )
    def test_bad_input_is_exit_2(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
    ) -> None:
        assert main([*argv, "--path", str(tmp_path)]) == EXIT_BAD_INPUT
        assert capsys.readouterr().err.startswith("episeg: error:")

    def test_serve_needs_a_keys_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv("EPISEG_KEYS_FILE", raising=False)
        assert main(["serve", "--path", str(tmp_path)]) == EXIT_BAD_INPUT
        assert "keys" in capsys.readouterr().err
        monkeypatch.setenv("EPISEG_KEYS_FILE", str(tmp_path / "missing.json"))
        assert main(["serve", "--path", str(tmp_path)]) == EXIT_BAD_INPUT
        assert "missing.json" in capsys.readouterr().err

    def test_replicas_warn_about_a_tenant_with_several_keys(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """The proxy hashes the key: two keys of one tenant may reach two replicas, each
        with its own journal (review 11's note). Said at start-up, not refused."""
        from episeg.interfaces import cli_commands, service

        keys = tmp_path / "keys.json"
        keys.write_text(json.dumps({"a" * 20: "alice", "b" * 20: "alice", "c" * 20: "bob"}))
        keys.chmod(0o600)
        started: list[object] = []
        monkeypatch.setattr(cli_commands, "_memory", lambda args: object())
        monkeypatch.setattr(service, "serve", lambda *a, **k: started.append(a))
        argv = ["serve", "--keys-file", str(keys), "--path", str(tmp_path)]
        assert main([*argv, "--chroma-url", "http://127.0.0.1:9"]) == 0
        assert "tenants with several keys (alice)" in capsys.readouterr().err
        assert main(argv) == 0  # one process, no replicas: nothing to say
        assert "several keys" not in capsys.readouterr().err
        assert len(started) == 2

    def test_unreachable_chroma_is_exit_3(self, capsys: pytest.CaptureFixture[str]) -> None:
        url = f"http://127.0.0.1:{free_port()}"
        assert main(["episodes", "--user", "alice", "--chroma-url", url]) == EXIT_STORE_DOWN
        assert "unreachable" in capsys.readouterr().err


class TestCliDelegates:
    def test_eval_passes_its_arguments_through(self, capsys: pytest.CaptureFixture[str]) -> None:
        with pytest.raises(SystemExit) as exit_info:
            main(["eval", "--help"])
        assert exit_info.value.code == 0
        assert "episeg.evaluation" in capsys.readouterr().out

    def test_a_missing_module_is_a_clear_error(self) -> None:
        import argparse

        from episeg.interfaces.cli_commands import _delegate

        with pytest.raises(EpisegError, match="not installed"):
            _delegate("episeg.not_there")(argparse.Namespace(rest=[]))
        assert {"eval", "bench"} <= set(COMMANDS)


class TestCliSubprocess:
    def test_real_process_ingest_and_exit_codes(self, tmp_path: Path, short: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
        cmd = [sys.executable, "-m", "episeg.interfaces.cli"]
        done = subprocess.run(
            [*cmd, "ingest", str(short), "--path", str(tmp_path), "--json", "--user", "dora"],
            capture_output=True,
            text=True,
            env=env,
            timeout=240,
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["turns"] == 6 and result["episodes"] == 2 and result["users"] == ["dora"]
        helped = subprocess.run(
            [*cmd, "--help"], capture_output=True, text=True, env=env, timeout=60
        )
        assert helped.returncode == 0 and "examples:" in helped.stdout
        missing = subprocess.run(
            [*cmd, "report", str(tmp_path / "none.jsonl")],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert missing.returncode == EXIT_BAD_INPUT and "none.jsonl" in missing.stderr
