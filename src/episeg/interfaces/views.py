"""JSON-ready views of episodes and recall results, shared by the CLI, HTTP and MCP.

One function per shape, so the three interfaces print and serve the same
fields and none re-derives them (no segmentation or recall logic here).

>>> from episeg.types import Decision, Episode, Salience, Turn, Verdict
>>> ep = Episode(id="e1", user="alice", session="s", summary="deploy prod",
...              turns=(Turn(actor="user", text="deploy prod", ts=5.0, id="s:0"),),
...              opened_at=5.0, closed_at=5.0, salience=Salience.scored(7, scorer="x"),
...              boundary_verdicts=(Verdict("marker", Decision.BOUNDARY, 1.0, "agent marker"),))
>>> view = episode_view(ep)
>>> view["turn_count"], view["salience"]["score"], view["first_turn_id"]
(1, 7, 's:0')
>>> boundary_reasons(ep)
['marker: agent marker']
"""

from __future__ import annotations

from typing import Any

from episeg.types import Episode, Salience, ScoredEpisode, Turn, Verdict

__all__ = [
    "boundary_reasons",
    "episode_view",
    "fired_verdicts",
    "salience_text",
    "salience_view",
    "scored_view",
    "turn_view",
    "verdict_view",
]


def turn_view(turn: Turn) -> dict[str, Any]:
    """A turn as a JSON object (the transcript line format)."""
    return turn.to_dict()


def salience_view(salience: Salience | None) -> dict[str, Any] | None:
    """Score 1-10 (``None`` when unscored), its [0, 1] form, scorer and reason."""
    if salience is None:
        return None
    return {
        "score": salience.score,
        "normalized": salience.normalized,
        "scorer": salience.scorer,
        "reason": salience.reason,
    }


def salience_text(salience: Salience | None) -> str:
    """``'7/10'`` or ``'unscored (why)'`` for human output.

    >>> salience_text(None)
    'unscored (no scorer)'
    """
    if salience is None:
        return "unscored (no scorer)"
    if salience.score is None:
        return f"unscored ({salience.reason})"
    return f"{salience.score}/10"


def verdict_view(verdict: Verdict) -> dict[str, Any]:
    """A verdict as a JSON object, the score rounded to 6 places for display.

    >>> from episeg.types import Decision
    >>> verdict_view(Verdict("semantic", Decision.CONTINUE, 0.123456789, "near"))["score"]
    0.123457
    """
    return {**verdict.to_dict(), "score": round(float(verdict.score), 6)}


def fired_verdicts(verdicts: tuple[Verdict, ...]) -> list[Verdict]:
    """The signals (not the combiner) whose verdict opened an episode."""
    return [v for v in verdicts if v.decision.opens_episode and v.signal != "combiner"]


def boundary_reasons(episode: Episode) -> list[str]:
    """Why ``episode`` was opened: ``'signal: reason'`` per signal that fired.

    Empty for the first episode of a session; ``['combined evidence']`` when
    only the combiner's weighing (no single signal) opened it.
    """
    if not episode.boundary_verdicts:
        return []
    fired = [f"{v.signal}: {v.reason}" for v in fired_verdicts(episode.boundary_verdicts)]
    return fired or ["combined evidence"]


def episode_view(episode: Episode, *, with_turns: bool = True) -> dict[str, Any]:
    """An episode as a JSON object (no embedding)."""
    view: dict[str, Any] = {
        "id": episode.id,
        "user": episode.user,
        "session": episode.session,
        "summary": episode.summary,
        "opened_at": episode.opened_at,
        "closed_at": episode.closed_at,
        "turn_count": len(episode.turns),
        "first_turn_id": episode.turns[0].id if episode.turns else None,
        "last_turn_id": episode.turns[-1].id if episode.turns else None,
        "salience": salience_view(episode.salience),
        "parent_id": episode.parent_id,
        "boundary_reasons": boundary_reasons(episode),
        "boundary_verdicts": [verdict_view(v) for v in episode.boundary_verdicts],
        "recall_count": episode.recall_count,
        "last_accessed": episode.last_accessed,
        "strength": episode.strength,
        "archived": episode.archived,
    }
    if with_turns:
        view["turns"] = [turn_view(t) for t in episode.turns]
    return view


def scored_view(hit: ScoredEpisode, *, with_turns: bool = True) -> dict[str, Any]:
    """A recall result: the episode plus each weighted rerank term."""
    return {
        "score": hit.score,
        "recency": hit.recency,
        "importance": hit.importance,
        "similarity": hit.similarity,
        "raw_similarity": hit.raw_similarity,
        "importance_imputed": hit.importance_imputed,
        "episode": episode_view(hit.episode, with_turns=with_turns),
    }
