"""Reading :class:`~episeg.adapters.langgraph_store.EpisegStore` items: search and listing.

A search with a query is episeg's recall restricted to the namespace prefix:
the whole tenant for ``(tenant,)``, else recall with the ``session`` filter
of each session holding episodes under the prefix (recall's window is exact,
so other namespaces never crowd the prefix's items out), widened until
``offset + limit`` items pass, the sessions' hits merged by score. As in
LangGraph's stores the query ranks and ``filter`` selects: when recall finds
fewer than ``offset + limit`` (its similarity threshold leaves out what it
does not find relevant), every other item under the prefix that passes the
filter follows, newest first, with ``score=None`` (as InMemoryStore's items
without a vector). ``filter`` and namespace matching are LangGraph's own
(:mod:`episeg.adapters._langgraph_filter`).

Listing (a search without a query, the fill-up above, ``list_namespaces``)
orders and places episodes by the tenant's recall index (each episode's id,
session and close time are there), so it reads no episode for
``list_namespaces`` and, for a search, only pages of the newest episodes
under the prefix until ``offset + limit`` pass the filter: a page of a large
tenant costs what the page holds, not the tenant.

A conversation's episode is returned as ``(tenant, *session.split("/"))`` and
its id as the key; :func:`conversation_episode` finds it again for ``get`` and
``delete``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import ListNamespacesOp, SearchItem, SearchOp

from episeg.adapters._langgraph_filter import check_filter, does_match, matches
from episeg.adapters._langgraph_ids import identity, namespace_of
from episeg.memory import Memory
from episeg.recall.card import EpisodeCard
from episeg.types import Episode

__all__ = ["conversation_episode", "key_value", "list_namespaces", "search", "stamp"]

_PAGE = 1000
Scored = list[tuple[Episode, float | None]]


def stamp(ts: float) -> datetime:
    """An episode time as LangGraph's aware datetime."""
    return datetime.fromtimestamp(ts, tz=UTC)


def key_value(episode: Episode) -> tuple[str, dict[str, Any]]:
    """(key, value) of an item, or of a conversation's episode (key: its id)."""
    found = identity(episode)
    if found is not None:
        return found[1], dict(json.loads(episode.turns[0].text))
    return episode.id, {
        "summary": episode.summary,
        "salience": episode.salience.score if episode.salience else None,
        "turns": [{"actor": t.actor.value, "text": t.text} for t in episode.turns],
    }


def conversation_episode(
    memory: Memory, tenant: str, namespace: tuple[str, ...], key: str
) -> Episode | None:
    """The conversation episode a search returns as ``(namespace, key)`` (not archived)."""
    if not key or key.startswith("lg:"):  # ("alice",) is the namespace of session "default"
        return None
    found = memory.store(tenant).get([key])
    return next(
        (e for e in found if identity(e) is None and not e.archived and _namespace(e) == namespace),
        None,
    )


def _namespace(episode: Episode) -> tuple[str, ...]:
    return namespace_of(episode.user, episode.id, episode.session)


def _matches(episode: Episode, prefix: tuple[str, ...], where: dict[str, Any] | None) -> bool:
    if _namespace(episode)[: len(prefix)] != prefix:
        return False
    return matches(key_value(episode)[1], where)


def search(memory: Memory, tenant: str, op: SearchOp) -> list[SearchItem]:
    """The items (and conversation episodes) ``op`` asks for, best or newest first.

    Raises :class:`~episeg.errors.ArgumentError` for a ``filter`` operator LangGraph
    does not define, before anything is read.
    """
    check_filter(op.filter)
    # a blank query ranks nothing (recall refuses it): the items are listed, as without one
    ranked = bool(op.query and str(op.query).strip())
    scored = _recalled(memory, tenant, op) if ranked else _listed(memory, tenant, op)
    out: list[SearchItem] = []
    for episode, score in scored[op.offset : op.offset + op.limit]:
        key, value = key_value(episode)
        out.append(
            SearchItem(
                namespace=_namespace(episode),
                key=key,
                value=value,
                created_at=stamp(episode.opened_at),
                updated_at=stamp(episode.closed_at),
                score=score,
            )
        )
    return out


