"""One tenant's in-memory catalogue of episodes and its two BM25 indexes (:class:`TenantIndex`).

Built and kept current by :class:`~episeg.recall.index.IndexedStore` (see
:mod:`episeg.recall.index`): per episode, what ranking and filtering need
without reading the store (an :class:`~episeg.recall.card.EpisodeCard`), one
lexical index over single turns keyed ``(episode id, position)`` and one over
whole episodes keyed by id. Replacing an indexed episode swaps its card and
rows in place, so a recall ranking meanwhile never misses it.

>>> import dataclasses
>>> import numpy as np
>>> from episeg.types import Episode, Turn
>>> index = TenantIndex()
>>> ep = Episode(id="e1", user="alice", session="s", summary="", opened_at=0.0,
...              closed_at=0.0, turns=(Turn(actor="user", text="deploy v2 to prod", ts=0.0),),
...              embedding=np.array([1.0, 0.0], np.float32))
>>> index.add([ep])
>>> index.revise_cards([dataclasses.replace(ep, metadata={"ticket": 7})])  # the card only
>>> [key for key, _ in index.turns.top("deploy", k=3)], len(index), index.cards["e1"].metadata
([('e1', 0)], 1, {'ticket': 7})
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence

from episeg.recall.card import EpisodeCard, with_state
from episeg.recall.lexical import LexicalIndex, tokenize
from episeg.types import Episode
from episeg.typing import EpisodeStore

__all__ = ["TenantIndex"]

_PAGE = 1000
"""Episodes read per page when an index is built from its store."""


class TenantIndex:
    """Catalogue + turn and episode BM25 indexes of one tenant (see the module docstring)."""

    def __init__(self) -> None:
        self.cards: dict[str, EpisodeCard] = {}
        self.turns: LexicalIndex[tuple[str, int]] = LexicalIndex()
        self.episodes: LexicalIndex[str] = LexicalIndex()
        self._sessions: dict[str, builtins.list[str]] = {}
        self._sessions_dirty = False
        # longest episode: a turn of one overlapping [a, b] lies in [a - span, b + span]
        self.max_span = 0.0

    def __len__(self) -> int:
        return len(self.cards)

    def add(self, episodes: Sequence[Episode]) -> None:
        """Index ``episodes`` (an id already indexed is replaced)."""
        latest = {ep.id: ep for ep in episodes}
        texts = [t.text for ep in latest.values() for t in ep.turns]
        tokens = iter(tokenize(texts))  # once: an episode's tokens are its turns' in order
        for ep in latest.values():
            ts = [t.ts for t in ep.turns]
            lo, hi = min([ep.opened_at, *ts]), max([ep.closed_at, *ts])
            self.max_span = max(self.max_span, hi - lo)
        self.add_cards(
            [EpisodeCard.of(ep) for ep in latest.values()],
            [[next(tokens) for _ in ep.turns] for ep in latest.values()],
        )

    def add_cards(
        self, cards: Sequence[EpisodeCard], tokens: Sequence[Sequence[builtins.list[str]]]
    ) -> None:
        """Index episodes given as cards and their turns' tokens (:func:`tokenize`).

        An indexed id is replaced in place: its card and its BM25 rows are
        swapped, never removed first, so a recall ranking meanwhile finds
        the old version or the new one, never neither (F108).
        """
        keys: builtins.list[tuple[str, int]] = []
        flat: builtins.list[builtins.list[str]] = []
        stale: builtins.list[tuple[str, int]] = []  # turns past a replaced version's last
        for card, turn_tokens in zip(cards, tokens, strict=True):
            if (old := self.cards.get(card.id)) is not None:
                stale.extend((card.id, pos) for pos in range(len(turn_tokens), old.n_turns))
            keys.extend((card.id, pos) for pos in range(len(turn_tokens)))
            flat.extend(turn_tokens)
        self.turns.add_tokens(keys, flat)
        self.episodes.add_tokens(
            [c.id for c in cards], [[w for turn in ts for w in turn] for ts in tokens]
        )
        for card in cards:
            self.cards[card.id] = card
        self.turns.remove(stale)
        self._sessions_dirty = True

    def revise_cards(self, episodes: Sequence[Episode]) -> None:
        """Take a user's edit (summary, salience, pin, metadata) of indexed episodes.

        Their turns are unchanged, so only the card is swapped: the BM25 rows,
        their order and the recall state stay (an edit does not reorder ties).
        An id not indexed is added.
        """
        known = [ep for ep in episodes if ep.id in self.cards]
        for ep in known:
            self.cards[ep.id] = with_state(EpisodeCard.of(ep), self.cards[ep.id])
        if unknown := [ep for ep in episodes if ep.id not in self.cards]:
            self.add(unknown)

    def remove(self, ids: Sequence[str]) -> None:
        """Forget these episodes; unknown ids are ignored."""
        gone = [self.cards.pop(i) for i in ids if i in self.cards]
        self.turns.remove([(c.id, pos) for c in gone for pos in range(c.n_turns)])
        self.episodes.remove([c.id for c in gone])
        self._sessions_dirty = self._sessions_dirty or bool(gone)

    def update_state(self, episodes: Sequence[Episode]) -> None:
        """Take the recall state (count, access, strength, archived) of known episodes."""
        for ep in (e for e in episodes if e.id in self.cards):
            before = self.cards[ep.id]
            self.cards[ep.id] = with_state(before, ep)
            if before.archived != ep.archived:  # neighbours list live episodes only
                self._sessions_dirty = True

    def neighbours(self, episode_id: str, n: int) -> tuple[builtins.list[str], builtins.list[str]]:
        """Ids of up to ``n`` episodes before and after ``episode_id`` in its session.

        Archived episodes are not listed: maintenance hid them from recall.
        """
        # safe beside a write: one copy of the catalogue, and a write during it marks it stale
        if n < 1 or (card := self.cards.get(episode_id)) is None:  # rebuild only if needed
            return [], []
        if self._sessions_dirty:
            self._sessions_dirty = False  # first: a write from here on marks it again
            by_session: dict[str, builtins.list[EpisodeCard]] = {}
            for each in list(self.cards.values()):  # one copy: no resize mid-iteration
                if each.archived:
                    continue
                by_session.setdefault(each.session, []).append(each)
            self._sessions = {
                s: [c.id for c in sorted(cs, key=lambda c: (c.opened_at, c.id))]
                for s, cs in by_session.items()
            }
        order = self._sessions.get(card.session, [])
        if episode_id not in order:
            return [], []
        at = order.index(episode_id)  # O(session length): fine for a handful of hits
        return order[max(0, at - n) : at], order[at + 1 : at + 1 + n]

    @classmethod
    def build(
        cls,
        store: EpisodeStore,
        into: TenantIndex | None = None,
        *,
        on_page: Callable[[TenantIndex, builtins.list[Episode]], None] | None = None,
    ) -> TenantIndex:
        """Read every episode of ``store`` (archived included) into a new index (or ``into``).

        ``on_page(index, page)`` sees each page of episodes once it is indexed.
        """
        index = cls() if into is None else into
        offset = 0
        while True:
            page = store.list_episodes(limit=_PAGE, offset=offset, include_archived=True)
            index.add(page)
            if on_page is not None:
                on_page(index, page)
            if len(page) < _PAGE:
                return index
            offset += _PAGE
