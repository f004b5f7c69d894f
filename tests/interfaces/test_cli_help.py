"""The CLI's help: a version flag, every flag described, defaults shown (no model, fast)."""

from __future__ import annotations

import argparse
import json
import logging
from importlib.metadata import version
from pathlib import Path

import pytest

from episeg.interfaces.cli import _build_parser, main
from episeg.interfaces.logs import configure_logging


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = _build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


class TestHelp:
    def test_version(self, capsys: pytest.CaptureFixture[str]) -> None:
        with pytest.raises(SystemExit) as done:
            main(["--version"])
        assert done.value.code == 0
        assert capsys.readouterr().out.strip() == f"episeg {version('episeg')}"

    @pytest.mark.parametrize("name", sorted(set(_subcommands()) - {"eval", "bench"}))
    def test_every_flag_is_described_and_defaults_are_shown(self, name: str) -> None:
        parser = _subcommands()[name]
        for action in parser._actions:
            assert action.help, f"{name}: {action.dest} has no help"
        text = parser.format_help()
        text = " ".join(text.split())
        for action in parser._actions:
            real = action.default is not None and action.default is not False
            if action.option_strings and real and action.default is not argparse.SUPPRESS:
                # by identity: a default of 0 (--context, --offset) was hidden as if False
                assert f"(default: {action.default})" in text, (name, action.dest)

    def test_serve_help_names_its_defaults(self) -> None:
        text = " ".join(_subcommands()["serve"].format_help().split())
        assert "(default: 8080)" in text and "(default: 127.0.0.1)" in text


class TestJsonLogs:
    def test_log_format_json_writes_one_object_per_record(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        # A missing transcript fails fast (exit 2) after logging is configured.
        try:
            assert main(["--log-format", "json", "report", str(tmp_path / "none.jsonl")]) == 2
            logging.getLogger("episeg.test").warning("hello", extra={"episode": "e1"})
            lines = capsys.readouterr().err.splitlines()
            record = json.loads(lines[-1])
            assert record["message"] == "hello" and record["level"] == "WARNING"
            assert record["episode"] == "e1" and record["logger"] == "episeg.test"
            assert "time" in record
        finally:
            configure_logging(logging.WARNING)
