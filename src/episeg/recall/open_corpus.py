"""What recall knows of a tenant's open segments: the turns, their vectors, BM25 indexes.

Used by :mod:`episeg.recall.open_segments` (the scoring and the merge with the
stored hits).

>>> from episeg.types import Turn
>>> seg = OpenSegment(id="e9", user="u", session="s",
...                   turns=(Turn(actor="user", text="book the flight to Oslo", ts=5.0),),
...                   vectors=np.ones((1, 2), np.float32))
>>> seg.opened_at, seg.closed_at, seg.allowed(session="s", since=6.0, until=None)
(5.0, 5.0, False)
>>> [key for key, _ in OpenCorpus([seg]).turn_index().top("flight to Oslo", k=3)]
[(0, 0)]
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from episeg.recall.lexical import LexicalIndex
from episeg.store.usermeta import MetaScalar, matches
from episeg.types import Turn

__all__ = ["Key", "OpenCorpus", "OpenHit", "OpenSegment", "OpenVersion"]

Key = tuple[int, int]  # (segment index, position)
OpenVersion = tuple[tuple[int, int], tuple[int, int]]
"""The journal's versions of a tenant's open turns and of its outbox rows (a corpus cache key)."""


@dataclass(frozen=True, slots=True)
class OpenSegment:
    """One session's open turns (as stored: markers stripped) and their embeddings.

    An episode waiting in the outbox is a segment too, with its user ``metadata``
    (open turns have none) and its own ``span`` (start, end) when it was given one.
    """

    id: str
    user: str
    session: str
    turns: tuple[Turn, ...]
    vectors: np.ndarray
    metadata: Mapping[str, MetaScalar] = field(default_factory=dict)
    span: tuple[float, float] | None = None

    @property
    def opened_at(self) -> float:
        return self.turns[0].ts if self.span is None else self.span[0]

    @property
    def closed_at(self) -> float:
        return self.turns[-1].ts if self.span is None else self.span[1]

    def allowed(
        self,
        *,
        session: str | None,
        since: float | None,
        until: float | None,
        metadata: Mapping[str, MetaScalar] | None = None,
    ) -> bool:
        """Whether a recall's session / time / metadata filter keeps this segment."""
        return (
            (session is None or self.session == session)
            and (since is None or self.closed_at >= since)
            and (until is None or self.opened_at <= until)
            and (not metadata or matches(self.metadata, metadata))
        )


@dataclass
class OpenHit:
    """An open segment's score and its matched positions, best first."""

    segment: OpenSegment
    score: float
    relevance: float
    recency: float
    importance: float
    ranked: list[int] = field(default_factory=list)
    cosine: dict[int, float] = field(default_factory=dict)
    lexical: bool = False


class OpenCorpus:
    """A tenant's open segments with their BM25 indexes and unit vectors, built once.

    The caller keeps it while the open turns stay the same (``Memory`` keys it
    by the journal's state), so a recall does not rebuild the indexes.
    """

    def __init__(self, segments: Sequence[OpenSegment]) -> None:
        self.segments = [s for s in segments if s.turns]
        self.keys: list[Key] = [
            (n, pos) for n, s in enumerate(self.segments) for pos in range(len(s.turns))
        ]
        # every open turn's unit vector, one row per key (one matrix product per recall)
        self.units = (
            _unit_rows(np.concatenate([s.vectors for s in self.segments]))
            if self.segments
            else np.zeros((0, 1), np.float32)
        )
        self._lock = threading.Lock()
        self._turns: LexicalIndex[Key] | None = None
        self._episodes: LexicalIndex[int] | None = None

    def turn_index(self) -> LexicalIndex[Key]:
        with self._lock:
            if self._turns is None:
                self._turns = LexicalIndex()
                self._turns.add(self.keys, [t.text for s in self.segments for t in s.turns])
            return self._turns

    def episode_index(self) -> LexicalIndex[int]:
        with self._lock:
            if self._episodes is None:
                self._episodes = LexicalIndex()
                self._episodes.add(
                    list(range(len(self.segments))),
                    ["\n".join(t.text for t in s.turns) for s in self.segments],
                )
            return self._episodes


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    rows = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.asarray(rows / np.where(norms == 0, 1.0, norms), dtype=np.float32)
