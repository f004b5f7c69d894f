"""No public path of a tenant-bound store returns another tenant's episodes."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import make_episode

from episeg.errors import StoreError, TenantError
from episeg.store import ChromaBackend, ChromaEpisodeStore, collection_name
from episeg.store.codec import encode
from tests.property_budget import examples

TenantName = Callable[[str], str]
SECRET = [0.3, -0.2, 0.9, 0.1]


def _victim(backend: ChromaBackend, name: str) -> ChromaEpisodeStore:
    victim = backend.store_for(name)
    victim.add(
        [
            make_episode("secret-1", SECRET, text="victim password"),
            make_episode("shared-id", [1, 0, 0, 0], text="victim shared"),
        ]
    )
    return victim


class TestTenantIsolation:
    def test_every_public_path(self, backend: ChromaBackend, tenant_name: TenantName) -> None:
        victim_name = tenant_name("victim")
        victim = _victim(backend, victim_name)
        attacker = backend.store_for(tenant_name("attacker"))
        attacker.add([make_episode("shared-id", [0, 1, 0, 0], text="attacker own")])
        assert attacker.get(["secret-1"]) == []
        assert [e.summary for e in attacker.get(["shared-id"])] == ["attacker own"]
        hits = attacker.query(np.array(SECRET), k=10, include_archived=True)
        assert [e.summary for e, _ in hits] == ["attacker own"]
        assert [e.summary for e in attacker.list_episodes(include_archived=True)] == [
            "attacker own"
        ]
        with pytest.raises(StoreError):
            attacker.update([make_episode("secret-1", SECRET, recall_count=99)])
        attacker.delete(["secret-1", "shared-id"])
        assert attacker.count() == 0
        assert {e.id for e in victim.list_episodes()} == {"secret-1", "shared-id"}
        assert victim.get(["secret-1"])[0].recall_count == 0
        assert victim.tenant == victim_name

    @pytest.mark.parametrize(
        "variant",
        [
            lambda t: t.upper(),
            lambda t: t + "/..",
            lambda t: "../" + t,
            lambda t: t + " x",
            lambda t: t.replace("-", " "),
            lambda t: t + "\u200b",
        ],
    )
    def test_lookalike_tenants_are_other_tenants(
        self, backend: ChromaBackend, tenant_name: TenantName, variant: Callable[[str], str]
    ) -> None:
        name = tenant_name("victim")
        _victim(backend, name)
        other = variant(name)
        assert other != name
        try:
            attacker = backend.store_for(other)
        except TenantError:
            return  # refused outright: also isolation
        assert collection_name(other) != collection_name(name)
        assert attacker.get(["secret-1", "shared-id"]) == []
        assert attacker.query(np.array(SECRET), k=5) == []
        assert attacker.list_episodes(include_archived=True) == []

    def test_padded_tenant_refused(self, backend: ChromaBackend, tenant_name: TenantName) -> None:
        name = tenant_name("victim")
        for bad in (" " + name, name + " ", name + "\t", name + "\n"):
            with pytest.raises(TenantError):
                backend.store_for(bad)

    def test_foreign_record_in_own_collection_is_dropped_and_logged(
        self, tmp_path: object, caplog: pytest.LogCaptureFixture
    ) -> None:
        client = ChromaBackend.persistent(str(tmp_path))
        store = client.store_for("alice")
        store.add([make_episode("mine", [1, 0])])
        # Tamper: write a record stamped for bob straight into alice's collection.
        rec = encode(make_episode("planted", [1, 0.01]), tenant="bob")
        store._handles.create()[0].upsert(
            ids=[rec.id],
            documents=[rec.document],
            metadatas=[rec.metadata],
            embeddings=[rec.embedding],
        )
        with caplog.at_level(logging.ERROR, logger="episeg.store.chroma"):
            assert [e.id for e, _ in store.query(np.array([1.0, 0.0]), k=5)] == ["mine"]
            assert store.get(["planted"]) == []
            assert [e.id for e in store.list_episodes()] == ["mine"]
            with pytest.raises(StoreError):
                store.update([make_episode("planted", [1, 0])])
            store.delete(["planted"])
        assert "stamped 'bob'" in caplog.text
        assert store.count() == 2  # the planted record was not deleted by alice either

    def test_collection_owned_by_other_tenant_refused(self, tmp_path: object) -> None:
        backend = ChromaBackend.persistent(str(tmp_path))
        store = backend.store_for("alice")
        store._handles.create()[0].modify(metadata={"episeg_tenant": "mallory"})
        with pytest.raises(TenantError, match="belongs to 'mallory'"):
            backend.store_for("alice")


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(a=st.text(min_size=1, max_size=40), b=st.text(min_size=1, max_size=40))
def test_recalled_episode_never_belongs_to_another_tenant(
    tmp_path_factory: pytest.TempPathFactory, a: str, b: str
) -> None:
    backend = ChromaBackend.persistent(tmp_path_factory.mktemp("iso"))
    stores = []
    for name in (a, b):
        try:
            stores.append(backend.store_for(name))
        except TenantError:
            return
    if a == b:
        return
    for n, store in enumerate(stores):
        store.add(
            [
                dataclasses.replace(make_episode(f"e{n}", [1, n, 0]), user=store.tenant),
                dataclasses.replace(make_episode("same", [0, 1, n]), user=store.tenant),
            ]
        )
    for store in stores:
        got = [e for e, _ in store.query(np.array([1.0, 0.5, 0.5]), k=10)]
        got += store.get(["e0", "e1", "same"]) + store.list_episodes(include_archived=True)
        assert got and all(e.user == store.tenant for e in got)


def test_a_tenant_that_only_read_is_not_listed(backend: ChromaBackend) -> None:
    # Found by review: a read makes the tenant's (empty) collection, and tenants() listed
    # every collection, so a mistyped user in a read-only command showed up as a tenant.
    # names of their own: the server backend is shared with the other tests of this module
    writer, typo, ghost = (f"{who}-{uuid.uuid4().hex[:8]}" for who in ("alice", "typo", "ghost"))
    backend.store_for(writer).add([make_episode("e1", [1.0, 0.0])])
    assert backend.store_for(typo).get(["e1"]) == []
    assert backend.store_for(ghost).list_episodes() == []
    listed = set(backend.tenants())
    assert writer in listed and not {typo, ghost} & listed
    backend.store_for(writer).delete(["e1"])
    assert writer not in backend.tenants()  # no stored episode left
