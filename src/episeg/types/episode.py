"""What signals answer (:class:`Verdict`) and what segmentation yields (:class:`Episode`).

Also an episode's :class:`Salience`, a judge's :class:`JudgeAnswer` and a
recalled :class:`ScoredEpisode`.

>>> v = Verdict(signal=SignalName.WINDOW, decision=Decision.BOUNDARY, authoritative=True)
>>> v.signal, Verdict.from_dict(v.to_dict()) == v
('window', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from episeg.errors import TurnValidationError
from episeg.types.enums import Decision, SignalName
from episeg.types.turn import Turn, check_kind, iso_time

__all__ = [
    "MAX_EPISODE_ID",
    "Episode",
    "JudgeAnswer",
    "Salience",
    "ScoredEpisode",
    "Verdict",
    "turn_problem",
]

MAX_EPISODE_ID = 1024
"""The longest episode id (characters) a memory stores and its API can name (``?id=``)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """One signal's frozen answer about one turn.

    ``score`` is the strength of the evidence in [0, 1] (1 = certain);
    ``authoritative`` verdicts are obeyed by the combiner without weighing.
    """

    signal: str
    decision: Decision
    score: float = 0.0
    reason: str = ""
    authoritative: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.signal, SignalName):  # keep the plain string value
            object.__setattr__(self, "signal", self.signal.value)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``score`` is exact (rounding is for display only)."""
        return {
            "signal": self.signal,
            "decision": self.decision.value,
            "score": float(self.score),
            "reason": self.reason,
            "authoritative": self.authoritative,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        """Read :meth:`to_dict`'s output; ``authoritative`` must be a bool, not ``"false"``."""
        authoritative = data.get("authoritative", False)
        if not isinstance(authoritative, bool):
            raise ValueError(
                f"a verdict's authoritative must be true or false, got {authoritative!r}"
            )
        return cls(
            signal=str(data["signal"]),
            decision=Decision.parse(data["decision"]),
            score=float(data.get("score", 0.0)),
            reason=str(data.get("reason", "")),
            authoritative=authoritative,
        )


@dataclass(frozen=True, slots=True)
class Salience:
    """An episode's salience: the 1-10 integer, its [0, 1] form, and provenance.

    ``score`` is ``None`` when the episode is *unscored*: the scorer failed and
    ``reason`` says why. Nothing ever defaults silently to 5.

    >>> Salience.scored(10, scorer="anchored").normalized
    1.0
    >>> Salience.unscored("judge timed out", scorer="anthropic").normalized is None
    True
    """

    score: int | None
    scorer: str
    reason: str = ""

    def __post_init__(self) -> None:
        if self.score is not None and (
            isinstance(self.score, bool)
            or not isinstance(self.score, int)
            or not 1 <= self.score <= 10
        ):
            raise ValueError(f"salience score must be an integer 1-10 or None, got {self.score!r}")
        for name in ("scorer", "reason"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"salience {name} must be a string, got {getattr(self, name)!r}")

    @classmethod
    def scored(cls, score: int, *, scorer: str, reason: str = "") -> Salience:
        return cls(score=score, scorer=scorer, reason=reason)

    @classmethod
    def unscored(cls, reason: str, *, scorer: str) -> Salience:
        return cls(score=None, scorer=scorer, reason=reason)

    @property
    def is_scored(self) -> bool:
        return self.score is not None

    @property
    def normalized(self) -> float | None:
        """(score - 1) / 9, so 1 maps to 0.0 and 10 to 1.0."""
        return None if self.score is None else (self.score - 1) / 9.0


@dataclass(frozen=True, slots=True)
class Episode:
    """A closed run of turns, the unit that is scored, stored and recalled.

    ``boundary_verdicts`` are the verdicts that opened this episode (empty for
    the first episode of a session) and ``closing_verdicts`` those that closed
    it, so a mis-fire can be traced to the signal behind it. ``embedding`` is
    the normalised mean of the turn vectors and ``turn_embeddings`` (optional,
    one row per turn, not stored in the episode record) feeds the store's turn
    index; :attr:`start` / :attr:`end` give the opening and closing times as
    ISO dates.
    """

    id: str
    user: str
    session: str
    turns: tuple[Turn, ...]
    summary: str
    opened_at: float
    closed_at: float
    embedding: np.ndarray | None = field(default=None, repr=False, compare=False)
    salience: Salience | None = None
    parent_id: str | None = None
    boundary_verdicts: tuple[Verdict, ...] = ()
    closing_verdicts: tuple[Verdict, ...] = ()
    recall_count: int = 0
    last_accessed: float | None = None
    strength: float = 1.0
    archived: bool = False
    pinned: bool = False
    metadata: Mapping[str, str | int | float | bool] = field(default_factory=dict, hash=False)
    turn_embeddings: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def start(self) -> str:
        """``opened_at`` as an ISO 8601 UTC date-time (seconds precision)."""
        return iso_time(self.opened_at)

    @property
    def end(self) -> str:
        """``closed_at`` as an ISO 8601 UTC date-time (seconds precision)."""
        return iso_time(self.closed_at)

    @property
    def text(self) -> str:
        """The transcript of the episode, one ``actor: text`` line per turn."""
        return "\n".join(f"{t.actor.value}: {t.text}" for t in self.turns)

    @property
    def turn_ids(self) -> tuple[str, ...]:
        return tuple(t.id or "" for t in self.turns)


@dataclass(frozen=True, slots=True)
class JudgeAnswer:
    """A judge's structured answer: the decision and the updated one-line summary."""

    decision: Decision
    summary: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ScoredEpisode:
    """A recalled episode with each rerank term's contribution.

    ``importance_imputed`` is True when the episode was unscored and its
    importance term used the candidates' median (see :mod:`episeg.recall.rerank`).
    """

    episode: Episode
    score: float
    recency: float
    importance: float
    similarity: float
    raw_similarity: float
    importance_imputed: bool = False


def turn_problem(episode: Episode) -> str | None:
    """A turn that is not the episode's (another user or session, outside its times), or
    whose actor and type do not go together; ``None`` if every turn is the episode's.

    Every way in of a stored episode checks it (``store_episodes``, an import).
    """
    for n, turn in enumerate(episode.turns):
        if (turn.user, turn.session) != (episode.user, episode.session):
            return (
                f"turn {n} is of user {turn.user!r}, session {turn.session!r}; the "
                f"episode's are {episode.user!r}, {episode.session!r}"
            )
        if not episode.opened_at <= turn.ts <= episode.closed_at:
            return f"turn {n} has ts {turn.ts!r}, outside opened_at .. closed_at"
        try:
            check_kind(turn)
        except TurnValidationError as exc:
            return f"turn {n}: {exc}"
    return None
