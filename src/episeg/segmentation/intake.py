"""Turn intake: validation, id assignment and marker stripping before embedding.

Every rule here is a documented refusal or transformation; nothing is dropped
silently.

* text longer than ``max_turn_chars`` is refused (``TurnValidationError``);
* a turn earlier than the previous turn of its session is refused;
* a turn without ``id`` gets ``"<session>:<seq>"`` (numbers already used as
  ids by the client are skipped); a client id equal to the id the next turn
  without one would get counts as taking that number. So the counter after a
  turn depends only on the counter, the seen ids and the turn's id, never on
  whether the client or the intake chose it: replaying journaled turns (their
  ids all set) gives the counter the live run had (``Segmenter.resume``);
* a turn whose ``id`` was already seen in its session is a *duplicate*: it
  is skipped and counted (idempotent ingestion), never stored twice; but if
  its content differs from what was recorded under that id (actor, type,
  text or ts: :func:`turn_fingerprint`), it is a ``TurnConflictError``
  (issue 12, F6). An id recorded without a fingerprint (a journal written
  before fingerprints) can only be a duplicate;
* agent markers are stripped from assistant text (see ``signals.marker``).

>>> from episeg.types import Turn
>>> intake = SessionIntake(session_key=("alice", "s1"))
>>> p = intake.accept(Turn(actor="assistant", text="Done <episode_boundary>", ts=1.0,
...                        user="alice", session="s1"), max_turn_chars=100)
>>> p.turn.id, p.turn.text, p.markers
('s1:0', 'Done', ('after:episode_boundary',))
>>> again = Turn(actor="assistant", text="Done <episode_boundary>", ts=1.0, id="s1:0",
...              user="alice", session="s1")
>>> intake.accept(again, max_turn_chars=100) is None     # the same turn again: a duplicate
True
>>> intake.accept(dataclasses.replace(again, text="Not done"), max_turn_chars=100)
... # doctest: +ELLIPSIS
Traceback (most recent call last):
...
episeg.errors.TurnConflictError: turn id 's1:0' in session 's1' was already recorded with ...
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring

from episeg.errors import TurnConflictError, TurnValidationError
from episeg.segmentation.signals.marker import scan_markers
from episeg.types import Actor, Turn

__all__ = ["PreparedTurn", "SessionIntake", "preview_intake", "turn_fingerprint"]


def turn_fingerprint(turn: Turn) -> int:
    """A 64-bit fingerprint of what a turn says: actor, type, text (as given) and ts.

    Not its id, user or session (those are the key it is recorded under).

    >>> from episeg.types import Turn
    >>> a = Turn(actor="user", text="deploy?", ts=1.0, id="x")
    >>> turn_fingerprint(a) == turn_fingerprint(dataclasses.replace(a, id="y"))
    True
    >>> turn_fingerprint(a) == turn_fingerprint(dataclasses.replace(a, text="deploy!"))
    False
    """
    kind = "null" if turn.type is None else encode_basestring(turn.type.value)
    # Exactly json.dumps([actor, type, text, ts], ensure_ascii=False) (tested), without
    # building a JSONEncoder per turn: a Turn's ts is always a finite float.
    data = f"[{encode_basestring(turn.actor.value)}, {kind}, {encode_basestring(turn.text)}, "
    data += f"{float.__repr__(turn.ts)}]"
    digest = hashlib.blake2b(data.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)  # fits SQLite's INTEGER


@dataclass(frozen=True, slots=True)
class PreparedTurn:
    """A validated turn with its id assigned and markers stripped."""

    turn: Turn
    markers: tuple[str, ...]
    original_text: str


@dataclass
class SessionIntake:
    """Per-(user, session) validation state: sequence, last timestamp, seen ids.

    ``seen_ids`` maps every accepted id to its :func:`turn_fingerprint`
    (``None`` when it is not known: an id journaled before fingerprints).
    """

    session_key: tuple[str, str]
    seq: int = 0
    last_ts: float | None = None
    seen_ids: dict[str, int | None] = field(default_factory=dict)
    duplicates: int = 0

    def remember(
        self, seen: Mapping[str, int | None] | Iterable[str], *, skip: Iterable[str | None] = ()
    ) -> None:
        """Replace the seen ids (with fingerprints if ``seen`` maps them), except ``skip``."""
        known = seen if isinstance(seen, Mapping) else dict.fromkeys(seen)
        dropped = set(skip)
        self.seen_ids = {k: v for k, v in known.items() if k not in dropped}

    def accept(self, turn: Turn, *, max_turn_chars: int) -> PreparedTurn | None:
        """Validate ``turn``; ``None`` means it is a duplicate already ingested."""
        if len(turn.text) > max_turn_chars:
            raise TurnValidationError(
                f"text of turn {turn.id or self.seq} is {len(turn.text)} characters; "
                f"the limit is {max_turn_chars} (EpisegConfig.intake.max_turn_chars)"
            )
        fingerprint = turn_fingerprint(turn)
        if turn.id is not None and turn.id in self.seen_ids:
            recorded = self.seen_ids[turn.id]
            if recorded is not None and recorded != fingerprint:
                raise TurnConflictError(
                    f"turn id {turn.id!r} in session {self.session_key[1]!r} was already "
                    "recorded with different content (actor, type, text or ts); re-send a "
                    "turn unchanged, or give a new turn a new id",
                    turn_id=turn.id,
                )
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
        free = self.seq  # skip numbers a client already used as ids (e.g. "s1:3")
        while f"{turn.session}:{free}" in self.seen_ids:
            free += 1
        auto_id = f"{turn.session}:{free}"
        if turn.id is None or turn.id == auto_id:  # the same whoever chose it (replay)
            turn_id, self.seq = auto_id, free + 1
        else:
            turn_id, self.seq = turn.id, self.seq + 1
        self.last_ts = turn.ts
        self.seen_ids[turn_id] = fingerprint
        clean = _with_id(turn, text=text, turn_id=turn_id)
        return PreparedTurn(turn=clean, markers=markers, original_text=turn.text)

    def retract(self, turn_id: str, *, seq: int, last_ts: float | None) -> None:
        """Undo the :meth:`accept` that gave ``turn_id`` (``seq``, ``last_ts``: as before it).

        For a turn accepted but then not recorded (its embedding failed): the
        same turn sent again is then new, not a duplicate.

        >>> from episeg.types import Turn
        >>> intake = SessionIntake(session_key=("default", "default"))
        >>> turn = Turn(actor="user", text="deploy?", ts=1.0)
        >>> prepared = intake.accept(turn, max_turn_chars=100)
        >>> intake.retract(prepared.turn.id, seq=0, last_ts=None)
        >>> intake.accept(turn, max_turn_chars=100).turn.id, intake.seq
        ('default:0', 1)
        """
        self.seen_ids.pop(turn_id, None)
        self.seq = seq
        self.last_ts = last_ts


def preview_intake(
    intakes: Mapping[tuple[str, str], SessionIntake], turns: Sequence[Turn], *, max_turn_chars: int
) -> list[bool]:
    """Per turn, ``False`` if :meth:`SessionIntake.accept` would skip it as a duplicate.

    Runs on copies of ``intakes`` (per (user, session); a session not in it
    starts fresh), so nothing changes; raises what the first refused turn would.
    """
    trial: dict[tuple[str, str], SessionIntake] = {}
    fresh: list[bool] = []
    for turn in turns:
        key = (turn.user, turn.session)
        if key not in trial:
            known = intakes.get(key)
            trial[key] = SessionIntake(session_key=key) if known is None else copy.deepcopy(known)
        fresh.append(trial[key].accept(turn, max_turn_chars=max_turn_chars) is not None)
    return fresh


_TURN_FIELDS = tuple(f.name for f in dataclasses.fields(Turn))


def _with_id(turn: Turn, *, text: str, turn_id: str) -> Turn:
    """``dataclasses.replace(turn, text=text, id=turn_id)`` without validating again.

    ``turn`` passed :class:`Turn`'s checks when it was built; ``text`` is its text
    with agent markers stripped (still UTF-8) and ``turn_id`` its own id or
    ``"<session>:<seq>"`` (its checked session, a colon, digits), so every check
    would pass again: skipping them saves ~20 us per turn. The same turn comes
    back when nothing changes.

    >>> from episeg.types import Turn
    >>> t = Turn(actor="user", text="deploy", ts=1.0, session="s1")
    >>> _with_id(t, text="deploy", turn_id="s1:0") == dataclasses.replace(t, id="s1:0")
    True
    >>> same = Turn(actor="user", text="deploy", ts=1.0, id="x")
    >>> _with_id(same, text=same.text, turn_id="x") is same
    True
    """
    if text is turn.text and turn_id == turn.id:
        return turn
    clean: Turn = object.__new__(Turn)
    for name in _TURN_FIELDS:
        object.__setattr__(clean, name, getattr(turn, name))
    object.__setattr__(clean, "text", text)
    object.__setattr__(clean, "id", turn_id)
    return clean
