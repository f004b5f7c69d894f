"""Latency of hierarchical recall (turn vectors + BM25 + RRF) at scale.

Fills an embedded Chroma with synthetic episodes: random unit vectors (dim
384, not the model) for ``turns`` turns each, and turn texts of 12 words
drawn Zipf-like from a 5,000-word vocabulary so BM25 has postings to walk.
One target tenant holds ``n_episodes``; ``n_tenants - 1`` others hold
``others_each`` each. It then times, on the target tenant:

* start-up: the first recall through a new store wrapper, once rebuilding the
  tenant's catalogue and BM25 indexes from the store and saving them
  (``index_build_s``, what every start cost before the index was kept on
  disk), once loading the saved index (``index_load_s``, the start-up now);
* ``HierarchicalRecaller.recall(vector, k=10, text=...)`` with a 3-word query
  (embedding excluded, as in ``recall_bench``), with no budget and with
  ``max_words=500``;
* the baseline, in the same run: a raw ``chromadb`` query of the same turn
  collection for the same number of neighbours (ids and distances, what the
  recaller reads). ``*_ratio`` = recall p50 / baseline p50;
* the floor under that ratio: the store ``get`` of each query's returned
  episodes timed alone (``store_get_*``) and ``query_plus_get_ratio``, what
  one query plus that read already cost against the baseline;
* the tenant held resident (``recall.warm_cache`` with ``cache_episodes`` >= its
  size, :mod:`episeg.recall.resident`): a new store wrapper loads the saved index
  and fills its cache from the store (``resident_fill_s``), then the same
  queries (``recall_resident_*``; ``resident_same_hits``: every hit equal to the
  default's), timed against the raw query re-timed just before
  (``raw_turn_query_again_*``); ``resident_bytes_per_episode``: what the cache
  holds per episode (tracemalloc over a fill of up to 5,000 episodes);
* both ratios again with the raw query and recall timed turn about, three
  rounds over the queries (``store_bench.time_interleaved``), so that a change
  of the machine's load between two loops cannot move the ratio:
  ``recall_interleaved_ratio`` (default) and
  ``recall_resident_interleaved_ratio``, each with its two p50s.

Run ``python -m episeg.benchmarks.hierarchical_bench --episodes 10000 100000``.
A ``--path`` that already holds the data of the same sizes (an earlier run's)
is reused without filling (``reused_store``; ``ingest_eps`` is then ``None``);
its saved recall index is deleted first, so start-up is timed as in a fresh
run. The queries do not depend on whether the store was filled in this run.

>>> import tempfile
>>> res = run_hierarchical_bench(60, n_tenants=2, queries=5, path=tempfile.mkdtemp(),
...                              others_each=5)
>>> res["n_episodes"], res["turn_rows"], res["recall_p50_ms"] > 0
(60, 240, True)
"""

from __future__ import annotations

import shutil
import sys
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from episeg.benchmarks.store_bench import (
    DIM,
    fill,
    main_for,
    open_chroma,
    time_each,
    time_interleaved,
    unit_vectors,
)
from episeg.embedders import HashingEmbedder
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.persistent_store import PersistentIndexedStore
from episeg.recall.resident import fill_cache
from episeg.store import ChromaBackend
from episeg.store.turns import turn_collection_name
from episeg.types import Actor, Episode, Salience, Turn

__all__ = ["main", "run_hierarchical_bench"]

VOCAB = 5000
_BATCH = 1000


def _words(rng: np.random.Generator, n: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.3, size=n), VOCAB) - 1
    return [f"w{r}" for r in ranks]


def _episodes(
    rng: np.random.Generator, n: int, turns: int, prefix: str, now: float
) -> list[Episode]:
    out = []
    for i in range(n):
        vecs = unit_vectors(rng, turns)
        mean = vecs.mean(axis=0)
        t = now - float(rng.uniform(0, 30 * 86400))
        tt = tuple(
            Turn(
                actor=Actor.USER if j % 2 == 0 else Actor.ASSISTANT,
                text=" ".join(_words(rng, 12)),
                ts=t + j,
                id=f"{prefix}{i}:{j}",
            )
            for j in range(turns)
        )
        out.append(
            Episode(
                id=f"{prefix}{i}",
                user=prefix,
                session=f"s{i // 20}",
                summary=f"synthetic episode {i}",
                turns=tt,
                opened_at=t,
                closed_at=t + turns,
                embedding=mean / np.linalg.norm(mean),
                turn_embeddings=vecs,
                salience=Salience.scored(int(rng.integers(1, 11)), scorer="bench"),
            )
        )
    return out


