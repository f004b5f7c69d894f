"""Every ``# example: NAME`` python block of docs/INTERFACES.md runs as written.

Each block runs in its own interpreter (as a user would paste it), offline: the model
examples talk to episeg's scripted loopback server, the client example to a real
service started here on 127.0.0.1 (its URL, a tenant's key and an admin key reach it as
EPISEG_URL/EPISEG_KEY/EPISEG_ADMIN_KEY).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.interfaces.service_auth import KeyRing
from episeg.testing import HashingEmbedder
from tests.interfaces.helpers import LiveServer

pytestmark = pytest.mark.slow
DOC = Path(__file__).resolve().parents[2] / "docs" / "INTERFACES.md"
EXAMPLES = dict(
    (name, code)
    for code, name in re.findall(
        r"```python\n(# example: ([\w-]+)\n.*?)```", DOC.read_text(encoding="utf-8"), re.S
    )
)
KEY = "k_live_alice_3b9f0c2e8d41"
ADMIN_KEY = "k_admin_ops_5d0c9e1f2a7b"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    memory = open_memory(tmp_path_factory.mktemp("docs"), embedder=HashingEmbedder(dim=64))
    live = LiveServer(create_app(memory, KeyRing({KEY: "alice", ADMIN_KEY: {"admin": True}})))
    yield live
    live.stop()


def test_the_doc_has_every_example() -> None:
    assert set(EXAMPLES) >= {
        "client",
        "async-memory",
        "langgraph",
        "openai-agents",
        "manage",
        "manage-memory",
    }


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name: str, service: LiveServer, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "EPISEG_URL": service.url,
        "EPISEG_KEY": KEY,
        "EPISEG_ADMIN_KEY": ADMIN_KEY,
    }
    done = subprocess.run(
        [sys.executable, "-c", EXAMPLES[name]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{name}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
