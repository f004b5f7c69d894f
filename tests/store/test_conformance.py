"""Store conformance: every StoreBackend behaves the same (Chroma embedded, Chroma server, memory).

One suite, parametrised over the backends; a new backend passes it before Memory may use it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from episeg.errors import StoreError, TenantError
from episeg.store import ChromaBackend
from episeg.testing import ChromaServer, InMemoryBackend
from episeg.typing import EpisodeStore, StoreBackend
from tests.store.store_helpers import make_episode, unit


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.slow), "memory"])
def any_backend(request: pytest.FixtureRequest, tmp_path: Path) -> StoreBackend:
    if request.param == "embedded":
        return ChromaBackend.persistent(tmp_path / "chroma")
    if request.param == "server":
        server: ChromaServer = request.getfixturevalue("chroma_server")
        return server.backend()
    return InMemoryBackend()


@pytest.fixture
def store(any_backend: StoreBackend, tenant_name: Callable[[str], str]) -> EpisodeStore:
    return any_backend.store_for(tenant_name("alice"))


class TestProtocols:
    def test_backend_and_store_implement_the_protocols(
        self, any_backend: StoreBackend, store: EpisodeStore
    ) -> None:
        assert isinstance(any_backend, StoreBackend)
        assert isinstance(store, EpisodeStore)
        assert isinstance(any_backend.heartbeat(), int)

    def test_invalid_tenant_is_refused(self, any_backend: StoreBackend) -> None:
        with pytest.raises(TenantError):
            any_backend.store_for(" padded ")


class TestWriteRead:
    def test_add_then_get_round_trips(self, store: EpisodeStore) -> None:
        ep = make_episode("a", [1, 0, 0], text="deploy prod")
        store.add([ep])
        (got,) = store.get(["a"])
        assert got.id == "a" and got.summary == "deploy prod"
        assert [t.text for t in got.turns] == [t.text for t in ep.turns]
        assert got.closing_verdicts == ep.closing_verdicts
        assert store.get(["a", "missing", "a"]) == [got]

    def test_re_adding_keeps_recall_state(self, store: EpisodeStore) -> None:
        store.add([make_episode("a", [1, 0, 0])])
        store.update([dataclasses.replace(store.get(["a"])[0], recall_count=3, strength=4.0)])
        store.add([make_episode("a", [1, 0, 0], text="again")])
        (got,) = store.get(["a"])
        assert (got.summary, got.recall_count, got.strength) == ("again", 3, 4.0)
        assert store.count() == 1

    def test_query_is_nearest_first_and_skips_archived(self, store: EpisodeStore) -> None:
        store.add(
            [
                make_episode("near", [1, 0.1, 0]),
                make_episode("far", [0, 1, 0]),
                make_episode("gone", [1, 0, 0], archived=True),
            ]
        )
        hits = store.query(unit([1, 0, 0]), 2)
        assert [e.id for e, _ in hits] == ["near", "far"]
        assert hits[0][1] > hits[1][1]
        with pytest.raises(ValueError):
            store.query(unit([1, 0, 0]), 0)

    def test_list_pages_and_archived(self, store: EpisodeStore) -> None:
        store.add([make_episode(f"e{i}", [1, i, 0]) for i in range(5)])
        store.add([make_episode("old", [0, 0, 1], archived=True)])
        pages = [store.list_episodes(limit=2, offset=o) for o in (0, 2, 4)]
        assert sorted(e.id for page in pages for e in page) == [f"e{i}" for i in range(5)]
        assert len(store.list_episodes(include_archived=True)) == 6
        assert store.count() == 6
        with pytest.raises(ValueError):
            store.list_episodes(limit=0)

    def test_update_refuses_unknown_ids_and_writes_nothing(self, store: EpisodeStore) -> None:
        store.add([make_episode("a", [1, 0, 0])])
        mine = dataclasses.replace(store.get(["a"])[0], recall_count=9)
        with pytest.raises(StoreError):
            store.update([mine, make_episode("nope", [0, 1, 0])])
        assert store.get(["a"])[0].recall_count == 0

    def test_delete_ignores_unknown_ids(self, store: EpisodeStore) -> None:
        store.add([make_episode("a", [1, 0, 0]), make_episode("b", [0, 1, 0])])
        store.delete(["a", "unknown"])
        assert [e.id for e in store.list_episodes()] == ["b"]


class TestTenants:
    def test_tenants_see_only_their_own(
        self, any_backend: StoreBackend, tenant_name: Callable[[str], str]
    ) -> None:
        alice, bob = tenant_name("alice"), tenant_name("bob")
        a, b = any_backend.store_for(alice), any_backend.store_for(bob)
        a.add([make_episode("same", [1, 0, 0], text="alice's")])
        b.add([make_episode("same", [1, 0, 0], text="bob's")])
        b.delete(["same"])
        assert [e.summary for e in a.get(["same"])] == ["alice's"]
        assert b.get(["same"]) == [] and b.count() == 0
        with pytest.raises(StoreError):
            b.update(a.get(["same"]))
        assert alice in any_backend.tenants()
