"""Turn intake: validation, id assignment and marker stripping before embedding.

Every rule here is a documented refusal or transformation; nothing is dropped
silently.

* text longer than ``max_turn_chars`` is refused (``TurnValidationError``);
* a turn earlier than the previous turn of its session is refused;
* a turn without ``id`` gets ``"<session>:<seq>"`` (numbers already used as
  ids by the client are skipped);
* a turn whose ``id`` was already seen in its session is a *duplicate*: it
  is skipped and counted (idempotent ingestion), never stored twice;
* agent markers are stripped from assistant text (see ``signals.marker``).

>>> from episeg.types import Turn
>>> intake = SessionIntake(session_key=("alice", "s1"))
>>> p = intake.accept(Turn(actor="assistant", text="Done <episode_boundary>", ts=1.0,
...                        user="alice", session="s1"), max_turn_chars=100)
>>> p.turn.id, p.turn.text, p.markers
('s1:0', 'Done', ('after:episode_boundary',))
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from episeg.errors import TurnValidationError
from episeg.segmentation.signals.marker import scan_markers
from episeg.types import Actor, Turn

__all__ = ["PreparedTurn", "SessionIntake"]


@dataclass(frozen=True, slots=True)
class PreparedTurn:
    """A validated turn with its id assigned and markers stripped."""

    turn: Turn
    markers: tuple[str, ...]
    original_text: str


@dataclass
class SessionIntake:
    """Per-(user, session) validation state: sequence, last timestamp, seen ids."""

    session_key: tuple[str, str]
    seq: int = 0
    last_ts: float | None = None
    seen_ids: set[str] = field(default_factory=set)
    duplicates: int = 0

    def accept(self, turn: Turn, *, max_turn_chars: int) -> PreparedTurn | None:
        """Validate ``turn``; ``None`` means it is a duplicate already ingested."""
        if len(turn.text) > max_turn_chars:
            raise TurnValidationError(
                f"text of turn {turn.id or self.seq} is {len(turn.text)} characters; "
                f"the limit is {max_turn_chars} (EpisegConfig.intake.max_turn_chars)"
            )
        if turn.id is not None and turn.id in self.seen_ids:
            self.duplicates += 1
            return None
        if self.last_ts is not None and turn.ts < self.last_ts:
            raise TurnValidationError(
                f"turn {turn.id or self.seq} has ts {turn.ts} earlier than the previous "
                f"turn's {self.last_ts} in session {self.session_key[1]!r}; "
                "timestamps must not go backwards within a session"
            )
        markers: tuple[str, ...] = ()
        text = turn.text
        if turn.actor is Actor.ASSISTANT:
            scan = scan_markers(text)
            text = scan.text
            markers = tuple(
                f"{place}:{tag}"
                for place, tag in (("before", scan.before), ("after", scan.after))
                if tag
            )
        if turn.id is None:  # skip numbers a client already used as ids (e.g. "s1:3")
            while f"{turn.session}:{self.seq}" in self.seen_ids:
                self.seq += 1
        turn_id = turn.id if turn.id is not None else f"{turn.session}:{self.seq}"
        self.seq += 1
        self.last_ts = turn.ts
        self.seen_ids.add(turn_id)
        clean = dataclasses.replace(turn, text=text, id=turn_id)
        return PreparedTurn(turn=clean, markers=markers, original_text=turn.text)
