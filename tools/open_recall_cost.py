"""What recall of open segments costs: median recall time with and without open turns.

One in-process ``Memory`` (hashing embedder, no judge or scorer): ``--stored``
one-turn sessions are flushed, the recall is timed, then ``--open`` one-turn
sessions are left open and it is timed again (the first recall after a change
rebuilds the tenant's open corpus, so the median is the cached case).

Run ``python tools/open_recall_cost.py --stored 300 --open 1000``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from episeg.benchmarks.load_client import TOPICS
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn


def _timed(memory: Memory, query: str, rounds: int) -> tuple[float, float]:
    took = []
    for _ in range(rounds):
        start = time.perf_counter()
        memory.recall("a", query, k=5)
        took.append(time.perf_counter() - start)
    return statistics.median(took) * 1000, max(took) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--stored", type=int, default=300)
    parser.add_argument("--open", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    memory = Memory(
        path=tempfile.mkdtemp(), embedder=HashingEmbedder(dim=384), judge=None, scorer=None
    )
    for n in range(args.stored):
        text = f"{TOPICS[n % len(TOPICS)]} stored {n}"
        memory.observe(Turn(actor="user", text=text, ts=float(n), user="a", session=f"s{n}"))
    memory.flush("a")
    base = _timed(memory, "deploy the database", args.rounds)
    for n in range(args.open):
        text = f"{TOPICS[n % len(TOPICS)]} open {n}"
        memory.observe(Turn(actor="user", text=text, ts=float(n), user="a", session=f"o{n}"))
    with_open = _timed(memory, "deploy the database", args.rounds)
    print(
        f"recall ms (median, max): {args.stored} stored, no open turns {base[0]:.1f}, "
        f"{base[1]:.1f}; with {args.open} open turns {with_open[0]:.1f}, {with_open[1]:.1f}"
    )
    memory.close()


if __name__ == "__main__":
    main()