def _filled(backend: ChromaBackend, n: int, n_tenants: int, others_each: int, turns: int) -> bool:
    """Whether the store already holds this run's data (same sizes): then it is reused."""
    sizes = [n] + [others_each] * (n_tenants - 1)
    if any(backend.store_for(f"tenant-{t}").count() != size for t, size in enumerate(sizes)):
        return False
    first = backend.store_for("tenant-0").get(["tenant-0-0-0"])
    return bool(first) and len(first[0].turns) == turns


def run_hierarchical_bench(
    n_episodes: int,
    n_tenants: int = 10,
    queries: int = 200,
    *,
    turns: int = 4,
    path: str | Path | None = None,
    seed: int = 0,
    others_each: int = 100,
) -> dict[str, Any]:
    """Fill a store and time hierarchical recall; returns a JSON-ready dict."""
    if min(n_episodes, n_tenants, queries, turns) < 1 or others_each < 0:
        raise ValueError("n_episodes, n_tenants, queries and turns must be >= 1")
    rng = np.random.default_rng(seed)
    now = 1.7e9
    client, backend = open_chroma(path)

    def make(size: int, prefix: str) -> list[Episode]:
        return _episodes(rng, size, turns, prefix, now)

    raw_store = backend.store_for("tenant-0")
    folder = Path(client.get_settings().persist_directory) / "recall-index"
    reused = _filled(backend, n_episodes, n_tenants, others_each, turns)
    ingest: float | None = None
    if reused:  # a --path filled by an earlier run: time start-up from scratch again
        shutil.rmtree(folder, ignore_errors=True)
    else:
        for t in range(1, n_tenants):
            fill(backend.store_for(f"tenant-{t}"), others_each, _BATCH, make)
        ingest = fill(raw_store, n_episodes, _BATCH, make)
    qrng = np.random.default_rng([seed, 1])  # the same queries whether filled now or before
    qvecs = unit_vectors(qrng, queries)
    qtexts = [" ".join(_words(qrng, 3)) for _ in range(queries)]
    starts: dict[str, float] = {}
    for label in ("index_build_s", "index_load_s"):  # no saved index yet, then the saved one
        store = PersistentIndexedStore(raw_store, folder)
        recaller = HierarchicalRecaller(store, HashingEmbedder(dim=DIM), clock=lambda: now)
        t0 = time.perf_counter()
        recaller.recall(qvecs[0], 10, text=qtexts[0])
        starts[label] = time.perf_counter() - t0
    n_candidates = recaller.params.turn_candidates
    raw = client.get_collection(turn_collection_name("tenant-0"))
    include: Any = ["distances"]

    def raw_query(q: np.ndarray) -> object:  # the baseline: what the recaller reads, raw
        return raw.query(query_embeddings=q.reshape(1, -1), n_results=n_candidates, include=include)

    figures: dict[str, Any] = {
        "n_episodes": n_episodes,
        "turns_per_episode": turns,
        "turn_rows": n_episodes * turns,
        "n_tenants": n_tenants,
        "others_each": others_each,
        "queries": queries,
        "k": 10,
        "turn_candidates": n_candidates,
        "reused_store": reused,
        "ingest_eps": None if ingest is None else n_episodes / ingest,
        **starts,
        "index_bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()),
    }
    figures["raw_turn_query_p50_ms"], figures["raw_turn_query_p99_ms"] = time_each(
        raw_query,
        qvecs,
    )
    for label, budget in (("recall", None), ("recall_500w", 500)):
        figures[f"{label}_p50_ms"], figures[f"{label}_p99_ms"] = time_each(
            lambda qt: recaller.recall(qt[0], 10, text=qt[1], max_words=budget),  # noqa: B023
            zip(qvecs, qtexts, strict=True),
        )
        figures[f"{label}_ratio"] = figures[f"{label}_p50_ms"] / figures["raw_turn_query_p50_ms"]
    figures.update(_read_floor(recaller, raw_store, qvecs, qtexts, figures))
    queries_ = list(zip(qvecs, qtexts, strict=True))

    def interleaved(label: str, rec: HierarchicalRecaller) -> None:
        base, meas = time_interleaved(
            lambda qt: raw_query(qt[0]), lambda qt: rec.recall(qt[0], 10, text=qt[1]), queries_
        )
        figures[f"raw_{label}interleaved_p50_ms"] = base
        figures[f"recall_{label}interleaved_p50_ms"] = meas
        figures[f"recall_{label}interleaved_ratio"] = meas / base

    interleaved("", recaller)
    figures["resident_bytes_per_episode"] = _resident_bytes(raw_store, folder)
    figures["raw_turn_query_again_p50_ms"], figures["raw_turn_query_again_p99_ms"] = time_each(
        raw_query,
        qvecs,
    )
    store = PersistentIndexedStore(raw_store, folder, cache_episodes=n_episodes)
    t0 = time.perf_counter()
    fill_cache(store.inner, store.index, store.recent)
    figures["resident_fill_s"] = time.perf_counter() - t0
    resident = HierarchicalRecaller(store, HashingEmbedder(dim=DIM), clock=lambda: now)
    figures["recall_resident_p50_ms"], figures["recall_resident_p99_ms"] = time_each(
        lambda qt: resident.recall(qt[0], 10, text=qt[1]), queries_
    )
    figures["recall_resident_ratio"] = (
        figures["recall_resident_p50_ms"] / figures["raw_turn_query_again_p50_ms"]
    )
    interleaved("resident_", resident)
    figures["resident_same_hits"] = all(
        resident.recall(q, 10, text=t) == recaller.recall(q, 10, text=t) for q, t in queries_
    )
    return figures


