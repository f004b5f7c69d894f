"""MemoryBank-style forgetting: strength, retention, reinforcement, maintenance.

Rules (times in seconds since the epoch, ``t`` in days since the episode's
last access, falling back to ``closed_at`` when it was never recalled):

* **Strength** ``S`` (days). A stored episode starts at
  ``S0 = initial_days * (1 + salience_boost * importance)``, ``importance`` being its
  write-time salience normalised to [0, 1] (0 when unscored): the seed's "the write-time
  score is the starting weight; the read pattern adjusts it". With the defaults (1 day,
  boost 9) a score of ``n`` starts at ``n`` days. Each confirmed use sets
  ``S = max(S, S0) + config.forgetting.growth_days``, so after ``n`` uses
  ``S = S0 + n * growth``.
* **Retention** ``R = exp(-t / S)``.
* **Decay of unused memories** (:func:`maintain`). A never-recalled episode
  (``recall_count == 0``) has its stored strength set to
  ``S0 * (1 + exp(-t / S0)) / 2``: it slides from ``S0`` at write time toward
  ``S0 / 2``, so an unused memory fades up to twice as fast as a fresh one.
  The rule is a pure function of time, so running :func:`maintain` twice
  at the same ``now`` changes nothing the second time. The write-time
  :class:`~episeg.types.Salience` is never touched (it stays auditable);
  decay acts through retention and archiving only.
* **Archiving** (``maintain(archive=True)``): episodes with
  ``R < config.forgetting.archive_floor`` are marked ``archived`` and leave recall.
  Nothing is ever deleted.
* **Pinned** episodes (``episode.pinned``, set by the user) keep retention 1:
  :func:`maintain` never decays nor archives them.

>>> from episeg.config import EpisegConfig
>>> import dataclasses
>>> from episeg.recall.forgetting import reinforce, retention, starting_strength
>>> from episeg.types import Episode
>>> cfg = EpisegConfig()
>>> ep = Episode(id="e", user="u", session="s", turns=(), summary="",
...              opened_at=0.0, closed_at=0.0)
>>> round(retention(ep, config=cfg, now=86400.0), 4)  # 1 day, never recalled, unscored
0.2317
>>> from episeg.types import Salience
>>> salient = dataclasses.replace(ep, salience=Salience(score=10, scorer="llm", reason=""))
>>> starting_strength(salient, config=cfg), round(retention(salient, config=cfg, now=86400.0), 4)
(10.0, 0.9003)
>>> again = reinforce(ep, config=cfg, now=86400.0)
>>> again.recall_count, again.strength, again.last_accessed
(1, 2.0, 86400.0)
>>> retention(again, config=cfg, now=86400.0)
1.0
"""

from __future__ import annotations

import dataclasses
import math
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from episeg.config import EpisegConfig
from episeg.types import Episode
from episeg.typing import EpisodeStore

__all__ = [
    "MaintenanceReport",
    "age_days",
    "decayed_strength",
    "maintain",
    "reinforce",
    "retention",
    "retention_from",
    "starting_strength",
    "strength_from_importance",
]

_DAY = 86400.0
_PAGE = 500


def age_days(episode: Episode, *, now: float) -> float:
    """Days since the last access (or ``closed_at``); never negative."""
    ref = episode.last_accessed if episode.last_accessed is not None else episode.closed_at
    return max(0.0, (now - ref) / _DAY)


def starting_strength(episode: Episode, *, config: EpisegConfig) -> float:
    """``S0`` of ``episode``: ``initial_days``, raised by its write-time salience."""
    salience = episode.salience
    importance = None if salience is None else salience.normalized
    return strength_from_importance(importance, config=config)


def strength_from_importance(importance: float | None, *, config: EpisegConfig) -> float:
    """``S0`` for a normalised salience in [0, 1] (``None``: unscored, the base)."""
    forgetting = config.forgetting
    return forgetting.initial_days * (1.0 + forgetting.salience_boost * (importance or 0.0))


def decayed_strength(episode: Episode, *, config: EpisegConfig, now: float) -> float:
    """The strength ``S`` that applies to ``episode`` at ``now`` (see module rules)."""
    return _strength(
        age_days(episode, now=now),
        starting_strength(episode, config=config),
        episode.strength,
        used=episode.recall_count > 0,
    )


def retention(episode: Episode, *, config: EpisegConfig, now: float) -> float:
    """MemoryBank retention ``R = exp(-t / S)`` in (0, 1]; always 1 for a pinned episode."""
    if episode.pinned:
        return 1.0
    return retention_from(
        age=age_days(episode, now=now),
        start=starting_strength(episode, config=config),
        stored=episode.strength,
        used=episode.recall_count > 0,
    )


