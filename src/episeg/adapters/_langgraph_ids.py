"""Episode ids of :class:`~episeg.adapters.langgraph_store.EpisegStore` items.

An item ``(namespace, key)`` of the tenant ``namespace[0]`` is the episode
``"lg:<where>:<key>"``. ``<where>`` is the rest of the namespace, each element
percent-escaped (only ``%``, ``/`` and ``:``; ``"%64efault"`` for the one
element ``"default"``) and joined by ``/``, or ``default`` when there is no
rest. ``<where>`` holds no ``:``, so the id is unambiguous and :func:`decode`
inverts it, while every namespace and key without those characters keeps the
id the adapter always gave it (``"/".join(namespace[1:]) or "default"``).

The episode's ``session`` stays that plain join (what conversations and
recall's ``session`` filter see), and its one turn's ``id`` is the key.

Earlier versions used the plain join in the id, so ``("alice", "a")``/``"b:c"``
and ``("alice", "a:b")``/``"c"`` shared an id, and so did ``("alice", "x/y")``
and ``("alice", "x", "y")``. Such an item is still found: :func:`identity`
reads its namespace from the id when the id decodes to the episode's session,
else from the session split at ``/`` (the old reading), and its key from its turn.

>>> episode_id(("alice", "prefs"), "editor"), episode_id(("alice", "a:b"), "c")
('lg:prefs:editor', 'lg:a%3Ab:c')
>>> decode(episode_id(("alice", "x/y", "default"), "k:1"))
(('x/y', 'default'), 'k:1')
>>> decode(episode_id(("alice", "default"), "k")), decode(episode_id(("alice",), "k"))
((('default',), 'k'), ((), 'k'))
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from episeg.types import Episode

__all__ = [
    "PREFIX",
    "decode",
    "episode_id",
    "identity",
    "legacy_id",
    "namespace_of",
    "session",
    "waiting_ids",
]

PREFIX = "lg:"
DEFAULT = "default"
_ESCAPED = re.compile("%([0-9A-F]{2})")


def _quote(part: str) -> str:
    return part.replace("%", "%25").replace("/", "%2F").replace(":", "%3A")


def _unquote(part: str) -> str | None:
    """``part`` unescaped, or ``None`` if it is no output of the escaping above."""
    if "%" in _ESCAPED.sub("", part):
        return None
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), part)


def session(namespace: tuple[str, ...]) -> str:
    """The episode session of an item of ``namespace`` (the plain join, as always)."""
    return "/".join(namespace[1:]) or DEFAULT


def _where(rest: tuple[str, ...]) -> str:
    if not rest:
        return DEFAULT
    if rest == (DEFAULT,):
        return "%64efault"
    return "/".join(_quote(p) for p in rest)


def episode_id(namespace: tuple[str, ...], key: str) -> str:
    """The unambiguous episode id of the item ``key`` of ``namespace``."""
    return f"{PREFIX}{_where(namespace[1:])}:{key}"


def legacy_id(namespace: tuple[str, ...], key: str) -> str:
    """The id earlier versions gave the item (ambiguous for some namespaces and keys)."""
    return f"{PREFIX}{session(namespace)}:{key}"


def decode(episode_id: str) -> tuple[tuple[str, ...], str] | None:
    """(namespace after the tenant, key) of an id :func:`episode_id` made, else ``None``."""
    if not episode_id.startswith(PREFIX) or ":" not in episode_id[len(PREFIX) :]:
        return None
    where, key = episode_id[len(PREFIX) :].split(":", 1)
    if where == DEFAULT:
        return (), key
    parts = [_unquote(p) for p in where.split("/")]
    if any(p is None for p in parts):
        return None
    return tuple(p for p in parts if p is not None), key


def namespace_of(user: str, episode_id: str, episode_session: str) -> tuple[str, ...]:
    """The namespace of a stored episode (its id and session are enough).

    An item's id is read when it decodes to the episode's session (always so
    for an id :func:`episode_id` made); otherwise, as for a conversation's
    episode, the session split at ``/`` is the namespace (``default``: none).
    """
    decoded = decode(episode_id)
    if decoded is not None and session(("", *decoded[0])) == episode_session:
        return (user, *decoded[0])
    if episode_session == DEFAULT:
        return (user,)
    return (user, *episode_session.split("/"))


def identity(episode: Episode) -> tuple[tuple[str, ...], str] | None:
    """(namespace, key) of an item's episode, or ``None`` if it is no item."""
    if not episode.id.startswith(PREFIX) or len(episode.turns) != 1 or not episode.turns[0].id:
        return None
    return namespace_of(episode.user, episode.id, episode.session), episode.turns[0].id


def waiting_ids(pending: Sequence[Episode], namespace: tuple[str, ...], key: str) -> list[str]:
    """Ids of item ``key``'s writes among ``pending`` (the tenant's outbox: the store was
    down at its put), so that a delete can drop them before a retry writes them back."""
    ids = {episode_id(namespace, key), legacy_id(namespace, key)}
    return [e.id for e in pending if e.id in ids and identity(e) == (namespace, key)]
