"""F14: ``update`` (what ``maintain`` writes) is batched under Chroma's max batch size.

Chroma refuses one call with more than ``max_batch_size`` records (5,461 for
the embedded store here), so ``maintain`` failed for a tenant with more
episodes than that.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from episeg.store import ChromaBackend, collection, turns
from episeg.types import Actor, Episode, Turn

DIM = 8


def _episodes(n: int, user: str = "alice") -> list[Episode]:
    vector = np.ones(DIM, np.float32) / np.sqrt(DIM)
    out = []
    for i in range(n):
        turn = Turn(
            actor=Actor.USER, text=f"t{i}", ts=float(i), id=f"s:{i}", user=user, session="s"
        )
        out.append(
            Episode(
                id=f"{i:032x}",
                user=user,
                session="s",
                turns=(turn,),
                summary=f"t{i}",
                opened_at=float(i),
                closed_at=float(i),
                embedding=vector,
                turn_embeddings=vector[None, :],
            )
        )
    return out


def test_update_calls_stay_within_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collection, "_WRITE_BATCH", 50)
    store = ChromaBackend.persistent(tmp_path).store_for("alice")
    episodes = _episodes(120)
    store.add(episodes)
    sizes: list[int] = []
    real = store._handles.create()[0].update

    def spy(*, ids: list[str], **kw: Any) -> None:
        sizes.append(len(ids))
        real(ids=ids, **kw)

    monkeypatch.setattr(store._handles.create()[0], "update", spy)
    store.update([dataclasses.replace(e, strength=0.25) for e in episodes])
    assert sizes == [50, 50, 20]
    assert {e.strength for e in store.list_episodes(limit=200)} == {0.25}


@pytest.mark.slow
def test_more_episodes_than_chromas_max_batch(tmp_path: Path) -> None:
    store = ChromaBackend.persistent(tmp_path).store_for("alice")
    episodes = _episodes(6000)
    store.add(episodes)
    store.update([dataclasses.replace(e, strength=0.5, archived=True) for e in episodes])
    page = store.list_episodes(limit=6000, include_archived=True)
    assert len(page) == 6000 and all(e.archived and e.strength == 0.5 for e in page)


def test_reads_and_deletes_by_id_stay_within_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F107: every call naming ids names at most a page of them (SQLite binds each one)."""
    monkeypatch.setattr(collection, "_WRITE_BATCH", 50)
    monkeypatch.setattr(turns, "_WRITE_BATCH", 50)
    store = ChromaBackend.persistent(tmp_path).store_for("alice")
    episodes = _episodes(120)
    store.add(episodes)
    ids = [e.id for e in episodes]
    episode_rows, turn_rows = store._handles.create()
    sizes: list[int] = []

    def spying(target: Any, name: str) -> None:
        real = getattr(target, name)

        def spy(*args: Any, ids: list[str] | None = None, where: Any = None, **kw: Any) -> Any:
            named = ids if ids is not None else (where or {}).get("episode", {}).get("$in", [])
            sizes.append(len(named))
            if ids is not None:
                kw["ids"] = ids
            if where is not None:
                kw["where"] = where
            return real(*args, **kw)

        monkeypatch.setattr(target, name, spy)

    for name in ("get", "delete"):
        spying(episode_rows, name)
        spying(turn_rows._col, name)
    assert [e.id for e in store.get(list(reversed(ids)))] == list(reversed(ids))
    store.update([dataclasses.replace(e, strength=0.5) for e in episodes])  # reads ownership
    assert set(store.turn_vectors(ids)) == set(ids)
    store.delete(ids)
    assert sizes and max(sizes) == 50 and sum(1 for s in sizes if s) > 4
    assert store.count() == 0 and store.get(ids) == []


@pytest.mark.slow
def test_a_tenant_over_sqlites_variable_limit_can_be_maintained_and_erased(
    tmp_path: Path,
) -> None:
    """F107: 33,000 episodes (SQLite allows 32,766 variables a statement)."""
    store = ChromaBackend.persistent(tmp_path).store_for("alice")
    episodes = _episodes(33_000)
    store.add(episodes)
    ids = [e.id for e in episodes]
    store.update([dataclasses.replace(e, strength=0.5) for e in episodes])
    assert len(store.get(ids)) == 33_000
    store.delete(ids)
    assert store.count() == 0
