"""Signal 4: structural turn types, with a cheap classifier when they are absent.

Rules from the seed: a ``system-event`` is a boundary; a ``tool-error``
followed by a ``user-question`` opens a sub-episode; a ``user-correction``
continues the current episode. Types supplied by the harness are trusted;
inferred types are hints only (type fidelity is this signal's failure mode),
and only a harness-supplied ``system-event`` is authoritative.

One more cue, from the text: a user who *announces* a new topic ("Different
question: ...", "Unrelated: ...", "Switching gears, ...") at the start of one
of the turn's sentences gets a ``boundary`` hint whose reason starts with
:data:`PIVOT_REASON` (:func:`topic_pivot`; the phrases are :data:`PIVOT_PHRASES`).
The learned combiner treats it as a strong hint, not a ruling.

>>> from episeg.types import Turn
>>> infer_turn_type(Turn(actor="tool", text="Traceback: KeyError 'jwt'", ts=0)).value
'tool-error'
>>> infer_turn_type(Turn(actor="user", text="No, I meant the staging cluster", ts=0)).value
'user-correction'
>>> topic_pivot("Login works now, thanks. Different question: how do I deploy?")
'different question'
>>> topic_pivot("That is a different question from mine.") is None
True
"""

from __future__ import annotations

import re

from episeg.text import is_tool_error, is_user_correction
from episeg.types import Actor, Decision, ObservedTurn, SignalName, Turn, TurnType, Verdict

__all__ = ["PIVOT_PHRASES", "PIVOT_REASON", "StructuralTurnType", "infer_turn_type", "topic_pivot"]

_CALL = re.compile(r"^\s*(\{|calling\b|call\b|run(ning)?\b|\$ |`)", re.IGNORECASE)

PIVOT_PHRASES = (
    "different question",
    "another question",
    "unrelated question",
    "unrelated",
    "new topic",
    "new question",
    "change of topic",
    "change of subject",
    "changing the subject",
    "changing topics",
    "switching gears",
    "switching topics",
    "on another note",
    "on a different note",
    "on an unrelated note",
    "moving on to",
    "separate issue",
    "separate question",
    "one more thing",
    "totally different",
    "completely different",
)
"""User phrases that announce a new topic, matched case-insensitively at the
start of a sentence of a user turn (after optional "ok", "also", "now", "a"/"an"
and "quick"), followed by ``:``, ``,``, ``-``, ``.``, ``?`` or a word break."""
PIVOT_REASON = "user announces a new topic"

_LEAD = (
    r"(?:(?:ok(?:ay)?|also|so|now|alright|right|and|but)[,.]?\s+)*(?:(?:a|an|one)\s+)?(?:quick\s+)?"
)
_PIVOT = re.compile(
    r"(?:^|[.!?;]\s+|\n\s*)"
    + _LEAD
    + "("
    + "|".join(
        re.escape(p).replace(r"\ ", r"\s+") for p in sorted(PIVOT_PHRASES, key=len, reverse=True)
    )
    + r")\b",
    re.IGNORECASE,
)


def topic_pivot(text: str) -> str | None:
    """The pivot phrase that starts a sentence of ``text`` (lower-cased), else ``None``."""
    match = _PIVOT.search(text)
    return " ".join(match.group(1).lower().split()) if match else None


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
        if turn.turn.actor is Actor.USER and (phrase := topic_pivot(turn.text)) is not None:
            return Verdict(self.name, Decision.BOUNDARY, 0.9, f"{PIVOT_REASON}: '{phrase}'")
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
