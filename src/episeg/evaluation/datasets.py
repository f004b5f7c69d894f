"""Read dialogue topic-segmentation JSONL files and split them for tuning / reporting.

One dialogue per line::

    {"id": str, "source": str, "turns": [{"speaker": str, "text": str}, ...],
     "boundaries": [i, ...]}   # i = index of a turn that starts a new segment

Speakers ``user`` / ``agent`` map to :attr:`Actor.USER` / :attr:`Actor.ASSISTANT`
(``assistant``, ``tool`` and ``system`` are accepted as themselves). The source
files carry no times, so turn ``i`` gets the synthetic timestamp
``i * TURN_SECONDS`` (30 s apart; far below the window signal's time floor, so
time never decides a boundary here). Each dialogue is its own session.

Splits (deterministic, nothing is shuffled): TIAGE ships one: ``tiage_train`` is
tuned on and ``tiage_dev`` is reported. SuperDialseg validation and DialSeg711
have no split: dialogue ``id`` is hashed (BLAKE2b) and even digests go to
*tune*, odd ones to *report*. Tune only on the tune part; report the other.

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

import hashlib
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from episeg.errors import ConfigError, TurnValidationError
from episeg.types import Actor, Turn

__all__ = [
    "TURN_SECONDS",
    "Dialogue",
    "Part",
    "default_data_files",
    "default_data_root",
    "hash_part",
    "mean_segment_length",
    "read_jsonl",
    "select_part",
    "tuning_dialogues",
]

TURN_SECONDS = 30.0
Part = Literal["all", "tune", "report"]
_SPEAKERS = {
    "user": Actor.USER,
    "agent": Actor.ASSISTANT,
    "assistant": Actor.ASSISTANT,
    "tool": Actor.TOOL,
    "system": Actor.SYSTEM,
}
_FILES = (
    "dialseg711/dialseg711.jsonl",
    "tiage/tiage_train.jsonl",
    "tiage/tiage_dev.jsonl",
    "superdialseg/superdialseg_validation.jsonl",
)


@dataclass(frozen=True, slots=True)
class Dialogue:
    """One gold-segmented dialogue (``boundaries`` sorted, unique, in ``1..len(turns)-1``)."""

    id: str
    source: str
    turns: list[Turn]
    boundaries: list[int]

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
        turns.append(
            Turn(
                actor=_SPEAKERS[speaker],
                text=t["text"],
                ts=i * TURN_SECONDS,
                id=f"{did}:{i}",
                session=did,
            )
        )
    if not isinstance(bounds, list) or not all(
        isinstance(b, int) and not isinstance(b, bool) for b in bounds
    ):
        raise fail(f"dialogue {did}: boundaries must be a list of integers")
    for b in bounds:
        if not 0 < b < len(turns):
            raise fail(f"dialogue {did}: boundary {b} out of range 1..{len(turns) - 1}")
    if any(b <= a for a, b in itertools.pairwise(bounds)):
        raise fail(f"dialogue {did}: boundaries must be sorted and unique, got {bounds}")
    return Dialogue(id=did, source=str(row["source"]), turns=turns, boundaries=list(bounds))


def read_jsonl(path: str | Path, *, limit: int | None = None) -> list[Dialogue]:
    """Read and validate a JSONL file; errors are :class:`TurnValidationError` naming the line."""
    out: list[Dialogue] = []
    seen: set[str] = set()
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
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


def hash_part(dialogue_id: str) -> Literal["tune", "report"]:
    """``"tune"`` if the BLAKE2b digest of the id is even, else ``"report"``."""
    digest = hashlib.blake2b(dialogue_id.encode("utf-8"), digest_size=8).digest()
    return "tune" if digest[-1] % 2 == 0 else "report"


def select_part(path: str | Path, dialogues: Sequence[Dialogue], part: Part) -> list[Dialogue]:
    """The ``part`` of a file's dialogues: TIAGE files by file name, others by :func:`hash_part`.

    >>> select_part("x/tiage_dev.jsonl", [], "tune")
    []
    """
    if part not in ("all", "tune", "report"):
        raise ConfigError(f"unknown part {part!r}; valid: all, tune, report")
    if part == "all":
        return list(dialogues)
    stem = Path(path).stem
    if stem.startswith("tiage_"):
        whole = "tune" if stem == "tiage_train" else "report"
        return list(dialogues) if whole == part else []
    return [d for d in dialogues if hash_part(d.id) == part]


def tuning_dialogues(path: str | Path, *, limit: int | None = None) -> list[Dialogue]:
    """The tuning dialogues that belong with ``path`` (``tiage_train`` for TIAGE files)."""
    path = Path(path)
    if path.stem.startswith("tiage_"):
        return read_jsonl(path.with_name("tiage_train.jsonl"), limit=limit)
    return select_part(path, read_jsonl(path), "tune")[:limit]


def mean_segment_length(dialogues: Sequence[Dialogue]) -> float:
    """Total turns over total gold segments."""
    if not dialogues:
        raise ConfigError("mean_segment_length needs at least one dialogue")
    return sum(len(d) for d in dialogues) / sum(len(d.boundaries) + 1 for d in dialogues)


def default_data_root() -> Path | None:
    """``../shared/data/segmentation`` next to the repository root (or the cwd), if present."""
    cwd = Path.cwd().resolve()
    repos = [p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file()]
    for base in (*repos, cwd):
        candidate = base.parent / "shared" / "data" / "segmentation"
        if candidate.is_dir():
            return candidate
    return None


def default_data_files(root: Path | None = None) -> list[Path]:
    """The four evaluation files under ``root`` (default :func:`default_data_root`)."""
    root = root or default_data_root()
    if root is None:
        raise ConfigError("no data root found; pass --data or --data-root")
    return [root / f for f in _FILES if (root / f).is_file()]
