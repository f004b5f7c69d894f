"""The dense query beside the lexical lists (``recall.overlap_reads``): same hits, real threads."""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from episeg.config import EpisegConfig, RecallConfig
from episeg.errors import ConfigError, StoreError
from episeg.recall import candidates, overlap
from episeg.recall.hierarchical import Expand, HierarchicalRecaller, RecallHit
from episeg.recall.index import IndexedStore
from episeg.store import ChromaBackend
from episeg.types import Episode
from tests.recall.test_hierarchical import EMB, episode

WORDS = [
    "deploy",
    "canary",
    "pods",
    "crashed",
    "tomato",
    "basil",
    "garden",
    "zebra",
    "foal",
    "rollback",
    "release",
    "sauce",
]


def _episodes(user: str, n: int, rng: np.random.Generator) -> list[Episode]:
    """``n`` episodes an hour apart in three sessions, 1-4 turns of four words each."""
    return [
        episode(
            user,
            str(e),
            f"s{e % 3}",
            e / 24,
            [" ".join(rng.choice(WORDS, size=4)) for _ in range(int(rng.integers(1, 5)))],
        )
        for e in range(n)
    ]


def _recaller(store: IndexedStore, overlap_reads: bool) -> HierarchicalRecaller:
    config = EpisegConfig()
    config = dataclasses.replace(
        config, recall=dataclasses.replace(config.recall, overlap_reads=overlap_reads)
    )
    return HierarchicalRecaller(store, EMB, config=config, clock=lambda: 1.7e9 + 1e6)


def _view(hits: list[RecallHit]) -> list[tuple[Any, ...]]:
    return [
        (h.episode.id, h.positions, h.score, h.similarity, h.raw_similarity, h.lexical)
        for h in hits
    ]


@pytest.fixture(scope="module")
def chroma_store(tmp_path_factory: pytest.TempPathFactory) -> IndexedStore:
    backend = ChromaBackend.persistent(tmp_path_factory.mktemp("overlap") / "chroma")
    store = IndexedStore(backend.store_for("alice"))
    store.add(_episodes("alice", 60, np.random.default_rng(7)))
    return store


class TestSameHits:
    @pytest.mark.parametrize(
        "options",
        [
            {},
            {"max_words": 30},
            {"session": "s1"},
            {"since": 1.7e9 + 3600.0 * 10, "until": 1.7e9 + 3600.0 * 40},
            {"expand": Expand.EPISODE, "max_words": 60},
            {"context": 1, "neighbours": 1},
        ],
    )
    def test_overlapped_equals_serial_through_real_chroma(
        self, chroma_store: IndexedStore, options: dict[str, Any]
    ) -> None:
        on, off = _recaller(chroma_store, True), _recaller(chroma_store, False)
        rng = np.random.default_rng(11)
        dense_seen = lexical_seen = 0
        for _ in range(40):
            query = " ".join(rng.choice([*WORDS, "unrelated", "words"], size=3))
            a, b = on.recall(query, 5, **options), off.recall(query, 5, **options)
            assert _view(a) == _view(b), query
            dense_seen += sum(h.raw_similarity > 0 for h in a)
            lexical_seen += sum(h.lexical for h in a)
        assert dense_seen and lexical_seen  # both kinds of list took part


