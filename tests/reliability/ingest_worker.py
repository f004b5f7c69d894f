"""A crash-test client's server side: ingest a transcript into a Memory, ack each turn.

Usage: ``python ingest_worker.py PATH TRANSCRIPT START [--flush] [--lookahead]``
(``--lookahead``: speaker roles unknown, so the boundary model decides a turn
after the next one came, with MiniLM-shaped hashing vectors). Prints
``ready <seconds of start-up recovery> <turns replayed>`` once the Memory is open,
then ``ack <index>`` after each ``observe`` returned (the turn is durable),
and ``done`` after the final flush. The test SIGKILLs it at random moments.
"""

from __future__ import annotations

import sys
import time

from episeg.config import CombinerConfig, EpisegConfig
from episeg.interfaces.transcript import read_transcript
from episeg.memory import Memory
from episeg.testing import HashingEmbedder, MiniLMShaped


def worker_parts(lookahead: bool) -> tuple[HashingEmbedder, EpisegConfig]:
    """The embedder and config of a worker (and of the test's uninterrupted reference)."""
    if not lookahead:
        return HashingEmbedder(), EpisegConfig()
    combiner = CombinerConfig(kind="learned", roles_known=False)
    return MiniLMShaped(dim=384), EpisegConfig(combiner=combiner)


def main(argv: list[str]) -> int:
    path, transcript, start = argv[0], argv[1], int(argv[2])
    turns = read_transcript(transcript)
    t0 = time.perf_counter()
    embedder, config = worker_parts("--lookahead" in argv)
    mem = Memory(path=path, embedder=embedder, judge=None, scorer=None, config=config)
    print(f"ready {time.perf_counter() - t0:.4f} {mem.recovery.turns_replayed}", flush=True)
    for index in range(start, len(turns)):
        mem.observe(turns[index])
        print(f"ack {index}", flush=True)
    if "--flush" in argv:
        mem.flush()
        print("done", flush=True)
    mem.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
