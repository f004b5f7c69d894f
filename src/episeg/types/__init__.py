"""Core data types: :class:`Turn`, :class:`Verdict`, :class:`Episode`, :class:`Salience`.

Enums accept a member or its string value and name the valid values on error:

>>> from episeg.types import Actor, Turn, TurnType
>>> Actor.parse("assistant")
<Actor.ASSISTANT: 'assistant'>
>>> Actor.parse("robot")
Traceback (most recent call last):
...
episeg.errors.InvalidTurnEnum: unknown actor 'robot'; valid: user, assistant, tool, system
>>> SignalName.parse("semantic"), isinstance(SignalName.SEMANTIC, str)
(<SignalName.SEMANTIC: 'semantic'>, True)
>>> t = Turn(actor="user", text="why is auth returning 401?", ts=0.0)
>>> t.actor, t.type
(<Actor.USER: 'user'>, None)
"""

from __future__ import annotations

from episeg.types.enums import (
    Actor,
    Decision,
    EmbedderBackend,
    JudgeGate,
    SignalName,
    TurnType,
)
from episeg.types.episode import Episode, JudgeAnswer, Salience, ScoredEpisode, Verdict
from episeg.types.turn import MAX_TS, ObservedTurn, Turn, iso_time

__all__ = [
    "MAX_TS",
    "Actor",
    "Decision",
    "EmbedderBackend",
    "Episode",
    "JudgeAnswer",
    "JudgeGate",
    "ObservedTurn",
    "Salience",
    "ScoredEpisode",
    "SignalName",
    "Turn",
    "TurnType",
    "Verdict",
    "iso_time",
]
