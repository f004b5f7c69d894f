"""Issue 12's probe failures of the service's configuration (F16, F17) and the CLI's (F1).

``episeg serve`` must refuse what it cannot honour before it starts, and the
keys file must hold exactly the keys a client can present.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from episeg.errors import ConfigError
from episeg.interfaces.cli import EXIT_BAD_INPUT, main
from episeg.interfaces.service_auth import KeyRing

KEY = "k_live_alice_3b9f0c2e8d41"


def _keys(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "keys.json"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


class TestServeArguments:
    """F16: ``--max-body 0`` started and answered 500; ``--port 70000`` listened elsewhere."""

    @pytest.mark.parametrize(
        ("argv", "says"),
        [
            (["--port", "70000"], "--port must be 1-65535"),
            (["--port", "0"], "--port must be 1-65535"),
            (["--port", "-1"], "--port must be 1-65535"),
            (["--max-body", "0"], "--max-body must be >= 1"),
            (["--max-body", "-5"], "--max-body must be >= 1"),
        ],
    )
    def test_refused_before_starting(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
    ) -> None:
        keys = _keys(tmp_path, json.dumps({KEY: "alice"}))
        code = main(["serve", "--path", str(tmp_path), "--keys-file", str(keys), *argv])
        assert code == EXIT_BAD_INPUT
        assert says in capsys.readouterr().err


class TestKeysFile:
    """F17: duplicates, keys no client can send, and file permissions."""

    def test_a_key_listed_twice_is_refused(self, tmp_path: Path) -> None:
        path = _keys(tmp_path, f'{{"{KEY}": "alice", "{KEY}": "mallory"}}')
        with pytest.raises(ConfigError, match="listed twice"):
            KeyRing.from_file(path)

    @pytest.mark.parametrize(
        "key", [" " + KEY, KEY + " ", "k_live_alicé_3b9f0c2e8d41", "k_live alice 3b9f0c2e"]
    )
    def test_keys_no_client_can_send_are_refused(self, tmp_path: Path, key: str) -> None:
        with pytest.raises(ConfigError, match="bearer token"):
            KeyRing.from_file(_keys(tmp_path, json.dumps({key: "alice"})))

    def test_the_error_does_not_print_the_key(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError) as err:
            KeyRing.from_file(_keys(tmp_path, json.dumps({KEY + " ": "alice"})))
        assert KEY not in str(err.value)

    @pytest.mark.parametrize("mode", [0o620, 0o602, 0o666])
    def test_a_file_others_can_write_is_refused(self, tmp_path: Path, mode: int) -> None:
        with pytest.raises(ConfigError, match="chmod 600"):
            KeyRing.from_file(_keys(tmp_path, json.dumps({KEY: "alice"}), mode))

    def test_a_file_others_can_read_is_a_warning(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        with caplog.at_level(logging.WARNING):
            ring = KeyRing.from_file(_keys(tmp_path, json.dumps({KEY: "alice"}), 0o644))
        assert ring.tenant_for(KEY) == "alice"
        assert "readable by group or others" in caplog.text

    def test_a_private_file_loads_quietly(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        with caplog.at_level(logging.WARNING):
            ring = KeyRing.from_file(_keys(tmp_path, json.dumps({KEY: "alice", "a" * 16: "b"})))
        assert ring.tenants == {"alice", "b"} and not caplog.text


@pytest.mark.slow
class TestIngestLoneSurrogate:
    """F1 through the CLI: a lone surrogate in a transcript is exit 2 naming the line."""

    def test_exit_2_and_the_next_file_still_ingests(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad = tmp_path / "bad.jsonl"
        bad.write_text(
            '{"actor": "user", "text": "hi", "ts": 1, "session": "ok"}\n'
            '{"actor": "user", "text": "hi", "ts": 2, "session": "s\\udc80"}\n'
        )
        store = str(tmp_path / "store")
        assert main(["ingest", str(bad), "--path", store, "--progress-every", "0"]) == 2
        err = capsys.readouterr().err
        assert "line 2" in err and "Traceback" not in err
        good = tmp_path / "good.jsonl"
        good.write_text('{"actor": "user", "text": "hi", "ts": 3, "session": "ok"}\n')
        assert main(["ingest", str(good), "--path", store, "--progress-every", "0"]) == 0
