"""A user's edits through every store backend (embedded Chroma, a `chroma run` server, memory).

``revise`` writes summary, salience, pin and user metadata as one record update; ``update``
writes the recall state; neither undoes the other, another tenant can do neither.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from episeg.errors import EpisodeNotFoundError
from episeg.store import ChromaBackend
from episeg.store.codec import decode, encode
from episeg.store.edit import EpisodeEdit
from episeg.store.usermeta import MetaScalar
from episeg.testing import ChromaServer, InMemoryBackend
from episeg.types import Episode
from episeg.typing import EpisodeStore, StoreBackend
from tests.store.store_helpers import make_episode


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.slow), "memory"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> StoreBackend:
    if request.param == "embedded":
        return ChromaBackend.persistent(tmp_path / "chroma")
    if request.param == "server":
        server: ChromaServer = request.getfixturevalue("chroma_server")
        return server.backend()
    return InMemoryBackend()


@pytest.fixture
def names(tenant_name: Callable[[str], str]) -> tuple[str, str]:
    return tenant_name("alice"), tenant_name("bob")


def _stored(store: EpisodeStore, id: str) -> Episode:
    (found,) = store.get([id])
    return found


class TestRevise:
    def test_every_field_lands_and_comes_back_exactly(
        self, backend: StoreBackend, names: tuple[str, str]
    ) -> None:
        store = backend.store_for(names[0])
        store.add([make_episode("a", [1, 0, 0], text="deploy prod")])
        meta: dict[str, MetaScalar] = {"f": 9007.876897497723, "n": 2**62, "ok": True, "s": "é"}
        edit = EpisodeEdit(summary="prod deploy", pinned=True, salience=9, metadata=meta)
        store.revise([edit.apply(_stored(store, "a"))])
        got = _stored(store, "a")
        assert (got.summary, got.pinned, got.metadata) == ("prod deploy", True, meta)
        assert got.salience is not None and (got.salience.score, got.salience.scorer) == (9, "user")
        assert [t.text for t in got.turns] == ["deploy prod", "ok deploy prod"]  # untouched

    def test_metadata_is_replaced_whole(
        self, backend: StoreBackend, names: tuple[str, str]
    ) -> None:
        store = backend.store_for(names[0])
        store.add([make_episode("a", [1, 0, 0], metadata={"old": 1, "keep": "x"})])
        assert _stored(store, "a").metadata == {"old": 1, "keep": "x"}
        store.revise([dataclasses.replace(_stored(store, "a"), metadata={"keep": "y"})])
        assert _stored(store, "a").metadata == {"keep": "y"}
        store.revise([dataclasses.replace(_stored(store, "a"), metadata={})])
        assert _stored(store, "a").metadata == {}

    def test_unknown_id_changes_nothing_at_all(
        self, backend: StoreBackend, names: tuple[str, str]
    ) -> None:
        store = backend.store_for(names[0])
        store.add([make_episode("a", [1, 0, 0])])
        before = _stored(store, "a")
        with pytest.raises(EpisodeNotFoundError):
            store.revise(
                [dataclasses.replace(before, summary="changed"), make_episode("zz", [0, 1, 0])]
            )
        assert _stored(store, "a") == before

    def test_another_tenant_can_neither_read_nor_revise(
        self, backend: StoreBackend, names: tuple[str, str]
    ) -> None:
        alice, bob = (backend.store_for(n) for n in names)
        alice.add([make_episode("a", [1, 0, 0], text="alice secret")])
        mine = _stored(alice, "a")
        assert bob.get(["a"]) == []
        with pytest.raises(EpisodeNotFoundError):
            bob.revise([dataclasses.replace(mine, summary="bob was here", pinned=True)])
        assert _stored(alice, "a") == mine

    def test_recall_state_and_edits_do_not_undo_each_other(
        self, backend: StoreBackend, names: tuple[str, str]
    ) -> None:
        store = backend.store_for(names[0])
        store.add([make_episode("a", [1, 0, 0])])
        stale = _stored(store, "a")  # read before the edit, written after it (maintenance)
        store.revise([dataclasses.replace(stale, pinned=True, summary="edited")])
        store.update([dataclasses.replace(stale, recall_count=3, strength=4.0, archived=True)])
        got = _stored(store, "a")
        assert (got.pinned, got.summary) == (True, "edited")
        assert (got.recall_count, got.strength, got.archived) == (3, 4.0, True)
        store.revise([dataclasses.replace(got, metadata={"k": 1})])
        again = _stored(store, "a")
        assert (again.recall_count, again.archived, again.metadata) == (3, True, {"k": 1})


def test_codec_round_trips_new_fields_and_reads_old_records() -> None:
    ep = make_episode("a", [1, 0, 0], pinned=True, metadata={"k": 0.1, "b": False})
    rec = encode(ep, tenant="alice")
    assert rec.metadata["pinned"] is True and rec.metadata["meta.k"] == "0.1"
    assert decode(rec.id, rec.document, rec.metadata, rec.embedding) == ep
    old = {k: v for k, v in rec.metadata.items() if k != "pinned" and not k.startswith("meta.")}
    back = decode(rec.id, rec.document, old, rec.embedding)
    assert (back.pinned, back.metadata) == (False, {})
