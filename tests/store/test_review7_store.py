"""Review 7 of the store's erase, import and cache paths (F161-F165), through real Chroma.

- F161: a forget that failed between Chroma's two deletes could not be finished by a retry.
- F162: the folders of deleted vector segments (a rebuilt or erased tenant) kept every vector.
- F163: a recall racing an erasure cached a recaller bound to the dropped store.
- F164: a salience whose scorer or reason is not a string was stored; every read then failed.
- F165: an import took turns ``store_episodes`` refuses (another session, outside the times).
"""

from __future__ import annotations

import gc
import io
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chromadb.api.shared_system_client import SharedSystemClient

from episeg.errors import ExportFormatError, StoreError
from episeg.memory import Memory
from episeg.store import turns as turn_rows
from episeg.store.collection import ChromaEpisodeStore
from episeg.store.scrub import Layout
from episeg.store.turns import turn_collection_name
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.erased_bytes import files_with
from tests.memory_helpers import export_record
from tests.store.test_repair import _pickle


def _memory(path: Path) -> Memory:
    SharedSystemClient.clear_system_cache()  # read Chroma from disk, like a new process
    gc.collect()
    return Memory(path=path, embedder=HashingEmbedder(), judge=None, scorer=None)


def _stored(memory: Memory, texts: list[str], user: str = "alice") -> dict[str, str]:
    for i, text in enumerate(texts):
        turn = Turn(actor="user", text=text, ts=float(i), user=user, session=f"s{i}", id=f"t{i}")
        memory.observe(turn)
    return {e.turns[0].text: e.id for e in memory.flush(user)}


def test_a_forget_that_failed_between_the_two_deletes_is_finished_by_a_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = _memory(tmp_path)
    ids = _stored(memory, ["the vault code is 4711", "water the ferns"])
    secret = ids["the vault code is 4711"]
    calls = {"n": 0}
    real = turn_rows.TurnRows.delete_episodes

    def one_outage(self: turn_rows.TurnRows, episodes: list[str]) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("connection reset by the chroma server")
        real(self, episodes)

    monkeypatch.setattr(turn_rows.TurnRows, "delete_episodes", one_outage)
    with pytest.raises(StoreError):
        memory.forget("alice", episode=secret)
    report = memory.forget("alice", episode=secret)  # "call again: erasure is idempotent"
    assert report.episodes == (secret,) and report.missing == ()
    assert all(h.episode.id != secret for h in memory.recall("alice", "vault code 4711", k=5))
    inner = memory.store("alice").inner
    assert isinstance(inner, ChromaEpisodeStore)
    rows = inner.query_turns(np.ones(64, dtype=np.float32), 10)
    assert secret not in {r.episode_id for r in rows}
    memory.close()
    assert files_with(tmp_path, "4711", unused_slots=False) == []


def _best_cosines(chroma: Path, vectors: np.ndarray) -> list[float]:
    """The highest cosine of any slot of any vector file under ``chroma`` to ``vectors``."""
    best = []
    for header in sorted(chroma.glob("*/header.bin")):
        layout = Layout.read(header.parent)
        if not layout.count:
            continue
        raw = np.frombuffer((header.parent / "data_level0.bin").read_bytes(), np.uint8)
        slots = raw[: layout.count * layout.per_element].reshape(layout.count, -1)
        found = slots[:, layout.vector_at : layout.label_at].copy().view(np.float32)
        norms = np.linalg.norm(found, axis=1, keepdims=True)
        best.append(float(((found / np.maximum(norms, 1e-12)) @ vectors.T).max()))
    return best


def test_no_vector_of_an_erased_tenant_stays_in_the_segments_a_rebuild_left(
    tmp_path: Path,
) -> None:
    memory = _memory(tmp_path)
    texts = [f"alice secret plan number {i} zebra" for i in range(6)]
    _stored(memory, texts)
    vectors = np.asarray(memory.embedder.embed(texts), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    memory.close()
    torn = _pickle(tmp_path, turn_collection_name("alice"))
    torn.write_bytes(b"")  # as a kill inside Chroma's persist leaves it
    memory = _memory(tmp_path)
    assert memory.rebuild_store("alice") == 6
    memory.forget("alice", all=True)
    memory.close()
    memory = _memory(tmp_path)  # the scrub runs before Chroma opens the folder
    assert memory.tenants() == []
    memory.close()
    assert not torn.parent.exists()  # the dropped segment's folder is gone, not only unlisted
    assert all(best < 0.99 for best in _best_cosines(tmp_path / "chroma", vectors))


def test_the_scrub_keeps_every_folder_chroma_lists(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    _stored(memory, ["water the ferns", "book the dentist"])
    memory.close()
    before = sorted(p.parent.name for p in (tmp_path / "chroma").glob("*/header.bin"))
    memory = _memory(tmp_path)
    assert [h.episode.turns[0].text for h in memory.recall("alice", "ferns", k=1)] == [
        "water the ferns"
    ]
    memory.close()
    assert sorted(p.parent.name for p in (tmp_path / "chroma").glob("*/header.bin")) == before


def test_a_recall_racing_an_erasure_does_not_keep_the_dropped_store(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    ids = _stored(memory, ["rotate the api keys for prod", "water the ferns", "book the dentist"])
    real_store = memory.store
    took, erased = threading.Event(), threading.Event()

    def store(user: str) -> Any:
        found = real_store(user)
        if threading.current_thread().name == "recall" and not took.is_set():
            took.set()
            erased.wait(10)  # the recall is preempted right after it took the store
        return found

    memory.store = store  # type: ignore[method-assign]
    memory._recallers.clear()
    recall = threading.Thread(target=lambda: memory.recall("alice", "ferns", k=1), name="recall")
    recall.start()
    assert took.wait(10)
    memory.forget("alice", episode=ids["book the dentist"])  # drops the tenant's store
    erased.set()
    recall.join(10)
    del memory.store
    assert memory._recallers["alice"].store is memory.store("alice")
    keys = ids["rotate the api keys for prod"]
    memory.update_episode("alice", keys, metadata={"team": "ops"})
    hits = memory.recall("alice", "api keys", k=3, metadata={"team": "ops"})
    assert [h.episode.id for h in hits] == [keys]
    assert hits[0].episode.metadata == {"team": "ops"}
    memory.close()


def _export_line(memory: Memory) -> tuple[str, dict[str, Any], str]:
    return export_record(memory)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(salience={"score": 3, "scorer": 7, "reason": ""}), "scorer"),
        (lambda r: r.update(salience={"score": 3, "scorer": "x", "reason": ["a"]}), "reason"),
        (lambda r: r["turns"][0].update(session="OTHER"), "session 'OTHER'"),
        (lambda r: r["turns"][0].update(ts=5000.0), "outside opened_at"),
        (lambda r: r["turns"][0].update(type="tool-error"), "cannot have type"),
    ],
)
def test_an_import_refuses_what_store_episodes_refuses(
    tmp_path: Path, change: Any, message: str
) -> None:
    memory = _memory(tmp_path)
    _stored(memory, ["rotate the api keys"])
    head, record, tail = _export_line(memory)
    change(record)
    record["id"] = "imported"
    text = "\n".join([head, json.dumps(record), tail]) + "\n"
    with pytest.raises(ExportFormatError, match=message):
        memory.import_episodes("bob", io.StringIO(text))
    assert memory.episodes("bob") == []  # nothing of the file is stored
    memory.close()
