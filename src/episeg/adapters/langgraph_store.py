"""A LangGraph ``BaseStore`` backed by episeg (``pip install 'episeg[langgraph]'``).

Namespaces map to tenants: the first element of a namespace is the tenant
(``("alice", "prefs")`` reads and writes alice's memory only, under the
session ``"prefs"``; ``("alice",)`` uses the session ``"default"``; deeper
namespaces join their elements with ``/``). Each item is one stored episode
of one turn whose text is the value as JSON (what the dense and lexical
indexes see, and what ``get`` reads back): ``put`` stores it (scored,
embedded and indexed like any episode), ``get`` reads it, ``delete`` erases
it, and ``search`` with a query is episeg's recall within the namespace
prefix (the whole tenant for ``(tenant,)``), so a search also finds the
episodes the agent's conversations produced (their key is the episode id,
their value its summary, salience and turns). ``search`` without a query
lists the namespace. ``filter`` and ``list_namespaces`` behave as LangGraph's
InMemoryStore (:mod:`episeg.adapters._langgraph_filter`): exact matches and the
operators ``$eq $ne $gt $gte $lt $lte`` (another is an ``ArgumentError``; an item
whose field is not a number does not match ``$gt`` and the like), and namespaces
matched whole before ``max_depth`` cuts them.

Item ids are unambiguous (:mod:`episeg.adapters._langgraph_ids`): items of
``("alice", "a:b")`` and ``("alice", "a")``, or of ``("alice", "x/y")`` and
``("alice", "x", "y")``, never share an episode, and the namespace and key
read back are the ones written. A namespace with no ``%``, ``/`` or ``:`` in
its elements (and not ``(tenant, "default")``) keeps, whatever the key, the
ids earlier versions gave its items. An item an
earlier version stored is still read, replaced and deleted through its
namespace and key (a put moves it to its new id where that differs; a put
whose new id an old item of another namespace holds moves that item to its
own new id first). Where its old id was ambiguous, its key is read from its
turn and its namespace from its session, which is exact unless an element
held a ``/`` or the namespace was ``(tenant, "default")``: such an item is
read as the namespace earlier versions listed it under (``("alice", "x/y")``'s
as ``("alice", "x", "y")``'s, ``("alice", "default")``'s as ``("alice",)``'s).
A ``put`` whose value is not JSON raises :class:`~episeg.errors.ArgumentError`
and writes nothing; a replacing put is an upsert, so the old value stays
until the new one is stored.

A search within a namespace recalls per session under the prefix with
recall's exact ``session`` window, widened until ``offset + limit`` items
pass, and merges the sessions' hits by score: other namespaces never crowd
the prefix's items out, and a larger ``limit`` only adds items.

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
import dataclasses
import json
import logging
import time
from collections.abc import Iterable

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

from episeg.adapters._langgraph_ids import episode_id, identity, legacy_id, session
from episeg.adapters._langgraph_search import key_value, list_namespaces, search, stamp
from episeg.errors import ArgumentError
from episeg.memory import Memory
from episeg.recall.index import IndexedStore
from episeg.store.tenants import validate_tenant
from episeg.types import Actor, Episode, Turn

__all__ = ["EpisegStore"]

log = logging.getLogger(__name__)


def _tenant(namespace: tuple[str, ...]) -> str:
    if not namespace:
        raise ArgumentError("a namespace needs at least one element: the tenant")
    return validate_tenant(namespace[0])


def _json(op: PutOp) -> str:
    """The value of ``op`` as the JSON text stored (and read back), or a typed error."""
    try:
        return json.dumps(dict(op.value or {}), sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ArgumentError(
            f"the value of key {op.key!r} in namespace {op.namespace!r} is not JSON "
            f"(nothing was written, the stored value is unchanged): {exc}"
        ) from exc


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
        raise ArgumentError(f"unknown store operation {type(op).__name__}")

    def _touch(self, namespace: tuple[str, ...]) -> str:
        tenant = _tenant(namespace)
        self._tenants.add(tenant)
        return tenant

    def _stored(self, store: IndexedStore, namespace: tuple[str, ...], key: str) -> list[Episode]:
        """The stored episodes of item ``key`` of ``namespace``: under its id, or its old id."""
        ids = dict.fromkeys([episode_id(namespace, key), legacy_id(namespace, key)])
        return [e for e in store.get(list(ids)) if identity(e) == (namespace, key)]

    def _get(self, op: GetOp) -> Item | None:
        namespace = tuple(op.namespace)
        found = self._stored(self.memory.store(self._touch(namespace)), namespace, op.key)
        if not found:
            return None
        new = episode_id(namespace, op.key)
        episode = next((e for e in found if e.id == new), found[0])
        return Item(
            value=key_value(episode)[1],
            key=op.key,
            namespace=namespace,
            created_at=stamp(episode.opened_at),
            updated_at=stamp(episode.closed_at),
        )

    def _put(self, op: PutOp) -> None:
        """Write (or delete) one item; nothing changes unless the new value can be stored.

        The value is serialised and embedded first; the write is an upsert of the
        item's id, and an earlier copy under its old id is deleted only after it.
        """
        namespace = tuple(op.namespace)
        tenant = self._touch(namespace)
        with self.memory.tenant_lock(tenant):
            store = self.memory.store(tenant)
            found = self._stored(store, namespace, op.key)
            if op.value is None:
                store.delete([e.id for e in found])
                return
            new = episode_id(namespace, op.key)
            batch = [*self._relocated(store, new, namespace, op.key), self._item(tenant, op, new)]
            stored = {e.id for e in self.memory.store_episodes(batch)}
            if new not in stored:  # kept in the journal's outbox, written on a retry (logged)
                log.warning("langgraph item %s of %s waits for the store", new, tenant)
                return
            store.delete([e.id for e in found if e.id != new])
            if any(e.id == new and e.archived for e in found):
                self.memory.unarchive(tenant, new)  # a new value is searchable again

    def _item(self, tenant: str, op: PutOp, new: str) -> Episode:
        text = _json(op)  # raises before anything is written
        now = time.time()
        turn = Turn(
            actor=Actor.USER,
            text=text,
            ts=now,
            id=op.key,
            user=tenant,
            session=session(tuple(op.namespace)),
        )
        vector = self.memory.embedder.embed([turn.text])
        return Episode(
            id=new,
            user=tenant,
            session=turn.session,
            turns=(turn,),
            summary=text[:200],
            opened_at=now,
            closed_at=now,
            embedding=vector[0],
            turn_embeddings=vector,
        )

    def _relocated(
        self, store: IndexedStore, new: str, namespace: tuple[str, ...], key: str
    ) -> list[Episode]:
        """Another item stored under ``new`` by an older version, moved to its own id.

        Old ids were ambiguous: ``("a",)``/``"b:c"`` and ``("a:b",)``/``"c"`` shared one.
        """
        occupant = store.get([new])
        if not occupant:
            return []
        other = identity(occupant[0])
        if other is None:
            raise ArgumentError(f"episode {new!r} is not a LangGraph item; it is not replaced")
        target = episode_id(*other)
        if other == (namespace, key) or store.get([target]):  # ours, or moved already
            return []
        vector = self.memory.embedder.embed([occupant[0].turns[0].text])
        moved = dataclasses.replace(occupant[0], id=target, embedding=vector[0])
        return [dataclasses.replace(moved, turn_embeddings=vector)]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        return search(self.memory, self._touch(tuple(op.namespace_prefix)), op)

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        return list_namespaces(self.memory, sorted(self._tenants), op)
