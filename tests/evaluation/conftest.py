"""Fixtures for the evaluation tests: the shared evaluation data (never copied into the repo)."""

from __future__ import annotations

from pathlib import Path

import pytest

from episeg.evaluation.datasets import default_data_root


@pytest.fixture(scope="session")
def data_root() -> Path:
    """``../shared/data/segmentation``; a missing directory fails loudly, it is not skipped."""
    root = default_data_root()
    if root is None:
        pytest.fail(
            "evaluation data not found: expected ../shared/data/segmentation next to "
            "the repository root"
        )
    return root


@pytest.fixture(scope="session")
def tiage_dev(data_root: Path) -> Path:
    path = data_root / "tiage" / "tiage_dev.jsonl"
    if not path.is_file():
        pytest.fail(f"missing evaluation file {path}")
    return path