class _RecordingStore:
    """Wraps a real IndexedStore; records which thread ran the turn query, or fails it."""

    def __init__(self, inner: IndexedStore, fail: bool = False) -> None:
        self._inner = inner
        self.threads: list[str] = []
        self.fail = fail

    def query_turns(self, embedding: np.ndarray, k: int, *, where: Any = None) -> Any:
        self.threads.append(threading.current_thread().name)
        if self.fail:
            raise StoreError("turn collection unavailable")
        return self._inner.query_turns(embedding, k, where=where)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TestThreads:
    @pytest.mark.parametrize("overlap_reads", [True, False])
    def test_the_dense_query_runs_on_a_worker_only_when_overlapping(
        self, chroma_store: IndexedStore, overlap_reads: bool
    ) -> None:
        store = _RecordingStore(chroma_store)
        _recaller(store, overlap_reads).recall("canary pods", 3)  # type: ignore[arg-type]
        (name,) = store.threads
        assert name.startswith("episeg-recall") is overlap_reads

    def test_the_lexical_lists_start_only_once_the_worker_runs(
        self, chroma_store: IndexedStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # the worker needs the GIL to reach Chroma's search; the caller must not take it
        # for the lexical lists first (docs/RESULTS.md: the query then started late)
        events: list[str] = []
        real_started, real_lexical = candidates._dense_started, candidates.lexical_lists

        def started(*args: Any) -> Any:
            events.append(f"worker on {threading.current_thread().name.split('_')[0]}")
            return real_started(*args)

        def lexical(*args: Any) -> Any:
            events.append("lexical")
            return real_lexical(*args)

        monkeypatch.setattr(candidates, "_dense_started", started)
        monkeypatch.setattr(candidates, "lexical_lists", lexical)
        monkeypatch.setattr(candidates, "_HANDOFF_WAIT", 60.0)  # never the time-out here
        recaller = _recaller(chroma_store, True)
        for _ in range(20):
            recaller.recall("canary pods", 3)
        assert events == ["worker on episeg-recall", "lexical"] * 20

    def test_a_vector_alone_needs_no_worker(self, chroma_store: IndexedStore) -> None:
        store = _RecordingStore(chroma_store)
        _recaller(store, True).recall(EMB.embed(["canary pods"])[0], 3)  # type: ignore[arg-type]
        assert store.threads == [threading.current_thread().name]

    def test_a_failing_query_on_the_worker_raises_in_the_caller(
        self, chroma_store: IndexedStore
    ) -> None:
        store = _RecordingStore(chroma_store, fail=True)
        with pytest.raises(StoreError, match="turn collection unavailable"):
            _recaller(store, True).recall("canary pods", 3)  # type: ignore[arg-type]

    def test_recalls_from_many_threads_at_once_match_one_by_one(
        self, chroma_store: IndexedStore
    ) -> None:
        recaller = _recaller(chroma_store, True)
        queries = [f"{a} {b}" for a in WORDS[:6] for b in WORDS[6:]]  # 36 > WORKERS at once
        expected = {q: _view(recaller.recall(q, 4)) for q in queries}
        got: dict[str, list[tuple[Any, ...]]] = {}
        threads = [
            threading.Thread(target=lambda q=q: got.__setitem__(q, _view(recaller.recall(q, 4))))
            for q in queries
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert got == expected


@contextlib.contextmanager
def _every_worker_busy() -> Iterator[None]:
    """Hold all ``overlap.WORKERS`` recall workers inside a call until the block ends."""
    gate = threading.Event()
    started = threading.Barrier(overlap.WORKERS + 1)

    def hold() -> None:
        started.wait(10)
        gate.wait(10)

    busy = [overlap.submit(hold) for _ in range(overlap.WORKERS)]
    try:
        started.wait(10)  # every worker is inside hold()
        yield
    finally:
        gate.set()
        for future in busy:
            future.result(timeout=10)


def _submit_in_child(results: Any) -> None:
    results.put(overlap.submit(sum, [1, 2, 3]).result(timeout=10))


def test_the_pool_works_in_a_forked_child_after_the_parent_filled_it() -> None:
    with _every_worker_busy():  # every thread made
        pass
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    child = ctx.Process(target=_submit_in_child, args=(results,))
    child.start()
    child.join(timeout=30)
    assert child.exitcode == 0
    assert results.get(timeout=5) == 6


def test_overlap_reads_must_be_a_bool() -> None:
    with pytest.raises(ConfigError, match="overlap_reads must be true or false"):
        RecallConfig(overlap_reads="yes")  # type: ignore[arg-type]


class TestSaturatedPool:
    def test_with_every_worker_busy_the_query_runs_here_with_the_same_hits(
        self, chroma_store: IndexedStore
    ) -> None:
        with _every_worker_busy():
            store = _RecordingStore(chroma_store)
            hits = _recaller(store, True).recall("canary pods", 3)  # type: ignore[arg-type]
            assert store.threads == [threading.current_thread().name]
            assert _view(hits) == _view(_recaller(chroma_store, False).recall("canary pods", 3))
        store = _RecordingStore(chroma_store)  # workers free again: back on a worker
        _recaller(store, True).recall("canary pods", 3)  # type: ignore[arg-type]
        assert store.threads[0].startswith("episeg-recall")

    def test_an_error_run_here_reaches_the_caller_through_the_future(self) -> None:
        def fail() -> None:
            raise StoreError("down")

        with _every_worker_busy():
            future = overlap.submit(fail)
            assert future.done()
            with pytest.raises(StoreError, match="down"):
                future.result()