def _resident_bytes(raw_store: Any, folder: Path) -> float | None:
    """Bytes a warm cache holds per episode: traced allocations of a fill of <= 5,000."""
    store = PersistentIndexedStore(raw_store, folder, cache_episodes=5_000)
    index = store.index
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = fill_cache(store.inner, index, store.recent)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return held / kept if kept else None


def _read_floor(
    recaller: HierarchicalRecaller,
    store: Any,
    qvecs: np.ndarray,
    qtexts: Sequence[str],
    figures: dict[str, Any],
) -> dict[str, Any]:
    """What reading the hits costs by itself: the store ``get`` recall ends with.

    ``store_get_p50_ms``: the store's ``get`` (Chroma read and decoding, no
    cache) of each query's returned episodes; ``store_get_one_p50_ms``: the
    same for its first episode alone (the fixed cost of one read).
    ``query_plus_get_ratio`` = (raw query p50 + get p50) / raw query p50: the
    floor of any recall that queries once and then reads its hits from Chroma.
    """
    returned = [
        [hit.episode.id for hit in recaller.recall(q, 10, text=t)]
        for q, t in zip(qvecs, qtexts, strict=True)
    ]
    returned = [ids for ids in returned if ids]
    if not returned:
        return {}
    out: dict[str, Any] = {"store_get_queries": len(returned)}
    out["store_get_p50_ms"], out["store_get_p99_ms"] = time_each(store.get, returned)
    out["store_get_one_p50_ms"], _ = time_each(store.get, [ids[:1] for ids in returned])
    raw = figures["raw_turn_query_p50_ms"]
    out["query_plus_get_ratio"] = (raw + out["store_get_p50_ms"]) / raw
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``--episodes N [N ...] [--turns T] [--tenants T] [--queries Q] [--json OUT]``."""
    return main_for(
        run_hierarchical_bench,
        argv,
        prog="python -m episeg.benchmarks.hierarchical_bench",
        doc=__doc__,
        tenants=10,
        turns=4,
    )


if __name__ == "__main__":
    sys.exit(main())
