"""kill -9 at random points: a real subprocess ingests a transcript, is SIGKILLed many
times, restarts, and the client re-sends what it saw no ack for (plus a few acked turns).
The final Chroma content must equal an uninterrupted run's."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from episeg.durability.journal import Journal
from episeg.errors import StoreError
from episeg.interfaces.transcript import write_transcript
from episeg.memory import Memory
from episeg.store import ChromaBackend
from episeg.testing import HashingEmbedder

from .helpers import assert_same_store, make_transcript, snapshot

KILLS = 20
TURNS = 700
WORKER = Path(__file__).with_name("ingest_worker.py")
FIGURES: dict[str, object] = {}
# Chroma's embedded core persists its HNSW vector segment with plain (non-atomic) writes; a
# SIGKILL inside one can leave a truncated segment (an empty index_metadata.pickle), which
# Chroma then refuses to load or crashes on (SIGSEGV): chroma-core/chroma#7238 and #7678.
# episeg cannot repair a torn vector segment, so that outcome is reported as an expected
# upstream failure, never as a pass; any other failure of the loop fails the test.
UPSTREAM_TORN_SEGMENT = ("hnsw segment", "pickle file")
UPSTREAM_ISSUE = "upstream Chroma torn HNSW segment after SIGKILL (chroma-core/chroma#7238)"


class Run:
    """One worker process whose stdout lines are collected by a thread."""

    def __init__(self, path: Path, transcript: Path, start: int, stderr: Path) -> None:
        with stderr.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(WORKER), str(path), str(transcript), str(start), "--flush"],
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
            )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def finish(
        self, *, kill_after: float | None, after_ready: bool = False, timeout: float = 120.0
    ) -> None:
        """Wait, or SIGKILL ``kill_after`` seconds after the spawn (or after "ready").

        Counting from "ready" keeps the loop making progress however slowly the
        worker starts on a loaded machine; counting from the spawn kills it
        during start-up and recovery.
        """
        if kill_after is not None:
            if after_ready:
                deadline = time.monotonic() + timeout
                while not any(x.startswith("ready") for x in self.lines):
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        break
                    time.sleep(0.02)
            try:
                self.proc.wait(timeout=kill_after)
            except subprocess.TimeoutExpired:
                self.proc.kill()  # SIGKILL
        self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)


@pytest.mark.slow
def test_sigkill_at_random_points_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    rng = random.Random(20261202)
    turns = make_transcript(TURNS, seed=7)
    transcript = tmp_path / "t.jsonl"
    write_transcript(turns, transcript)
    users = sorted({t.user for t in turns})

    reference = Memory(
        path=tmp_path / "ref", embedder=HashingEmbedder(), judge=None, scorer=None, journal=False
    )
    reference.ingest(turns)
    reference.flush()
    want = snapshot(reference.backend, users)

    path = tmp_path / "crashy"
    acked, kills, resent, killed_mid_ingest = -1, 0, 0, 0
    recovery_s: list[float] = []
    replayed: list[int] = []
    started = time.monotonic()
    while True:
        back = rng.randint(0, 4) if acked >= 0 else 0
        start = max(0, acked + 1 - back)
        resent += acked + 1 - start
        stderr = tmp_path / "worker.stderr"
        run = Run(path, transcript, start, stderr)
        killing = kills < KILLS
        during_startup = rng.random() < 0.35
        run.finish(
            kill_after=(rng.uniform(0.1, 1.5) if during_startup else rng.uniform(0.05, 0.8))
            if killing
            else None,
            after_ready=not during_startup,
        )
        for line in run.lines:
            word, *rest = line.split()
            if word == "ack":
                acked = max(acked, int(rest[0]))
            elif word == "ready":
                recovery_s.append(float(rest[0]))
                replayed.append(int(rest[1]))
        done = "done" in run.lines
        if killing and run.proc.returncode == -9:
            kills += 1
            killed_mid_ingest += any(x.startswith("ack") for x in run.lines) and not done
        elif done:
            assert run.proc.returncode == 0
            if kills >= KILLS:
                break
        else:
            err = stderr.read_text(errors="replace")
            if run.proc.returncode == -signal.SIGSEGV or any(
                x in err for x in UPSTREAM_TORN_SEGMENT
            ):
                pytest.xfail(f"{UPSTREAM_ISSUE}: worker {run.proc.returncode}: {err[-300:]}")
            pytest.fail(f"worker exited with {run.proc.returncode}: {run.lines[-3:]} {err[-500:]}")
        assert time.monotonic() - started < 600, "kill loop took too long"

    try:
        got = snapshot(ChromaBackend.persistent(path / "chroma"), users)
    except StoreError as exc:
        if any(x in str(exc) for x in UPSTREAM_TORN_SEGMENT):
            pytest.xfail(f"{UPSTREAM_ISSUE}: {exc}")
        raise
    assert_same_store(got, want)
    stored_ids = sorted(tid for e in got.values() for tid in e.turn_ids)
    assert stored_ids == sorted(t.id or "" for t in turns)  # each turn exactly once
    counts = Journal(path / "journal.sqlite3").counts()
    assert counts["outbox"] == 0 and counts["open_turns"] == 0 and counts["pending_turns"] == 0
    FIGURES.update(
        kills=kills,
        killed_mid_ingest=killed_mid_ingest,
        resent=resent,
        episodes=len(got),
        turns=len(turns),
        max_recovery_s=max(recovery_s),
        mean_recovery_s=sum(recovery_s) / len(recovery_s),
        max_replayed_turns=max(replayed),
        seconds=time.monotonic() - started,
    )
    print("kill-9 figures:", FIGURES)
