"""``episeg ingest`` / ``report`` on transcripts (review 2): through ``main``, MiniLM, Chroma.

A regular file is checked whole before anything is observed; a pipe names
the turns it kept; only the sessions fed are flushed; ``--assign-ts`` goes on
after the session's recorded time; chat messages read as ``/v1/messages``
reads them; a BOM is dropped; ``report`` names the line.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from episeg.interfaces.cli import EXIT_BAD_INPUT, main
from episeg.typing import Embedder

pytestmark = pytest.mark.slow


def write(path: Path, lines: list[Any], *, prefix: bytes = b"") -> Path:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_bytes(prefix + text.encode() + b"\n")
    return path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def stored_turns(capsys: pytest.CaptureFixture[str], store: Path, user: str) -> list[Any]:
    episodes = run_json(capsys, "episodes", "--path", str(store), "--user", user, "--turns")
    return [t for e in sorted(episodes, key=lambda e: e["start"]) for t in e["turns"]]


@pytest.fixture(autouse=True)
def _model(real_embedder: Embedder) -> None:
    """MiniLM loaded once for the module (the CLI shares it)."""


def test_ingest_flushes_only_the_sessions_it_fed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """M1: alice's ingest must not close bob's open episode."""
    store = str(tmp_path / "store")
    bob = write(tmp_path / "bob.jsonl", [{"actor": "user", "text": "bob's deploy", "ts": 1}])
    alice = write(tmp_path / "alice.jsonl", [{"actor": "user", "text": "alice's 401", "ts": 1}])
    run_json(capsys, "ingest", str(bob), "--path", store, "--user", "bob", "--no-flush")
    out = run_json(capsys, "ingest", str(alice), "--path", store, "--user", "alice")
    assert (out["episodes"], out["flushed"], out["users"]) == (1, 1, ["alice"])
    assert run_json(capsys, "episodes", "--path", store, "--user", "bob") == []


def test_assign_ts_goes_on_after_the_sessions_recorded_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """M2: a second ts-less file for the same session is accepted, in order."""
    store = tmp_path / "store"
    first = write(tmp_path / "a.jsonl", [{"role": "user", "content": "rotate the jwt key"}] * 1)
    second = write(tmp_path / "b.jsonl", [{"role": "user", "content": "now bump prod"}])
    argv = ["--path", str(store), "--user", "alice", "--session", "s1", "--assign-ts"]
    run_json(capsys, "ingest", str(first), *argv)
    run_json(capsys, "ingest", str(second), *argv)
    turns = stored_turns(capsys, store, "alice")
    assert [(t["text"], t["ts"]) for t in turns] == [
        ("rotate the jwt key", 0.0),
        ("now bump prod", 1.0),
    ]


CHAT = [
    {"role": "user", "content": "the deploy fails"},
    {"role": "assistant", "content": "let me look"},
]


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ('{"role": "user", "content": "trunc', "line 3: invalid JSON"),
        ({"role": "user", "content": "x" * 100_001}, "line 3: text of turn"),
        ({"role": "user", "content": "earlier", "ts": -5.0}, "line 3: turn"),
        (
            {"actor": "user", "text": "thanks", "type": "tool-error"},
            "line 3: a user turn cannot have type 'tool-error'",
        ),
    ],
    ids=["broken-json", "too-long", "ts-backwards", "type-of-another-actor"],
)
def test_a_bad_line_in_a_file_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: Any, error: str
) -> None:
    """M3: exit 2 naming the line and nothing kept, so the fixed file then goes in whole."""
    store = tmp_path / "store"
    argv = ["--path", str(store), "--user", "alice", "--assign-ts", "--progress-every", "0"]
    path = write(tmp_path / "chat.jsonl", [*CHAT, bad])
    capsys.readouterr()
    assert main(["ingest", str(path), *argv]) == EXIT_BAD_INPUT
    assert error in capsys.readouterr().err
    write(path, [*CHAT, {"role": "user", "content": "fixed now"}])
    assert run_json(capsys, "ingest", str(path), *argv)["turns"] == 3
    turns = stored_turns(capsys, store, "alice")
    assert [t["text"] for t in turns] == ["the deploy fails", "let me look", "fixed now"]


def test_a_bad_line_on_a_pipe_says_which_turns_were_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """M3 (stdin): streamed, so the error says the 2 turns before line 3 are in."""
    data = "\n".join([*(json.dumps(m) for m in CHAT), "{broken"]).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    argv = ["ingest", "-", "--path", str(tmp_path), "--assign-ts", "--progress-every", "0"]
    capsys.readouterr()
    assert main(argv) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "line 3: invalid JSON" in err and "the 2 turn(s) before line 3 were ingested" in err


def test_chat_messages_with_tool_use_read_as_the_messages_api_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """M4: tool_calls are kept and an Anthropic tool_result error is the tool's turn."""
    lines = [
        {"role": "user", "content": "deploy prod"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "name": "deploy", "input": {"env": "prod"}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "content": "Error: lock held", "is_error": True}],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "unlock", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "unlocked"},
    ]
    path = write(tmp_path / "chat.jsonl", lines)
    run_json(capsys, "ingest", str(path), "--path", str(tmp_path), "--assign-ts")
    turns = stored_turns(capsys, tmp_path, "default")
    assert [(t["actor"], t.get("type")) for t in turns] == [
        ("user", None),
        ("assistant", "tool-call"),
        ("tool", "tool-error"),
        ("assistant", "tool-call"),
        ("tool", None),
    ]
    assert turns[3]["text"] == "[tool call] unlock({})"


def test_a_byte_order_mark_is_dropped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """L8: a transcript saved by Notepad / PowerShell (UTF-8 with BOM) is read."""
    path = write(tmp_path / "bom.jsonl", CHAT, prefix=b"\xef\xbb\xbf")
    out = run_json(capsys, "ingest", str(path), "--path", str(tmp_path), "--assign-ts")
    assert out["turns"] == 2


def test_report_names_the_line_of_a_turn_the_segmenter_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """L4: an id reused with other content is refused naming its line, as ingest does."""
    path = write(
        tmp_path / "chat.jsonl",
        [
            {"actor": "user", "text": "a", "ts": 1, "id": "x1"},
            {"actor": "user", "text": "b", "ts": 2},
            {"actor": "user", "text": "other", "ts": 3, "id": "x1"},
        ],
    )
    out = tmp_path / "report.html"
    capsys.readouterr()
    assert main(["report", str(path), "-o", str(out)]) == EXIT_BAD_INPUT
    assert "line 3: turn id 'x1'" in capsys.readouterr().err
    assert not out.exists()
