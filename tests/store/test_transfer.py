"""Export and import through real Chroma (embedded, and a shared `chroma run` server)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from episeg.errors import ExportFormatError, ImportConflictError, StoreError
from episeg.store import ChromaBackend
from episeg.store.import_check import read_export
from episeg.store.transfer import VECTOR_TOLERANCE, export_lines, import_episodes
from episeg.testing import InMemoryBackend
from episeg.types import Episode, Salience, Turn

DIM = 8


def _episodes(user: str, n: int = 6) -> list[Episode]:
    rng = np.random.default_rng(7)
    out = []
    for i in range(n):
        turns = tuple(
            Turn(
                actor="user" if j % 2 == 0 else "assistant",
                text=f"episode {i} turn {j} word{i}",
                ts=100.0 * i + j + 0.125,
                id=f"s{i % 2}:{3 * i + j}",
                user=user,
                session=f"s{i % 2}",
            )
            for j in range(3)
        )
        vectors = rng.normal(size=(3, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        mean = vectors.mean(axis=0)
        out.append(
            Episode(
                id=f"ep{i}",
                user=user,
                session=f"s{i % 2}",
                turns=turns,
                summary=f"summary {i}",
                opened_at=turns[0].ts,
                closed_at=turns[-1].ts,
                embedding=(mean / np.linalg.norm(mean)).astype(np.float32),
                turn_embeddings=vectors,
                salience=Salience.scored(1 + i, scorer="anchored"),
                recall_count=i,
                strength=1.0 + i / 3,
                archived=i == 5,
                last_accessed=None if i % 2 else 1733140000.5 + i,
            )
        )
    return out


def _without_vectors(lines: Sequence[str]) -> list[str]:
    out = []
    for line in lines:
        obj = json.loads(line)
        obj.pop("embedding", None)
        obj.pop("turn_embeddings", None)
        out.append(json.dumps(obj))
    return out


def _vectors(lines: Sequence[str]) -> list[np.ndarray]:
    episodes = read_export(lines, tenant="x")
    return [np.concatenate([_array(e.embedding), _array(e.turn_embeddings)]) for e in episodes]


def _array(vector: np.ndarray | None) -> np.ndarray:
    assert vector is not None
    return vector.ravel()


def test_round_trip_into_another_tenant_of_the_same_store(
    backend: ChromaBackend, tenant_name: Callable[[str], str]
) -> None:
    alice, bob = tenant_name("alice"), tenant_name("bob")
    backend.store_for(alice).add(_episodes(alice))
    first = list(export_lines(backend.store_for(alice), embedder_name="hashing"))
    assert len(first) == 8 and json.loads(first[0])["embedder"] == {"name": "hashing", "dim": DIM}

    report = import_episodes(backend.store_for(bob), read_export(first, tenant=bob))
    assert len(report.imported) == 6 and report.unchanged == ()
    second = list(export_lines(backend.store_for(bob), embedder_name="hashing"))

    # every byte but the vectors is identical; vectors agree to a float32 step (Chroma
    # re-normalises what it is given), and exactly on a store that keeps them verbatim
    assert _without_vectors(second) == _without_vectors(first)
    for a, b in zip(_vectors(first), _vectors(second), strict=True):
        assert np.max(np.abs(a - b)) <= VECTOR_TOLERANCE
    # the turn index holds bob's rows; alice is untouched, and the two never share a record
    hit = backend.store_for(bob).query_turns(_array(_episodes(bob)[0].turn_embeddings)[:DIM], 1)
    assert hit[0].episode_id == "ep0"
    backend.store_for(bob).delete(["ep0"])
    assert [e.user for e in backend.store_for(alice).get(["ep0"])] == [alice]
    assert {e.user for e in backend.store_for(bob).list_episodes(include_archived=True)} == {bob}


def test_a_verbatim_store_round_trips_byte_for_byte() -> None:
    backend = InMemoryBackend()
    backend.store_for("alice").add(_episodes("alice"))
    first = "".join(export_lines(backend.store_for("alice"), embedder_name="hashing"))
    import_episodes(backend.store_for("bob"), read_export(first.splitlines(True), tenant="bob"))
    assert "".join(export_lines(backend.store_for("bob"), embedder_name="hashing")) == first


def test_reimport_is_idempotent_and_a_conflict_writes_nothing(
    backend: ChromaBackend, tenant_name: Callable[[str], str]
) -> None:
    alice, carol = tenant_name("alice"), tenant_name("carol")
    backend.store_for(alice).add(_episodes(alice))
    lines = list(export_lines(backend.store_for(alice), embedder_name="hashing"))
    store = backend.store_for(carol)
    import_episodes(store, read_export(lines, tenant=carol))
    # used since: the recall state differs, which is not a conflict, and is kept
    used = dataclasses.replace(store.get(["ep1"])[0], recall_count=40, strength=9.0)
    store.update([used])
    again = import_episodes(store, read_export(lines, tenant=carol))
    assert again.imported == () and len(again.unchanged) == 6
    assert store.count() == 6 and store.get(["ep1"])[0].recall_count == 40

    # a new episode plus an edited one: a conflict, and the new one is not written either
    extra = dataclasses.replace(_episodes(carol)[0], id="ep-new")
    edited = [*read_export(lines, tenant=carol), extra]
    edited[2] = dataclasses.replace(edited[2], summary="someone else's text")
    with pytest.raises(ImportConflictError) as caught:
        import_episodes(store, edited)
    assert caught.value.ids == ("ep2",)
    assert store.count() == 6 and store.get(["ep-new"]) == []


def test_a_bad_line_anywhere_writes_nothing(
    backend: ChromaBackend, tenant_name: Callable[[str], str]
) -> None:
    alice, dan = tenant_name("alice"), tenant_name("dan")
    backend.store_for(alice).add(_episodes(alice))
    lines = list(export_lines(backend.store_for(alice), embedder_name="hashing"))
    lines[-2] = lines[-2].replace('"actor":"user"', '"actor":7', 1)
    with pytest.raises(ExportFormatError) as caught:
        import_episodes(backend.store_for(dan), read_export(lines, tenant=dan))
    assert caught.value.line == len(lines) - 1
    assert backend.store_for(dan).count() == 0


class _FailingStore:
    """A store whose second ``add`` fails midway (after writing part of its chunk)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.adds = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def add(self, episodes: Sequence[Episode]) -> None:
        self.adds += 1
        if self.adds == 2:
            self.inner.add(episodes[:1])
            raise StoreError("disk gone")
        self.inner.add(episodes)


