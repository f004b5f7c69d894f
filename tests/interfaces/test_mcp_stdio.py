"""F18: an MCP request holding a lone surrogate gets a JSON-RPC error, not silence.

The real stdio server (``run_stdio``) runs in a subprocess; the test speaks raw
JSON-RPC lines to it, because the SDK's client cannot send such strings.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

SERVER = (
    "import sys\n"
    "from episeg.interfaces.mcp_server import run_stdio\n"
    "from episeg.memory import Memory\n"
    "from episeg.testing import HashingEmbedder\n"
    "run_stdio(Memory(path=sys.argv[1], embedder=HashingEmbedder(), judge=None, scorer=None),"
    " 'alice')\n"
)
SRC = str(Path(__file__).resolve().parents[2] / "src")

pytestmark = pytest.mark.slow  # each test starts an MCP server process (15-20 s here under load)


class Wire:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    def send(self, message: dict[str, Any]) -> None:
        stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        stdin.write(json.dumps(message).encode("ascii") + b"\n")  # "\udc80" as a JSON escape
        stdin.flush()

    def receive(self, timeout: float = 20.0) -> dict[str, Any]:
        stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        with selectors.DefaultSelector() as selector:  # select.select fails past fd 1023
            selector.register(stdout, selectors.EVENT_READ)
            assert selector.select(timeout), "no reply from the MCP server"
        return dict(json.loads(stdout.readline()))

    def call(self, ident: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )
        return self.receive()


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[Wire]:
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    wire = Wire(proc)
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
    )
    assert "result" in wire.receive(60.0)
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield wire
    proc.kill()
    proc.wait()


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("observe_turn", {"actor": "user", "text": "x\udc80"}),
        ("observe_turn", {"actor": "user", "text": "x", "session": "\udc80"}),
        ("observe_turn", {"actor": "user", "text": "x", "id": "\ud800"}),
        ("recall", {"query": "deploy \udfff"}),
    ],
)
def test_lone_surrogate_gets_an_error_reply(
    wire: Wire, tool: str, arguments: dict[str, Any]
) -> None:
    reply = wire.call(7, tool, arguments)
    assert reply["id"] == 7
    assert reply["error"]["code"] == -32602
    assert "lone surrogate" in reply["error"]["message"]
    after = wire.call(8, "observe_turn", {"actor": "user", "text": "still here", "ts": 1.0})
    assert after["id"] == 8 and after["result"]["isError"] is False


def test_parallel_turns_without_ts_are_all_taken(wire: Wire) -> None:
    """Tool calls sent before any answer is read are stamped "now" in arrival order (F7, F92)."""
    sent = 40
    for i in range(sent):
        wire.send(
            {
                "jsonrpc": "2.0",
                "id": 100 + i,
                "method": "tools/call",
                "params": {
                    "name": "observe_turn",
                    "arguments": {"actor": "user", "text": f"step {i} of the deploy"},
                },
            }
        )
    answers = [wire.receive(60.0) for _ in range(sent)]
    refused = [a["result"]["content"][0]["text"] for a in answers if a["result"]["isError"]]
    assert refused == []
    flushed = wire.call(999, "flush", {})["result"]["structuredContent"]["closed"]
    assert sum(e["turn_count"] for e in flushed) == sent


def test_the_server_exits_at_eof_storing_the_open_episode(wire: Wire, tmp_path: Path) -> None:
    """When the client closes stdin the server stores the open episodes and exits (F151).

    The cloned reply stream kept the SDK's stdout writer, hence the process, alive: the open
    episode was never stored, and the journal's lock refused the client's next server.
    """
    wire.call(1, "observe_turn", {"actor": "user", "text": "the blue door code is 4711"})
    stdin: IO[bytes] = wire.proc.stdin  # type: ignore[assignment]
    stdin.close()
    assert wire.proc.wait(timeout=60) == 0
    from episeg.memory import Memory
    from episeg.testing import HashingEmbedder

    with Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None) as memory:
        (stored,) = memory.episodes("alice")  # the lock is free, the episode stored
        assert [t.text for t in stored.turns] == ["the blue door code is 4711"]
