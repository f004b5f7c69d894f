"""One Memory per path: the journal's exclusive lock, across processes and within one."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from episeg.durability.journal import Journal
from episeg.errors import JournalError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder


def test_a_second_journal_on_the_same_file_is_refused_until_the_first_closes(
    tmp_path: Path,
) -> None:
    first = Journal(tmp_path / "journal.sqlite3")
    with pytest.raises(JournalError, match=f"in use by another Memory \\(process {os.getpid()}"):
        Journal(tmp_path / "journal.sqlite3")
    first.close()
    first.close()  # idempotent
    Journal(tmp_path / "journal.sqlite3").close()


def test_a_with_block_closes_the_memory_even_on_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), Memory(path=tmp_path, embedder=HashingEmbedder()):
        with pytest.raises(JournalError, match="in use"):
            Memory(path=tmp_path, embedder=HashingEmbedder())
        raise RuntimeError("the caller's own failure")
    Memory(path=tmp_path, embedder=HashingEmbedder()).close()  # the lock was released


def test_a_dropped_memory_releases_its_lock(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None)
    del mem  # never closed; possibly held in a reference cycle until collected
    again = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None)
    again.close()
    gc.collect()


@pytest.mark.slow
def test_another_process_holds_the_journal_until_it_is_killed(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from episeg.durability.journal import Journal; "
            f"j = Journal({str(tmp_path / 'journal.sqlite3')!r}); print('ready', flush=True); "
            "time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(JournalError, match=f"process {holder.pid}"):
            Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # kill -9 leaves no stale lock: the OS released the flock with the process
    Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None).close()


def test_a_journal_kept_alive_only_by_a_reference_cycle_is_collected_on_conflict(
    tmp_path: Path,
) -> None:
    gc.disable()  # keep the cycle from being collected before the conflict
    try:
        dropped = Journal(tmp_path / "journal.sqlite3")
        dropped.cycle = dropped  # type: ignore[attr-defined]
        del dropped
        Journal(tmp_path / "journal.sqlite3").close()
    finally:
        gc.enable()
