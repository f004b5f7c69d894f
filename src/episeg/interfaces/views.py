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

from datetime import UTC, datetime
from typing import Any

from episeg.recall.hierarchical import RecallHit
from episeg.store.edit import is_user_salience
from episeg.types import Episode, Salience, ScoredEpisode, Turn, Verdict

__all__ = [
    "boundary_reasons",
    "episode_lines",
    "episode_view",
    "fired_verdicts",
    "salience_text",
    "salience_view",
    "scored_view",
    "turn_view",
    "verdict_view",
    "when_text",
]


def turn_view(turn: Turn) -> dict[str, Any]:
    """A turn as a JSON object (the transcript line format)."""
    return turn.to_dict()


def salience_view(salience: Salience | None) -> dict[str, Any] | None:
    """Score 1-10 (``None`` when unscored), its [0, 1] form, scorer, reason, and
    ``by_user``: the user set it (an override no scorer replaces)."""
    if salience is None:
        return None
    return {
        "score": salience.score,
        "normalized": salience.normalized,
        "scorer": salience.scorer,
        "reason": salience.reason,
        "by_user": is_user_salience(salience),
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
    return f"{salience.score}/10" + (" (set by the user)" if is_user_salience(salience) else "")


def when_text(ts: float) -> str:
    """``ts`` as ``YYYY-MM-DD HH:MM:SS`` (UTC) for people; the bare number outside the calendar.

    >>> when_text(0.0), when_text(1e300)
    ('1970-01-01 00:00:00', '1e+300')
    """
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return f"{ts:g}"


def episode_lines(number: int, episode: Episode, *, turns: bool = False) -> list[str]:
    """The one plain-text rendering of an episode (``episeg episodes``, the demo).

    A header (short id, kind, session, first..last turn id, when, salience), the
    summary, why it was opened and, with ``turns``, one ``actor: text`` line per turn.

    >>> from episeg.types import Turn
    >>> ep = Episode(id="e1234567890", user="u", session="s", summary="deploy prod",
    ...              turns=(Turn(actor="user", text="deploy prod", ts=0.0, id="s:0"),),
    ...              opened_at=0.0, closed_at=0.0)
    >>> header, *rest = episode_lines(1, ep, turns=True)
    >>> header.startswith("[1] e1234567890  episode  session s  turns s:0..s:0 (1)  1970-01-01")
    True
    >>> print(*rest, sep=chr(10))
        summary  : deploy prod
        opened by: start of the session
          user: deploy prod
    """
    ep = episode
    kind = f"sub-episode of {ep.parent_id}" if ep.parent_id else "episode"
    first, last = (ep.turns[0].id, ep.turns[-1].id) if ep.turns else ("?", "?")
    lines = [
        f"[{number}] {ep.id}  {kind}  session {ep.session}  turns {first}..{last} "
        f"({len(ep.turns)})  {when_text(ep.opened_at)}  salience {salience_text(ep.salience)}"
        + (f"  recalled {ep.recall_count}x" if ep.recall_count else "")
        + ("  [archived]" if ep.archived else "")
        + ("  [pinned]" if ep.pinned else ""),
        f"    summary  : {ep.summary}",
        f"    opened by: {'; '.join(boundary_reasons(ep)) or 'start of the session'}",
    ]
    if ep.metadata:
        lines.append("    metadata : " + ", ".join(f"{k}={v!r}" for k, v in ep.metadata.items()))
    if turns:
        lines += [f"      {t.actor.value}: {t.text}" for t in ep.turns]
    return lines


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
        "start": episode.start,
        "end": episode.end,
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
        "pinned": episode.pinned,
        "metadata": dict(episode.metadata),
    }
    if with_turns:
        view["turns"] = [turn_view(t) for t in episode.turns]
    return view


def scored_view(hit: ScoredEpisode, *, with_turns: bool = True) -> dict[str, Any]:
    """A recall result: the episode, each weighted rerank term and, for a
    :class:`~episeg.recall.hierarchical.RecallHit`, its dates, summary and the
    matched turns that recall returned (``turns``/``turn_ids``; ``episode.turns``
    holds the whole episode when ``with_turns``)."""
    view: dict[str, Any] = {
        "score": hit.score,
        "recency": hit.recency,
        "importance": hit.importance,
        "similarity": hit.similarity,
        "raw_similarity": hit.raw_similarity,
        "importance_imputed": hit.importance_imputed,
        "episode": episode_view(hit.episode, with_turns=with_turns),
    }
    if isinstance(hit, RecallHit):
        view.update(
            {
                "episode_id": hit.episode_id,
                "start": hit.start,
                "end": hit.end,
                "summary": hit.summary,
                "reinforcement": hit.reinforcement,
                "lexical": hit.lexical,
                "words": hit.words,
                "turn_ids": list(hit.turn_ids),
                "turns": [turn_view(t) for t in hit.turns],
                "neighbours_before": list(hit.neighbours_before),
                "neighbours_after": list(hit.neighbours_after),
                "open": hit.open,
            }
        )
    return view
