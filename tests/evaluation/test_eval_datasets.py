"""The JSONL reader: validation errors name the line; speakers, timestamps, splits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from episeg.errors import ConfigError, TurnValidationError
from episeg.evaluation.datasets import (
    TURN_SECONDS,
    content_group,
    hash_part,
    mean_segment_length,
    read_jsonl,
    select_part,
    tuning_dialogues,
)
from episeg.interfaces.cli import main as cli_main
from episeg.types import Actor


def _row(did: str = "d", n: int = 4, boundaries: list[Any] | None = None) -> dict[str, Any]:
    return {
        "id": did,
        "source": "test",
        "boundaries": [2] if boundaries is None else boundaries,
        "turns": [
            {"speaker": "user" if i % 2 == 0 else "agent", "text": f"turn {i}"} for i in range(n)
        ],
    }


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class TestReader:
    def test_reads_turns_speakers_and_timestamps(self, tmp_path: Path) -> None:
        d = read_jsonl(_write(tmp_path, [json.dumps(_row())]))[0]
        assert [t.actor for t in d.turns] == [Actor.USER, Actor.ASSISTANT] * 2
        assert [t.ts for t in d.turns] == [i * TURN_SECONDS for i in range(4)]
        assert d.boundaries == [2] and len(d) == 4
        assert {t.session for t in d.turns} == {"d"}

    @pytest.mark.parametrize(
        ("bad_line", "needle"),
        [
            ("{not json", "invalid JSON"),
            (json.dumps(_row(boundaries=[4])), "boundary 4 out of range"),
            (json.dumps(_row(boundaries=[0])), "boundary 0 out of range"),
            (json.dumps(_row(boundaries=[3, 2])), "sorted"),
            (json.dumps(_row(boundaries=[2, 2])), "sorted"),
            (json.dumps(_row(boundaries=["2"])), "list of integers"),
            (json.dumps({"id": "x", "turns": []}), "missing field"),
            (
                json.dumps({**_row(), "turns": [{"speaker": "robot", "text": "hi"}]}),
                "unknown speaker 'robot'",
            ),
        ],
    )
    def test_errors_name_the_line(self, tmp_path: Path, bad_line: str, needle: str) -> None:
        path = _write(tmp_path, [json.dumps(_row("ok1")), json.dumps(_row("ok2")), bad_line])
        with pytest.raises(TurnValidationError) as info:
            read_jsonl(path)
        assert info.value.line == 3
        assert str(info.value).startswith("line 3: ")
        assert needle in str(info.value)

    def test_a_line_not_in_utf8_is_named_and_the_cli_exits_2(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = tmp_path / "latin1.jsonl"
        good = json.dumps(_row("ok")).encode()
        path.write_bytes(
            good + b"\n" + json.dumps(_row("x")).encode().replace(b"turn 1", b"caf\xe9")
        )
        with pytest.raises(TurnValidationError, match="line 2: not UTF-8"):
            read_jsonl(path)
        assert cli_main(["eval", "--data", str(path), "--configs", "none"]) == 2
        assert "line 2: not UTF-8" in capsys.readouterr().err
        module = [
            sys.executable,
            "-m",
            "episeg.evaluation",
            "--data",
            str(path),
            "--configs",
            "none",
        ]
        done = subprocess.run(module, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert "episeg eval: error: line 2: not UTF-8" in done.stderr

    @pytest.mark.parametrize("source", [None, 7, ["tiage"], {"name": "tiage"}])
    def test_a_source_that_is_no_string_is_refused(self, tmp_path: Path, source: Any) -> None:
        """It says whether the speaker labels are real: ``str(None)`` read as real roles (F149)."""
        path = _write(tmp_path, [json.dumps({**_row("a"), "source": source})])
        with pytest.raises(TurnValidationError, match="source must be a string"):
            read_jsonl(path)

    def test_duplicate_ids_rejected(self, tmp_path: Path) -> None:
        path = _write(tmp_path, [json.dumps(_row("a")), json.dumps(_row("a"))])
        with pytest.raises(TurnValidationError, match="line 2: duplicate"):
            read_jsonl(path)

    def test_limit(self, tmp_path: Path) -> None:
        path = _write(tmp_path, [json.dumps(_row(f"d{i}")) for i in range(5)])
        assert [d.id for d in read_jsonl(path, limit=2)] == ["d0", "d1"]


class TestSplits:
    def test_hash_split_is_deterministic_and_partitions(self, data_root: Path) -> None:
        path = data_root / "superdialseg" / "superdialseg_validation.jsonl"
        dialogues = read_jsonl(path)
        tune, report = select_part(path, dialogues, "tune"), select_part(path, dialogues, "report")
        assert {d.id for d in tune}.isdisjoint(d.id for d in report)
        assert len(tune) + len(report) == len(dialogues)
        assert tune and report
        assert all(hash_part(content_group(d)) == "tune" for d in tune)

    def test_copies_of_a_superdialseg_dialogue_stay_in_one_part(self, data_root: Path) -> None:
        """Every dialogue is in the file at least twice (i and i + 661 open alike; 55 groups of
        exact copies): splitting by id put 307 report dialogues' twins in the tune half."""
        path = data_root / "superdialseg" / "superdialseg_validation.jsonl"
        dialogues = read_jsonl(path)
        tune, report = select_part(path, dialogues, "tune"), select_part(path, dialogues, "report")
        assert {content_group(d) for d in tune}.isdisjoint(content_group(d) for d in report)
        texts = {tuple(t.text for t in d.turns) for d in tune}
        assert not [d.id for d in report if tuple(t.text for t in d.turns) in texts]
        half = len(dialogues) // 2
        pairs = [(dialogues[i], dialogues[i + half]) for i in range(half)]
        assert all(content_group(a) == content_group(b) for a, b in pairs)  # the file's twins

    def test_tiage_tunes_on_train_reports_on_dev(self, data_root: Path) -> None:
        dev = data_root / "tiage" / "tiage_dev.jsonl"
        assert select_part(dev, read_jsonl(dev), "tune") == []
        tuning = tuning_dialogues(dev, limit=5)
        assert all(d.id.startswith("tiage_train_") for d in tuning)

    def test_unknown_part(self) -> None:
        with pytest.raises(ConfigError, match="valid: all, tune, report"):
            select_part("x.jsonl", [], "test")  # type: ignore[arg-type]

    def test_mean_segment_length(self, tmp_path: Path) -> None:
        path = _write(tmp_path, [json.dumps(_row("a", 4, [2])), json.dumps(_row("b", 6, []))])
        assert mean_segment_length(read_jsonl(path)) == 10 / 3


def test_every_shared_file_reads(data_root: Path) -> None:
    files = sorted(data_root.glob("*/*.jsonl"))
    assert len(files) >= 4, f"expected the four evaluation files under {data_root}"
    for path in files:
        dialogues = read_jsonl(path)
        assert dialogues and all(b < len(d) for d in dialogues for b in d.boundaries)
