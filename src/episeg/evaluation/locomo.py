"""Read LoCoMo conversations (``../shared/data/memory/locomo``) for the memory evaluation.

LoCoMo (Maharana et al., ACL 2024) is CC BY-NC 4.0: it is read from the shared
folder at run time and never copied into this repository.

Each sample becomes a :class:`Conversation`: its turns in order (session by
session) with real times, and its questions of categories 1-4 (category 5 is
adversarial and left out) with normalised evidence ids.

* Times: ``session_N_date_time`` (e.g. ``1:56 pm on 8 May, 2023``) read as UTC;
  turn ``i`` of a session gets that time + ``i * turn_gap`` seconds (30 s).
* Turn text: ``"<speaker>: <text>"`` plus ``" [shares a photo: <caption>]"``
  when the turn shares an image (the BLIP caption is all a text memory sees).
* Evidence ids: split on ``;``/``,``/spaces (``"D8:6; D9:17"``), ``D:11:26``
  read as ``D11:26``, leading zeros dropped (``D30:05`` -> ``D30:5``); an id
  that still does not parse, or names no turn of its conversation, is
  dropped. :class:`EvidenceDefects` counts what was done; a question left
  with no evidence is skipped (and counted).

>>> parse_session_time("1:56 pm on 8 May, 2023")
1683554160.0
>>> normalise_evidence("D:11:26"), normalise_evidence("D30:05"), normalise_evidence("D")
('D11:26', 'D30:5', None)
"""

from __future__ import annotations

import collections
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from episeg.errors import TurnValidationError

__all__ = [
    "CATEGORY_NAMES",
    "Conversation",
    "EvidenceDefects",
    "LocomoTurn",
    "Question",
    "default_locomo_file",
    "load_locomo",
    "normalise_evidence",
    "parse_session_time",
]

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADVERSARIAL = 5
"""LoCoMo's unanswerable category: left out of recall metrics (the data README)."""
_SESSION = re.compile(r"session_(\d+)")
_ID = re.compile(r"D(\d+):(\d+)")


@dataclass(frozen=True, slots=True)
class LocomoTurn:
    id: str
    session: int
    ts: float
    speaker: str
    text: str
    actor: str


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    speakers: tuple[str, str]
    turns: tuple[LocomoTurn, ...]
    questions: tuple[Question, ...]

    @property
    def end(self) -> float:
        """Time of the last turn."""
        return self.turns[-1].ts


@dataclass
class EvidenceDefects:
    """What reading the evidence ids did (summed over the conversations read)."""

    ids: int = 0
    normalised: int = 0
    dropped_malformed: int = 0
    dropped_outside: int = 0
    questions_without_evidence: int = 0
    examples: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ids": self.ids,
            "normalised": self.normalised,
            "dropped_malformed": self.dropped_malformed,
            "dropped_outside_conversation": self.dropped_outside,
            "questions_without_evidence": self.questions_without_evidence,
            "examples": self.examples[:10],
        }


def default_locomo_file(root: Path | None = None) -> Path:
    """``locomo_dev.json`` under ``root`` (default ``../shared/data/memory/locomo``
    next to the repository, found from the working directory or this package)."""
    if root is None:
        candidates = [Path.cwd() / "../shared/data/memory/locomo"]
        candidates += [p / "shared/data/memory/locomo" for p in Path(__file__).resolve().parents]
        root = next((c for c in candidates if c.is_dir()), candidates[0])
    return root / "locomo_dev.json" if root.is_dir() else root


def parse_session_time(text: str) -> float:
    """``"1:56 pm on 8 May, 2023"`` as seconds since the epoch (UTC)."""
    when = datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y")
    return when.replace(tzinfo=UTC).timestamp()


def normalise_evidence(raw: str) -> str | None:
    """One evidence id in the form ``D<session>:<turn>``, or ``None`` if unreadable."""
    match = _ID.fullmatch(raw.strip().replace("D:", "D", 1))
    if match is None:
        return None
    return f"D{int(match.group(1))}:{int(match.group(2))}"


