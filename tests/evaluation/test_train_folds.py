"""The trainer's CV folds keep recurring content in one fold (RESULTS, "Splits and folds").

Folds were drawn per dialogue (stream): every agent_tau task recurs, as other
trials, in other streams, and SuperDialseg holds every dialogue twice, so a
fold's validation rows had copies in its training rows.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

from episeg.errors import ConfigError
from episeg.evaluation.datasets import Dialogue
from episeg.evaluation.train_folds import corpus_folds, row_key
from episeg.evaluation.train_rows import Corpus, teacher_forced
from episeg.testing import HashingEmbedder
from episeg.types import Turn


def _dialogue(name: str, source: str, texts: list[str], bounds: list[int]) -> Dialogue:
    turns = [
        Turn(actor="user" if i % 2 == 0 else "assistant", text=t, ts=float(i))
        for i, t in enumerate(texts)
    ]
    return Dialogue(name, source, turns, bounds)


def _corpus(name: str, dialogues: list[Dialogue]) -> Corpus:
    embedder = HashingEmbedder(dim=32)
    vectors = [embedder.embed([t.text for t in d.turns]) for d in dialogues]
    return teacher_forced(name, dialogues, vectors, lookahead=0)


def test_every_task_and_every_copy_sits_in_one_fold() -> None:
    streams = []
    for n in range(12):  # 12 streams of 3 tasks each: every task recurs in 4 streams
        tasks = [(n + k * 4) % 9 for k in range(3)]
        texts = [f"task {t} step {i} with words {t}" for t in tasks for i in range(4)]
        streams.append(_dialogue(f"s{n}", f"agent_tau tune, tasks {tasks}", texts, [4, 8]))
    chats = []
    for n in range(10):  # every dialogue twice, under two ids, the second one turn longer
        texts = [f"opening question {n}", f"answer {n}", f"follow up {n}", f"reply {n}"]
        chats += [
            _dialogue(f"c{n}", "x", texts, [2]),
            _dialogue(f"c{n}b", "x", [*texts, "ok"], [2]),
        ]
    corpora = [_corpus("agent_tau", streams), _corpus("superdialseg", chats)]
    agent, chat = corpus_folds(corpora, 5, np.random.default_rng(0))

    by_task = collections.defaultdict(set)
    for fold, g, t in zip(agent, corpora[0].rows.groups, corpora[0].rows.ts, strict=True):
        by_task[row_key(streams[g], t)].add(int(fold))
    assert len(by_task) == 9 and all(len(folds) == 1 for folds in by_task.values())
    assert len({next(iter(f)) for f in by_task.values()}) == 5  # the tasks spread over the folds

    by_copy = collections.defaultdict(set)
    for fold, g in zip(chat, corpora[1].rows.groups, strict=True):
        by_copy[chats[g].id.rstrip("b")].add(int(fold))
    assert len(by_copy) == 10 and all(len(folds) == 1 for folds in by_copy.values())


def test_a_stream_naming_other_tasks_than_its_segments_is_refused() -> None:
    stream = _dialogue("s", "agent_tau tune, tasks [1, 2, 3]", ["a", "b", "c"], [1])
    with pytest.raises(ConfigError, match="3 tasks but 2 segments"):
        row_key(stream, 0)
