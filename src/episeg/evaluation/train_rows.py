"""Training rows for the learned boundary model: features per turn, teacher-forced.

:func:`teacher_forced` runs the features of
:func:`~episeg.segmentation.features.boundary_features` turn by turn against the
*gold* open episode and keeps a row for every turn a hint may cut (user and
system turns where roles are real, every turn where they are not);
:func:`stream_boundaries` is the same loop deciding for itself (the model's own
episodes); :func:`embed_file` embeds a file's turns once, optionally cached.
Used by :mod:`episeg.evaluation.train_segmenter`.

>>> rows = TrainingRows(names=("a",))
>>> rows.add(np.array([1.0]), *(np.zeros(2),) * 3, label=True, eligible=True, group=0, t=1)
>>> rows.matrix().shape, rows.y.tolist(), subset(rows, np.array([False])).labels
((1, 1), [1], [])
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from episeg.evaluation.datasets import Dialogue
from episeg.segmentation.features import (
    EpisodeContext,
    TurnView,
    boundary_features,
    feature_names,
)
from episeg.typing import Embedder

__all__ = [
    "HINT_ACTORS",
    "Corpus",
    "Decide",
    "TrainingRows",
    "embed_file",
    "role_masked",
    "stream_boundaries",
    "subset",
    "teacher_forced",
    "turn_views",
]

log = logging.getLogger("episeg.evaluation.train_segmenter")
HINT_ACTORS = ("user", "system")


def turn_views(dialogue: Dialogue, vectors: np.ndarray) -> list[TurnView]:
    """Feature views of a dialogue's turns; roles and types dropped where they are synthetic."""
    known = dialogue.roles_known
    return [
        TurnView.make(
            v,
            t.actor.value if known else "user",
            t.type.value if known and t.type is not None else None,
            t.text,
        )
        for t, v in zip(dialogue.turns, vectors, strict=True)
    ]


Decide = Callable[[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray], bool]


def stream_boundaries(
    views: Sequence[TurnView], *, lookahead: int, roles_known: bool, decide: Decide
) -> list[int]:
    """Run features turn by turn; ``decide(t, x, e, a, b)`` says whether turn ``t`` opens."""
    if not views:
        return []
    context = EpisodeContext()
    context.commit(views[0])
    bounds: list[int] = []
    for t in range(1, len(views)):
        x, e, a, b = boundary_features(
            context, views[t : t + lookahead + 1], lookahead=lookahead, roles_known=roles_known
        )
        if decide(t, x, e, a, b):
            bounds.append(t)
            context = EpisodeContext()
        context.commit(views[t])
    return bounds


@dataclass
class TrainingRows:
    """Feature rows of one corpus, with labels, eligibility, dialogue (group) and turn."""

    names: tuple[str, ...]
    x: list[np.ndarray] = field(default_factory=list)
    e: list[np.ndarray] = field(default_factory=list)
    a: list[np.ndarray] = field(default_factory=list)
    b: list[np.ndarray] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    eligible: list[bool] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    ts: list[int] = field(default_factory=list)

    def add(
        self,
        x: np.ndarray,
        e: np.ndarray,
        a: np.ndarray,
        b: np.ndarray,
        *,
        label: bool,
        eligible: bool,
        group: int,
        t: int,
    ) -> None:
        self.x.append(x)
        self.e.append(e)
        self.a.append(a)
        self.b.append(b)
        self.labels.append(int(label))
        self.eligible.append(eligible)
        self.groups.append(group)
        self.ts.append(t)

    def matrix(self) -> np.ndarray:
        return np.asarray(self.x)

    @property
    def y(self) -> np.ndarray:
        return np.asarray(self.labels)

    def terms(self) -> dict[str, np.ndarray]:
        e, a, b = np.asarray(self.e), np.asarray(self.a), np.asarray(self.b)
        return {"turn": e, "shift": a - b, "agree": a * b}


@dataclass
class Corpus:
    """A train part: its dialogues and their teacher-forced rows."""

    name: str
    dialogues: list[Dialogue]
    rows: TrainingRows


def teacher_forced(
    name: str, dialogues: list[Dialogue], vectors: list[np.ndarray], lookahead: int
) -> Corpus:
    rows = TrainingRows(names=feature_names(lookahead))
    for g, (d, vecs) in enumerate(zip(dialogues, vectors, strict=True)):
        gold = set(d.boundaries)
        views = turn_views(d, vecs)

        def decide(
            t: int,
            x: np.ndarray,
            e: np.ndarray,
            a: np.ndarray,
            b: np.ndarray,
            *,
            _d: Dialogue = d,
            _g: int = g,
            _gold: set[int] = gold,
        ) -> bool:
            if not _d.roles_known or _d.turns[t].actor.value in HINT_ACTORS:
                rows.add(x, e, a, b, label=t in _gold, eligible=True, group=_g, t=t)
            return t in _gold

        stream_boundaries(views, lookahead=lookahead, roles_known=d.roles_known, decide=decide)
    return Corpus(name, dialogues, rows)


def embed_file(
    path: Path,
    dialogues: list[Dialogue],
    embedder: Embedder,
    cache_dir: Path | None,
    max_chars: int,
) -> list[np.ndarray]:
    texts = [t.text[:max_chars] for d in dialogues for t in d.turns]
    key = hashlib.sha256("\x1e".join([embedder.name, *texts]).encode()).hexdigest()[:20]
    cached = cache_dir / f"{path.stem}-{key}.npy" if cache_dir else None
    if cached is not None and cached.is_file():
        matrix = np.load(cached)
    else:
        log.info("embedding %d turns of %s", len(texts), path.name)
        matrix = np.asarray(embedder.embed(texts), dtype=np.float32)
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            np.save(cached, matrix)
    out, pos = [], 0
    for d in dialogues:
        out.append(matrix[pos : pos + len(d)])
        pos += len(d)
    return out


def subset(rows: TrainingRows, keep: np.ndarray) -> TrainingRows:
    idx = np.flatnonzero(keep)
    out = TrainingRows(names=rows.names)
    for i in idx:
        out.add(
            rows.x[i],
            rows.e[i],
            rows.a[i],
            rows.b[i],
            label=bool(rows.labels[i]),
            eligible=rows.eligible[i],
            group=rows.groups[i],
            t=rows.ts[i],
        )
    return out


def role_masked(corpus: Corpus, vectors: list[np.ndarray], lookahead: int) -> Corpus:
    """``corpus`` as roles-unknown rows (every turn, role features zero), as TIAGE is built.

    A corpus without real roles whose rows already read ``lookahead`` later turns
    is reused as it is.
    """
    same = corpus.rows.names == feature_names(lookahead)
    if same and not any(d.roles_known for d in corpus.dialogues):
        return corpus
    dropped = [replace(d, roles_known=False) for d in corpus.dialogues]
    return teacher_forced(corpus.name, dropped, vectors, lookahead)
