"""Read dialogue topic-segmentation JSONL files and split them for tuning / reporting.

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

Splits (deterministic, nothing is shuffled): TIAGE ships one: ``tiage_train`` is
tuned on and ``tiage_dev`` is reported. SuperDialseg validation has no split:
dialogue ``id`` is hashed (BLAKE2b) and even digests go to *tune*, odd ones to
*report*. Tune only on the tune part; report the other. DialSeg711 is a test
set in the literature (:data:`TEST_FILES`): its "report" part is the whole
file and it has no tune part.
``agent_tau`` streams splice 4 trajectories of different tasks, and the same
task recurs (other trials) in other streams, so it is split by *task*
(:func:`agent_task_part`) and each part's trajectories are re-spliced into
streams of 4 (:func:`resplice_agent`): no task is in both parts.

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

import dataclasses
import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from episeg.errors import ConfigError, TurnValidationError
from episeg.types import Actor, Turn

__all__ = [
    "SYNTHETIC_SPEAKERS",
    "TURN_SECONDS",
    "Dialogue",
    "Part",
    "agent_task_part",
    "default_data_files",
    "default_data_root",
    "hash_part",
    "mean_segment_length",
    "read_jsonl",
    "resplice_agent",
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
    "agent_tau/agent_tau_dev.jsonl",
)
TEST_FILES = ("dialseg711",)
"""File stems that are test sets in the literature: never tuned on, scored whole."""
SYNTHETIC_SPEAKERS = ("tiage", "dialseg711")
"""``source`` prefixes whose speaker labels are synthetic (alternating from turn 0)."""
_TASKS = re.compile(r"tasks \[([\d, ]+)\]")


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
    source = str(row["source"])
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
    if stem.startswith("agent_tau"):
        return resplice_agent(dialogues, part)
    if stem.startswith(TEST_FILES):
        return list(dialogues) if part == "report" else []
    return [d for d in dialogues if hash_part(d.id) == part]


def agent_task_part(task: int) -> Literal["tune", "report"]:
    """The part of an agent_tau task: :func:`hash_part` of ``"agent_tau task <n>"``."""
    return hash_part(f"agent_tau task {task}")


def resplice_agent(
    dialogues: Sequence[Dialogue], part: Literal["tune", "report"], *, per_stream: int = 4
) -> list[Dialogue]:
    """Cut agent_tau streams into trajectories and re-splice one task part's into streams.

    A stream's ``source`` names its tasks in order (``"... tasks [0, 7, 14, 21]"``)
    and its gold boundaries separate them. Trajectories of tasks in ``part``
    are ordered by (trial, task) (trial = how often the task was seen before in
    file order) and spliced ``per_stream`` at a time, the same construction the
    file uses; ids ``agent_<part>_<nnn>``.
    """
    pieces: list[tuple[int, int, list[Turn]]] = []
    trials: dict[int, int] = {}
    for d in dialogues:
        found = _TASKS.search(d.source)
        if found is None:
            raise ConfigError(f"{d.id}: source {d.source!r} does not name its tasks")
        tasks = [int(x) for x in found.group(1).split(",")]
        cuts = [0, *d.boundaries, len(d)]
        if len(tasks) != len(cuts) - 1:
            raise ConfigError(f"{d.id}: {len(tasks)} tasks but {len(cuts) - 1} segments")
        for task, (a, b) in zip(tasks, itertools.pairwise(cuts), strict=True):
            trial = trials.get(task, 0)
            trials[task] = trial + 1
            if agent_task_part(task) == part:
                pieces.append((trial, task, d.turns[a:b]))
    pieces.sort(key=lambda p: (p[0], p[1]))
    out: list[Dialogue] = []
    for n in range(0, len(pieces), per_stream):
        chunk = pieces[n : n + per_stream]
        sid = f"agent_{part}_{n // per_stream:03d}"
        turns: list[Turn] = []
        bounds: list[int] = []
        for _, _, piece in chunk:
            if turns:
                bounds.append(len(turns))
            turns.extend(piece)
        turns = [
            dataclasses.replace(t, id=f"{sid}:{i}", session=sid, ts=i * TURN_SECONDS)
            for i, t in enumerate(turns)
        ]
        tasks_text = ", ".join(str(p[1]) for p in chunk)
        out.append(Dialogue(sid, f"agent_tau {part}, tasks [{tasks_text}]", turns, bounds))
    return out


def tuning_dialogues(path: str | Path, *, limit: int | None = None) -> list[Dialogue]:
    """The tuning dialogues that belong with ``path`` (``tiage_train`` for TIAGE files).

    A test file (:data:`TEST_FILES`, DialSeg711) has no tuning part of its own:
    its baselines tune on the dialogue train parts beside it (``tiage_train``
    and the SuperDialseg hash-tune half), never on itself.
    """
    path = Path(path)
    if path.stem.startswith("tiage_"):
        return read_jsonl(path.with_name("tiage_train.jsonl"), limit=limit)
    if path.stem.startswith(TEST_FILES):
        root = path.resolve().parent.parent
        sds = root / "superdialseg" / "superdialseg_validation.jsonl"
        found = [f for f in (root / "tiage" / "tiage_train.jsonl", sds) if f.is_file()]
        if not found:
            raise ConfigError(f"{path.name} is a test file; no train file found under {root}")
        return [d for f in found for d in select_part(f, read_jsonl(f), "tune")][:limit]
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
