"""The ``Memory`` most tests build (hashing embedder, no judge, no scorer) and its export."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from episeg.memory import Memory
from episeg.recall.hits import RecallHit
from episeg.testing import HashingEmbedder


def hashing_memory(path: Path, **options: Any) -> Memory:
    """A ``Memory`` on ``path`` with a 64-dimension hashing embedder, no judge and no scorer."""
    return Memory(path=path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None, **options)


def export_record(memory: Memory, user: str = "alice") -> tuple[str, dict[str, Any], str]:
    """``user``'s export of one episode: its header line, the episode's record, its trailer."""
    out = io.StringIO()
    memory.export_to(user, out)
    head, line, tail = out.getvalue().splitlines()
    return head, json.loads(line), tail


def returned_words(hits: list[RecallHit]) -> int:
    """Every word ``hits`` return: their turns, each summary, and 2 for each hit's dates
    (written out here, not taken from the code under test)."""
    turns = sum(len(t.text.split()) for h in hits for t in h.turns)
    return turns + sum(len(h.episode.summary.split()) + 2 for h in hits)