def load_locomo(
    path: Path, *, turn_gap: float = 30.0
) -> tuple[list[Conversation], EvidenceDefects]:
    """Read a LoCoMo JSON file (see the module docstring).

    Raises
    ------
    TurnValidationError
        If the file is not UTF-8 JSON holding a list of samples, or a sample
        lacks a field or holds one of the wrong kind (the message names it).
    """
    try:
        samples = json.loads(Path(path).read_bytes().decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise TurnValidationError(f"{path}: not a UTF-8 JSON file: {exc}") from None
    if not isinstance(samples, list):
        raise TurnValidationError(f"{path}: a LoCoMo file holds a JSON list of samples")
    defects = EvidenceDefects()
    out = []
    for number, sample in enumerate(samples):
        try:
            out.append(_conversation(sample, defects, turn_gap))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = repr(exc) if isinstance(exc, KeyError) else str(exc)
            raise TurnValidationError(
                f"{path}: sample {number}: missing or malformed field ({type(exc).__name__}: "
                f"{what})"
            ) from None
    return out, defects


def _conversation(sample: Any, defects: EvidenceDefects, turn_gap: float) -> Conversation:
    """One LoCoMo sample as a conversation and its answerable questions."""
    conv = sample["conversation"]
    a, b = conv["speaker_a"], conv["speaker_b"]
    turns: list[LocomoTurn] = []
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)))
    if numbers != list(range(1, len(numbers) + 1)):
        raise ValueError(f"sessions must be numbered 1..n without a gap, got {numbers}")
    n = 1
    while f"session_{n}" in conv:
        start = parse_session_time(conv[f"session_{n}_date_time"])
        for i, t in enumerate(conv[f"session_{n}"]):
            if t["speaker"] not in (a, b):
                raise ValueError(
                    f"turn {t['dia_id']!r}: speaker {t['speaker']!r} is neither {a!r} nor {b!r}"
                )
            text = str(t["text"])
            if t.get("blip_caption"):
                text = f"{text} [shares a photo: {t['blip_caption']}]"
            turns.append(
                LocomoTurn(
                    id=str(t["dia_id"]),
                    session=n,
                    ts=start + turn_gap * i,
                    speaker=str(t["speaker"]),
                    text=f"{t['speaker']}: {text}",
                    actor="user" if t["speaker"] == a else "assistant",
                )
            )
        n += 1
    known = {t.id for t in turns}
    if len(known) < len(turns):
        counts = collections.Counter(t.id for t in turns)
        twice = sorted(i for i, c in counts.items() if c > 1)
        raise ValueError(f"dia_id used by more than one turn: {twice[:5]}")
    questions = []
    for qa in sample["qa"]:
        category = int(qa["category"])
        if category not in (*CATEGORY_NAMES, ADVERSARIAL):
            raise ValueError(f"question {qa.get('question')!r}: unknown category {category!r}")
        if category == ADVERSARIAL:
            continue
        evidence: list[str] = []
        raw_evidence = qa.get("evidence", [])
        if not isinstance(raw_evidence, list):
            raise ValueError(f"question {qa['question']!r}: evidence must be a list of ids")
        for raw in raw_evidence:
            for part in (x for x in re.split(r"[;,\s]+", str(raw)) if x):
                defects.ids += 1
                norm = normalise_evidence(part)
                if norm is None:
                    defects.dropped_malformed += 1
                    defects.examples.append(f"{sample['sample_id']}: {raw!r} unreadable")
                    continue
                if norm != part:
                    defects.normalised += 1
                if norm not in known:
                    defects.dropped_outside += 1
                    defects.examples.append(f"{sample['sample_id']}: {raw!r} names no turn")
                    continue
                if norm not in evidence:
                    evidence.append(norm)
        if not evidence:
            defects.questions_without_evidence += 1
            continue
        questions.append(Question(str(qa["question"]), int(qa["category"]), tuple(evidence)))
    return Conversation(str(sample["sample_id"]), (a, b), tuple(turns), tuple(questions))
