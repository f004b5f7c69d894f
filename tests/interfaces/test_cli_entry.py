"""The ``episeg`` entry point (review 2): argv that is not UTF-8, the global options before a
delegate, ``--log-format json`` without its extra, a closed stdout pipe, ``demo`` run twice."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from episeg.interfaces.cli import EXIT_BAD_INPUT, main
from episeg.interfaces.cli_guards import EXIT_BROKEN_PIPE
from episeg.interfaces.logs import configure_logging
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from episeg.typing import Embedder

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.parametrize(
    "argv",
    [
        ["recall", "--user", "alice", "caf\udce9"],
        ["forget", "--user", "alice", "--session", "caf\udce9"],
    ],
    ids=["recall-query", "forget-session"],
)
def test_an_argument_that_is_not_utf8_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """L3: bytes Python keeps as surrogates never reach the tokenizer or SQLite."""
    assert main([*argv, "--path", str(tmp_path)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("episeg: error: argument ") and "(caf\\xe9) is not valid UTF-8" in err
    assert not (tmp_path / "journal.sqlite3").exists()


@pytest.fixture
def _restore_logging() -> object:
    yield None
    configure_logging(logging.WARNING)


@pytest.mark.usefixtures("_restore_logging")
def test_log_format_json_before_a_delegate_passes_the_rest_through(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """L6: the value `json` is not taken for the command, so `eval --help` reaches eval."""
    with pytest.raises(SystemExit) as done:
        main(["--log-format", "json", "eval", "--help"])
    assert done.value.code == 0
    assert "episeg.evaluation" in capsys.readouterr().out


@pytest.mark.usefixtures("_restore_logging")
def test_log_format_json_without_the_serve_extra_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """L7: a base install (no python-json-logger) gets a clear error, not a traceback."""
    monkeypatch.setitem(sys.modules, "pythonjsonlogger", None)
    monkeypatch.setitem(sys.modules, "pythonjsonlogger.json", None)
    argv = ["--log-format", "json", "episodes", "--path", str(tmp_path)]
    assert main(argv) == EXIT_BAD_INPUT
    assert "pip install 'episeg[serve]'" in capsys.readouterr().err


def test_export_into_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    """L9: `episeg export | head -c 10`: no error line, the shell's SIGPIPE code."""
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None)
    for n in range(40):  # ~200 KB of export, beyond any pipe buffer
        memory.observe(
            Turn(actor="user", text=f"step {n} " + "x" * 5000, ts=float(n), session=f"s{n}")
        )
    memory.flush()
    memory.close()
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    argv = [sys.executable, "-m", "episeg.interfaces.cli", "export", "--path", str(tmp_path)]
    argv += ["--user", "default"]
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path
    )
    assert process.stdout is not None and process.stderr is not None
    head = process.stdout.read(10)
    process.stdout.close()  # as `head -c 10` exits
    code = process.wait(timeout=240)
    err = process.stderr.read().decode()
    assert head and (code, err) == (EXIT_BROKEN_PIPE, "")


def test_demo_runs_again_on_the_same_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], real_embedder: Embedder
) -> None:
    """L5: a second `episeg demo --path DIR` records a new session and shows the same recall."""
    assert main(["demo", "--path", str(tmp_path)]) == 0
    first = capsys.readouterr().out
    assert main(["demo", "--path", str(tmp_path)]) == 0
    second = capsys.readouterr().out
    assert "session 'demo-2'" in second

    def recalls(out: str) -> list[str]:
        return [line.split("  score")[0] for line in out.splitlines() if line.startswith("  ")]

    assert recalls(second) == recalls(first) and recalls(first)
