"""Replacing a stored episode by one with fewer turns deletes the turn rows past its end.

Before the fix the add only upserted turn rows: the old rows past the new
turn count stayed searchable (a removed turn's vector still matched) and
export dropped the episode's turn vectors (3 rows for 1 turn).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from episeg.store import ChromaBackend, turns
from episeg.store.collection import ChromaEpisodeStore
from episeg.types import Episode, Turn

DIM = 8


def basis(i: int) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i] = 1.0
    return v


def episode(eid: str, n: int, *, first: int = 0) -> Episode:
    rows = np.stack([basis(first + p) for p in range(n)]) if n else None
    mean = basis(first) if rows is None else rows.mean(axis=0)
    return Episode(
        id=eid,
        user="alice",
        session="s",
        summary=eid,
        turns=tuple(Turn(actor="user", text=f"{eid} turn {p}", ts=float(p)) for p in range(n)),
        opened_at=0.0,
        closed_at=float(n),
        embedding=mean / np.linalg.norm(mean),
        turn_embeddings=rows,
    )


def rows_of(store: ChromaEpisodeStore, eid: str) -> list[int]:
    got = store._handles.create()[1]._col.get(where={"episode": eid}, include=["metadatas"])
    return sorted(int(m["pos"]) for m in got["metadatas"])


@pytest.fixture
def store(tmp_path: Path) -> ChromaEpisodeStore:
    return ChromaBackend.persistent(tmp_path).store_for("alice")


def test_fewer_turns_deletes_the_rows_past_the_end(store: ChromaEpisodeStore) -> None:
    store.add([episode("trip", 3), episode("other", 3, first=3)])
    store.add([episode("trip", 1)])
    assert rows_of(store, "trip") == [0]
    assert rows_of(store, "other") == [0, 1, 2]  # other episodes keep theirs
    removed = store.query_turns(basis(1), 8)
    assert ("trip", 1) not in {(m.episode_id, m.position) for m in removed}
    assert ("trip", 2) not in {(m.episode_id, m.position) for m in removed}
    vectors = store.turn_vectors(["trip", "other"])
    assert vectors["trip"].shape == (1, DIM)  # export sees one row for one turn
    assert vectors["other"].shape == (3, DIM)
    assert store._handles.create()[1].count() == 4


def test_same_or_more_turns_and_no_turns(store: ChromaEpisodeStore) -> None:
    store.add([episode("e", 2)])
    store.add([episode("e", 2)])
    assert rows_of(store, "e") == [0, 1]
    store.add([episode("e", 4)])
    assert rows_of(store, "e") == [0, 1, 2, 3]
    store.add([episode("e", 0)])  # every turn removed: no row may stay
    assert rows_of(store, "e") == []


def test_leftover_rows_of_an_earlier_write_go_too(store: ChromaEpisodeStore) -> None:
    store.add([episode("e", 1)])
    store._handles.create()[1]._col.upsert(  # as the unfixed add left them
        ids=["e:1", "e:2"],
        metadatas=[{"tenant": "alice", "episode": "e", "pos": p, "session": "s"} for p in (1, 2)],
        embeddings=np.stack([basis(1), basis(2)]),
    )
    store.add([episode("e", 1)])
    assert rows_of(store, "e") == [0]


def test_trim_stays_within_the_batch(
    store: ChromaEpisodeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [f"e{i}" for i in range(5)]
    store.add([episode(i, 3) for i in ids])
    monkeypatch.setattr(turns, "_WRITE_BATCH", 2)
    sizes: list[int] = []
    real = store._handles.create()[1]._col.delete

    def spy(**kw: Any) -> None:
        where = kw["where"]["$and"]
        sizes.append(len(next(c["episode"]["$in"] for c in where if "episode" in c)))
        real(**kw)

    monkeypatch.setattr(store._handles.create()[1]._col, "delete", spy)
    store.add([episode(i, 1) for i in ids])
    assert sizes == [2, 2, 1]
    assert all(rows_of(store, i) == [0] for i in ids)


def test_new_episodes_delete_nothing(
    store: ChromaEpisodeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(store._handles.create()[1]._col, "delete", lambda **kw: calls.append(kw))
    store.add([episode("a", 2), episode("b", 3)])
    assert calls == []
    assert rows_of(store, "a") == [0, 1] and rows_of(store, "b") == [0, 1, 2]
