"""What recall knows about one episode without reading it: :class:`EpisodeCard`.

The tenant's :class:`~episeg.recall.index.TenantIndex` keeps one card per
episode; ranking and filtering read cards, and a cached episode is served only
while its card is current (:mod:`episeg.recall.episode_cache`).

>>> from episeg.types import Episode, Turn
>>> ep = Episode(id="e1", user="u", session="s", summary="", opened_at=0.0, closed_at=1.0,
...              turns=(Turn(actor="user", text="deploy v2 to prod", ts=0.0),))
>>> card = EpisodeCard.of(ep)
>>> card.words, card.n_turns, card == EpisodeCard.of(ep)
((4,), 1, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

from episeg.store.codec import RECALL_FIELDS
from episeg.store.usermeta import MetaScalar
from episeg.types import Episode

__all__ = ["EpisodeCard", "with_state"]


@dataclass(frozen=True, slots=True)
class EpisodeCard:
    """What recall knows about one episode without reading it from the store.

    ``words`` holds each turn's word count (whitespace-separated tokens),
    ``summary_words`` the summary's (what a hit carries besides its turns).
    """

    id: str
    session: str
    opened_at: float
    closed_at: float
    words: tuple[int, ...]
    importance: float | None
    last_accessed: float | None
    strength: float
    recall_count: int
    archived: bool
    metadata: Mapping[str, MetaScalar] = field(default_factory=dict, hash=False)
    summary_words: int = 0
    pinned: bool = False

    @property
    def n_turns(self) -> int:
        return len(self.words)

    @classmethod
    def of(cls, ep: Episode) -> EpisodeCard:
        sal = ep.salience
        return cls(
            id=ep.id,
            session=ep.session,
            opened_at=ep.opened_at,
            closed_at=ep.closed_at,
            words=tuple(len(t.text.split()) for t in ep.turns),
            importance=None if sal is None else sal.normalized,
            last_accessed=ep.last_accessed,
            strength=ep.strength,
            recall_count=ep.recall_count,
            archived=ep.archived,
            metadata=ep.metadata,
            summary_words=len(ep.summary.split()),
            pinned=ep.pinned,
        )


_T = TypeVar("_T", Episode, EpisodeCard)


def with_state(item: _T, state: Episode | EpisodeCard | None) -> _T:
    """``item`` with the recall state (count, access, strength, archived) of ``state``, if any."""
    return item if state is None else replace(item, **{f: getattr(state, f) for f in RECALL_FIELDS})
