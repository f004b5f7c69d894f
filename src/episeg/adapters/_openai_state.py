"""What :class:`~episeg.adapters.openai_agents.EpisegSession` keeps between calls.

:func:`session_lock` is one ``asyncio.Lock`` per ``(user, session_id)`` and event
loop, shared by every ``EpisegSession`` object of that conversation: ``add_items``,
``pop_item`` and ``clear_session`` run one at a time, so concurrent ``add_items``
reach the history and episeg in one order, with timestamps taken inside the lock
(:func:`next_ts`, never going backwards). Neither grows with the number of
conversations a process has served: a lock lives while a call holds or waits
for it (the table holds it weakly), and the clock keeps one latest timestamp
for the process, which is never behind any conversation's last.

:class:`Rewind` makes ``pop_item`` followed by adding the same item back (the
SDK's retry rewind, ``rewind_session_items``) observe that item once. It knows,
for the items added through this object, which turn episeg observed for each;
a popped item's turn is remembered, and an item added back at its place with
the same turn (actor, type, text) is not observed again. An item added at its
place with other content is observed, and the popped turn stays in episeg (the
Memory API has no way to take back one turn): that is logged as a warning.
What this object did not add (another process, before a restart) is observed
as any new item.

>>> r = Rewind()
>>> r.added([("user", None, "hi")])
>>> r.popped(("user", None, "hi"))  # episeg holds its turn
True
>>> r.plan([("user", None, "hi"), ("assistant", None, "hello")])
([True, False], [])
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import weakref
from dataclasses import dataclass, field

__all__ = ["Key", "Rewind", "history_key", "next_ts", "session_lock"]

Key = tuple[str, str | None, str] | None  # (actor, type, text) of an observed turn, else None
_KEPT = 1024  # items remembered per object (the SDK rewinds the last run's items only)

_Locks = weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock]
_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Locks] = weakref.WeakKeyDictionary()
_last_ts = 0.0  # the latest timestamp handed out in this process
_GUARD = threading.Lock()


def session_lock(user: str, session: str) -> asyncio.Lock:
    """The lock of conversation ``(user, session)`` in the running event loop.

    >>> async def same() -> bool:
    ...     return session_lock("u", "s") is session_lock("u", "s")
    >>> asyncio.run(same())
    True
    """
    loop = asyncio.get_running_loop()
    with _GUARD:
        locks = _LOCKS.setdefault(loop, weakref.WeakValueDictionary())
        lock = locks.get((user, session))
        if lock is None:
            lock = locks[(user, session)] = asyncio.Lock()
        return lock


def next_ts() -> float:
    """Now, or the latest timestamp handed out before if the clock went back.

    One latest timestamp for the process (not one per conversation, which would
    grow with every conversation served) keeps every conversation's timestamps
    from going backwards.
    """
    global _last_ts
    with _GUARD:
        _last_ts = max(time.time(), _last_ts)
        return _last_ts


@dataclass
class Rewind:
    """The turns of the items added through one session object, and of those popped."""

    recent: list[Key] = field(default_factory=list)
    gone: list[Key] = field(default_factory=list)  # popped, the last popped last

    def added(self, keys: list[Key]) -> None:
        """Items now in the history, each with the turn episeg holds for it (or ``None``)."""
        self.recent = [*self.recent, *keys][-_KEPT:]

    def popped(self, key: Key) -> bool:
        """Item with turn ``key`` was popped; whether episeg holds a turn for it."""
        known = self.recent.pop() if self.recent else None
        if known != key:  # not what this object added last: the history changed elsewhere
            self.recent, known = [], None
        self.gone.append(known)
        return known is not None

    def plan(self, keys: list[Key]) -> tuple[list[bool], list[Key]]:
        """Per item, whether episeg holds it already; and the popped turns replaced.

        Changes nothing: :meth:`consume` once the items are in the history.
        """
        skip: list[bool] = []
        replaced: list[Key] = []
        for n, key in enumerate(keys):
            was = self.gone[-1 - n] if n < len(self.gone) else None
            skip.append(was is not None and was == key)
            if was is not None and was != key:
                replaced.append(was)
        return skip, replaced

    def consume(self, count: int) -> None:
        """``count`` items were added at the places of the last popped ones."""
        self.gone = self.gone[: max(0, len(self.gone) - count)]

    def clear(self) -> None:
        self.recent, self.gone = [], []


def history_key(user: str, session_id: str) -> str:
    """The id of a conversation's verbatim history: the tenant and the session, so two
    tenants' "chat-1" never share one (the SDK keys a history by its session id alone).

    >>> history_key("alice", "chat-1")
    '["alice", "chat-1"]'
    """
    return json.dumps([user, session_id], ensure_ascii=False)
