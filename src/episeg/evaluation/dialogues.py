"""Read and validate dialogue topic-segmentation JSONL files (:func:`read_jsonl`).

One dialogue per line::

    {"id": str, "source": str, "turns": [{"speaker": str, "text": str}, ...],
     "boundaries": [i, ...]}   # i = index of a turn that starts a new segment

Speakers ``user`` / ``agent`` map to :attr:`Actor.USER` / :attr:`Actor.ASSISTANT`
(``assistant``, ``tool`` and ``system`` are accepted as themselves). The source
files carry no times, so turn ``i`` gets the synthetic timestamp
``i * TURN_SECONDS`` (30 s apart; far below the window signal's time floor, so
time never decides a boundary here). Each dialogue is its own session.

A turn's optional ``type`` (agent transcripts: ``tool-call``, ``tool-error``, ...)
becomes :attr:`Turn.type`. Speaker labels are real only where the source has
them: TIAGE and DialSeg711 alternate ``user``/``agent`` synthetically, so their
dialogues get ``roles_known=False`` (:data:`SYNTHETIC_SPEAKERS`, by ``source``)
and a segmenter must not read roles there.

>>> import json, tempfile, pathlib
>>> row = {"id": "d1", "source": "demo", "boundaries": [2],
...        "turns": [{"speaker": s, "text": t} for s, t in
...                  [("user", "hi"), ("agent", "hello"), ("user", "new topic")]]}
>>> path = pathlib.Path(tempfile.mkdtemp()) / "demo.jsonl"
>>> _ = path.write_text(json.dumps(row) + "\\n")
>>> d = read_jsonl(path)[0]
>>> d.id, [t.actor.value for t in d.turns], [t.ts for t in d.turns], d.boundaries
('d1', ['user', 'assistant', 'user'], [0.0, 30.0, 60.0], [2])
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from episeg.errors import TurnValidationError
from episeg.types import Actor, Turn

__all__ = ["SYNTHETIC_SPEAKERS", "TURN_SECONDS", "Dialogue", "read_jsonl"]

TURN_SECONDS = 30.0
_SPEAKERS = {
    "user": Actor.USER,
    "agent": Actor.ASSISTANT,
    "assistant": Actor.ASSISTANT,
    "tool": Actor.TOOL,
    "system": Actor.SYSTEM,
}
SYNTHETIC_SPEAKERS = ("tiage", "dialseg711")
"""``source`` prefixes whose speaker labels are synthetic (alternating from turn 0)."""


@dataclass(frozen=True, slots=True)
class Dialogue:
    """One gold-segmented dialogue (``boundaries`` sorted, unique, in ``1..len(turns)-1``)."""

    id: str
    source: str
    turns: list[Turn]
    boundaries: list[int]
    roles_known: bool = True

    def __len__(self) -> int:
        return len(self.turns)


def _parse(line: str, lineno: int) -> Dialogue:
    def fail(msg: str) -> TurnValidationError:
        return TurnValidationError(msg, line=lineno)

    try:
        row: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise fail(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(row, dict):
        raise fail(f"expected a JSON object, got {type(row).__name__}")
    missing = [k for k in ("id", "source", "turns", "boundaries") if k not in row]
    if missing:
        raise fail(f"missing field(s) {missing}")
    did, turns_raw, bounds = row["id"], row["turns"], row["boundaries"]
    if not isinstance(did, str) or not did:
        raise fail(f"id must be a non-empty string, got {did!r}")
    if not isinstance(turns_raw, list) or not turns_raw:
        raise fail(f"dialogue {did}: turns must be a non-empty list")
    turns: list[Turn] = []
    for i, t in enumerate(turns_raw):
        if not isinstance(t, dict) or not isinstance(t.get("text"), str):
            raise fail(f"dialogue {did}: turn {i} must be an object with a string 'text'")
        speaker = str(t.get("speaker", "")).strip().lower()
        if speaker not in _SPEAKERS:
            raise fail(
                f"dialogue {did}: turn {i} has unknown speaker {t.get('speaker')!r}; "
                f"valid: {', '.join(_SPEAKERS)}"
            )
        kind = t.get("type")
        if kind is not None and not isinstance(kind, str):
            raise fail(f"dialogue {did}: turn {i} type must be a string or null")
        try:
            turns.append(
                Turn(
                    actor=_SPEAKERS[speaker],
                    text=t["text"],
                    ts=i * TURN_SECONDS,
                    id=f"{did}:{i}",
                    session=did,
                    type=kind,
                )
            )
        except ValueError as exc:
            raise fail(f"dialogue {did}: turn {i}: {exc}") from None
    if not isinstance(bounds, list) or not all(
        isinstance(b, int) and not isinstance(b, bool) for b in bounds
    ):
        raise fail(f"dialogue {did}: boundaries must be a list of integers")
    for b in bounds:
        if not 0 < b < len(turns):
            raise fail(f"dialogue {did}: boundary {b} out of range 1..{len(turns) - 1}")
    if any(b <= a for a, b in itertools.pairwise(bounds)):
        raise fail(f"dialogue {did}: boundaries must be sorted and unique, got {bounds}")
    source = row["source"]
    if not isinstance(source, str):  # it says whether the speaker labels are real
        raise fail(f"dialogue {did}: source must be a string, got {source!r}")
    return Dialogue(
        id=did,
        source=source,
        turns=turns,
        boundaries=list(bounds),
        roles_known=not source.lower().startswith(SYNTHETIC_SPEAKERS),
    )


def read_jsonl(path: str | Path, *, limit: int | None = None) -> list[Dialogue]:
    """Read and validate a JSONL file; errors are :class:`TurnValidationError` naming the line."""
    out: list[Dialogue] = []
    seen: set[str] = set()
    with Path(path).open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise TurnValidationError(f"not UTF-8 text: {exc}", line=lineno) from None
            if not line.strip():
                continue
            dialogue = _parse(line, lineno)
            if dialogue.id in seen:
                raise TurnValidationError(f"duplicate dialogue id {dialogue.id!r}", line=lineno)
            seen.add(dialogue.id)
            out.append(dialogue)
            if limit is not None and len(out) >= limit:
                break
    return out
