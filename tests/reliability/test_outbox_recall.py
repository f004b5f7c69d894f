"""F122: a closed episode waiting in the outbox is recalled (as an open hit) until it is stored.

Before, an episode left recall between its close and a successful store write:
its turns were no longer open and it was not stored yet. After one tenant's
failed write the store is marked down for ``retry_interval``, so every
tenant's new episodes waited there too (review 4, R4-R2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from episeg.errors import StoreUnavailableError
from episeg.memory import Memory
from episeg.store import collection
from episeg.testing import HashingEmbedder
from episeg.types import Turn

REAL_ADD = collection.ChromaEpisodeStore.add_merged


def memory(tmp_path: Path, retry_interval: float = 0.0) -> Memory:
    embedder = HashingEmbedder(dim=64)
    return Memory(
        path=tmp_path, embedder=embedder, judge=None, scorer=None, retry_interval=retry_interval
    )


def seen(memory: Memory, user: str, query: str) -> list[tuple[str, bool, list[str]]]:
    return [(h.episode.id, h.open, [t.text for t in h.turns]) for h in memory.recall(user, query)]


def test_an_episode_the_store_refused_is_recalled_until_it_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = memory(tmp_path)
    m.observe(Turn(actor="user", text="zebra quartz invoice 4411", ts=1.0, user="alice"))

    def refuse(self: object, episodes: object) -> None:
        raise StoreUnavailableError("simulated: Chroma refuses writes")

    monkeypatch.setattr(collection.ChromaEpisodeStore, "add_merged", refuse)
    assert m.flush("alice") == []
    [waiting] = m.pending_writes()
    assert seen(m, "alice", "zebra quartz") == [(waiting.id, True, ["zebra quartz invoice 4411"])]
    assert seen(m, "bob", "zebra quartz") == []  # still the asking tenant's only
    monkeypatch.setattr(collection.ChromaEpisodeStore, "add_merged", REAL_ADD)
    m.retry_pending()
    assert m.pending_writes() == []
    assert seen(m, "alice", "zebra quartz") == [(waiting.id, False, ["zebra quartz invoice 4411"])]
    m.close()


def test_another_tenants_failed_write_does_not_hide_an_episode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = memory(tmp_path, retry_interval=60.0)  # bob's failure: the store is down for a minute

    def refuse_bob(self: collection.ChromaEpisodeStore, episodes: Any) -> Any:
        if self.tenant == "bob":
            raise StoreUnavailableError("simulated: bob's write failed")
        return REAL_ADD(self, episodes)

    monkeypatch.setattr(collection.ChromaEpisodeStore, "add_merged", refuse_bob)
    m.observe(Turn(actor="user", text="bob's note", ts=1.0, user="bob"))
    m.flush("bob")
    m.observe(Turn(actor="user", text="zebra quartz invoice 4411", ts=1.0, user="alice"))
    assert m.flush("alice") == [] and {e.user for e in m.pending_writes()} == {"alice", "bob"}
    hits = seen(m, "alice", "zebra quartz")
    assert [texts for _, _, texts in hits] == [["zebra quartz invoice 4411"]]
    m.close()
