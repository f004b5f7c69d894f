"""Every MCP request with an id gets an answer, whatever the line (issue 12, F18).

The SDK's stdio transport drops a line it cannot validate: a request nested
300 levels deep (a 700-byte line), a line that is not JSON or JSON that is no
JSON-RPC message used to get no reply at all, so the client waited forever.
The real stdio server (``run_stdio``) runs in a subprocess and the test speaks
raw JSON-RPC lines to it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import IO, Any

import pytest
from pydantic import ValidationError

from episeg.interfaces.mcp_stdio import bad_strings, refusal, shallow
from tests.interfaces.test_mcp_stdio import SERVER, SRC, Wire

pytestmark = pytest.mark.slow  # starts an MCP server process


class RawWire(Wire):
    def send_line(self, line: str) -> None:
        stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        stdin.write(line.encode("utf-8") + b"\n")
        stdin.flush()


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawWire]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(tmp_path_factory.mktemp("mcp-answers"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": SRC},
    )
    wire = RawWire(proc)
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    try:
        wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        assert "result" in wire.receive(60.0)
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield wire
    finally:
        proc.kill()
        proc.wait()


def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


def _deep_call(ident: int | str, depth: int) -> str:
    return (
        '{"jsonrpc": "2.0", "id": ' + json.dumps(ident) + ', "method": "tools/call", "params": '
        '{"name": "observe_messages", "arguments": {"messages": [{"role": "user", "content": '
        '"hi", "meta": ' + _nest(depth) + "}]}}}"
    )


def _still_serving(wire: RawWire, ident: int) -> None:
    after = wire.call(ident, "flush", {})
    assert after["id"] == ident and after["result"]["isError"] is False


@pytest.mark.parametrize(
    ("line", "code", "ident"),
    [
        (_deep_call(2, 300), -32700, 2),  # too deep for the SDK's parser
        (_deep_call("deep", 3000), -32700, "deep"),  # too deep for Python's too
        (_deep_call(3, 50_000), -32700, 3),
        ("{not json", -32700, None),
        ('{"jsonrpc": "2.0", "id": 4}', -32600, 4),  # no method
        ('{"jsonrpc": "2.0", "id": 5, "method": 7}', -32600, 5),
        ('{"jsonrpc": "1.0", "id": 6, "method": "tools/list"}', -32600, 6),
        ('[{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}]', -32600, None),  # a batch
        ('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}', -32600, None),
        ('{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', -32600, None),
        ('{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', -32600, None),
        # a key twice: the SDK would keep the last text without a word (review 12)
        (
            '{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": '
            '"observe_turn", "arguments": {"actor": "user", "text": "the real text", '
            '"text": ""}}}',
            -32602,
            8,
        ),
    ],
)
def test_a_request_the_sdk_cannot_read_gets_an_error(
    wire: RawWire, line: str, code: int, ident: int | str | None
) -> None:
    wire.send_line(line)
    reply = wire.receive()
    assert reply["id"] == ident, reply
    assert reply["error"]["code"] == code, reply
    assert reply["error"]["message"]
    _still_serving(wire, 99)


def test_a_deep_notification_gets_no_answer(wire: RawWire) -> None:
    wire.send_line('{"jsonrpc": "2.0", "method": "notifications/x", "params": ' + _nest(300) + "}")
    wire.send_line(_deep_call(11, 300))
    reply = wire.receive()  # the first reply is the request's: the notification got none
    assert reply["id"] == 11 and reply["error"]["code"] == -32700


def test_nesting_the_sdk_reads_is_served(wire: RawWire) -> None:
    wire.send_line(_deep_call(12, 100))
    reply = wire.receive()
    assert reply["id"] == 12 and reply["result"]["isError"] is False


def _problem(line: str) -> ValidationError:
    import mcp_types as types

    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return exc
    raise AssertionError(f"{line!r} is valid")


class TestHelpers:
    def test_shallow_keeps_the_top_level(self) -> None:
        line = '{"id": "a\\"[", "params": {"x": [' + _nest(5000) + ', "]"]}, "n": [1]}'
        assert shallow(line) == {"id": 'a"[', "params": None, "n": None}

    def test_bad_strings_walks_without_recursion(self) -> None:
        deep: Any = "x\udc80"
        for _ in range(20_000):
            deep = {"k": [deep]}
        assert bad_strings(deep) == [repr("x\udc80")]

    def test_refusal_of_a_lone_surrogate_keeps_its_code(self) -> None:
        line = '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"a": "\\udc80"}}'
        answer = refusal(line, _problem(line))
        assert answer is not None and answer.id == 1 and answer.error.code == -32602

    def test_a_notification_is_never_answered(self) -> None:
        line = '{"jsonrpc": "2.0", "method": 5}'
        assert refusal(line, _problem(line)) is None
