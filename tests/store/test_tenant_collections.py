"""A read never makes a tenant's collections; its first write does (real Chroma)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from store_helpers import make_episode

from episeg.errors import EpisodeNotFoundError, StoreError, TenantError
from episeg.memory import Memory
from episeg.store import ChromaBackend
from episeg.testing import HashingEmbedder


def names(backend: ChromaBackend) -> list[str]:
    return sorted(c.name for c in backend._client.list_collections())


def test_every_read_of_an_empty_tenant_reads_empty_and_makes_nothing(tmp_path: Path) -> None:
    backend = ChromaBackend.persistent(str(tmp_path))
    store = backend.store_for("nobody")
    vector = np.array([1.0, 0.0], np.float32)
    assert store.get(["e1"]) == []
    assert store.query(vector, k=3) == []
    assert store.list_episodes() == []
    assert store.count() == 0 and store.episode_ids() == []
    assert store.query_turns(vector, 3) == []
    assert store.turn_vectors(["e1"]) == {}
    store.delete(["e1"])  # unknown ids are ignored, as in a tenant that has collections
    with pytest.raises(StoreError, match="unknown episode"):
        store.update([make_episode("e1", [1, 0])])
    with pytest.raises(EpisodeNotFoundError):
        store.revise([make_episode("e1", [1, 0])])
    assert names(backend) == []
    assert backend.tenants() == []


def test_the_first_write_makes_them_and_an_earlier_handle_sees_it(tmp_path: Path) -> None:
    backend = ChromaBackend.persistent(str(tmp_path))
    early = backend.store_for("alice")  # opened while alice has nothing
    writer = backend.store_for("alice")  # another process would hold its own
    assert early.count() == 0
    writer.add([make_episode("e1", [1, 0])])
    assert len(names(backend)) == 2
    assert [e.id for e in early.get(["e1"])] == ["e1"]  # looked again, found
    assert early.count() == 1
    assert backend.tenants() == ["alice"]


def test_a_foreign_stamp_is_refused_when_the_collection_appears(tmp_path: Path) -> None:
    backend = ChromaBackend.persistent(str(tmp_path))
    early = backend.store_for("alice")
    other = backend.store_for("alice")
    other.add([make_episode("e1", [1, 0])])
    other._handles.create()[0].modify(metadata={"episeg_tenant": "mallory"})
    with pytest.raises(TenantError, match="belongs to 'mallory'"):
        early.count()


def test_memory_reads_of_users_that_never_wrote_make_no_collection(tmp_path: Path) -> None:
    with Memory(path=tmp_path, embedder=HashingEmbedder()) as memory:
        assert memory.recall("nobody", "deploy the api") == []
        assert memory.episodes("nobody-else") == []
        assert isinstance(memory.backend, ChromaBackend)
        assert names(memory.backend) == []


def test_reads_under_an_erasure_read_the_tenant_as_it_is_now(tmp_path: Path) -> None:
    """Handles held while the tenant is erased (DELETE /v1/tenant beside a read) read empty."""
    backend = ChromaBackend.persistent(str(tmp_path))
    reader = backend.store_for("alice")
    reader.add([make_episode("e1", [1, 0])])
    assert reader.count() == 1  # its handles are open
    assert backend.drop_tenant("alice")
    vector = np.array([1.0, 0.0], np.float32)
    assert reader.get(["e1"]) == [] and reader.list_episodes() == []
    assert reader.count() == 0 and reader.query(vector, k=2) == []
    assert reader.query_turns(vector, 2) == [] and reader.turn_vectors(["e1"]) == {}
    assert names(backend) == []  # reading did not make them again
    reader.add([make_episode("e2", [0, 1])])  # a write after the erasure makes them anew
    assert [e.id for e in reader.list_episodes()] == ["e2"] and reader.episode_ids() == ["e2"]


def test_a_write_under_an_erasure_lands_in_new_collections(tmp_path: Path) -> None:
    backend = ChromaBackend.persistent(str(tmp_path))
    writer = backend.store_for("alice")
    writer.add([make_episode("e1", [1, 0])])
    backend.drop_tenant("alice")
    writer.add([make_episode("e2", [0, 1])])
    assert [e.id for e in backend.store_for("alice").list_episodes()] == ["e2"]


def test_a_row_whose_vector_is_gone_is_skipped(tmp_path: Path) -> None:
    """Chroma can return a row deleted under the read without its vector: it is not decoded."""
    backend = ChromaBackend.persistent(str(tmp_path))
    store = backend.store_for("alice")
    store.add([make_episode("e1", [1, 0]), make_episode("e2", [0, 1])])
    found = store._handles.find()
    assert found is not None
    res = found[0].get(ids=["e1", "e2"], include=["metadatas", "embeddings"])
    res["embeddings"] = res["embeddings"][:1]  # as a read beside a delete returned it
    assert [e.id for e in store._handles.decode_rows(res)] == [res["ids"][0]]


def test_a_listing_beside_a_delete_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vanished-id retry of reads by id (F34) covers the listing too (review 3)."""
    from chromadb.errors import InternalError

    store = ChromaBackend.persistent(str(tmp_path)).store_for("alice")
    store.add([make_episode("e1", [1, 0])])
    found = store._handles.find()
    assert found is not None
    real, calls = found[0].get, []

    def flaky(**kw: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise InternalError("Error executing plan: Error finding id")
        return real(**kw)

    monkeypatch.setattr(found[0], "get", flaky)
    assert [e.id for e in store.list_episodes()] == ["e1"] and len(calls) == 2
