"""The open episode of one session and how it becomes a closed :class:`Episode`.

>>> import numpy as np
>>> from episeg.types import Turn
>>> b = OpenEpisode(user="u", session="s")
>>> b.add(Turn(actor="user", text="why 401 on login?", ts=1.0, id="s:0"), np.array([1.0, 0.0]))
>>> ep = b.close(closing_verdicts=())
>>> ep.summary, len(ep.turns), ep.opened_at
('why 401 on login?', 1, 1.0)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from episeg.types import Actor, Episode, Turn, Verdict

__all__ = ["OpenEpisode", "episode_id"]

_SUMMARY_CHARS = 160


def episode_id(user: str, session: str, first_turn_id: str) -> str:
    """Deterministic id: the same turns always make the same episode id.

    >>> episode_id("alice", "s1", "s1:0") == episode_id("alice", "s1", "s1:0")
    True
    """
    raw = "\x1f".join((user, session, first_turn_id)).encode()
    return hashlib.sha256(raw).hexdigest()[:32]


@dataclass
class OpenEpisode:
    """Turns collected since the last boundary of one (user, session)."""

    user: str
    session: str
    turns: list[Turn] = field(default_factory=list)
    embeddings: list[np.ndarray] = field(default_factory=list)
    opening_verdicts: tuple[Verdict, ...] = ()
    parent_id: str | None = None
    summary: str = ""

    @property
    def id(self) -> str:
        if not self.turns:
            raise ValueError("an empty episode has no id")
        return episode_id(self.user, self.session, self.turns[0].id or "")

    def add(self, turn: Turn, embedding: np.ndarray) -> None:
        self.turns.append(turn)
        self.embeddings.append(np.asarray(embedding, dtype=np.float32))

    def close(self, *, closing_verdicts: tuple[Verdict, ...]) -> Episode:
        """The closed episode: its embedding is the normalised mean of its turns' (kept too)."""
        if not self.turns:
            raise ValueError("cannot close an empty episode")
        stacked = np.stack(self.embeddings)
        mean = np.mean(stacked, axis=0)
        norm = float(np.linalg.norm(mean))
        vector = (mean / norm if norm > 0 else mean).astype(np.float32)
        return Episode(
            id=self.id,
            user=self.user,
            session=self.session,
            turns=tuple(self.turns),
            summary=self.summary or _extractive_summary(self.turns),
            opened_at=self.turns[0].ts,
            closed_at=self.turns[-1].ts,
            embedding=vector,
            turn_embeddings=stacked,
            parent_id=self.parent_id,
            boundary_verdicts=self.opening_verdicts,
            closing_verdicts=closing_verdicts,
        )


def _extractive_summary(turns: list[Turn]) -> str:
    """The first user turn (or first turn), cut to one line of 160 characters."""
    first = next((t for t in turns if t.actor is Actor.USER and t.text.strip()), turns[0])
    line = " ".join(first.text.split())
    return line if len(line) <= _SUMMARY_CHARS else line[: _SUMMARY_CHARS - 1] + "…"
