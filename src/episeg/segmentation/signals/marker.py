"""Signal 5: agent-emitted ``<episode_boundary>`` / ``<new_subtask>`` markers.

The agent is the closest observer of its own task structure, so its markers
are authoritative. Only assistant turns are read (a user pasting the tag does
not steer segmentation). Placement decides where the cut goes:

* a marker at the very start of the text cuts *before* this turn;
* a marker anywhere else cuts *after* this turn (the next turn opens the new
  episode), which is how an agent says "done with that".

Markers are stripped from the stored text. A tag inside code (a fenced block
or an inline code span) is content, not a directive: an agent that explains
the protocol ("emit `<episode_boundary>` when done") neither cuts nor loses
the tag from its text.

>>> from episeg.segmentation.signals.marker import scan_markers
>>> scan = scan_markers("Deployed. <episode_boundary>")
>>> scan.text, scan.before, scan.after
('Deployed.', None, 'episode_boundary')
>>> scan_markers("<new_subtask> Now the retry logging.").before
'new_subtask'
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from episeg.types import Actor, Decision, ObservedTurn, SignalName, Verdict

__all__ = ["MARKER_TAGS", "AgentMarker", "MarkerScan", "code_spans", "scan_markers"]

MARKER_TAGS = ("episode_boundary", "new_subtask")
_MARKER = re.compile(r"<\s*(episode_boundary|new_subtask)\s*/?\s*>", re.IGNORECASE)
_SPACED_MARKER = re.compile(
    r"[ \t]*<\s*(episode_boundary|new_subtask)\s*/?\s*>[ \t]*", re.IGNORECASE
)
_DECISION = {"episode_boundary": Decision.BOUNDARY, "new_subtask": Decision.SUB_EPISODE}
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.MULTILINE)
_TICKS = re.compile(r"`+")


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
    ``after``. A tag inside code (see :func:`code_spans`) is left as it is.

    >>> scan = scan_markers("Fixed.\\n    x = 1  # two  spaces <episode_boundary>")
    >>> scan.text, scan.after
    ('Fixed.\\n    x = 1  # two  spaces', 'episode_boundary')
    >>> scan_markers("<new_subtask> <episode_boundary> Next: deploy").before
    'episode_boundary'
    >>> scan_markers("Emit `<episode_boundary>` when a task is done.")
    MarkerScan(text='Emit `<episode_boundary>` when a task is done.', before=None, after=None)
    """
    if "<" not in text:
        return MarkerScan(text=text, before=None, after=None)
    code = code_spans(text) if "`" in text or "~~~" in text else []
    found = [m for m in _SPACED_MARKER.finditer(text) if not _inside(m.start(1), code)]
    if not found:
        return MarkerScan(text=text, before=None, after=None)
    before: list[str] = []
    after: list[str] = []
    leading, end = True, 0  # still in the run of markers that opens the text
    for match in found:
        leading = leading and not text[end : match.start()].strip()
        (before if leading else after).append(match.group(1).lower())
        end = match.end()
    pieces, end = [], 0
    for match in found:  # cut out the markers outside code, each with its spaces
        pieces += [text[end : match.start()], _gap(match)]
        end = match.end()
    clean = "".join([*pieces, text[end:]]).strip()
    return MarkerScan(text=clean, before=_strongest(before), after=_strongest(after))


def code_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of every code block and inline code span of ``text``, in order.

    As Markdown reads them: a fenced block runs from a line opening with three
    or more backticks or tildes to a line holding only as many or more of the
    same (or to the end of the text); outside blocks, a run of backticks opens
    an inline span closed by the next run of the same length (an unmatched run
    is literal). Linear in the text apart from a binary search per backtick run.

    >>> text = "a `x` b\\n```\\ncode\\n```\\n`` c"
    >>> [text[s:e] for s, e in code_spans(text)]
    ['`x`', '```\\ncode\\n```']
    """
    blocks: list[tuple[int, int]] = []
    at = 0
    while (opening := _FENCE.search(text, at)) is not None:
        fence, line_end = opening.group(1), text.find("\n", opening.end())
        closing = None
        if line_end >= 0:
            close = rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$"
            closing = re.compile(close, re.MULTILINE).search(text, line_end + 1)
        end = len(text) if closing is None else closing.end()
        blocks.append((opening.start(), end))
        at = end
    runs = [m.span() for m in _TICKS.finditer(text) if not _inside(m.start(), blocks)]
    by_length: dict[int, list[int]] = {}
    for n, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(n)
    spans, n = list(blocks), 0
    while n < len(runs):
        start, end = runs[n]
        same = by_length[end - start]
        k = bisect.bisect_right(same, n)
        if k < len(same):  # the next run of the same length closes the span
            spans.append((start, runs[same[k]][1]))
            n = same[k]
        n += 1
    return sorted(spans)


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    """Whether ``position`` falls in one of ``spans`` (sorted, disjoint)."""
    at = bisect.bisect_right(spans, position, key=lambda span: span[0]) - 1
    return at >= 0 and spans[at][0] <= position < spans[at][1]


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
