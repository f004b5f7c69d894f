"""Memory.episode / update_episode / unarchive / tenants and recall's metadata and min_score
filters, through the real embedded Chroma (HashingEmbedder for speed)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from episeg.errors import (
    EpisodeEditError,
    EpisodeNotFoundError,
    MetadataError,
    StoreUnavailableError,
)
from episeg.interfaces.aio import AsyncMemory
from episeg.memory import Memory
from episeg.testing import HashingEmbedder, InMemoryBackend
from episeg.types import Episode, Turn

DAY = 86400.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _memory(path: Path, clock: Clock | None = None, **kw: object) -> Memory:
    return Memory(
        path=path,
        embedder=HashingEmbedder(dim=64),
        judge=None,
        scorer=None,
        clock=clock or Clock(),
        **kw,  # type: ignore[arg-type]
    )


def _store(mem: Memory, user: str, session: str, text: str, ts: float = 1.0) -> Episode:
    mem.observe(Turn(actor="user", text=text, ts=ts, user=user, session=session))
    (episode,) = mem.flush(user, session)
    return episode


def test_get_edit_and_reopen(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    ep = _store(mem, "alice", "s1", "rotate the jwt signing key")
    assert mem.episode("alice", ep.id) == ep
    edited = mem.update_episode(
        "alice",
        ep.id,
        summary="jwt key rotation",
        pinned=True,
        salience=9,
        metadata={"project": "auth", "ticket": 4211},
    )
    assert edited.summary == "jwt key rotation" and edited.pinned
    assert edited.salience is not None and edited.salience.scorer == "user"
    mem.close()
    again = _memory(tmp_path)  # durable: a new process reads the edit back
    got = again.episode("alice", ep.id)
    assert (got.summary, got.pinned, got.metadata) == (
        "jwt key rotation",
        True,
        {"project": "auth", "ticket": 4211},
    )
    assert got.salience == edited.salience


def test_tenant_isolation_on_every_path(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    ep = _store(mem, "alice", "s1", "alice private note")
    for call in (
        lambda: mem.episode("bob", ep.id),
        lambda: mem.update_episode("bob", ep.id, summary="bob wrote this"),
        lambda: mem.unarchive("bob", ep.id),
    ):
        with pytest.raises(EpisodeNotFoundError):
            call()
    assert mem.episode("alice", ep.id) == ep


def test_a_bad_edit_changes_nothing(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    ep = _store(mem, "alice", "s1", "deploy prod")
    with pytest.raises(MetadataError):
        mem.update_episode("alice", ep.id, summary="new", metadata={"k": [1]})  # type: ignore[dict-item]
    with pytest.raises(EpisodeEditError):
        mem.update_episode("alice", ep.id, pinned=True, salience=11)
    assert mem.episode("alice", ep.id) == ep


def test_pinned_is_never_decayed_nor_archived_and_unarchive(tmp_path: Path) -> None:
    clock = Clock()
    mem = _memory(tmp_path, clock)
    kept = _store(mem, "alice", "s1", "the pinned fact", ts=clock.now)
    faded = _store(mem, "alice", "s2", "a passing remark", ts=clock.now)
    mem.update_episode("alice", kept.id, pinned=True)
    clock.now += 400 * DAY
    report = mem.maintain("alice", archive=True)
    assert report.archived == 1
    assert not mem.episode("alice", kept.id).archived
    assert mem.episode("alice", kept.id).strength == kept.strength
    assert mem.episode("alice", faded.id).archived
    assert [h.episode.id for h in mem.recall("alice", "passing remark", k=5)] == []
    back = mem.unarchive("alice", faded.id)
    assert not back.archived and back.last_accessed == clock.now
    assert mem.maintain("alice", archive=True).archived == 0  # not re-archived at once
    assert [h.episode.id for h in mem.recall("alice", "passing remark", k=5)] == [faded.id]


def test_maintenance_never_undoes_a_use_confirmed_during_its_scan(tmp_path: Path) -> None:
    # Found by review: maintain wrote back the state it had read, so a confirm_used that
    # finished between its read and its write was lost and the episode just used archived.
    clock = Clock()
    mem = _memory(tmp_path, clock)
    used = _store(mem, "alice", "s1", "deploy the billing service", ts=clock.now)
    faded = _store(mem, "alice", "s2", "a passing remark", ts=clock.now)
    clock.now += 400 * DAY
    store = mem.store("alice")
    scan = store.list_episodes

    def scan_then_use(**kw: object) -> list[Episode]:
        page = scan(**kw)  # type: ignore[arg-type]
        if page and used.id in {e.id for e in page}:
            done = threading.Thread(target=mem.confirm_used, args=("alice", [used.id]))
            done.start()  # another request, while maintenance works from its scan
            done.join(10)
        return page

    store.list_episodes = scan_then_use  # type: ignore[method-assign]
    report = mem.maintain("alice", archive=True)
    store.list_episodes = scan  # type: ignore[method-assign]
    now = mem.episode("alice", used.id)
    assert now.recall_count == 1 and not now.archived and now.last_accessed == clock.now
    assert mem.episode("alice", faded.id).archived and report.archived == 1
    assert [h.episode.id for h in mem.recall("alice", "billing service", k=5)] == [used.id]


def test_user_salience_survives_a_rescore(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    ep = _store(mem, "alice", "s1", "prod outage root cause")
    mine = mem.update_episode("alice", ep.id, salience=10)
    mem.store_episodes([mine])  # scoring again keeps a stored salience
    assert mem.episode("alice", ep.id).salience == mine.salience


def test_edit_waits_for_the_store(tmp_path: Path) -> None:
    backend = InMemoryBackend()
    mem = _memory(tmp_path, backend=backend, retry_interval=0.0)
    mem.observe(Turn(actor="user", text="written while the store is down", ts=1.0, user="alice"))
    backend.down = True
    assert mem.flush("alice") == []
    (pending,) = mem.pending_writes()
    with pytest.raises(StoreUnavailableError):
        mem.update_episode("alice", pending.id, pinned=True)
    backend.down = False
    assert mem.update_episode("alice", pending.id, pinned=True).pinned
    assert mem.pending_writes() == []


def test_tenants_lists_stored_and_open(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    _store(mem, "alice", "s1", "one")
    mem.observe(Turn(actor="user", text="still open", ts=1.0, user="bob"))
    assert mem.tenants() == ["alice", "bob"]


def test_recall_filters_by_metadata_and_min_score(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    auth = _store(mem, "alice", "s1", "login token expired after the key rotation")
    other = _store(mem, "alice", "s2", "login page css is broken on mobile")
    mem.update_episode("alice", auth.id, metadata={"project": "auth", "n": 1})
    mem.update_episode("alice", other.id, metadata={"project": "web"})
    both = mem.recall("alice", "login", k=5)
    assert {h.episode.id for h in both} == {auth.id, other.id}
    only = mem.recall("alice", "login", k=5, metadata={"project": "auth"})
    assert [h.episode.id for h in only] == [auth.id]
    assert mem.recall("alice", "login", k=5, metadata={"n": True}) == []
    assert mem.recall("alice", "login", k=5, metadata={"project": "nope"}) == []
    cut = max(h.score for h in both)
    assert [h.score for h in mem.recall("alice", "login", k=5, min_score=cut)] == [cut]
    assert mem.recall("alice", "login", k=5, min_score=cut + 1.0) == []
    with pytest.raises(MetadataError):
        mem.recall("alice", "login", metadata={"k": [1]})  # type: ignore[dict-item]


def test_async_twins(tmp_path: Path) -> None:
    async def run() -> tuple[bool, list[str]]:
        async with AsyncMemory(_memory(tmp_path)) as memory:
            await memory.observe(Turn(actor="user", text="async note", ts=1.0, user="alice"))
            (ep,) = await memory.flush("alice")
            await memory.update_episode("alice", ep.id, pinned=True)
            got = await memory.episode("alice", ep.id)
            await memory.unarchive("alice", ep.id)
            return got.pinned, await memory.tenants()

    assert asyncio.run(run()) == (True, ["alice"])
