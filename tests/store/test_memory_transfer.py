"""Memory.export / import_episodes: recall on the imported tenant finds what the original did."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from episeg.errors import ExportFormatError, TenantError
from episeg.interfaces.transcript import iter_turns
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn

SAMPLE = Path(__file__).resolve().parents[2] / "src/episeg/data/sample_conversation.jsonl"
QUERIES = ["401 on the OAuth callback", "deploy version", "retry with backoff", "jwt key"]


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    mem = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None)
    with SAMPLE.open("rb") as handle:
        mem.ingest(iter_turns(handle, user="alice", session="s1"))
    mem.flush("alice")
    assert mem.episodes("alice")
    return mem


def _hits(memory: Memory, user: str, query: str) -> list[tuple[str, float]]:
    return [(h.episode.id, round(h.score, 6)) for h in memory.recall(user, query, k=5)]


def test_the_imported_tenant_recalls_like_the_original(memory: Memory) -> None:
    text = "".join(memory.export("alice"))
    report = memory.import_episodes("bob", io.StringIO(text))
    assert sorted(report.imported) == sorted(e.id for e in memory.episodes("alice"))
    for query in QUERIES:
        assert _hits(memory, "bob", query) == _hits(memory, "alice", query), query
    # the lexical (BM25) index and the turn index see the imported episodes
    index = memory.store("bob").index
    assert len(index) == len(report.imported) and index.turns.top("OAuth", k=1)
    assert memory.store("bob").inner.count() == len(report.imported)


def test_header_and_binary_files(memory: Memory, tmp_path: Path) -> None:
    out = tmp_path / "alice.jsonl"
    with out.open("wb") as handle:
        count = memory.export_to("alice", handle)
    lines = out.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    assert head["format"] == "episeg-export" and head["version"] == 1 and head["episeg"]
    assert head["embedder"] == {"name": "hashing", "dim": 64}
    assert count == len(lines) - 2 == len(memory.episodes("alice"))
    assert json.loads(lines[-1]) == {"end": "episeg-export", "episodes": count}
    with out.open("rb") as handle:
        assert len(memory.import_episodes("carol", handle).imported) == count


def test_a_file_of_another_embedder_or_tenant_id_is_refused(memory: Memory) -> None:
    lines = list(memory.export("alice"))
    lines[0] = lines[0].replace('"name":"hashing"', '"name":"all-MiniLM-L6-v2"')
    with pytest.raises(ExportFormatError, match="line 1"):
        memory.import_episodes("dan", lines)
    with pytest.raises(TenantError):
        memory.import_episodes(" dan", list(memory.export("alice")))
    assert memory.episodes("dan") == []


def test_a_file_that_would_block_writes_or_recall_is_refused_whole(memory: Memory) -> None:
    """Real Chroma: such a file once stored, then every new episode of the tenant stayed
    pending (vectors of another width) or every recall failed (an episode without a turn)."""
    head, *rest = "".join(memory.export("alice")).splitlines(keepends=True)
    header = json.loads(head)
    undimmed = {**header, "embedder": {"name": "hashing", "dim": None}}
    record = json.loads(rest[0])
    two_wide = "AACAPwAAgD8="  # base64 of two float32 ones
    files = [
        [json.dumps(undimmed) + "\n", json.dumps({**record, "embedding": two_wide}) + "\n"],
        [head, json.dumps({**record, "turns": [], "turn_embeddings": None}) + "\n"],
        [head, rest[0].replace('"strength":', '"strength":NaN,"_":', 1)],
    ]
    for lines in files:
        with pytest.raises(ExportFormatError, match="line 2"):
            memory.import_episodes("bob", io.StringIO("".join([*lines, *rest[1:]])))
        assert memory.episodes("bob") == []
    memory.observe(Turn(actor="user", text="a new note for bob", ts=1.0, user="bob"))
    assert [e.summary for e in memory.flush("bob")] == ["a new note for bob"]
    assert memory.pending_writes() == [] and memory.recall("bob", "note", k=1)
