"""One tenant's refused write holds back that tenant's writes only (F143).

Before, any failed write marked the store down for ``retry_interval`` for every
tenant: a tenant whose writes Chroma refuses (here a collection of another
dimension, which never heals) kept every other tenant's new episodes in the
outbox, for as long as it kept failing. Now a refusal holds back the refused
tenant alone; an unreachable store still holds back everyone (each write would
wait for it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from episeg.errors import StoreError
from episeg.memory import Memory
from episeg.store import ChromaBackend
from episeg.store.tenants import collection_name
from episeg.testing import HashingEmbedder, InMemoryBackend
from episeg.testing.memory_store import InMemoryEpisodeStore
from episeg.types import Episode, Turn

_WAIT = 600.0  # seconds: longer than the test, so only what is not held back is written


class _RefusingStore(InMemoryEpisodeStore):
    def add(self, episodes: Sequence[Episode]) -> None:
        raise StoreError(f"Chroma rejected the write of {self.tenant}: simulated refusal")


class _RefusesAlice(InMemoryBackend):
    """Every write of tenant ``alice`` is refused (a StoreError, not an outage)."""

    def store_for(self, tenant: str) -> InMemoryEpisodeStore:
        if tenant == "alice":
            self.check()
            return _RefusingStore(tenant, self)
        return super().store_for(tenant)


def _memory(tmp_path: Path, backend: object, retry_interval: float = _WAIT) -> Memory:
    return Memory(
        path=tmp_path,
        embedder=HashingEmbedder(),
        judge=None,
        scorer=None,
        backend=backend,  # type: ignore[arg-type]
        retry_interval=retry_interval,
    )


def _close_one(memory: Memory, user: str, text: str) -> list[Episode]:
    memory.observe(Turn(actor="user", text=text, ts=1.0, user=user, session="s"))
    return memory.flush(user)


def test_a_refused_tenant_does_not_send_another_tenants_episodes_to_the_outbox(
    tmp_path: Path,
) -> None:
    memory = _memory(tmp_path, _RefusesAlice())
    assert _close_one(memory, "alice", "alice rotates the jwt key") == []
    assert [e.user for e in memory.pending_writes()] == ["alice"]
    stored = _close_one(memory, "bob", "bob deploys the release")
    assert [e.user for e in stored] == ["bob"]  # written now, not kept for 600 s
    assert [e.user for e in memory.pending_writes()] == ["alice"]
    assert memory.episode("bob", stored[0].id).turns[0].text == "bob deploys the release"
    # alice's own next episode waits behind her refused one, without a new attempt
    assert _close_one(memory, "alice", "alice again") == []
    assert [e.user for e in memory.pending_writes()] == ["alice", "alice"]


def test_an_unreachable_store_still_holds_back_every_tenant(tmp_path: Path) -> None:
    backend = InMemoryBackend()
    memory = _memory(tmp_path, backend)
    backend.down = True
    assert _close_one(memory, "alice", "alice rotates the jwt key") == []
    backend.down = False  # back, but the wait of the outage is not over
    assert _close_one(memory, "bob", "bob deploys the release") == []
    assert sorted(e.user for e in memory.pending_writes()) == ["alice", "bob"]
    assert backend.writes == []  # nobody's write was tried during the wait
    assert sorted(e.user for e in memory.retry_pending()) == ["alice", "bob"]  # explicit retry
    assert memory.pending_writes() == []


def test_retry_due_drains_the_tenants_whose_wait_is_over(tmp_path: Path) -> None:
    memory = _memory(tmp_path, _RefusesAlice(), retry_interval=0.0)
    assert _close_one(memory, "alice", "alice rotates the jwt key") == []
    assert memory.retry_due() == []  # due, tried, refused again: still waiting
    assert [e.user for e in memory.pending_writes()] == ["alice"]


@pytest.mark.slow
def test_through_real_chroma_a_tenant_whose_collection_chroma_refuses(tmp_path: Path) -> None:
    """Alice's episode collection holds 2-d vectors: Chroma refuses her 64-d episodes."""
    backend = ChromaBackend.persistent(tmp_path / "chroma")
    broken = backend._client.get_or_create_collection(
        collection_name("alice"), metadata={"episeg_tenant": "alice"}
    )
    broken.add(ids=["x"], embeddings=[[1.0, 0.0]], documents=["old"])
    memory = _memory(tmp_path / "mem", backend)
    assert _close_one(memory, "alice", "alice rotates the jwt key") == []
    stored = _close_one(memory, "bob", "bob deploys the release")
    assert [e.user for e in stored] == ["bob"]
    assert [e.user for e in memory.pending_writes()] == ["alice"]
    assert memory.episode("bob", stored[0].id).turns[0].text == "bob deploys the release"
