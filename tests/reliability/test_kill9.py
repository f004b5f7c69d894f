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
from episeg.store.repair import is_torn
from episeg.types import Episode

from .helpers import assert_same_store, make_transcript, snapshot
from .ingest_worker import worker_parts

KILLS = 20
TURNS = 700
WORKER = Path(__file__).with_name("ingest_worker.py")
FIGURES: dict[str, object] = {}
# Chroma's embedded core persists its HNSW vector segment with plain (non-atomic) writes; a
# SIGKILL inside one can leave a torn segment (an empty index_metadata.pickle, or index files
# newer than it), which Chroma then refuses to load or extend: chroma-core/chroma#7238, #7678.
# episeg rebuilds such a tenant (episeg.store.repair): a write does it by itself, a reader
# calls Memory.rebuild_store, as the error message says. What stays an expected upstream
# failure (xfail, never a pass): Chroma crashing in native code (SIGSEGV) on the torn files,
# and a store that refuses writes for another reason (then every refused episode must be
# waiting in the journal's outbox: nothing lost, nothing twice).
UPSTREAM_ISSUE = "upstream Chroma torn HNSW segment after SIGKILL (chroma-core/chroma#7238)"


class Run:
    """One worker process whose stdout lines are collected by a thread."""

    def __init__(self, path: Path, transcript: Path, start: int, stderr: Path, *flags: str) -> None:
        with stderr.open("w") as err:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    str(WORKER),
                    str(path),
                    str(transcript),
                    str(start),
                    "--flush",
                    *flags,
                ],
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


def _final_store(path: Path, users: list[str], lookahead: bool) -> tuple[dict[str, Episode], int]:
    """The stored episodes; a tenant whose read hits a torn segment is rebuilt first."""
    rebuilt = 0
    for user in users:
        try:
            snapshot(ChromaBackend.persistent(path / "chroma"), [user])
        except StoreError as exc:
            if not is_torn(exc):
                raise
            embedder, config = worker_parts(lookahead)
            memory = Memory(path=path, embedder=embedder, judge=None, scorer=None, config=config)
            memory.rebuild_store(user)  # what the error message tells a reader to do
            memory.close()
            rebuilt += 1
    return snapshot(ChromaBackend.persistent(path / "chroma"), users), rebuilt


def _last_store_error(stderr: Path) -> str:
    lines = [x for x in stderr.read_text(errors="replace").splitlines() if "store" in x]
    return lines[-1][-300:] if lines else "(no store error logged)"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flags", "wanted_kills", "n_turns"), [((), KILLS, TURNS), (("--lookahead",), 8, 300)]
)
def test_sigkill_at_random_points_loses_and_duplicates_nothing(
    tmp_path: Path, flags: tuple[str, ...], wanted_kills: int, n_turns: int
) -> None:
    """``--lookahead``: roles unknown, so each turn waits for the next before its decision."""
    rng = random.Random(20261202)
    turns = make_transcript(n_turns, seed=7)
    transcript = tmp_path / "t.jsonl"
    write_transcript(turns, transcript)
    users = sorted({t.user for t in turns})

    embedder, config = worker_parts(bool(flags))
    reference = Memory(
        path=tmp_path / "ref",
        embedder=embedder,
        judge=None,
        scorer=None,
        journal=False,
        config=config,
    )
    if flags:
        assert reference.sessions.for_tenant(users[0]).lookahead == 1
    reference.ingest(turns)
    reference.flush()
    want = snapshot(reference.backend, users)

    path = tmp_path / "crashy"
    acked, kills, resent, killed_mid_ingest, rebuilt_on_write = -1, 0, 0, 0, 0
    recovery_s: list[float] = []
    replayed: list[int] = []
    started = time.monotonic()
    while True:
        back = rng.randint(0, 4) if acked >= 0 else 0
        start = max(0, acked + 1 - back)
        resent += acked + 1 - start
        stderr = tmp_path / "worker.stderr"
        run = Run(path, transcript, start, stderr, *flags)
        killing = kills < wanted_kills
        during_startup = rng.random() < 0.35
        run.finish(
            kill_after=(rng.uniform(0.1, 1.5) if during_startup else rng.uniform(0.05, 0.8))
            if killing
            else None,
            after_ready=not during_startup,
        )
        rebuilt_on_write += stderr.read_text(errors="replace").count("rebuilding its collections")
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
            if kills >= wanted_kills:
                break
        else:
            err = stderr.read_text(errors="replace")
            if run.proc.returncode == -signal.SIGSEGV:  # inside Chroma's native code
                pytest.xfail(f"{UPSTREAM_ISSUE}: worker {run.proc.returncode}: {err[-300:]}")
            pytest.fail(f"worker exited with {run.proc.returncode}: {run.lines[-3:]} {err[-500:]}")
        assert time.monotonic() - started < 600, "kill loop took too long"

    got, rebuilt = _final_store(path, users, bool(flags))
    pending = Journal(path / "journal.sqlite3").pending()
    if pending:  # the store refused them: they must wait in the outbox, and nothing else
        assert_same_store({**got, **{e.id: e for e in pending}}, want)
        pytest.xfail(f"{len(pending)} episode(s) left in the outbox: {_last_store_error(stderr)}")
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
        tenants_rebuilt_on_write=rebuilt_on_write,
        tenants_rebuilt_on_read=rebuilt,
        seconds=time.monotonic() - started,
    )
    print("kill-9 figures:", FIGURES)
