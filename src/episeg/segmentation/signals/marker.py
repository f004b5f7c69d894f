"""Signal 5: agent-emitted ``<episode_boundary>`` / ``<new_subtask>`` markers.

The agent is the closest observer of its own task structure, so its markers
are authoritative. Only assistant turns are read (a user pasting the tag does
not steer segmentation). Placement decides where the cut goes:

* a marker at the very start of the text cuts *before* this turn;
* a marker anywhere else cuts *after* this turn (the next turn opens the new
  episode), which is how an agent says "done with that".

Markers are stripped from the stored text.

>>> from episeg.segmentation.signals.marker import scan_markers
>>> scan = scan_markers("Deployed. <episode_boundary>")
>>> scan.text, scan.before, scan.after
('Deployed.', None, 'episode_boundary')
>>> scan_markers("<new_subtask> Now the retry logging.").before
'new_subtask'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from episeg.types import Actor, Decision, ObservedTurn, SignalName, Verdict

__all__ = ["MARKER_TAGS", "AgentMarker", "MarkerScan", "scan_markers"]

MARKER_TAGS = ("episode_boundary", "new_subtask")
_MARKER = re.compile(r"<\s*(episode_boundary|new_subtask)\s*/?\s*>", re.IGNORECASE)
_SPACED_MARKER = re.compile(
    r"[ \t]*<\s*(episode_boundary|new_subtask)\s*/?\s*>[ \t]*", re.IGNORECASE
)
_DECISION = {"episode_boundary": Decision.BOUNDARY, "new_subtask": Decision.SUB_EPISODE}


@dataclass(frozen=True, slots=True)
class MarkerScan:
    """Result of scanning one text: cleaned text and the marker placements."""

    text: str
    before: str | None
    after: str | None


def scan_markers(text: str) -> MarkerScan:
    """Find and strip agent markers; ``episode_boundary`` wins over ``new_subtask``.

    A marker is cut out with the spaces around it (one space stays between two
    words it separated); the rest of the text, code indentation included, is
    kept as written. Markers before any other text are ``before``, the others
    ``after``. Linear in the text.

    >>> scan = scan_markers("Fixed.\\n    x = 1  # two  spaces <episode_boundary>")
    >>> scan.text, scan.after
    ('Fixed.\\n    x = 1  # two  spaces', 'episode_boundary')
    >>> scan_markers("<new_subtask> <episode_boundary> Next: deploy").before
    'episode_boundary'
    """
    found = list(_SPACED_MARKER.finditer(text))
    if not found:
        return MarkerScan(text=text, before=None, after=None)
    before: list[str] = []
    after: list[str] = []
    leading, end = True, 0  # still in the run of markers that opens the text
    for match in found:
        leading = leading and not text[end : match.start()].strip()
        (before if leading else after).append(match.group(1).lower())
        end = match.end()
    clean = _SPACED_MARKER.sub(_gap, text).strip()
    return MarkerScan(text=clean, before=_strongest(before), after=_strongest(after))


def _gap(match: re.Match[str]) -> str:
    """What replaces a marker: one space between two words, else nothing."""
    text, start, end = match.string, match.start(), match.end()
    inside = start > 0 and end < len(text) and not text[start - 1].isspace()
    return " " if inside and not text[end].isspace() else ""


def _strongest(tags: list[str]) -> str | None:
    if not tags:
        return None
    return "episode_boundary" if "episode_boundary" in tags else "new_subtask"


class AgentMarker:
    """Reads marker placements recorded on :class:`ObservedTurn` (``markers``).

    ``markers`` holds ``"before:<tag>"`` / ``"after:<tag>"`` items, as the
    segmenter records them from :func:`scan_markers`.

    >>> import numpy as np
    >>> from episeg.types import Turn, TurnType
    >>> def obs(text, markers=()):
    ...     t = Turn(actor="assistant", text=text, ts=0.0)
    ...     return ObservedTurn(turn=t, text=text, embedding=np.zeros(2), position=0,
    ...                         inferred_type=TurnType.ASSISTANT_ANSWER, markers=markers)
    >>> signal = AgentMarker()
    >>> signal.update(obs("Done.", ("after:episode_boundary",))).decision
    <Decision.ABSTAIN: 'abstain'>
    >>> v = signal.update(obs("Next thing."))
    >>> v.decision, v.authoritative
    (<Decision.BOUNDARY: 'boundary'>, True)
    """

    name = SignalName.MARKER.value

    def __init__(self) -> None:
        self._pending: str | None = None

    def update(self, turn: ObservedTurn) -> Verdict:
        pending, self._pending = self._pending, None
        before: list[str] = []
        after: list[str] = []
        if turn.turn.actor is Actor.ASSISTANT:
            for item in turn.markers:
                place, _, found = item.partition(":")
                (before if place == "before" else after).append(found)
        self._pending = _strongest(after)
        tag = _strongest(before + ([pending] if pending else []))
        if tag is None:
            return Verdict(self.name, Decision.ABSTAIN, 0.0, "no agent marker")
        where = "at the start of this turn" if before else "at the end of the previous turn"
        return Verdict(self.name, _DECISION[tag], 1.0, f"<{tag}> {where}", authoritative=True)

    def reset(self, turn: ObservedTurn) -> None:
        """A new episode opened at ``turn``; a marker pending *after* it stays pending."""
