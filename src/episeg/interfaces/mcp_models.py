"""Typed, compact results of the MCP tools (:mod:`episeg.interfaces.mcp_server`).

Each model becomes the tool's ``outputSchema``, so a client knows the shape
before it calls. Results are compact by default: an episode is its id,
dates, summary, salience and why it was opened; a recall hit adds its score
terms and the few turns recall matched. Whole turn lists come only when a
tool is asked for them (``full_turns=True``): five full results of the sample
conversation are ~16 KB, five compact ones a few KB.

>>> from episeg.types import Episode, Turn
>>> ep = Episode(id="e1", user="alice", session="s", summary="deploy prod",
...              turns=(Turn(actor="user", text="deploy prod", ts=5.0),), opened_at=5.0,
...              closed_at=5.0)
>>> brief = EpisodeBrief.of(ep)
>>> brief.turn_count, brief.salience, brief.turns
(1, None, None)
>>> EpisodeBrief.of(ep, full_turns=True).turns[0].text
'deploy prod'
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from episeg.interfaces.views import boundary_reasons
from episeg.store.edit import is_user_salience
from episeg.types import Episode, Turn
from episeg.typing import ScoredEpisode

__all__ = [
    "ActorName",
    "Closed",
    "EpisodeBrief",
    "EpisodePage",
    "Forgotten",
    "Hit",
    "Recalled",
    "TurnBrief",
    "TurnTypeName",
    "Used",
]

ActorName = Literal["user", "assistant", "tool", "system"]
TurnTypeName = Literal[
    "user-question",
    "user-correction",
    "assistant-answer",
    "tool-call",
    "tool-error",
    "tool-success",
    "system-event",
]


class TurnBrief(BaseModel):
    actor: str
    text: str
    ts: float
    id: str | None = None

    @classmethod
    def of(cls, turn: Turn) -> TurnBrief:
        return cls(actor=turn.actor.value, text=turn.text, ts=turn.ts, id=turn.id)


class EpisodeBrief(BaseModel):
    """An episode without its turns unless asked; salience is the 1-10 score (None: unscored).

    ``salience_by_user`` says the salience was set by the user; ``pinned``
    episodes are never decayed nor archived; ``metadata`` holds the user's labels.
    """

    id: str
    user: str
    session: str
    summary: str
    opened_at: float
    closed_at: float
    turn_count: int
    salience: int | None
    boundary_reasons: list[str]
    recall_count: int
    parent_id: str | None
    archived: bool
    pinned: bool = False
    salience_by_user: bool = False
    metadata: dict[str, str | int | float | bool] = Field(default_factory=dict)
    turns: list[TurnBrief] | None = None

    @classmethod
    def of(cls, episode: Episode, *, full_turns: bool = False) -> EpisodeBrief:
        return cls(
            id=episode.id,
            user=episode.user,
            session=episode.session,
            summary=episode.summary,
            opened_at=episode.opened_at,
            closed_at=episode.closed_at,
            turn_count=len(episode.turns),
            salience=episode.salience.score if episode.salience is not None else None,
            boundary_reasons=boundary_reasons(episode),
            recall_count=episode.recall_count,
            parent_id=episode.parent_id,
            archived=episode.archived,
            pinned=episode.pinned,
            salience_by_user=is_user_salience(episode.salience),
            metadata=dict(episode.metadata),
            turns=[TurnBrief.of(t) for t in episode.turns] if full_turns else None,
        )


class Hit(BaseModel):
    """One recall result: score sums the weighted terms; matched = the turns recall chose."""

    score: float
    similarity: float
    recency: float
    importance: float
    reinforcement: float
    episode: EpisodeBrief
    matched: list[TurnBrief]
    open: bool = Field(
        False, description="not closed yet: its id is the one it will be stored under"
    )

    @classmethod
    def of(cls, hit: ScoredEpisode, *, full_turns: bool = False) -> Hit:
        return cls(
            score=hit.score,
            similarity=hit.similarity,
            recency=hit.recency,
            importance=hit.importance,
            reinforcement=float(getattr(hit, "reinforcement", 0.0)),
            episode=EpisodeBrief.of(hit.episode, full_turns=full_turns),
            matched=[TurnBrief.of(t) for t in getattr(hit, "turns", ())],
            open=bool(getattr(hit, "open", False)),
        )


class Closed(BaseModel):
    closed: list[EpisodeBrief]


class EpisodePage(BaseModel):
    episodes: list[EpisodeBrief]


class Recalled(BaseModel):
    results: list[Hit]


class Forgotten(BaseModel):
    forgotten: list[str]
    turns: int = 0
    session: str | None = None
    everything: bool = False


class Used(BaseModel):
    confirmed: list[str]
