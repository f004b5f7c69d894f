"""The recall index on disk: load instead of rebuild, writes go through, erasure leaves no bytes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from episeg.errors import StoreError
from episeg.recall.index import TenantIndex
from episeg.recall.persistent_store import PersistentIndexedStore
from episeg.recall.snapshot import IndexSnapshot
from episeg.store import ChromaBackend
from episeg.types import Episode, Turn


def episode(eid: str, texts: list[str], t0: float = 1.7e9) -> Episode:
    turns = tuple(Turn(actor="user", text=t, ts=t0 + i) for i, t in enumerate(texts))
    vec = np.ones(4, dtype=np.float32) / 2.0
    return Episode(
        id=eid,
        user="alice",
        session="s",
        summary=texts[0],
        opened_at=t0,
        closed_at=t0 + len(texts),
        turns=turns,
        embedding=vec,
        turn_embeddings=np.tile(vec, (len(texts), 1)),
    )


def files_with(folder: Path, needle: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


class TestIndexSnapshot:
    def test_save_load_log_and_state_round_trip(self, tmp_path: Path) -> None:
        index = TenantIndex()
        index.add([episode("e1", ["deploy the canary", "it crashed"], t0=0.0)])
        snap = IndexSnapshot(tmp_path)
        snap.save(index)
        index.add([episode("e2", ["tomato pasta sauce"])])
        snap.log_add(index, ["e2"])
        index.update_state([dataclasses.replace(episode("e1", ["x", "y"]), archived=True)])
        snap.log_state(index, ["e1"])
        loaded = snap.load()
        assert loaded is not None
        assert loaded.cards == index.cards and loaded.max_span == index.max_span
        for query in ("canary crash", "pasta"):
            assert loaded.turns.top(query, k=5) == index.turns.top(query, k=5)
            assert loaded.episodes.top(query, k=5) == index.episodes.top(query, k=5)

    def test_torn_last_line_and_bad_files(self, tmp_path: Path) -> None:
        index = TenantIndex()
        index.add([episode("e1", ["alpha"])])
        snap = IndexSnapshot(tmp_path)
        assert snap.load() is None  # nothing saved yet
        snap.save(index)
        with open(tmp_path / "log.jsonl", "a", encoding="utf-8") as fh:
            fh.write('{"op": "add", "cards": [')  # a crash mid-line
        loaded = snap.load()
        assert loaded is not None and list(loaded.cards) == ["e1"]
        (tmp_path / "index.json").write_text('{"version": 999}', encoding="utf-8")
        assert snap.load() is None

    def test_empty_index_leaves_no_files(self, tmp_path: Path) -> None:
        snap = IndexSnapshot(tmp_path)
        snap.save(TenantIndex())
        assert list(tmp_path.iterdir()) == []


class TestPersistentIndexedStore:
    @pytest.fixture
    def backend(self, tmp_path: Path) -> ChromaBackend:
        return ChromaBackend.persistent(tmp_path / "chroma")

    def test_restart_loads_instead_of_rebuilding(
        self, backend: ChromaBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        folder = tmp_path / "recall"
        first = PersistentIndexedStore(backend.store_for("alice"), folder, check_interval=0.0)
        first.add([episode("e1", ["deploy the canary"]), episode("e2", ["tomato pasta"])])
        first.update([dataclasses.replace(first.get(["e2"])[0], archived=True)])
        expected = first.index.turns.top("canary", k=3)

        def no_rebuild(*args: object, **kwargs: object) -> TenantIndex:
            raise AssertionError("rebuilt from the store")

        monkeypatch.setattr(TenantIndex, "build", no_rebuild)
        second = PersistentIndexedStore(backend.store_for("alice"), folder, check_interval=0.0)
        assert second.index.turns.top("canary", k=3) == expected
        assert second.index.cards["e2"].archived

    @pytest.mark.parametrize("write", ["update", "revise", "replace"])
    def test_a_crash_between_a_count_keeping_write_and_its_log_line_triggers_a_rebuild(
        self,
        backend: ChromaBackend,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        write: str,
    ) -> None:
        # Found by review: an unarchive that reached the store but not the log was never
        # noticed (the count still matched), so the episode stayed out of recall for good.
        folder = tmp_path / "recall"
        first = PersistentIndexedStore(backend.store_for("alice"), folder, check_interval=0.0)
        first.add([episode("e1", ["deploy the canary"]), episode("e2", ["tomato pasta"])])
        first.update([dataclasses.replace(first.get(["e1"])[0], archived=True)])

        class Crash(BaseException):
            """The process dies here: nothing after it runs."""

        def die(*args: object, **kwargs: object) -> None:
            raise Crash

        monkeypatch.setattr(IndexSnapshot, "log_state", die)
        monkeypatch.setattr(IndexSnapshot, "save", die)
        current = first.get(["e1"])[0]
        with pytest.raises(Crash):
            if write == "update":
                first.update([dataclasses.replace(current, archived=False)])
            elif write == "revise":
                first.revise([dataclasses.replace(current, summary="the canary, again")])
            else:
                first.add([episode("e1", ["deploy the canary", "rolled back"])])
        monkeypatch.undo()
        second = PersistentIndexedStore(backend.store_for("alice"), folder, check_interval=0.0)
        stored = second.get(["e1"])[0]
        card = second.index.cards["e1"]
        assert card.archived == stored.archived and card.n_turns == len(stored.turns)
        if write == "update":
            assert not card.archived  # the unarchive the store holds counts
        if write == "replace":
            assert [key for key, _ in second.index.turns.top("rolled back", k=3)] == [("e1", 1)]

    def test_another_writer_triggers_a_rebuild(
        self, backend: ChromaBackend, tmp_path: Path
    ) -> None:
        folder = tmp_path / "recall"
        first = PersistentIndexedStore(backend.store_for("alice"), folder, check_interval=0.0)
        first.add([episode("e1", ["deploy the canary"])])
        backend.store_for("alice").add([episode("e3", ["zebra foal"])])  # not through the index
        second = PersistentIndexedStore(backend.store_for("alice"), folder, check_interval=0.0)
        assert [key for key, _ in second.index.turns.top("zebra", k=3)] == [("e3", 0)]

    def test_erasure_rewrites_the_files_even_before_first_use(
        self, backend: ChromaBackend, tmp_path: Path
    ) -> None:
        folder = tmp_path / "recall"
        first = PersistentIndexedStore(backend.store_for("alice"), folder)
        first.add([episode("e1", ["zebraquokka secret"]), episode("e2", ["kept note"])])
        assert files_with(folder, "zebraquokka")
        fresh = PersistentIndexedStore(backend.store_for("alice"), folder)  # index not loaded
        fresh.delete(["e1"])
        assert files_with(folder, "zebraquokka") == [] and files_with(folder, "kept")
        fresh.delete(["e2"])
        assert list(folder.iterdir()) == []  # nothing left to keep

    def test_replacing_an_episode_drops_its_old_text(
        self, backend: ChromaBackend, tmp_path: Path
    ) -> None:
        folder = tmp_path / "recall"
        store = PersistentIndexedStore(backend.store_for("alice"), folder)
        store.add([episode("e1", ["marmotlynx draft"])])
        store.add([episode("e1", ["final wording"])])
        assert files_with(folder, "marmotlynx") == []
        assert store.index.turns.top("final", k=1)[0][0] == ("e1", 0)

    def test_an_edit_before_first_use_reaches_the_files(
        self, backend: ChromaBackend, tmp_path: Path
    ) -> None:
        folder = tmp_path / "recall"
        PersistentIndexedStore(backend.store_for("alice"), folder).add([episode("e1", ["note"])])
        fresh = PersistentIndexedStore(backend.store_for("alice"), folder)  # index not loaded
        [stored] = fresh.get(["e1"])
        fresh.revise([dataclasses.replace(stored, metadata={"project": "apollo"})])
        reopened = PersistentIndexedStore(backend.store_for("alice"), folder)
        assert reopened.index.cards["e1"].metadata == {"project": "apollo"}


class TestWriteFailures:
    """The saved index is a start-up cache, except that an erasure must reach it."""

    def no_space(self, fd: int) -> None:
        raise OSError(28, "No space left on device")

    def test_a_failed_save_after_an_add_drops_the_snapshot_and_the_add_stands(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        backend = ChromaBackend.persistent(tmp_path / "chroma")
        folder = tmp_path / "recall"
        store = PersistentIndexedStore(backend.store_for("alice"), folder)
        store.add([episode("e1", ["first note"])])
        monkeypatch.setattr("episeg.recall.snapshot.os.fsync", self.no_space)
        store.add([episode("e2", ["second note"])])  # no exception: the store has it
        assert "not saved" in caplog.text and not list(folder.iterdir())
        monkeypatch.undo()
        reopened = PersistentIndexedStore(backend.store_for("alice"), folder)
        assert sorted(reopened.index.cards) == ["e1", "e2"]

    def test_a_failed_rewrite_after_a_delete_deletes_the_files_or_raises(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        backend = ChromaBackend.persistent(tmp_path / "chroma")
        folder = tmp_path / "recall"
        store = PersistentIndexedStore(backend.store_for("alice"), folder)
        store.add([episode(f"e{i}", [f"zebraquokka{i} secret"]) for i in range(3)])
        monkeypatch.setattr("episeg.recall.snapshot.os.fsync", self.no_space)
        store.delete(["e0"])
        assert files_with(folder, "zebraquokka") == []  # the whole snapshot went

        def cannot_delete(self: IndexSnapshot) -> None:
            raise StoreError("read-only")

        monkeypatch.setattr(IndexSnapshot, "clear", cannot_delete)  # saving still fails too
        with pytest.raises(StoreError):
            store.delete(["e1"])
