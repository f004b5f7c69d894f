"""Review 4, R4-S9: a bare ``Segmenter`` refuses bad arguments with a typed error naming them.

It used to answer with ``AttributeError`` (a non-``Turn``), ``KeyError``
(``checkpoint`` of an unknown session), nothing (``flush(user=5)`` returned
``[]``) or a split string (``signals="window"`` became five unknown letters).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from episeg.errors import ArgumentError, ConfigError, TurnValidationError
from episeg.segmentation.segmenter import Segmenter
from episeg.testing import HashingEmbedder
from episeg.types import Turn


def _seg() -> Segmenter:
    seg = Segmenter(embedder=HashingEmbedder())
    seg.observe(Turn(actor="user", text="deploy prod", ts=0.0))
    return seg


def _turn(i: int = 1) -> Turn:
    return Turn(actor="user", text="and the jwt key", ts=float(i))


NOT_TURNS: list[tuple[str, Callable[[Any], Any], str]] = [
    (
        "observe(None)",
        lambda s: s.observe(None),
        "observe takes an episeg.types.Turn, got NoneType",
    ),
    (
        "observe(dict)",
        lambda s: s.observe({"actor": "user", "text": "hi", "ts": 1.0}),
        "observe takes an episeg.types.Turn, got dict",
    ),
    (
        "segment(str)",
        lambda s: s.segment("deploy prod"),
        "segment takes an iterable of episeg.types.Turn, got str",
    ),
    ("segment([None])", lambda s: s.segment([None]), "segment: turn 0 must be .*got NoneType"),
    (
        "segment([turn, 5])",
        lambda s: s.segment([_turn(), 5]),
        "segment: turn 1 must be an episeg.types.Turn, got int",
    ),
    ("segment(5)", lambda s: s.segment(5), "segment takes an iterable .*got int"),
    ("preview([None])", lambda s: s.preview([None]), "preview: turn 0 must be"),
    (
        "resume(turn not a Turn)",
        lambda s: s.resume(s.checkpoint("default", "default"), [("text", np.zeros(8))]),
        "resume: turn 0 must be an episeg.types.Turn, got str",
    ),
]


@pytest.mark.parametrize(
    ("call", "expected"), [(c, e) for _, c, e in NOT_TURNS], ids=[n for n, _, _ in NOT_TURNS]
)
def test_a_non_turn_is_a_turn_validation_error(call: Callable[[Any], Any], expected: str) -> None:
    seg = _seg()
    with pytest.raises(TurnValidationError, match=expected):
        call(seg)
    assert [t.id for t in seg.open_turns("default", "default")] == ["default:0"]  # untouched


BAD_ARGUMENTS: list[tuple[str, Callable[[Any], Any], str]] = [
    (
        "checkpoint(unknown)",
        lambda s: s.checkpoint("default", "nope"),
        r"checkpoint: no session \('default', 'nope'\) in this segmenter",
    ),
    ("checkpoint(user=5)", lambda s: s.checkpoint(5, "default"), "user must be a string, got int"),
    ("flush(user=5)", lambda s: s.flush(user=5), "user must be a string or None, got int"),
    ("flush(session=b)", lambda s: s.flush(session=b"x"), "session must be a string or None"),
    ("open_turns(5)", lambda s: s.open_turns("default", 5), "session must be a string, got int"),
    ("forget(None)", lambda s: s.forget(None, "default"), "user must be a string, got NoneType"),
    ("resume(None)", lambda s: s.resume(None, []), "resume takes a SessionCheckpoint"),
    (
        "resume(bare turns)",
        lambda s: s.resume(s.checkpoint("default", "default"), [_turn()]),
        "resume: item 0 must be a \\(Turn, embedding\\) pair",
    ),
    (
        "resume(str)",
        lambda s: s.resume(s.checkpoint("default", "default"), "turns"),
        "resume takes a sequence of \\(Turn, embedding\\) pairs",
    ),
]


@pytest.mark.parametrize(
    ("call", "expected"),
    [(c, e) for _, c, e in BAD_ARGUMENTS],
    ids=[n for n, _, _ in BAD_ARGUMENTS],
)
def test_a_bad_argument_is_an_argument_error(call: Callable[[Any], Any], expected: str) -> None:
    seg = _seg()
    with pytest.raises(ArgumentError, match=expected):
        call(seg)
    assert [t.id for t in seg.open_turns("default", "default")] == ["default:0"]  # untouched


def test_one_signal_name_as_a_string_is_refused_naming_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"signals must be a collection .*signals=\{'window'\}"):
        Segmenter(embedder=HashingEmbedder(), signals="window")


def test_good_arguments_still_work() -> None:
    seg = Segmenter(embedder=HashingEmbedder(), signals=["window", "marker"])
    seg.observe(_turn(0))
    assert seg.preview([_turn(2)]) == [True]
    checkpoint = seg.checkpoint("default", "default")
    seg.observe(_turn(1))
    turns = list(seg.open_turns("default", "default"))
    vectors = HashingEmbedder().embed([t.text for t in turns])
    seg.forget("default", "default")
    assert seg.resume(checkpoint, list(zip(turns, vectors, strict=True))) == []
    assert seg.open_turns("default", "default") == tuple(turns)
    assert seg.flush(user="other") == [] and len(seg.flush(user="default")[0].turns) == 2
    assert [len(e.turns) for e in seg.segment(t for t in turns)] == [2]  # any iterable
