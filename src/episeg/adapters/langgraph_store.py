"""A LangGraph ``BaseStore`` backed by episeg (``pip install 'episeg[langgraph]'``).

Namespaces map to tenants: the first element of a namespace is the tenant
(``("alice", "prefs")`` reads and writes alice's memory only, under the
session ``"prefs"``; ``("alice",)`` uses the session ``"default"``). Each item
is one stored episode of one turn whose text is the value as JSON (what the
dense and lexical indexes see, and what ``get`` reads back): ``put`` stores it (scored, embedded and
indexed like any episode), ``get`` reads it, ``delete`` erases it, and
``search`` with a query is episeg's recall over the tenant, so a search also
finds the episodes the agent's conversations produced (their key is the
episode id, their value its summary, salience and turns). ``search`` without
a query lists the namespace. ``filter`` matches top-level value fields.

Not supported: TTLs (``supports_ttl = False``) and per-field ``index``
selection (the whole value is indexed). ``list_namespaces`` sees the tenants
this store has touched.

>>> import tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> store = EpisegStore(Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(),
...                            judge=None, scorer=None))
>>> store.put(("alice", "prefs"), "editor", {"text": "alice edits in vim"})
>>> store.get(("alice", "prefs"), "editor").value
{'text': 'alice edits in vim'}
>>> [i.key for i in store.search(("alice",), query="vim or emacs?")]
['editor']
>>> store.search(("bob",), query="vim or emacs?")
[]
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from episeg.memory import Memory
from episeg.store.tenants import validate_tenant
from episeg.types import Actor, Episode, Turn

__all__ = ["EpisegStore"]

_PREFIX = "lg:"
_DEFAULT = "default"


def _where(namespace: tuple[str, ...]) -> tuple[str, str]:
    if not namespace:
        raise ValueError("a namespace needs at least one element: the tenant")
    return validate_tenant(namespace[0]), "/".join(namespace[1:]) or _DEFAULT


def _namespace(episode: Episode) -> tuple[str, ...]:
    if episode.session == _DEFAULT:
        return (episode.user,)
    return (episode.user, *episode.session.split("/"))


def _time(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def _key_value(episode: Episode) -> tuple[str, dict[str, Any]]:
    if episode.id.startswith(_PREFIX) and len(episode.turns) == 1 and episode.turns[0].id:
        return episode.turns[0].id, dict(json.loads(episode.turns[0].text))
    return episode.id, {
        "summary": episode.summary,
        "salience": episode.salience.score if episode.salience else None,
        "turns": [{"actor": t.actor.value, "text": t.text} for t in episode.turns],
    }


def _matches(episode: Episode, prefix: tuple[str, ...], where: dict[str, Any] | None) -> bool:
    if _namespace(episode)[: len(prefix)] != prefix:
        return False
    return not where or all(_key_value(episode)[1].get(k) == v for k, v in where.items())


class EpisegStore(BaseStore):
    """LangGraph's store interface over one :class:`~episeg.memory.Memory`.

    Parameters
    ----------
    memory
        The episodic memory every namespace's tenant lives in.
    """

    supports_ttl = False

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._tenants: set[str] = set()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order (gets, searches, puts and deletes, namespace listings)."""
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (episeg's calls block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- one operation each -------------------------------------------------------------
    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise ValueError(f"unknown store operation {type(op).__name__}")

    def _id(self, namespace: tuple[str, ...], key: str) -> tuple[str, str]:
        tenant, session = _where(namespace)
        self._tenants.add(tenant)
        return tenant, f"{_PREFIX}{session}:{key}"

    def _get(self, op: GetOp) -> Item | None:
        tenant, episode_id = self._id(op.namespace, op.key)
        found = self.memory.store(tenant).get([episode_id])
        if not found:
            return None
        key, value = _key_value(found[0])
        return Item(
            value=value,
            key=key,
            namespace=op.namespace,
            created_at=_time(found[0].opened_at),
            updated_at=_time(found[0].closed_at),
        )

    def _put(self, op: PutOp) -> None:
        tenant, episode_id = self._id(op.namespace, op.key)
        store = self.memory.store(tenant)
        store.delete([episode_id])  # a put replaces; a None value deletes
        if op.value is None:
            return
        value = dict(op.value)
        now = time.time()
        _, session = _where(op.namespace)
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)  # indexed and read back
        turn = Turn(actor=Actor.USER, text=text, ts=now, id=op.key, user=tenant, session=session)
        vector = self.memory.embedder.embed([turn.text])
        episode = Episode(
            id=episode_id,
            user=tenant,
            session=session,
            turns=(turn,),
            summary=text[:200],
            opened_at=now,
            closed_at=now,
            embedding=vector[0],
            turn_embeddings=vector,
        )
        self.memory.store_episodes([episode])

    def _search(self, op: SearchOp) -> list[SearchItem]:
        tenant, _ = _where(op.namespace_prefix)
        self._tenants.add(tenant)
        want = op.offset + op.limit
        scored: list[tuple[Episode, float | None]]
        if op.query:
            hits = self.memory.recall(tenant, op.query, k=min(max(want * 2, 5), 50))
            scored = [(h.episode, float(h.score)) for h in hits]
        else:
            listed = self.memory.episodes(tenant, limit=1000)
            scored = [(e, None) for e in sorted(listed, key=lambda e: -e.closed_at)]
        kept = [(e, s) for e, s in scored if _matches(e, op.namespace_prefix, op.filter)]
        out: list[SearchItem] = []
        for episode, score in kept[op.offset : want]:
            key, value = _key_value(episode)
            out.append(
                SearchItem(
                    namespace=_namespace(episode),
                    key=key,
                    value=value,
                    created_at=_time(episode.opened_at),
                    updated_at=_time(episode.closed_at),
                    score=score,
                )
            )
        return out

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found: set[tuple[str, ...]] = set()
        for tenant in sorted(self._tenants):
            for episode in self.memory.episodes(tenant, limit=1000):
                namespace = _namespace(episode)
                found.add(namespace[: op.max_depth] if op.max_depth else namespace)
        for condition in op.match_conditions or ():
            path, n = tuple(condition.path), len(condition.path)

            def fits(ns: tuple[str, ...], part: tuple[str, ...]) -> bool:
                return len(ns) == len(part) and all(
                    p in ("*", s) for p, s in zip(part, ns, strict=True)
                )

            if condition.match_type == "prefix":
                found = {ns for ns in found if fits(ns[:n], path)}
            else:
                found = {ns for ns in found if len(ns) >= n and fits(ns[-n:], path)}
        return sorted(found)[op.offset : op.offset + op.limit]
