"""Run the forget scenario ``N`` times; print how often the erased text stayed in a file.

Used by ``test_forget_scrub.py``: ``python forget_scrub_worker.py N forget|reopen``. Each run
stores three episodes of alice and one of bob in a new embedded store and forgets alice's
first episode. ``forget`` then greps every file under the folder for the erased text;
``reopen`` first closes the memory and opens the store again as a new process would
(``episeg.store.scrub`` zeroes the unused slots of Chroma's vector files then), checks that
every other episode is still there and recallable, and greps.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from chromadb.api.shared_system_client import SharedSystemClient

from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn

SAID = [
    ("alice", "s1", "zebraquokka alpha secret deploy note"),
    ("alice", "s2", "marmotlynx beta kept around"),
    ("alice", "s3", "ocelotkiwi session three secret"),
    ("bob", "s1", "pangolinyak bob keeps this"),
]


def _memory(folder: Path) -> Memory:
    return Memory(path=folder, embedder=HashingEmbedder(), judge=None, scorer=None)


def one_run(folder: Path, reopen: bool) -> tuple[list[str], bool]:
    """The files still holding the erased text, and whether the rest is intact."""
    mem = _memory(folder)
    for ts, (user, session, text) in enumerate(SAID):
        mem.observe(Turn(actor="user", text=text, ts=float(ts), user=user, session=session))
    first = next(e for e in mem.flush() if e.user == "alice" and e.session == "s1")
    mem.forget("alice", episode=first.id)
    intact = True
    if reopen:
        mem.close()
        SharedSystemClient.clear_system_cache()  # as a new process: Chroma reads the files
        mem = _memory(folder)
        kept = sorted(e.session for e in mem.episodes("alice"))
        found = mem.recall("bob", "pangolinyak", k=1)
        intact = kept == ["s2", "s3"] and bool(found) and found[0].episode.user == "bob"
    needle = b"zebraquokka"
    left = [p.name for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]
    mem.close()
    SharedSystemClient.clear_system_cache()
    return left, intact


def main() -> None:
    runs, reopen = int(sys.argv[1]), sys.argv[2] == "reopen"
    leaks: list[list[str]] = []
    broken = 0
    for _ in range(runs):
        folder = Path(tempfile.mkdtemp(prefix="episeg-forget-scrub-"))
        try:
            left, intact = one_run(folder, reopen)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        leaks += [left] if left else []
        broken += not intact
    files = sorted({name for left in leaks for name in left})
    print(json.dumps({"runs": runs, "leaks": len(leaks), "files": files, "broken": broken}))


if __name__ == "__main__":
    main()
