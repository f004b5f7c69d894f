"""The ingest progress bar: logic with a fake terminal, and a real pseudo-terminal run."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from episeg.interfaces.progress import IngestProgress


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_redraws_at_most_every_interval_and_ends_its_line() -> None:
    out = FakeTerminal()
    ticks = iter([0.0, 0.01, 0.02, 0.5, 0.51, 1.0])
    progress = IngestProgress(out, every=1, total_bytes=1000, clock=ticks.__next__, interval=0.1)
    progress.update(turns=1, episodes=0, bytes_read=100)  # drawn
    progress.update(turns=2, episodes=0, bytes_read=200)  # too soon: skipped
    progress.update(turns=3, episodes=1, bytes_read=500)  # drawn
    progress.update(turns=4, episodes=1, bytes_read=600)  # too soon: skipped
    progress.finish(turns=4, episodes=2)  # final state, 100%
    frames = out.getvalue().split("\r")[1:]
    assert len(frames) == 3
    assert "10%" in frames[0] and "50%" in frames[1] and "100%" in frames[2]
    assert frames[2].startswith("[" + "#" * 30 + "]") and "4 turns, 2 episodes" in frames[2]
    assert out.getvalue().endswith("\n")


def test_unknown_size_has_no_percentage_and_every_zero_is_silent() -> None:
    out = FakeTerminal()
    progress = IngestProgress(out, every=1, total_bytes=None)
    progress.update(turns=1, episodes=0, bytes_read=None)
    assert "%" not in out.getvalue() and "1 turns" in out.getvalue()
    quiet = FakeTerminal()
    silent = IngestProgress(quiet, every=0, total_bytes=10)
    silent.update(turns=1, episodes=0, bytes_read=5)
    silent.finish(turns=1, episodes=0)
    assert quiet.getvalue() == ""
    with pytest.raises(ValueError):
        IngestProgress(out, every=-1, total_bytes=None)


@pytest.mark.slow
def test_real_ingest_on_a_pseudo_terminal_draws_the_bar(tmp_path: Path) -> None:
    transcript = tmp_path / "long.jsonl"
    transcript.write_text(
        "".join(
            json.dumps(
                {
                    "actor": "user" if i % 2 == 0 else "assistant",
                    "text": f"step {i} of the deploy checklist",
                    "ts": i,
                }
            )
            + "\n"
            for i in range(60)
        )
    )
    master, slave = os.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "episeg.interfaces.cli",
            "ingest",
            str(transcript),
            "--user",
            "alice",
            "--path",
            str(tmp_path / "store"),
            "--progress-every",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    out, _ = proc.communicate(timeout=120)
    os.close(master)
    assert proc.returncode == 0, b"".join(chunks)
    terminal = b"".join(chunks).decode()
    assert "\r[" in terminal and "100%" in terminal and "60 turns" in terminal
    assert re.search(r"\] +\d+% ", terminal)
    assert b"ingested 60 turns" in out
