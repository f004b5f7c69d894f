"""What :meth:`Memory.store_episodes <episeg.memory.Memory.store_episodes>` refuses up front.

Episodes a caller builds (batch segmentation, an adapter, a hand-made
record) are checked as a batch before one of them is journaled: an episode
Chroma would refuse (no embedding, another width than the memory's embedder)
would otherwise wait in the outbox for ever and every later write of its
tenant behind it, one without a turn breaks recall, and two episodes of one
tenant under one id in one batch would leave only the last stored while
both were reported stored. Every field must be of its declared kind (a
string id and summary, int or float times, a bool ``archived``, an int
``recall_count``, ``Turn``/``Salience``/``Verdict`` instances: nothing is
coerced, and a numpy float32 or int64 is refused: the journal cannot encode
it), the session a valid id as :class:`~episeg.types.Turn` requires, and each
turn of the episode's user and session, within its times, its type fitting
its actor. The first problem is an
:class:`~episeg.errors.EpisodeValidationError` naming the episode; nothing of
the batch is written. (The same id in a *later* call replaces the stored
episode: that is how the LangGraph adapter updates a key.)

>>> import dataclasses
>>> import numpy as np
>>> from episeg.types import Episode, Turn
>>> turn = Turn(actor="user", text="deploy", ts=1.0, user="alice", session="s")
>>> ep = Episode(id="e1", user="alice", session="s", summary="deploy", turns=(turn,),
...              opened_at=1.0, closed_at=1.0, embedding=np.ones(4, np.float32))
>>> check_batch([ep], dim=4)
>>> check_batch([ep, ep], dim=4)
Traceback (most recent call last):
...
episeg.errors.EpisodeValidationError: episode 1 ('e1'): its id is also episode 0's for 'alice' ...
>>> check_batch([dataclasses.replace(ep, archived="no")], dim=4)
Traceback (most recent call last):
...
episeg.errors.EpisodeValidationError: episode 0 ('e1'): archived must be True or False, got str
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from episeg.errors import EpisodeValidationError, StoreError, TurnValidationError
from episeg.store.codec import encode
from episeg.store.tenants import validate_tenant
from episeg.types import Episode, Salience, Turn, Verdict
from episeg.types.episode import MAX_EPISODE_ID, turn_problem
from episeg.types.turn import MAX_TS, check_name

__all__ = ["check_batch"]


def _number(value: object) -> bool:
    """An int or float the journal can encode (a numpy float32 or int64 it cannot)."""
    return not isinstance(value, bool) and isinstance(value, int | float)


def _kind_problem(episode: Episode) -> str | None:
    """A field of the wrong kind: it would raise a bare error later, or be coerced."""
    e = episode
    for name, value, ok in (
        ("id", e.id, isinstance(e.id, str)),
        ("session", e.session, isinstance(e.session, str) and bool(e.session.strip())),
        ("summary", e.summary, isinstance(e.summary, str)),
        ("parent_id", e.parent_id, e.parent_id is None or isinstance(e.parent_id, str)),
    ):
        if not ok:
            what = "non-empty string" if name == "session" else "string"
            return f"{name} must be a {what}, got {value!r:.80}"
    try:
        check_name("session", e.session)
    except TurnValidationError as exc:
        return str(exc)
    for name in ("opened_at", "closed_at", "strength", "last_accessed"):
        value = getattr(e, name)
        if not _number(value) and not (name == "last_accessed" and value is None):
            return f"{name} must be an int or float, got {type(value).__name__}"
    if isinstance(e.recall_count, bool) or not isinstance(e.recall_count, int):
        return f"recall_count must be an int, got {type(e.recall_count).__name__}"
    for name in ("archived", "pinned"):
        if not isinstance(getattr(e, name), bool):
            return f"{name} must be True or False, got {type(getattr(e, name)).__name__}"
    if e.salience is not None and not isinstance(e.salience, Salience):
        return f"salience must be a Salience or None, got {type(e.salience).__name__}"
    for name, items, kind in (
        ("turns", e.turns, Turn),
        ("boundary_verdicts", e.boundary_verdicts, Verdict),
        ("closing_verdicts", e.closing_verdicts, Verdict),
    ):
        if not isinstance(items, tuple | list) or not all(isinstance(i, kind) for i in items):
            return f"{name} must be a tuple of {kind.__name__}s"
    return None


def _problem(episode: Episode, dim: int) -> str | None:
    kind = _kind_problem(episode)
    if kind is not None:
        return kind
    if not 1 <= len(episode.id) <= MAX_EPISODE_ID:
        return f"its id must be 1 to {MAX_EPISODE_ID} characters, got {len(episode.id)}"
    if not episode.turns:
        return "it holds no turn"
    last = episode.last_accessed
    for name, t in (("opened_at", episode.opened_at), ("closed_at", episode.closed_at)):
        if not (math.isfinite(t) and abs(t) <= MAX_TS):
            return f"{name} must be finite and a time in seconds (|t| <= {MAX_TS:.0e}), got {t!r}"
    if not math.isfinite(episode.strength) or episode.strength <= 0 or episode.recall_count < 0:
        return "strength must be finite and > 0, recall_count >= 0"
    if last is not None and not (math.isfinite(last) and abs(last) <= MAX_TS):
        return f"last_accessed must be finite and a time in seconds, got {last!r}"
    if episode.opened_at > episode.closed_at:
        return f"opened_at {episode.opened_at!r} is after closed_at {episode.closed_at!r}"
    turns = turn_problem(episode)
    if turns is not None:
        return turns
    try:
        record = encode(episode, tenant=episode.user)  # no, or a non-finite, embedding
    except StoreError as exc:
        return str(exc)
    if record.embedding.size != dim:
        return f"its embedding has {record.embedding.size} values, the memory's embedder {dim}"
    if episode.turn_embeddings is not None:
        matrix = np.asarray(episode.turn_embeddings)
        if matrix.shape != (len(episode.turns), dim) or not np.isfinite(matrix).all():
            return (
                f"turn_embeddings must be {len(episode.turns)} x {dim} finite values, "
                f"got shape {matrix.shape}"
            )
    return None


def check_batch(episodes: Sequence[Episode], *, dim: int) -> None:
    """Raise for the first episode of ``episodes`` the memory cannot store as given.

    Raises
    ------
    TenantError
        If an episode's user is not a valid tenant name.
    EpisodeValidationError
        For a malformed episode or an id given twice for one tenant.
    """
    first: dict[tuple[str, str], int] = {}
    for n, episode in enumerate(episodes):
        validate_tenant(episode.user)
        problem = _problem(episode, dim)
        earlier = first.setdefault((episode.user, episode.id), n)
        if problem is None and earlier != n:
            problem = f"its id is also episode {earlier}'s for {episode.user!r} in this batch"
        if problem is not None:
            raise EpisodeValidationError(f"episode {n} ({episode.id!r}): {problem}")
