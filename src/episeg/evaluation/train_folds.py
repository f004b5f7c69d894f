"""Cross-validation folds that keep recurring content in one fold.

The trainer's folds are drawn per *content group*, not per dialogue: a row of
an agent_tau stream belongs to the task of the trajectory its turn is in (each
stream splices four tasks, and every task recurs, as other trials, in other
streams), and any other row to its dialogue's
:func:`~episeg.evaluation.datasets.content_group` (SuperDialseg holds every
dialogue at least twice). Groups are dealt to folds by a seeded permutation, so
no group's rows are ever scored by a model that trained on another of its rows.

>>> from episeg.evaluation.datasets import Dialogue
>>> from episeg.types import Turn
>>> turns = [Turn(actor="user", text=f"turn {i}", ts=float(i)) for i in range(4)]
>>> stream = Dialogue("s", "agent_tau tune, tasks [3, 8]", turns, [2])
>>> [row_key(stream, t) for t in (1, 2, 3)]
['task 3', 'task 8', 'task 8']
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from episeg.evaluation.datasets import Dialogue, content_group, stream_tasks
from episeg.evaluation.train_rows import Corpus

__all__ = ["corpus_folds", "row_key"]


def row_key(dialogue: Dialogue, turn: int) -> str:
    """The content group of ``dialogue``'s row at ``turn`` (see the module docstring)."""
    tasks = stream_tasks(dialogue)
    if tasks is None:
        return content_group(dialogue)
    return f"task {tasks[bisect.bisect_right(dialogue.boundaries, turn)]}"


def corpus_folds(
    corpora: Sequence[Corpus], folds: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Each corpus's row folds: its content groups, in sorted order, permuted, modulo ``folds``."""
    out = []
    for corpus in corpora:
        rows = corpus.rows
        keys = [row_key(corpus.dialogues[g], t) for g, t in zip(rows.groups, rows.ts, strict=True)]
        groups = sorted(set(keys))
        fold_of = dict(zip(groups, (rng.permutation(len(groups)) % folds).tolist(), strict=True))
        out.append(np.asarray([fold_of[key] for key in keys], dtype=int))
    return out