def _sessions(memory: Memory, tenant: str, prefix: tuple[str, ...]) -> list[str | None]:
    """The sessions holding episodes recall can return under ``prefix`` (stored and not
    archived, or still open; ``[None]``: the whole tenant)."""
    if len(prefix) == 1:
        return [None]
    found: set[str | None] = {card.session for card in _cards(memory, tenant, prefix)}
    for _, name in memory.journal.open_sessions(tenant):  # conversations still open
        if namespace_of(tenant, "", name)[: len(prefix)] == prefix:
            found.add(name)
    return sorted(found, key=str)


def _recalled(memory: Memory, tenant: str, op: SearchOp) -> Scored:
    """Recall per session under the prefix, each widened until enough pass, by score.

    A session can hold other namespaces too (``"x/y"`` is ``("x", "y")``'s and
    ``("x/y",)``'s) and ``filter`` drops hits, so recall is asked again for
    twice as many until ``offset + limit`` pass or it has no more.
    """
    want, prefix = op.offset + op.limit, tuple(op.namespace_prefix)
    scored: Scored = []
    for name in _sessions(memory, tenant, prefix):
        k = max(want, 5)
        while True:
            hits = memory.recall(tenant, str(op.query), k=k, session=name)
            kept = [  # a still-open segment is no item yet: get and delete could not reach it
                (h.episode, float(h.score))
                for h in hits
                if not h.open and _matches(h.episode, prefix, op.filter)
            ]
            if len(kept) >= want or len(hits) < k:
                break
            k *= 2
        scored.extend(kept[:want])
    scored.sort(key=lambda pair: -(pair[1] or 0.0))  # stable: ties keep session order
    if len(scored) < want:  # the query ranks, the filter selects: the rest follow, unscored
        seen = frozenset(e.id for e, _ in scored)
        scored += _listed(memory, tenant, op, want=want - len(scored), skip=seen)
    return scored


def _cards(memory: Memory, tenant: str, prefix: tuple[str, ...]) -> list[EpisodeCard]:
    """The index cards of ``tenant``'s stored, not archived episodes under ``prefix``,
    newest first (ties in the index's order, which is the store's)."""
    depth = len(prefix)
    cards = [
        card
        for card in memory.store(tenant).index.cards.values()
        if not card.archived and namespace_of(tenant, card.id, card.session)[:depth] == prefix
    ]
    cards.sort(key=lambda card: -card.closed_at)
    return cards


def _listed(
    memory: Memory,
    tenant: str,
    op: SearchOp,
    *,
    want: int | None = None,
    skip: frozenset[str] = frozenset(),
) -> Scored:
    """At least ``want`` (default ``offset + limit``) episodes under the prefix that pass
    the filter, newest first (fewer if there are no more), read a page at a time."""
    prefix, need = tuple(op.namespace_prefix), op.offset + op.limit if want is None else want
    cards = [card for card in _cards(memory, tenant, prefix) if card.id not in skip]
    store, start, size = memory.store(tenant), 0, max(need, 16)
    out: Scored = []
    while start < len(cards) and len(out) < need:
        ids = [card.id for card in cards[start : start + size]]
        found = {e.id: e for e in store.get(ids)}
        read = (found.get(i) for i in ids)  # a page in the cards' order
        out += [(e, None) for e in read if e and not e.archived and _matches(e, prefix, op.filter)]
        start, size = start + size, min(size * 2, _PAGE)  # the filter dropped some: read more
    return out


def list_namespaces(
    memory: Memory, tenants: list[str], op: ListNamespacesOp
) -> list[tuple[str, ...]]:
    """The namespaces of ``tenants``' stored episodes that ``op`` asks for.

    As LangGraph's InMemoryStore: the match conditions see the whole namespace,
    then namespaces are cut to ``max_depth`` and deduplicated, then paged.
    """
    found: set[tuple[str, ...]] = set()
    for tenant in tenants:
        found.update(namespace_of(tenant, c.id, c.session) for c in _cards(memory, tenant, ()))
    conditions = [(c.match_type, tuple(c.path)) for c in op.match_conditions or ()]
    kept = [ns for ns in found if all(does_match(t, path, ns) for t, path in conditions)]
    if op.max_depth is not None:
        kept = list({ns[: op.max_depth] for ns in kept})
    return sorted(kept)[op.offset : op.offset + op.limit]
