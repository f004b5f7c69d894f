"""The store suite, run against embedded Chroma and a real `chroma run` server."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest
from store_helpers import make_episode, unit

from episeg.errors import StoreError, TenantError
from episeg.store import ChromaBackend, ChromaEpisodeStore
from episeg.typing import EpisodeStore

TenantName = Callable[[str], str]


class TestChromaEpisodeStore:
    def test_is_an_episode_store(self, backend: ChromaBackend, tenant_name: TenantName) -> None:
        store = backend.store_for(tenant_name("a"))
        assert isinstance(store, EpisodeStore)
        assert isinstance(store, ChromaEpisodeStore)

    def test_add_get_round_trip(self, backend: ChromaBackend, tenant_name: TenantName) -> None:
        store = backend.store_for(tenant_name("a"))
        ep = make_episode(
            "e1",
            [1, 2, 3, 4],
            text="deploy v2",
            parent_id="p0",
            recall_count=2,
            last_accessed=1234.5,
            strength=3.0,
        )
        store.add([ep])
        (back,) = store.get(["e1"])
        assert back == ep
        assert back.embedding is not None and ep.embedding is not None
        np.testing.assert_array_equal(back.embedding, ep.embedding)

    def test_get_keeps_order_and_skips_unknown(
        self, backend: ChromaBackend, tenant_name: TenantName
    ) -> None:
        store = backend.store_for(tenant_name("a"))
        store.add([make_episode("x", [1, 0]), make_episode("y", [0, 1])])
        assert [e.id for e in store.get(["y", "nope", "x", "y"])] == ["y", "x"]
        assert store.get([]) == []

    def test_add_is_idempotent(self, backend: ChromaBackend, tenant_name: TenantName) -> None:
        store = backend.store_for(tenant_name("a"))
        eps = [make_episode(f"e{i}", [1, i, 0]) for i in range(5)]
        store.add(eps)
        store.add(eps)
        store.add([eps[0], dataclasses.replace(eps[0], summary="newer")])
        assert store.count() == 5
        assert store.get(["e0"])[0].summary == "newer"

    def test_re_adding_keeps_recall_state(
        self, backend: ChromaBackend, tenant_name: TenantName
    ) -> None:
        store = backend.store_for(tenant_name("a"))
        ep = make_episode("e1", [1, 0])
        store.add([ep])
        store.update(
            [
                dataclasses.replace(
                    ep, recall_count=4, last_accessed=9.5, strength=5.0, archived=True
                )
            ]
        )
        store.add([dataclasses.replace(ep, summary="replayed")])
        (back,) = store.get(["e1"])
        assert (
            back.summary,
            back.recall_count,
            back.last_accessed,
            back.strength,
            back.archived,
        ) == ("replayed", 4, 9.5, 5.0, True)
        store.add([make_episode("e2", [0, 1], last_accessed=3.0)])
        assert store.get(["e2"])[0].last_accessed == 3.0

    def test_query_orders_by_cosine(self, backend: ChromaBackend, tenant_name: TenantName) -> None:
        store = backend.store_for(tenant_name("a"))
        store.add(
            [
                make_episode("near", [1, 0.1, 0]),
                make_episode("far", [0, 0, 1]),
                make_episode("mid", [1, 1, 0]),
            ]
        )
        hits = store.query(np.array([1.0, 0.0, 0.0]), k=3)
        assert [e.id for e, _ in hits] == ["near", "mid", "far"]
        sims = [s for _, s in hits]
        assert sims[0] == pytest.approx(float(unit([1, 0.1, 0])[0]), abs=1e-5)
        assert sims[1] == pytest.approx(2**-0.5, abs=1e-5)
        assert sims[2] == pytest.approx(0.0, abs=1e-5)

    def test_archived_excluded_from_query_and_list(
        self, backend: ChromaBackend, tenant_name: TenantName
    ) -> None:
        store = backend.store_for(tenant_name("a"))
        store.add([make_episode("live", [1, 0]), make_episode("old", [1, 0.01], archived=True)])
        assert [e.id for e, _ in store.query(np.array([1.0, 0.0]), k=5)] == ["live"]
        both = store.query(np.array([1.0, 0.0]), k=5, include_archived=True)
        assert {e.id for e, _ in both} == {"live", "old"}
        assert [e.id for e in store.list_episodes()] == ["live"]
        assert {e.id for e in store.list_episodes(include_archived=True)} == {"live", "old"}
        assert store.count() == 2

    def test_list_pages(self, backend: ChromaBackend, tenant_name: TenantName) -> None:
        store = backend.store_for(tenant_name("a"))
        store.add([make_episode(f"e{i}", [1, i]) for i in range(7)])
        pages = [store.list_episodes(limit=3, offset=o) for o in (0, 3, 6)]
        assert [len(p) for p in pages] == [3, 3, 1]
        assert sorted(e.id for p in pages for e in p) == [f"e{i}" for i in range(7)]
        with pytest.raises(ValueError):
            store.list_episodes(limit=0)

    def test_sizes_beyond_32_bits_mean_all_not_overflow(
        self, backend: ChromaBackend, tenant_name: TenantName
    ) -> None:
        # found by the CLI fuzz: `episeg episodes --limit 10000000000` raised OverflowError
        store = backend.store_for(tenant_name("a"))
        store.add([make_episode(f"e{i}", [1, i]) for i in range(3)])
        for huge in (2**31, 10**10, 2**64):
            assert len(store.list_episodes(limit=huge)) == 3
            assert store.list_episodes(offset=huge) == []
            assert len(store.query(unit([1, 0]), k=huge)) == 3

    def test_update_rewrites_recall_metadata_only(
        self, backend: ChromaBackend, tenant_name: TenantName
    ) -> None:
        store = backend.store_for(tenant_name("a"))
        ep = make_episode("e1", [1, 0], last_accessed=50.0)
        store.add([ep])
        store.update(
            [
                dataclasses.replace(
                    ep,
                    recall_count=3,
                    last_accessed=None,
                    strength=4.5,
                    archived=True,
                    summary="ignored",
                )
            ]
        )
        (back,) = store.get(["e1"])
        assert (back.recall_count, back.last_accessed, back.strength, back.archived) == (
            3,
            None,
            4.5,
            True,
        )
        assert back.summary == ep.summary

    def test_update_unknown_id_raises_and_writes_nothing(
        self, backend: ChromaBackend, tenant_name: TenantName
    ) -> None:
        store = backend.store_for(tenant_name("a"))
        ep = make_episode("e1", [1, 0])
        store.add([ep])
        with pytest.raises(StoreError, match="unknown episode"):
            store.update([dataclasses.replace(ep, recall_count=9), make_episode("ghost", [0, 1])])
        assert store.get(["e1"])[0].recall_count == 0
        assert store.count() == 1

    def test_delete_only_what_is_asked(
        self, backend: ChromaBackend, tenant_name: TenantName
    ) -> None:
        store = backend.store_for(tenant_name("a"))
        store.add([make_episode("a", [1, 0]), make_episode("b", [0, 1])])
        store.delete(["a", "never-existed"])
        assert [e.id for e in store.list_episodes()] == ["b"]

    def test_dimension_mismatch_is_store_error(
        self, backend: ChromaBackend, tenant_name: TenantName
    ) -> None:
        store = backend.store_for(tenant_name("a"))
        store.add([make_episode("a", [1, 0, 0])])
        with pytest.raises(StoreError):
            store.add([make_episode("b", [1, 0])])
        with pytest.raises(StoreError):
            store.query(np.array([1.0, 0.0]), k=1)

    def test_episode_without_embedding_refused(
        self, backend: ChromaBackend, tenant_name: TenantName
    ) -> None:
        store = backend.store_for(tenant_name("a"))
        with pytest.raises(StoreError, match="no embedding"):
            store.add([dataclasses.replace(make_episode("a", [1, 0]), embedding=None)])

    def test_reopen_sees_same_data(self, backend: ChromaBackend, tenant_name: TenantName) -> None:
        name = tenant_name("a")
        backend.store_for(name).add([make_episode("a", [1, 0])])
        assert [e.id for e in backend.store_for(name).list_episodes()] == ["a"]

    @pytest.mark.parametrize("bad", ["", " x", "x\n", "a\x00b", "x" * 257, "a\u202eb"])
    def test_invalid_tenant_ids(self, backend: ChromaBackend, bad: str) -> None:
        with pytest.raises(TenantError):
            backend.store_for(bad)