def retention_from(*, age: float, start: float, stored: float, used: bool) -> float:
    """``R`` from its parts: days since the last use (or the close), ``S0``, the stored
    strength and whether the episode was ever confirmed used (the recall cards' path)."""
    strength = _strength(age, start, stored, used=used)
    if strength <= 0:  # refused at every way in; an older store's value reads as forgotten
        return 0.0
    return math.exp(-age / strength)


def _strength(age: float, start: float, stored: float, *, used: bool) -> float:
    return stored if used else start * (1.0 + math.exp(-age / start)) / 2.0


def reinforce(episode: Episode, *, config: EpisegConfig, now: float) -> Episode:
    """``episode`` after one recall at ``now``: count + 1, strength grown, access reset."""
    s0 = starting_strength(episode, config=config)
    strength = max(episode.strength, s0) + config.forgetting.growth_days
    return dataclasses.replace(
        episode, recall_count=episode.recall_count + 1, last_accessed=now, strength=strength
    )


@dataclass(frozen=True, slots=True)
class MaintenanceReport:
    """What one :func:`maintain` pass saw and changed.

    ``decayed`` counts never-recalled episodes whose stored strength was
    lowered; ``below_floor`` those with ``R < archive_floor`` (archived or
    not); ``archived`` those newly archived by this pass.
    """

    total: int
    recalled: int
    never_recalled: int
    decayed: int
    below_floor: int
    archived: int
    already_archived: int
    mean_retention: float


def maintain(
    store: EpisodeStore,
    config: EpisegConfig,
    now: float,
    *,
    archive: bool = False,
    lock: AbstractContextManager[object] | None = None,
) -> MaintenanceReport:
    """Decay unused memories of ``store``'s tenant and optionally archive faded ones.

    Reads every episode (archived included) page by page, then writes the
    changed recall metadata back with ``store.update``. The write holds
    ``lock`` (the tenant's write lock), under which the episodes to change are
    read again: one whose state changed since the scan (confirmed used,
    unarchived, pinned or edited meanwhile) is left as it is now, so a
    reinforcement is never undone nor the episode just used archived. The
    report counts what was written.
    """
    episodes: list[Episode] = []
    offset = 0
    while True:
        page = store.list_episodes(limit=_PAGE, offset=offset, include_archived=True)
        episodes.extend(page)
        if len(page) < _PAGE:
            break
        offset += _PAGE
    changed: list[tuple[Episode, Episode]] = []  # (as read, as it is to be written)
    below = already = 0
    total_r = 0.0
    for ep in episodes:
        r = retention(ep, config=config, now=now)
        total_r += r
        new = ep
        if ep.pinned:
            already += int(ep.archived)
            continue  # the user pinned it: never decayed, never archived
        if ep.recall_count == 0:
            s = decayed_strength(ep, config=config, now=now)
            if s < ep.strength:
                new = dataclasses.replace(new, strength=s)
        if r < config.forgetting.archive_floor:
            below += 1
            if archive and not ep.archived:
                new = dataclasses.replace(new, archived=True)
        already += int(ep.archived)
        if new is not ep:
            changed.append((ep, new))
    written = _write_unless_changed(store, changed, lock or nullcontext())
    decayed = sum(1 for old, new in written if new.strength < old.strength)
    newly = sum(1 for old, new in written if new.archived and not old.archived)
    recalled = sum(1 for ep in episodes if ep.recall_count > 0)
    return MaintenanceReport(
        total=len(episodes),
        recalled=recalled,
        never_recalled=len(episodes) - recalled,
        decayed=decayed,
        below_floor=below,
        archived=newly,
        already_archived=already,
        mean_retention=total_r / len(episodes) if episodes else 0.0,
    )


def _state(ep: Episode) -> tuple[object, ...]:
    return (ep.recall_count, ep.last_accessed, ep.strength, ep.archived, ep.pinned)


def _write_unless_changed(
    store: EpisodeStore,
    changed: list[tuple[Episode, Episode]],
    lock: AbstractContextManager[object],
) -> list[tuple[Episode, Episode]]:
    """Write each change whose episode still holds the state it was decided on."""
    if not changed:
        return []
    ids = [old.id for old, _ in changed]
    with lock:
        current = {
            ep.id: ep for at in range(0, len(ids), _PAGE) for ep in store.get(ids[at : at + _PAGE])
        }
        kept = [
            (old, new)
            for old, new in changed
            if old.id in current and _state(current[old.id]) == _state(old)
        ]
        if kept:
            store.update([new for _, new in kept])
    return kept
