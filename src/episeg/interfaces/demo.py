"""The demo: segment, score, store and recall the bundled agent conversation.

The sample moves from auth debugging to a prod deploy (with a terraform lock
detour) to retry logging. Everything runs offline: bundled MiniLM, the local
judge, the anchored offline salience scorer and an embedded Chroma store.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TextIO

from episeg.interfaces.transcript import iter_turns
from episeg.memory import Memory
from episeg.types import Decision, Episode, Turn

__all__ = ["format_episode", "run_demo", "sample_turns"]

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


def format_episode(number: int, episode: Episode, first_position: int) -> str:
    """A few lines describing one episode, its boundary and the signals behind it."""
    last = first_position + len(episode.turns) - 1
    kind = "sub-episode" if episode.parent_id else "episode"
    salience = episode.salience
    score = (
        f"{salience.score}/10 ({salience.scorer})"
        if salience and salience.is_scored
        else f"unscored ({salience.reason if salience else 'no scorer'})"
    )
    fired = [
        v for v in episode.boundary_verdicts if v.decision.opens_episode and v.signal != "combiner"
    ]
    combiner = next((v for v in episode.boundary_verdicts if v.signal == "combiner"), None)
    if not episode.boundary_verdicts:
        why = "start of the session"
    else:
        why = ", ".join(f"{v.signal} ({v.reason})" for v in fired) or "combined evidence"
        if combiner is not None and combiner.decision is Decision.SUB_EPISODE:
            why += f" -> sub-episode of {episode.parent_id[:8] if episode.parent_id else '?'}"
    lines = [
        f"[{number}] {kind} {episode.id[:8]}  turns {first_position}-{last} "
        f"({len(episode.turns)} turns)  salience {score}",
        f"    summary : {episode.summary}",
        f"    opened by: {why}",
    ]
    return "\n".join(lines)


def run_demo(
    out: TextIO, *, path: str | Path | None = None, queries: Sequence[str] = _QUERIES
) -> list[Episode]:
    """Run the whole pipeline on the sample and print what happened."""
    workdir = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="episeg-demo-"))
    memory = Memory(path=workdir)
    turns = sample_turns(ends_at=time.time() - 60.0)
    out.write(f"episeg demo: {len(turns)} turns from the bundled agent conversation\n")
    out.write(f"store: embedded Chroma at {workdir / 'chroma'}\n\n")
    episodes = memory.ingest(turns)
    episodes += memory.flush()
    position = 0
    for number, episode in enumerate(episodes, start=1):
        out.write(format_episode(number, episode, position) + "\n")
        position += len(episode.turns)
    stats = memory.segmenter.stats
    out.write(
        f"\n{len(episodes)} episodes; {stats['turns']} turns, "
        f"{stats['judge_calls']} judge calls, {stats['embed_calls']} turn embeddings\n"
    )
    user = turns[0].user
    for query in queries:
        out.write(f"\nrecall({user!r}, {query!r}):\n")
        for rank, hit in enumerate(memory.recall(user, query, k=2), start=1):
            out.write(
                f"  {rank}. {hit.episode.summary[:70]!r}  score {hit.score:.2f} "
                f"(recency {hit.recency:.2f}, importance {hit.importance:.2f}, "
                f"similarity {hit.similarity:.2f}; recalled {hit.episode.recall_count}x)\n"
            )
    return episodes
