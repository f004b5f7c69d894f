"""An export line nested too deeply for the JSON parser is an ExportFormatError naming the line.

``json.loads`` raises RecursionError (not a ValueError) past ~1,000 levels: it used to
escape ``read_export`` and make ``POST /v1/import`` a 500.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from episeg.errors import ExportFormatError
from episeg.store import import_check
from episeg.store.import_check import read_export
from episeg.store.portability import episode_line, header_line, trailer_line
from episeg.types import Episode, Turn

DEEP = "[" * 30_000 + "]" * 30_000


def _episode_line() -> str:
    episode = Episode(
        id="e1",
        user="alice",
        session="s",
        summary="deploy v2",
        turns=(Turn(actor="user", text="deploy v2", ts=1.0),),
        opened_at=1.0,
        closed_at=1.0,
        embedding=np.array([0.6, 0.8], np.float32),
    )
    return episode_line(episode)


@pytest.mark.parametrize(
    ("lines", "number"),
    [
        ([DEEP], 1),  # the header
        (["[" * 30_000], 1),  # cut off, too
        ([header_line("hashing", 2), DEEP, trailer_line(1)], 2),
        ([header_line("hashing", 2), '{"id": "e", "summary": ' + DEEP + "}", trailer_line(1)], 2),
        ([header_line("hashing", 2), "\n", "\n", DEEP.encode()], 4),  # bytes, after blank lines
    ],
)
def test_a_line_too_deep_to_parse_is_named(lines: list[Any], number: int) -> None:
    with pytest.raises(ExportFormatError) as caught:
        read_export(lines, tenant="bob", embedder=("hashing", 2))
    assert caught.value.line == number
    assert "nested too deeply" in caught.value.message


def test_a_recursion_error_reading_an_episode_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """E.g. the repr of a value nested hundreds of levels deep, in the error message."""

    def deep_repr(*_: Any, **__: Any) -> Episode:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(import_check, "episode_from_record", deep_repr)
    lines = [header_line("hashing", 2), _episode_line(), trailer_line(1)]
    with pytest.raises(ExportFormatError) as caught:
        read_export(lines, tenant="bob", embedder=("hashing", 2))
    assert caught.value.line == 2
    assert "nested too deeply" in caught.value.message


def test_a_deep_but_parseable_value_is_an_ordinary_error() -> None:
    line = _episode_line().replace('"summary":"deploy v2"', '"summary":' + "[" * 900 + "]" * 900)
    assert line != _episode_line()
    with pytest.raises(ExportFormatError) as caught:
        read_export([header_line("hashing", 2), line, trailer_line(1)], tenant="bob")
    assert caught.value.line == 2
