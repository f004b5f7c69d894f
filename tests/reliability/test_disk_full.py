"""Disk full: the journal cannot commit, ``observe`` raises ``JournalError`` (the turn is
NOT accepted), and nothing acknowledged before is lost.

The real case runs the journal on a 256 KiB tmpfs (``mount -t tmpfs``, needs root); the
injected case makes SQLite report "database or disk is full" at a chosen commit."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from episeg.errors import JournalError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Turn

from .helpers import by_turns, make_transcript
from .memstore import MemBackend


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        # root in a container without CAP_SYS_ADMIN (CI) cannot mount: skip, loudly
        pytest.skip(
            f"cannot mount a tmpfs ({done.stderr.strip()}); "
            "test_disk_full_injected covers the same path without a mount"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def big_turns(n: int) -> list[Turn]:
    return [
        Turn(
            actor=Actor.USER if i % 2 == 0 else Actor.ASSISTANT,
            ts=float(i),
            user="alice",
            session="s",
            id=f"t{i}",
            text=f"deploy prod step {i} " + "x" * 3000,
        )
        for i in range(n)
    ]


@pytest.mark.skipif(
    os.geteuid() != 0,
    reason="mounting a tmpfs needs root; test_disk_full_injected covers the failure path",
)
def test_disk_full_on_real_tmpfs(tiny_disk: Path) -> None:
    backend = MemBackend()
    mem = Memory(
        path=tiny_disk, embedder=HashingEmbedder(), judge=None, scorer=None, backend=backend
    )
    turns = big_turns(400)
    acked: list[str] = []
    with pytest.raises(JournalError, match="full"):
        for turn in turns:
            mem.observe(turn)
            acked.append(turn.id or "")
    refused = turns[len(acked)]
    assert 1 <= len(acked) < len(turns)
    with pytest.raises(JournalError):  # still full: still refused, never a silent drop
        mem.observe(refused)
    mem.close()
    # free the disk: a new Memory recovers every acknowledged turn, none of the refused
    subprocess.run(["mount", "-o", "remount,size=64m", str(tiny_disk)], check=True)
    again = Memory(
        path=tiny_disk, embedder=HashingEmbedder(), judge=None, scorer=None, backend=backend
    )
    again.flush()
    stored = sorted(tid for e in backend.rows.values() for tid in e.turn_ids)
    assert stored == sorted(acked)
    again.observe(refused)  # the client re-sends the refused turn: now accepted
    again.flush()
    stored = sorted(tid for e in backend.rows.values() for tid in e.turn_ids)
    assert stored == sorted([*acked, refused.id or ""])


class _FullDisk:
    """Wraps a sqlite3 connection; COMMIT fails with SQLITE_FULL once ``armed``."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db, self.armed = db, False

    def execute(self, sql: str, *args: Any) -> Any:
        if self.armed and sql == "COMMIT":
            raise sqlite3.OperationalError("database or disk is full")
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def test_disk_full_injected(tmp_path: Path) -> None:
    backend = MemBackend()
    mem = Memory(
        path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None, backend=backend
    )
    faulty = _FullDisk(mem.journal._db)
    mem.journal._db = faulty  # type: ignore[assignment]
    turns = make_transcript(200, seed=2, users=1, sessions=1)
    refused = 0
    for n, turn in enumerate(turns):
        faulty.armed = n % 7 == 3  # every 7th commit fails, including ones closing episodes
        try:
            mem.observe(turn)
        except JournalError:
            refused += 1
            faulty.armed = False
            mem.observe(turn)  # the caller learnt it was refused and re-sends it at once
    mem.close()  # crash without flush: only the journal knows the open turns now
    mem = Memory(
        path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None, backend=backend
    )
    mem.flush()
    assert refused == len(range(3, 200, 7))
    reference = MemBackend()
    ref = Memory(
        path=tmp_path / "ref",
        embedder=HashingEmbedder(),
        judge=None,
        scorer=None,
        backend=reference,
        journal=False,
    )
    ref.ingest(turns)
    ref.flush()
    assert by_turns(backend.rows) == by_turns(reference.rows)
    assert len(backend.writes) == len(set(backend.writes))
