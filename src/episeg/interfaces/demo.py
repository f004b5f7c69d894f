"""The demo: segment, score, store and recall the bundled agent conversation.

The sample moves from auth debugging to a prod deploy (with a terraform lock
detour) to retry logging. Everything runs offline: bundled MiniLM, ``Memory``'s
default judge (none for a conversation with real roles: the boundary model alone),
the anchored offline salience scorer and an embedded Chroma store.
Run again on the same ``--path``, it records the sample in a new session
(``demo-2``, ``demo-3``, ...) and recalls within it, so each run shows the
same thing and no earlier run is changed.
"""

from __future__ import annotations

import dataclasses
import itertools
import tempfile
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TextIO

from episeg.interfaces.transcript import iter_turns
from episeg.interfaces.views import episode_lines
from episeg.memory import Memory
from episeg.types import Episode, Turn

__all__ = ["run_demo", "sample_turns"]

_SAMPLE_SESSION = "demo"
_QUERIES = (
    "how did we fix the 401 on login?",
    "bump the production deploy version",
    "log every retry attempt",
)


def sample_turns(*, ends_at: float | None = None) -> list[Turn]:
    """The bundled sample conversation (20 turns, user ``alice``).

    With ``ends_at`` the timestamps are shifted so the last turn happens then
    (the demo uses "a minute ago" so recency means something).
    """
    text = (
        resources.files("episeg")
        .joinpath("data/sample_conversation.jsonl")
        .read_text(encoding="utf-8")
    )
    turns = list(iter_turns(text.splitlines()))
    if ends_at is None:
        return turns
    shift = ends_at - turns[-1].ts
    return [dataclasses.replace(t, ts=t.ts + shift) for t in turns]


def _free_session(memory: Memory, user: str, name: str) -> str:
    """``name``, or ``name-2``, ``name-3``, ... : the first session ``user`` has never used."""
    candidates = (name if n == 1 else f"{name}-{n}" for n in itertools.count(1))
    return next(s for s in candidates if not memory.journal.sessions(only=(user, s)))


def run_demo(
    out: TextIO, *, path: str | Path | None = None, queries: Sequence[str] = _QUERIES
) -> list[Episode]:
    """Run the whole pipeline on the sample and print what happened."""
    workdir = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="episeg-demo-"))
    memory = Memory(path=workdir)
    turns = sample_turns(ends_at=time.time() - 60.0)
    session = _free_session(memory, turns[0].user, turns[0].session)
    turns = [dataclasses.replace(t, session=session) for t in turns]
    out.write(f"episeg demo: {len(turns)} turns from the bundled agent conversation\n")
    out.write(f"store: embedded Chroma at {workdir / 'chroma'}\n")
    if session != _SAMPLE_SESSION:
        out.write(f"(the store holds earlier demo runs; this one is session {session!r})\n")
    out.write("\n")
    episodes = memory.ingest(turns)
    episodes += memory.flush()
    for number, episode in enumerate(episodes, start=1):
        out.write("\n".join(episode_lines(number, episode)) + "\n")
    stats = memory.segmenter.stats
    out.write(
        f"\n{len(episodes)} episodes; {stats['turns']} turns, "
        f"{stats['judge_calls']} judge calls, {stats['embed_calls']} turn embeddings\n"
    )
    user = turns[0].user
    for query in queries:
        out.write(f"\nrecall({user!r}, {query!r}):\n")
        for rank, hit in enumerate(memory.recall(user, query, k=2, session=session), start=1):
            out.write(
                f"  {rank}. {hit.episode.summary[:70]!r}  score {hit.score:.2f} "
                f"(recency {hit.recency:.2f}, importance {hit.importance:.2f}, "
                f"similarity {hit.similarity:.2f}; recalled {hit.episode.recall_count}x)\n"
            )
    return episodes
