"""Shared fixtures: the real MiniLM embedder is loaded once per test session.

The fast tier (``-m "not slow"``) runs fewer property-test examples: see
:mod:`tests.property_budget`; the whole suite (CI) runs all of them.
"""

from __future__ import annotations

import pytest
from hypothesis import settings

from episeg.embedders import MiniLMEmbedder
from tests import property_budget

settings.register_profile("fast", max_examples=property_budget.FAST_PROFILE_EXAMPLES)


def pytest_configure(config: pytest.Config) -> None:
    if "not slow" in (config.option.markexpr or ""):
        property_budget.use_fast_tier()
        settings.load_profile("fast")


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The real bundled all-MiniLM-L6-v2 (no hub access)."""
    return MiniLMEmbedder.default()
