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

__all__ = [
    "PIVOT_PHRASES",
    "PIVOT_REASON",
    "QUALIFIED_PIVOTS",
    "StructuralTurnType",
    "infer_turn_type",
    "topic_pivot",
]

_CALL = re.compile(r"^\s*(\{|calling\b|call\b|run(ning)?\b|\$ |`)", re.IGNORECASE)

PIVOT_PHRASES = (
    "different question",
    "another question",
    "unrelated question",
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
)
"""User phrases that announce a new topic, matched case-insensitively at the
start of a sentence of a user turn (after optional "ok", "also", "now", "a"/"an"
and "quick"), followed by ``:``, ``,``, ``-``, ``.``, ``?`` or a word break."""
QUALIFIED_PIVOTS = ("unrelated", "totally different", "completely different", "one more thing")
"""Phrases that announce a new topic only when a pause or a topic word follows
("Unrelated: ...", "Completely different question, ...", "One more thing - ..."):
bare, they also open plain descriptions of the task at hand ("Completely
different error now", "Unrelated errors show up too"), a mid-task cut."""
PIVOT_REASON = "user announces a new topic"

_LEAD = (
    r"(?:(?:ok(?:ay)?|also|so|now|alright|right|and|but)[,.]?\s+)*(?:(?:a|an|one)\s+)?(?:quick\s+)?"
)


def _alternatives(phrases: tuple[str, ...]) -> str:
    return "|".join(
        re.escape(p).replace(r"\ ", r"\s+") for p in sorted(phrases, key=len, reverse=True)
    )


_TOPIC_WORD = r"(?:question|topic|subject|thing|matter|note|request|task|issue)s?\b"
_PIVOT = re.compile(
    r"(?:^|[.!?;]\s+|\n\s*)"
    + _LEAD
    + f"((?:{_alternatives(PIVOT_PHRASES)})\\b"
    + f"|(?:{_alternatives(QUALIFIED_PIVOTS)})(?=\\s*[:,\\-\u2013\u2014]|\\s+{_TOPIC_WORD}))",
    re.IGNORECASE,
)
_WHITESPACE = re.compile(r"\s+")


def _one_space(run: re.Match[str]) -> str:
    return "\n" if "\n" in run.group() else " "


def topic_pivot(text: str) -> str | None:
    """The pivot phrase that starts a sentence of ``text`` (lower-cased), else ``None``.

    Runs of whitespace are read as one space or one newline first: the search
    is then linear (thousands of blank lines in a pasted log made it take
    seconds to minutes, holding the tenant's lock).
    """
    match = _PIVOT.search(_WHITESPACE.sub(_one_space, text))
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
