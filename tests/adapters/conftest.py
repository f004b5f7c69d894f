"""Fixtures of the OpenAI Agents session tests: the SDK, imported when needed, and a memory."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from episeg.memory import Memory
from episeg.testing import HashingEmbedder


@pytest.fixture(scope="module")
def sdk() -> ModuleType:
    """The OpenAI Agents SDK, imported when a test needs it (~1.5 s), not at collection."""
    module: ModuleType = pytest.importorskip(
        "agents", reason="the openai-agents extra: pip install 'episeg[openai-agents]'"
    )
    return module


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    return Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