def test_a_store_failure_midway_undoes_what_was_added(monkeypatch: pytest.MonkeyPatch) -> None:
    import episeg.store.transfer as transfer

    monkeypatch.setattr(transfer, "_WRITE", 2)
    backend = InMemoryBackend()
    backend.store_for("erin").add(_episodes("erin")[:1])  # already there: must stay
    store = _FailingStore(backend.store_for("erin"))
    with pytest.raises(StoreError, match="disk gone"):
        import_episodes(store, _episodes("erin"))
    assert [e.id for e in backend.store_for("erin").list_episodes()] == ["ep0"]


@pytest.mark.slow
def test_chroma_moves_a_rewritten_vector_by_at_most_one_float32_step(
    backend: ChromaBackend, tenant_name: Callable[[str], str]
) -> None:
    """Why vectors are compared with a tolerance: Chroma re-normalises what it is given."""
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(2000, DIM * 48)).astype(np.float32)  # 384 dims, like MiniLM
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    template = _episodes("x", 1)[0]

    def stored(tenant: str, rows: np.ndarray) -> np.ndarray:
        store = backend.store_for(tenant)
        store.add(
            [
                dataclasses.replace(
                    template, id=f"v{i}", user=tenant, embedding=row, turn_embeddings=None
                )
                for i, row in enumerate(rows)
            ]
        )
        got = {e.id: e.embedding for e in store.get([f"v{i}" for i in range(len(rows))])}
        return np.stack([_array(got[f"v{i}"]) for i in range(len(rows))])

    once = stored(tenant_name("once"), vectors)
    twice = stored(tenant_name("twice"), once)
    steps = np.abs(once - twice) / np.spacing(np.abs(once))
    changed = int((once != twice).any(axis=1).sum())
    print(f"{changed} of {len(once)} vectors changed on a second write; max {steps.max()} step")
    assert steps.max() <= 1.0 and np.abs(once - twice).max() <= VECTOR_TOLERANCE


def test_a_large_tenant_streams_every_episode_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import episeg.store.transfer as transfer

    monkeypatch.setattr(transfer, "_PAGE", 7)  # many pages
    backend = InMemoryBackend()
    template = _episodes("ann", 1)[0]
    many = [dataclasses.replace(template, id=f"e{i:03d}") for i in range(50)]
    store = backend.store_for("ann")
    store.add(many)
    pages: list[int] = []
    reading = store.get

    def counted(ids: Sequence[str]) -> list[Episode]:
        pages.append(len(ids))
        return reading(ids)

    monkeypatch.setattr(store, "get", counted)
    lines = export_lines(store, embedder_name="hashing")
    assert json.loads(next(lines))["embedder"]["dim"] == DIM
    first = [json.loads(next(lines))["id"] for _ in range(7)]
    assert pages == [7]  # the first page's lines came out before the second page was read
    store.delete([first[0]])  # a delete between pages moves no later episode out of the file
    rest = list(lines)
    assert [*first, *(json.loads(line)["id"] for line in rest[:-1])] == [e.id for e in many]
    assert json.loads(rest[-1]) == {"end": "episeg-export", "episodes": 50}
    empty = list(export_lines(backend.store_for("nobody"), embedder_name="hashing"))
    assert json.loads(empty[0])["embedder"]["dim"] is None
    assert json.loads(empty[1]) == {"end": "episeg-export", "episodes": 0}
    assert read_export(empty, tenant="nobody", embedder=("hashing", DIM)) == []
