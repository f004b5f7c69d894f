"""The optional session / time-range / metadata filter of one recall (:class:`RecallWindow`).

An episode passes when it is not archived, belongs to ``session`` (when
given), overlaps ``[since, until]`` (seconds since the epoch; either end
may be open) and its user metadata holds every ``metadata`` key with an
equal value of the same type (:func:`episeg.store.usermeta.matches`).
:meth:`RecallWindow.where` is the matching Chroma ``where`` clause for the
store's turn rows (session and time), so the dense list is filtered inside
the store rather than after it; metadata is checked on the catalogue.

>>> from episeg.recall.index import EpisodeCard
>>> card = EpisodeCard(id="e1", session="s", opened_at=100.0, closed_at=200.0, words=(3,),
...                    importance=None, last_accessed=None, strength=1.0, recall_count=0,
...                    archived=False)
>>> window = RecallWindow({"e1": card}, session=None, since=150.0, until=None)
>>> window.active, window.allows("e1"), window.allows("unknown")
(True, True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from episeg.recall.index import EpisodeCard
from episeg.store.usermeta import MetaScalar, matches

__all__ = ["RecallWindow"]


class RecallWindow:
    """The optional session / time-range / metadata filter of one recall."""

    def __init__(
        self,
        cards: dict[str, EpisodeCard],
        session: str | None,
        since: float | None,
        until: float | None,
        metadata: Mapping[str, MetaScalar] | None = None,
        *,
        span: float = 0.0,
    ) -> None:
        self.cards, self.session, self.since, self.until = cards, session, since, until
        self.span = span  # the tenant's longest episode (TenantIndex.max_span)
        self.metadata = metadata or {}
        self.active = (
            session is not None or since is not None or until is not None or bool(self.metadata)
        )

    def allows(self, episode_id: str) -> bool:
        """Exactly: not archived, in the session, overlapping [since, until] (ends included)."""
        card = self.cards.get(episode_id)
        if card is None or card.archived:
            return False
        if self.session is not None and card.session != self.session:
            return False
        if self.since is not None and card.closed_at < self.since:
            return False
        if self.metadata and not matches(card.metadata, self.metadata):
            return False
        return not (self.until is not None and card.opened_at > self.until)

    def where(self) -> dict[str, Any] | None:
        clauses: list[dict[str, Any]] = []
        if self.session is not None:
            clauses.append({"session": self.session})
        # A turn of an episode overlapping the range may lie outside it, but never by more
        # than the longest episode: pad by that (+1 s for a rounded stored time); allows()
        # then keeps exactly the overlapping episodes.
        pad = self.span + 1.0
        if self.since is not None:
            clauses.append({"ts": {"$gte": self.since - pad}})
        if self.until is not None:
            clauses.append({"ts": {"$lte": self.until + pad}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}
