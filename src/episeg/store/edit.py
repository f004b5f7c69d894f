"""Editing a stored episode: summary, pin, salience override, user metadata, unarchive.

:class:`EpisodeEdit` is one validated change; :meth:`EpisodeEdit.apply` gives
the edited :class:`~episeg.types.Episode`, which the tenant-bound store
writes with ``revise`` (one record update per episode: every field of the
edit or none). A field left ``None`` is unchanged.

* ``summary``: 1-10,000 characters of valid text.
* ``pinned``: a pinned episode is never decayed nor archived by maintenance
  (:func:`episeg.recall.forgetting.maintain`) and its retention is always 1.
* ``salience``: an integer 1-10 set by the user. It replaces the scored
  salience as a :class:`~episeg.types.Salience` whose scorer is
  :data:`USER_SCORER` (the reason keeps the score it replaced), so a stored
  salience is never scored again over it.
* ``metadata``: replaces the episode's user metadata whole
  (:mod:`episeg.store.usermeta`; ``{}`` clears it).

>>> from episeg.types import Episode, Salience
>>> ep = Episode(id="e1", user="alice", session="s", turns=(), summary="deploy",
...              opened_at=0.0, closed_at=0.0, salience=Salience.scored(4, scorer="anchored"))
>>> edited = EpisodeEdit(summary="prod deploy", salience=9, metadata={"ticket": 42}).apply(ep)
>>> edited.summary, edited.salience.score, edited.salience.scorer, edited.metadata
('prod deploy', 9, 'user', {'ticket': 42})
>>> edited.salience.reason
'set by the user (was 4/10 by anchored)'
>>> EpisodeEdit(salience=11)
Traceback (most recent call last):
...
episeg.errors.EpisodeEditError: salience must be an integer 1-10, got 11
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from episeg.errors import EpisodeEditError
from episeg.store.usermeta import MetaScalar, validate_metadata
from episeg.types import Episode, Salience

__all__ = ["MAX_SUMMARY_LENGTH", "USER_SCORER", "EpisodeEdit", "is_user_salience", "unarchived"]

USER_SCORER = "user"
"""The ``scorer`` of a salience the user set; scorers never overwrite it."""
MAX_SUMMARY_LENGTH = 10_000


def is_user_salience(salience: Salience | None) -> bool:
    """Whether ``salience`` was set by the user (an override), not by a scorer."""
    return salience is not None and salience.scorer == USER_SCORER


@dataclass(frozen=True, slots=True)
class EpisodeEdit:
    """One change to a stored episode; ``None`` leaves a field unchanged.

    Raises
    ------
    EpisodeEditError
        At construction, for an empty or over-long summary, a salience that is
        not an integer 1-10, a non-bool ``pinned``, or bad metadata
        (:class:`~episeg.errors.MetadataError`, a subclass).
    """

    summary: str | None = None
    pinned: bool | None = None
    salience: int | None = None
    metadata: Mapping[str, MetaScalar] | None = None

    def __post_init__(self) -> None:
        if self.summary is not None:
            if not isinstance(self.summary, str) or not self.summary.strip():
                raise EpisodeEditError("summary must be a non-empty string")
            if len(self.summary) > MAX_SUMMARY_LENGTH:
                raise EpisodeEditError(f"summary must be at most {MAX_SUMMARY_LENGTH} characters")
            try:
                self.summary.encode("utf-8")
            except UnicodeEncodeError:
                raise EpisodeEditError("summary is not valid text (a lone surrogate)") from None
        if self.pinned is not None and not isinstance(self.pinned, bool):
            raise EpisodeEditError(f"pinned must be true or false, got {self.pinned!r}")
        sal = self.salience
        if sal is not None and (
            isinstance(sal, bool) or not isinstance(sal, int) or not 1 <= sal <= 10
        ):
            raise EpisodeEditError(f"salience must be an integer 1-10, got {sal!r}")
        if self.metadata is not None:
            object.__setattr__(self, "metadata", validate_metadata(self.metadata))

    @property
    def empty(self) -> bool:
        """Whether the edit changes nothing."""
        return all(getattr(self, f.name) is None for f in dataclasses.fields(self))

    def apply(self, episode: Episode) -> Episode:
        """``episode`` with this edit applied (a new object)."""
        changes: dict[str, Any] = {}
        if self.summary is not None:
            changes["summary"] = self.summary
        if self.pinned is not None:
            changes["pinned"] = self.pinned
        if self.salience is not None:
            changes["salience"] = _override(episode.salience, self.salience)
        if self.metadata is not None:
            changes["metadata"] = dict(self.metadata)
        return dataclasses.replace(episode, **changes) if changes else episode


def _override(current: Salience | None, score: int) -> Salience:
    if is_user_salience(current):
        assert current is not None
        reason = current.reason  # keep what the first override replaced
    elif current is None or current.score is None:
        reason = "set by the user (was unscored)"
    else:
        reason = f"set by the user (was {current.score}/10 by {current.scorer})"
    return Salience.scored(score, scorer=USER_SCORER, reason=reason)


def unarchived(episode: Episode, *, now: float) -> Episode:
    """``episode`` back in recall: not archived, and accessed ``now`` (retention 1 again),
    so the next maintenance pass does not archive it at once."""
    return dataclasses.replace(episode, archived=False, last_accessed=now)
