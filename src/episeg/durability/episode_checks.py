"""What :meth:`Memory.store_episodes <episeg.memory.Memory.store_episodes>` refuses up front.

Episodes a caller builds (batch segmentation, an adapter, a hand-made
record) are checked as a batch before one of them is journaled: an episode
Chroma would refuse (no embedding, another width than the memory's embedder)
would otherwise wait in the outbox for ever and every later write of its
tenant behind it, one without a turn breaks recall, and two episodes of one
tenant under one id in one batch would leave only the last stored while
both were reported stored. The first problem is an
:class:`~episeg.errors.EpisodeValidationError` naming the episode; nothing of
the batch is written. (The same id in a *later* call replaces the stored
episode: that is how the LangGraph adapter updates a key.)

>>> import numpy as np
>>> from episeg.types import Episode, Turn
>>> ep = Episode(id="e1", user="alice", session="s", summary="deploy",
...              turns=(Turn(actor="user", text="deploy", ts=1.0),),
...              opened_at=1.0, closed_at=1.0, embedding=np.ones(4, np.float32))
>>> check_batch([ep], dim=4)
>>> check_batch([ep, ep], dim=4)
Traceback (most recent call last):
...
episeg.errors.EpisodeValidationError: episode 1 ('e1'): its id is also episode 0's for 'alice' ...
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from episeg.errors import EpisodeValidationError, StoreError
from episeg.store.codec import encode
from episeg.store.tenants import validate_tenant
from episeg.types import Episode
from episeg.types.episode import MAX_EPISODE_ID

__all__ = ["check_batch"]


def _problem(episode: Episode, dim: int) -> str | None:
    if not 1 <= len(episode.id) <= MAX_EPISODE_ID:
        return f"its id must be 1 to {MAX_EPISODE_ID} characters, got {len(episode.id)}"
    if not episode.turns:
        return "it holds no turn"
    if not (math.isfinite(episode.opened_at) and math.isfinite(episode.closed_at)):
        times = f"{episode.opened_at!r} / {episode.closed_at!r}"
        return f"opened_at / closed_at must be finite, got {times}"
    last = episode.last_accessed
    if not math.isfinite(episode.strength) or episode.strength < 0 or episode.recall_count < 0:
        return "strength must be finite and >= 0, recall_count >= 0"
    if last is not None and not math.isfinite(last):
        return f"last_accessed must be finite, got {last!r}"
    if episode.opened_at > episode.closed_at:
        return f"opened_at {episode.opened_at!r} is after closed_at {episode.closed_at!r}"
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
