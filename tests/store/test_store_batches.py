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

from episeg.store import ChromaBackend, collection
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
