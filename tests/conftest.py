"""Shared fixtures: the real MiniLM embedder is loaded once per test session."""

from __future__ import annotations

import pytest

from episeg.embedders import MiniLMEmbedder


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The real bundled all-MiniLM-L6-v2 (no hub access)."""
    return MiniLMEmbedder.default()
