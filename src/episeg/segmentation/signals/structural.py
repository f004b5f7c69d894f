"""Signal 4: structural turn types, with a cheap classifier when they are absent.

Rules from the seed: a ``system-event`` is a boundary; a ``tool-error``
followed by a ``user-question`` opens a sub-episode; a ``user-correction``
continues the current episode. Types supplied by the harness are trusted;
inferred types are hints only (type fidelity is this signal's failure mode),
and only a harness-supplied ``system-event`` is authoritative.

>>> from episeg.types import Turn
>>> infer_turn_type(Turn(actor="tool", text="Traceback: KeyError 'jwt'", ts=0)).value
'tool-error'
>>> infer_turn_type(Turn(actor="user", text="No, I meant the staging cluster", ts=0)).value
'user-correction'
"""

from __future__ import annotations

import re

from episeg.text import is_tool_error, is_user_correction
from episeg.types import Actor, Decision, ObservedTurn, SignalName, Turn, TurnType, Verdict

__all__ = ["StructuralTurnType", "infer_turn_type"]

_CALL = re.compile(r"^\s*(\{|calling\b|call\b|run(ning)?\b|\$ |`)", re.IGNORECASE)


def infer_turn_type(turn: Turn) -> TurnType:
    """The harness's type if given, else a rule-based guess from actor and text."""
    if turn.type is not None:
        return turn.type
    if turn.actor is Actor.SYSTEM:
        return TurnType.SYSTEM_EVENT
    if turn.actor is Actor.TOOL:
        return TurnType.TOOL_ERROR if is_tool_error(turn) else TurnType.TOOL_SUCCESS
    if turn.actor is Actor.USER:
        return TurnType.USER_CORRECTION if is_user_correction(turn) else TurnType.USER_QUESTION
    return TurnType.TOOL_CALL if _CALL.search(turn.text) else TurnType.ASSISTANT_ANSWER


class StructuralTurnType:
    """Applies the seed's turn-type rules; verdicts are hints for the combiner.

    >>> import numpy as np
    >>> def obs(actor, kind, given=True):
    ...     t = Turn(actor=actor, text="x", ts=0.0, type=kind if given else None)
    ...     return ObservedTurn(turn=t, text="x", embedding=np.zeros(2), position=0,
    ...                         inferred_type=TurnType.parse(kind))
    >>> s = StructuralTurnType()
    >>> s.update(obs("tool", "tool-error")).decision.value
    'abstain'
    >>> s.update(obs("user", "user-question")).decision.value
    'sub-episode'
    >>> v = s.update(obs("system", "system-event"))
    >>> v.decision.value, v.authoritative
    ('boundary', True)
    """

    name = SignalName.STRUCTURAL.value

    def __init__(self) -> None:
        self._previous: TurnType | None = None

    def update(self, turn: ObservedTurn) -> Verdict:
        kind, previous = turn.inferred_type, self._previous
        self._previous = kind
        supplied = turn.turn.type is not None
        source = "given" if supplied else "inferred"
        if kind is TurnType.SYSTEM_EVENT:
            return Verdict(
                self.name,
                Decision.BOUNDARY,
                1.0,
                f"system-event ({source})",
                authoritative=supplied,
            )
        if kind is TurnType.USER_QUESTION and previous is TurnType.TOOL_ERROR:
            return Verdict(
                self.name,
                Decision.SUB_EPISODE,
                1.0 if supplied else 0.7,
                f"user-question after tool-error ({source})",
            )
        if kind is TurnType.USER_CORRECTION:
            return Verdict(
                self.name,
                Decision.CONTINUE,
                1.0 if supplied else 0.7,
                f"user-correction modifies the episode ({source})",
            )
        return Verdict(self.name, Decision.ABSTAIN, 0.0, f"{kind.value} ({source})")

    def reset(self, turn: ObservedTurn) -> None:
        self._previous = turn.inferred_type
