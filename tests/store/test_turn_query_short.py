"""A short answer of Chroma's vector index is re-scored exactly over the matching rows (F159).

Chroma's HNSW index answers short when it holds many identical vectors (a few
hundred copies of one reply or tool output): an exact-match turn dropped out of
the dense list, and a session-filtered query returned nothing, which recall took
for "the store has no more". Deterministic here: the real collection, with its
query made to lose rows as the index does; then the case itself through
``Memory.recall`` on real Chroma.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings

from episeg.memory import Memory
from episeg.store.turns import TurnRows
from episeg.testing import HashingEmbedder
from episeg.types import Episode, Turn


def _rows(tmp_path: Path, n: int) -> tuple[TurnRows, Any]:
    client = chromadb.PersistentClient(
        path=str(tmp_path), settings=Settings(anonymized_telemetry=False)
    )
    col = client.get_or_create_collection(
        "tu_test", metadata={"episeg_tenant": "alice"}, configuration={"hnsw": {"space": "cosine"}}
    )
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(n, 8)).astype(np.float32)
    col.add(
        ids=[f"e{i}:0" for i in range(n)],
        embeddings=vectors,
        metadatas=[{"session": "B" if i % 2 else "A", "episode": f"e{i}"} for i in range(n)],
    )
    return TurnRows("alice", col), vectors


def _losing(col: Any, keep: int) -> Any:
    real = col.query

    def query(**kw: Any) -> Any:
        res = real(**kw)
        return {
            key: [v[0][:keep]] if v else v for key, v in res.items() if key in ("ids", "distances")
        }

    return query


@pytest.mark.parametrize("where", [None, {"session": "B"}])
def test_a_short_answer_is_rescored_exactly(tmp_path: Path, where: Any) -> None:
    rows, vectors = _rows(tmp_path, 40)
    query = vectors[7]  # e7, in session B
    want = [m.episode_id for m in rows.query(query, 5, where=where)]
    assert want[0] == "e7"
    rows._col.query = _losing(rows._col, keep=0)  # the index lost every row
    assert [m.episode_id for m in rows.query(query, 5, where=where)] == want
    rows._col.query = _losing(rows._col, keep=1)
    assert [m.episode_id for m in rows.query(query, 50, where=where)][:5] == want


def test_a_short_answer_that_is_all_there_is_stands(tmp_path: Path) -> None:
    rows, vectors = _rows(tmp_path, 6)
    found = rows.query(vectors[1], 50, where={"session": "B"})
    assert sorted(m.episode_id for m in found) == ["e1", "e3", "e5"]


def _episode(eid: str, texts: list[str], session: str, t0: float) -> Episode:
    """An episode without turn vectors: ``Memory.store_episodes`` embeds its turns."""
    turns = tuple(
        Turn(
            actor="user" if n % 2 == 0 else "assistant",
            text=t,
            ts=t0 + n,
            user="alice",
            session=session,
        )
        for n, t in enumerate(texts)
    )
    vector = np.asarray(HashingEmbedder(dim=64).embed([" ".join(texts)])[0], np.float32)
    return Episode(
        id=eid,
        user="alice",
        session=session,
        summary=texts[0],
        opened_at=t0,
        closed_at=t0 + len(texts) - 1,
        turns=turns,
        embedding=vector,
    )


@pytest.mark.slow
def test_recall_finds_the_other_sessions_match_among_many_identical_turns(
    tmp_path: Path,
) -> None:
    """800 episodes repeat one line in session A; the match is in session B (the review's
    case: without the exact re-scoring this recall returned nothing)."""
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    copies = [
        _episode(f"a{i}", ["is it not there then", f"ticket {i}"], "A", 1000.0 + 10 * i)
        for i in range(800)
    ]
    memory.store_episodes([*copies, _episode("b0", ["is it not there", "no"], "B", 90_000.0)])
    hits = memory.recall("alice", "is it not there", k=3, session="B")  # stop words: dense only
    assert [h.episode.id for h in hits] == ["b0"]
    memory.close()
