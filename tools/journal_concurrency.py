"""Journal writes from many threads: one shared SQLite connection + a lock, or one per thread?

Both run the journal's settings (WAL, ``synchronous=FULL``, ``BEGIN IMMEDIATE``) with
``threads`` writers each committing ``commits`` small transactions (one ~1.7 KB row,
about a turn with its vector) into a file under ``--dir`` (default: a temporary folder
on the working directory's disk). ``shared`` is what ``episeg.durability.journal``
does; ``per-thread`` gives each thread its own connection with a 60 s busy timeout.
The two alternate ``--rounds`` times. Prints commits/s and per-commit latency.

    python tools/journal_concurrency.py --threads 8 --commits 50
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import numpy as np


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA busy_timeout=60000")
    db.execute("CREATE TABLE IF NOT EXISTS t (k TEXT, v BLOB)")
    return db


def run(mode: str, threads: int, commits: int, folder: Path) -> str:
    path = Path(tempfile.mkdtemp(dir=folder)) / "journal.sqlite3"
    shared, lock, waits = _connect(path), threading.Lock(), []
    row = b"x" * 1700

    def commit(db: sqlite3.Connection, key: str) -> None:
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO t VALUES (?, ?)", (key, row))
        db.execute("COMMIT")

    def writer(i: int) -> None:
        db = shared if mode == "shared" else _connect(path)
        for n in range(commits):
            t0 = time.perf_counter()
            if mode == "shared":
                with lock:
                    commit(db, f"{i}-{n}")
            else:
                commit(db, f"{i}-{n}")
            waits.append(time.perf_counter() - t0)

    workers = [threading.Thread(target=writer, args=(i,)) for i in range(threads)]
    t0 = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wall = time.perf_counter() - t0
    count = shared.execute("SELECT count(*) FROM t").fetchone()[0]
    p50, p99 = np.percentile(np.asarray(waits) * 1000, [50, 99])
    return (
        f"{mode:10s} threads={threads} commits={count} commits/s={count / wall:.0f} "
        f"p50={p50:.1f} ms p99={p99:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--commits", type=int, default=50, help="per thread")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=Path.cwd())
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix=".journal-bench-", dir=args.dir))
    try:
        for _ in range(args.rounds):
            for mode in ("shared", "per-thread"):
                print(run(mode, args.threads, args.commits, folder), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
