"""JSONL transcript reading: every malformed line is a typed error naming the line."""

from __future__ import annotations

import json

import pytest

from episeg.errors import TurnValidationError
from episeg.interfaces.transcript import iter_turns, read_transcript, write_transcript
from episeg.segmentation.segmenter import Segmenter
from episeg.testing import HashingEmbedder
from episeg.types import Turn

GOOD = json.dumps({"actor": "user", "text": "hi", "ts": 1})


class TestReader:
    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ('{"actor": "user", "ts": 1}', "missing required field 'text'"),
            ('{"actor": "robot", "text": "x", "ts": 1}', "unknown actor 'robot'; valid: user"),
            (
                '{"actor": "user", "text": "x", "ts": 1, "type": "rant"}',
                "unknown turn type 'rant'; valid: user-question",
            ),
            ('{"actor": "user", "text": 5, "ts": 1}', "text must be a string"),
            ('{"actor": "user", "text": "x", "ts": "noon"}', "ts must be a number"),
            ('{"actor": "user", "text": "x", "ts": NaN}', "ts must be finite"),
            ('{"actor": "user", "text": "x", "ts": 1, "mood": "ok"}', "unknown field(s) ['mood']"),
            ('{"actor": "user", "text": "x", "ts": 1, "user": ""}', "user must be a non-empty"),
            ("[1, 2]", "expected a JSON object"),
            ('{"actor": "user", "text": "x"', "invalid JSON"),
            ('{"actor": "user", "role": "user", "text": "x", "ts": 1}', "given twice"),
        ],
    )
    def test_bad_lines_name_the_line(self, line, message):
        with pytest.raises(TurnValidationError) as info:
            list(iter_turns([GOOD, "", line]))
        assert info.value.line == 3
        assert message in str(info.value)

    def test_invalid_utf8_names_the_line(self, tmp_path):
        path = tmp_path / "t.jsonl"
        path.write_bytes(GOOD.encode() + b"\n" + b'{"actor": "user", "text": "\xff", "ts": 2}\n')
        with pytest.raises(TurnValidationError, match="line 2: invalid UTF-8"):
            read_transcript(path)

    def test_missing_ts_is_an_error_unless_assigned(self):
        line = '{"actor": "user", "text": "x"}'
        with pytest.raises(TurnValidationError, match="'ts'"):
            list(iter_turns([line]))
        assert [t.ts for t in iter_turns([line, line], assign_ts=True)] == [0.0, 1.0]

    def test_round_trip(self, tmp_path):
        turns = [
            Turn(
                actor="tool",
                text="ünïcode ✓\nline",
                ts=2.5,
                type="tool-error",
                id="a",
                user="bob",
                session="s",
            )
        ]
        write_transcript(turns, tmp_path / "t.jsonl")
        assert read_transcript(tmp_path / "t.jsonl") == turns

    def test_defaults_fill_only_missing_user_and_session(self):
        line = '{"actor": "user", "text": "x", "ts": 1, "user": "carol"}'
        turn = next(iter_turns([line], user="dave", session="s9"))
        assert (turn.user, turn.session) == ("carol", "s9")


class TestThroughTheSegmenter:
    def test_one_megabyte_turn_is_refused_and_nothing_else_is_lost(self):
        seg = Segmenter(embedder=HashingEmbedder())
        seg.observe(Turn(actor="user", text="before", ts=0))
        with pytest.raises(TurnValidationError, match="1000000 characters"):
            seg.observe(Turn(actor="user", text="x" * 1_000_000, ts=1))
        seg.observe(Turn(actor="user", text="after", ts=2))
        assert [t.text for e in seg.flush() for t in e.turns] == ["before", "after"]

    def test_backwards_time_in_batch_names_the_turn(self):
        turns = [
            Turn(actor="user", text="a", ts=5, id="t-a"),
            Turn(actor="user", text="b", ts=1, id="t-b"),
        ]
        with pytest.raises(TurnValidationError, match="t-b"):
            Segmenter(embedder=HashingEmbedder()).segment(turns)
