"""What hierarchical recall returns: :class:`RecallHit`, :class:`Expand`, the word count.

A hit is one episode (identity, ISO dates, summary) and the turns of it that
recall returns, in conversation order; ``turn_ids`` names them.

>>> from episeg.types import Episode, Turn
>>> ep = Episode(id="e1", user="alice", session="s", summary="gym", opened_at=0.0,
...              closed_at=60.0, turns=(Turn(actor="user", text="I went climbing", ts=0.0),
...                                     Turn(actor="assistant", text="Nice!", ts=60.0)))
>>> hit = RecallHit(episode=ep, score=1.0, recency=0.0, importance=0.0, similarity=1.0,
...                 raw_similarity=0.9,
...                 turns=ep.turns[:1], positions=(0,))
>>> hit.turn_ids, hit.words, hit.text
(('e1:0',), 3, 'user: I went climbing')
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from enum import StrEnum

from episeg.errors import RecallArgumentError
from episeg.types import Turn
from episeg.typing import ScoredEpisode

__all__ = ["DATE_WORDS", "Expand", "RecallHit", "turn_span", "word_count"]

DATE_WORDS = 2
"""What a hit's two dates (start, end) cost in ``max_words`` with ``recall.count_summaries``."""


def word_count(text: str) -> int:
    """Words as the budget counts them: whitespace-separated tokens.

    >>> word_count("Alice: I went to the climbing gym.")
    7
    """
    return len(text.split())


def turn_span(
    words: Sequence[int], pos: int, context: int, have: Container[int], room: float
) -> list[int]:
    """The positions a matched turn adds: itself, then up to ``context`` turns on each side.

    ``words`` are the turns' word counts, ``have`` the positions already
    returned, ``room`` the words left in the budget. The matched turn comes
    first (``[]`` if it does not fit); neighbours are added nearest first, and a
    side stops at its first turn that does not fit, so context never costs the
    match itself.

    >>> turn_span([30, 4, 30], 1, 1, (), room=10)  # the neighbours do not fit
    [1]
    >>> turn_span([3, 4, 3], 1, 1, (), room=10)
    [0, 1, 2]
    >>> turn_span([3, 4, 9], 1, 1, {1}, room=5)  # the match already returned
    [0]
    """
    span = [] if pos in have else [pos]
    used = sum(words[q] for q in span)
    if used > room:
        return []
    open_sides = {-1: True, 1: True}
    for distance in range(1, min(context, len(words)) + 1):  # beyond both ends: nothing more
        for side in (-1, 1):
            q = pos + side * distance
            if not open_sides[side] or not 0 <= q < len(words) or q in have:
                continue
            if used + words[q] > room:
                open_sides[side] = False
                continue
            span.append(q)
            used += words[q]
    return sorted(span)


class Expand(StrEnum):
    """What a hit returns: the matched ``turns`` or its whole ``episode``."""

    TURNS = "turns"
    EPISODE = "episode"

    @classmethod
    def parse(cls, value: object) -> Expand:
        """``value`` as an :class:`Expand` (a member or its name, any case).

        >>> Expand.parse("Episode")
        <Expand.EPISODE: 'episode'>
        >>> Expand.parse("whole")
        Traceback (most recent call last):
        ...
        episeg.errors.RecallArgumentError: unknown expand 'whole'; valid: turns, episode

        Raises
        ------
        RecallArgumentError
            For anything else (a :class:`ValueError` too, as before).
        """
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).lower())
        except ValueError:
            valid = ", ".join(m.value for m in cls)
            raise RecallArgumentError(f"unknown expand {value!r}; valid: {valid}") from None


@dataclass(frozen=True, slots=True)
class RecallHit(ScoredEpisode):
    """One recalled episode and the turns of it that recall returns.

    The :class:`~episeg.typing.ScoredEpisode` fields keep their meaning:
    ``score`` = ``similarity`` (weighted relevance) + ``recency`` +
    ``importance`` + ``reinforcement`` (each a weighted contribution);
    ``raw_similarity`` is the best cosine of the hit's matched turns (0.0 when
    it was found by words only). ``open`` marks a segment not yet closed
    (:mod:`episeg.recall.open_segments`): its id is the one it will be stored under.
    """

    reinforcement: float = 0.0
    turns: tuple[Turn, ...] = ()
    positions: tuple[int, ...] = ()
    lexical: bool = False
    neighbours_before: tuple[str, ...] = ()
    neighbours_after: tuple[str, ...] = ()
    open: bool = False

    @property
    def episode_id(self) -> str:
        return self.episode.id

    @property
    def start(self) -> str:
        return self.episode.start

    @property
    def end(self) -> str:
        return self.episode.end

    @property
    def summary(self) -> str:
        return self.episode.summary

    @property
    def turn_ids(self) -> tuple[str, ...]:
        return tuple(
            t.id or f"{self.episode.id}:{p}"
            for t, p in zip(self.turns, self.positions, strict=True)
        )

    @property
    def words(self) -> int:
        return sum(word_count(t.text) for t in self.turns)

    @property
    def text(self) -> str:
        """The returned turns, one ``actor: text`` line each."""
        return "\n".join(f"{t.actor.value}: {t.text}" for t in self.turns)
