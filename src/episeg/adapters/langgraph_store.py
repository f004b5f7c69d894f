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
episodes the agent's conversations produced (their namespace is ``(tenant,
*session.split("/"))``, their key the episode id, their value its summary,
salience and turns; once stored: still-open turns are ``Memory.recall``'s, not items).
Every search result is addressable: ``get`` reads a conversation's episode by that namespace
and key and ``delete`` erases it (``Memory.forget``), while ``put`` to it is an
``ArgumentError`` (it is read-only here: nothing is written). As in LangGraph's stores the
query ranks and ``filter`` selects: the items recall finds come first, scored, then every
other item under the prefix that passes the filter, newest first, with ``score=None``
(recall's similarity threshold never hides an item; the order of the unscored rest is
episeg's, not InMemoryStore's vector order). ``search`` without a
query lists the namespace. ``filter`` and ``list_namespaces`` behave as LangGraph's InMemoryStore
(:mod:`episeg.adapters._langgraph_filter`): exact matches and the operators ``$eq $ne $gt
$gte $lt $lte`` (another is an ``ArgumentError``; an item whose field is not a number does
not match ``$gt`` and the like), and namespaces matched whole before ``max_depth`` cuts them.

Item ids are unambiguous (:mod:`episeg.adapters._langgraph_ids`): items of
``("alice", "a:b")`` and ``("alice", "a")``, or of ``("alice", "x/y")`` and
``("alice", "x", "y")``, never share an episode, and the namespace and key
read back are the ones written. A namespace with no ``%``, ``/`` or ``:`` in its
elements (and not ``(tenant, "default")``) keeps, whatever the key, the ids earlier
versions gave its items. An item an earlier version stored is still read, replaced
and deleted through its namespace and key (a put moves it to its new id where that differs; a put
whose new id an old item of another namespace holds moves that item to its
own new id first). Where its old id was ambiguous, its key is read from its
turn and its namespace from its session, which is exact unless an element
held a ``/`` or the namespace was ``(tenant, "default")``: such an item is
read as the namespace earlier versions listed it under (``("alice", "x/y")``'s
as ``("alice", "x", "y")``'s, ``("alice", "default")``'s as ``("alice",)``'s).
A ``put`` whose value JSON would not read back unchanged (not JSON, a
non-``str`` dict key, a tuple: :mod:`episeg.adapters._langgraph_checks`) raises
:class:`~episeg.errors.ArgumentError` naming the key and writes nothing;
InMemoryStore keeps such values only because it keeps Python objects. A key
must be non-empty, without control, format or surrogate characters, and the
id ``lg:<namespace>:<key>`` at most 1,024 characters (else ``ArgumentError``
naming the key). A ``batch`` is checked whole before any operation runs, so a
bad operation writes nothing. A replacing put is an upsert, so the old value
stays until the new one is stored; a delete also drops a put of the item still
waiting in the outbox (else a retry would write it back). Items are stored pinned: maintenance never
decays or archives a stored value (an item an earlier version let maintenance
archive reads as absent, with a logged warning, until it is put again or
unarchived).

A search within a namespace recalls per session under the prefix with recall's exact
``session`` window, widened until ``offset + limit`` items pass, and merges the sessions' hits
by score: other namespaces never crowd the prefix's items out; a larger ``limit`` adds items.

Not supported: TTLs (``supports_ttl = False``) and per-field ``index`` selection (the
whole value is indexed). ``list_namespaces`` sees the tenants this store has touched.

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

from episeg.adapters._langgraph_checks import check_key, check_op, tenant_of, value_json
from episeg.adapters._langgraph_ids import episode_id, identity, legacy_id, session, waiting_ids
from episeg.adapters._langgraph_search import (
    conversation_episode,
    key_value,
    list_namespaces,
    search,
    stamp,
)
from episeg.errors import ArgumentError
from episeg.memory import Memory
from episeg.recall.index import IndexedStore
from episeg.types import Actor, Episode, Turn

__all__ = ["EpisegStore"]

log = logging.getLogger(__name__)


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
        """Run ``ops`` in order (gets, searches, puts and deletes, namespace listings).

        Every operation is checked first (namespaces, keys, values, filters, puts to
        a conversation's episode): one bad operation fails the batch before any runs.
        Should one still fail while running (the store down), the error says which
        operations ran.
        """
        ops = list(ops)
        for op in ops:
            check_op(op)
            if isinstance(op, PutOp) and op.value is not None:
                self._writable(tuple(op.namespace), op.key)
        out: list[Result] = []
        for n, op in enumerate(ops):
            try:
                out.append(self._one(op))
            except Exception as exc:
                exc.add_note(f"operations {n}-{len(ops) - 1} of this batch did not run")
                raise
        return out

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
        tenant = tenant_of(namespace)
        self._tenants.add(tenant)
        return tenant

    def _stored(self, store: IndexedStore, namespace: tuple[str, ...], key: str) -> list[Episode]:
        """The stored episodes of item ``key`` of ``namespace``: under its id, or its old id."""
        ids = dict.fromkeys([episode_id(namespace, key), legacy_id(namespace, key)])
        return [e for e in store.get(list(ids)) if identity(e) == (namespace, key)]

    def _get(self, op: GetOp) -> Item | None:
        namespace = tuple(op.namespace)
        tenant = self._touch(namespace)
        found = self._stored(self.memory.store(tenant), namespace, op.key)
        if not found:
            other = conversation_episode(self.memory, tenant, namespace, op.key)
            if other is None:
                return None
            found = [other]
        new = episode_id(namespace, op.key)
        episode = next((e for e in found if e.id == new), found[0])
        if episode.archived:  # search and list_namespaces leave it out too
            log.warning(
                "item %r of %r was archived by maintenance (before items were pinned); "
                "it reads as absent until Memory.unarchive(%r, %r) or a put",
                op.key,
                namespace,
                tenant,
                episode.id,
            )
            return None
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
                other = (
                    None if found else conversation_episode(self.memory, tenant, namespace, op.key)
                )
                if other is not None:
                    self.memory.forget(tenant, episode=other.id)
                store.delete([e.id for e in found])
                for waiting in waiting_ids(
                    self.memory.journal.pending(tenant), namespace, op.key
                ):  # else a retry restores it
                    self.memory.journal.confirm(tenant, waiting)
                return
            check_key(namespace, op.key)
            self._writable(namespace, op.key)
            new = episode_id(namespace, op.key)
            batch = [*self._relocated(store, new, namespace, op.key), self._item(tenant, op, new)]
            stored = {e.id for e in self.memory.store_episodes(batch)}
            if new not in stored:  # kept in the journal's outbox, written on a retry (logged)
                log.warning("langgraph item %s of %s waits for the store", new, tenant)
                return
            store.delete([e.id for e in found if e.id != new])
            if any(e.id == new and e.archived for e in found):
                self.memory.unarchive(tenant, new)  # a new value is searchable again

    def _writable(self, namespace: tuple[str, ...], key: str) -> None:
        """Refuse a put to a conversation's episode (it is read-only here)."""
        tenant = tenant_of(namespace)
        if conversation_episode(self.memory, tenant, namespace, key) is not None:
            raise ArgumentError(
                f"key {key!r} of namespace {namespace!r} is an episode of a conversation: "
                "it can be read and deleted, not replaced (nothing was written)"
            )

    def _item(self, tenant: str, op: PutOp, new: str) -> Episode:
        text = value_json(op)  # raises before anything is written
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
            pinned=True,  # a stored value: never decayed nor archived by maintenance
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
