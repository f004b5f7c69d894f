"""Review 9 of what imports and ``store_episodes`` let in (F190, F191) and context (F192).

- F190: ``strength: 0`` with a confirmed use made ``maintain`` (and recall with a
  reinforcement weight) divide by zero for the whole tenant.
- F191: episode times far off the calendar (``opened_at: -1e300``) were stored, and the memory
  browser could not show the tenant at all.
- F192: ``context`` cost time in proportion to its value, not to the episode: 10**8 hung.
"""

from __future__ import annotations

import dataclasses
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

from episeg.config import EpisegConfig
from episeg.errors import EpisodeValidationError, ExportFormatError
from episeg.memory import Memory
from episeg.recall.forgetting import retention
from episeg.types import Turn
from tests.memory_helpers import export_record, hashing_memory


def _memory(path: Path) -> Memory:
    return hashing_memory(path)


def _exported(memory: Memory) -> tuple[str, dict[str, Any], str]:
    memory.observe(Turn(actor="user", text="rotate the api keys", ts=100.0, user="alice"))
    memory.flush("alice")
    return export_record(memory)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"strength": 0.0, "recall_count": 3}, "strength must be > 0"),
        ({"opened_at": -1e300}, "not a time in seconds"),
        ({"closed_at": 1e300}, "not a time in seconds"),
        ({"last_accessed": 1e200}, "not a time in seconds"),
    ],
)
def test_an_import_refuses_a_zero_strength_and_times_off_the_calendar(
    tmp_path: Path, change: dict[str, Any], says: str
) -> None:
    memory = _memory(tmp_path)
    head, record, tail = _exported(memory)
    record = {**record, **change, "id": "imported"}
    text = "\n".join([head, json.dumps(record), tail]) + "\n"
    with pytest.raises(ExportFormatError, match=says):
        memory.import_episodes("bob", io.StringIO(text))
    assert memory.episodes("bob") == []
    memory.close()


@pytest.mark.parametrize(
    "change",
    [{"strength": 0.0, "recall_count": 3}, {"opened_at": -1e300}, {"last_accessed": 1e200}],
)
def test_store_episodes_refuses_them_too(tmp_path: Path, change: dict[str, Any]) -> None:
    memory = _memory(tmp_path)
    memory.observe(Turn(actor="user", text="rotate the api keys", ts=100.0, user="alice"))
    (stored,) = memory.flush("alice")
    with pytest.raises(EpisodeValidationError):
        memory.store_episodes([dataclasses.replace(stored, id="other", **change)])
    memory.close()


def test_retention_of_a_zero_strength_reads_as_forgotten_not_a_crash(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    memory.observe(Turn(actor="user", text="rotate the api keys", ts=100.0, user="alice"))
    (stored,) = memory.flush("alice")
    old = dataclasses.replace(stored, strength=0.0, recall_count=2)  # as an older store held
    assert retention(old, config=EpisegConfig(), now=1000.0) == 0.0
    memory.close()


def test_a_huge_context_costs_no_more_than_the_episode(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    for n, text in enumerate(["deploy the billing service", "it failed", "retry it", "done"]):
        memory.observe(Turn(actor="user", text=text, ts=float(n), user="alice"))
    memory.flush("alice")
    whole = memory.recall("alice", "billing deploy", k=1, context=4)
    started = time.monotonic()
    huge = memory.recall("alice", "billing deploy", k=1, context=10**12)
    assert time.monotonic() - started < 5.0
    assert [h.turns for h in huge] == [h.turns for h in whole]
    memory.close()
