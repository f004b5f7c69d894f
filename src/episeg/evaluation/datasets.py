"""Read dialogue topic-segmentation JSONL files and split them for tuning / reporting.

The format and its reader (:class:`Dialogue`, :func:`read_jsonl`) live in
:mod:`episeg.evaluation.dialogues` and are re-exported here.

Splits (deterministic, nothing is shuffled): TIAGE ships one: ``tiage_train`` is
tuned on and ``tiage_dev`` is reported. SuperDialseg validation has no split:
each dialogue's :func:`content_group` (its first turn) is hashed (BLAKE2b) and
even digests go to *tune*, odd ones to *report*, so the copies the file holds
of a dialogue (every one is there at least twice, under two ids) stay in one
part. Tune only on the tune part; report the other. DialSeg711 is a test
set in the literature (:data:`TEST_FILES`): its "report" part is the whole
file and it has no tune part.
``agent_tau`` streams splice 4 trajectories of different tasks, and the same
task recurs (other trials) in other streams, so it is split by *task*
(:func:`agent_task_part`) and each part's trajectories are re-spliced into
streams of 4 (:func:`resplice_agent`): no task is in both parts.

>>> [hash_part(f"d{i}") for i in range(4)]
['report', 'report', 'report', 'tune']
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from episeg.errors import ConfigError
from episeg.evaluation.dialogues import SYNTHETIC_SPEAKERS, TURN_SECONDS, Dialogue, read_jsonl
from episeg.types import Turn

__all__ = [
    "SYNTHETIC_SPEAKERS",
    "TURN_SECONDS",
    "Dialogue",
    "Part",
    "agent_task_part",
    "content_group",
    "default_data_files",
    "default_data_root",
    "hash_part",
    "mean_segment_length",
    "read_jsonl",
    "resplice_agent",
    "select_part",
    "stream_tasks",
    "tuning_dialogues",
]

Part = Literal["all", "tune", "report"]
_FILES = (
    "dialseg711/dialseg711.jsonl",
    "tiage/tiage_train.jsonl",
    "tiage/tiage_dev.jsonl",
    "superdialseg/superdialseg_validation.jsonl",
    "agent_tau/agent_tau_dev.jsonl",
)
TEST_FILES = ("dialseg711",)
"""File stems that are test sets in the literature: never tuned on, scored whole."""
_TASKS = re.compile(r"tasks \[([\d, ]+)\]")


def hash_part(key: str) -> Literal["tune", "report"]:
    """``"tune"`` if the BLAKE2b digest of ``key`` is even, else ``"report"``."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return "tune" if digest[-1] % 2 == 0 else "report"


def content_group(dialogue: Dialogue) -> str:
    """What keeps a dialogue's copies together: its first turn, case and spacing folded.

    SuperDialseg validation holds every dialogue at least twice under two ids
    (dialogue *i* and *i + 661* open with the same turn; some are exact copies),
    so splitting or cross-validating by id puts copies on both sides.

    >>> from episeg.types import Turn
    >>> a = Dialogue("a", "x", [Turn(actor="user", text="How do I  renew?", ts=0.0)], [])
    >>> b = Dialogue("b", "x", [Turn(actor="user", text="how do i renew?", ts=0.0)], [])
    >>> content_group(a) == content_group(b)
    True
    """
    if not dialogue.turns:
        return f"id {dialogue.id}"
    return "first turn " + " ".join(dialogue.turns[0].text.lower().split())


def select_part(path: str | Path, dialogues: Sequence[Dialogue], part: Part) -> list[Dialogue]:
    """The ``part`` of a file's dialogues: TIAGE files by file name, agent_tau by task,
    test files whole, others by :func:`hash_part` of their :func:`content_group`.

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
    return [d for d in dialogues if hash_part(content_group(d)) == part]


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
        tasks = stream_tasks(d)
        if tasks is None:
            raise ConfigError(f"{d.id}: source {d.source!r} does not name its tasks")
        cuts = [0, *d.boundaries, len(d)]
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


def stream_tasks(dialogue: Dialogue) -> list[int] | None:
    """The tasks an agent_tau stream splices, in order (its ``source`` names them), else None.

    A :class:`~episeg.errors.ConfigError` if it names another number of tasks than
    its gold boundaries make segments.

    >>> stream_tasks(Dialogue("s", "agent_tau tune, tasks [3, 8]", [], [1]))
    [3, 8]
    """
    found = _TASKS.search(dialogue.source)
    if found is None:
        return None
    tasks = [int(x) for x in found.group(1).split(",")]
    if len(tasks) != len(dialogue.boundaries) + 1:
        segments = len(dialogue.boundaries) + 1
        raise ConfigError(f"{dialogue.id}: {len(tasks)} tasks but {segments} segments")
    return tasks


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
    """The five evaluation files under ``root`` (default :func:`default_data_root`)."""
    root = root or default_data_root()
    if root is None:
        raise ConfigError("no data root found; pass --data or --data-root")
    return [root / f for f in _FILES if (root / f).is_file()]
