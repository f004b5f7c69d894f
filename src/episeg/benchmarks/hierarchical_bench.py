"""Latency of hierarchical recall (turn vectors + BM25 + RRF) at scale.

Fills an embedded Chroma with synthetic episodes: random unit vectors (dim
384, not the model) for ``turns`` turns each, and turn texts of 12 words
drawn Zipf-like from a 5,000-word vocabulary so BM25 has postings to walk.
One target tenant holds ``n_episodes``; ``n_tenants - 1`` others hold
``others_each`` each. It then times, on the target tenant:

* the first recall, which builds the tenant's catalogue and BM25 indexes
  from the store (``index_build_s``);
* ``HierarchicalRecaller.recall(vector, k=10, text=...)`` with a 3-word query
  (embedding excluded, as in ``recall_bench``), with no budget and with
  ``max_words=500``;
* the baseline, in the same run: a raw ``chromadb`` query of the same turn
  collection for the same number of neighbours (ids and distances, what the
  recaller reads). ``*_ratio`` = recall p50 / baseline p50.

Run ``python -m episeg.benchmarks.hierarchical_bench --episodes 10000 100000``.

>>> import tempfile
>>> res = run_hierarchical_bench(60, n_tenants=2, queries=5, path=tempfile.mkdtemp(),
...                              others_each=5)
>>> res["n_episodes"], res["turn_rows"], res["recall_p50_ms"] > 0
(60, 240, True)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
from chromadb.config import Settings

from episeg.benchmarks import percentiles_ms
from episeg.embedders import HashingEmbedder
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.index import IndexedStore
from episeg.store import ChromaBackend, ChromaEpisodeStore
from episeg.store.turns import turn_collection_name
from episeg.types import Actor, Episode, Salience, Turn

__all__ = ["main", "run_hierarchical_bench"]

DIM = 384
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
        vecs = rng.standard_normal((turns, DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
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


def _fill(
    store: ChromaEpisodeStore, rng: np.random.Generator, n: int, turns: int, now: float
) -> float:
    spent = 0.0
    for start in range(0, n, _BATCH):
        batch = _episodes(rng, min(_BATCH, n - start), turns, f"{store.tenant}-{start}-", now)
        t0 = time.perf_counter()
        store.add(batch)
        spent += time.perf_counter() - t0
    return spent


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
    workdir = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="episeg-bench-"))
    rng = np.random.default_rng(seed)
    now = 1.7e9
    client = chromadb.PersistentClient(
        path=str(workdir), settings=Settings(anonymized_telemetry=False)
    )
    backend = ChromaBackend(client)
    for t in range(1, n_tenants):
        _fill(backend.store_for(f"tenant-{t}"), rng, others_each, turns, now)
    raw_store = backend.store_for("tenant-0")
    ingest = _fill(raw_store, rng, n_episodes, turns, now)
    store = IndexedStore(raw_store)
    recaller = HierarchicalRecaller(store, HashingEmbedder(dim=DIM), clock=lambda: now)
    qvecs = rng.standard_normal((queries, DIM)).astype(np.float32)
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    qtexts = [" ".join(_words(rng, 3)) for _ in range(queries)]
    t0 = time.perf_counter()
    recaller.recall(qvecs[0], 10, text=qtexts[0])  # builds the index
    build = time.perf_counter() - t0
    n_candidates = recaller.params.turn_candidates
    raw = client.get_collection(turn_collection_name("tenant-0"))
    include: Any = ["distances"]
    figures: dict[str, Any] = {
        "n_episodes": n_episodes,
        "turns_per_episode": turns,
        "turn_rows": n_episodes * turns,
        "n_tenants": n_tenants,
        "others_each": others_each,
        "queries": queries,
        "k": 10,
        "turn_candidates": n_candidates,
        "ingest_eps": n_episodes / ingest,
        "index_build_s": build,
    }
    samples = []
    for q in qvecs:
        t1 = time.perf_counter()
        raw.query(query_embeddings=q.reshape(1, -1), n_results=n_candidates, include=include)
        samples.append(time.perf_counter() - t1)
    figures["raw_turn_query_p50_ms"], figures["raw_turn_query_p99_ms"] = percentiles_ms(samples)
    for label, budget in (("recall", None), ("recall_500w", 500)):
        samples = []
        for q, text in zip(qvecs, qtexts, strict=True):
            t1 = time.perf_counter()
            recaller.recall(q, 10, text=text, max_words=budget)
            samples.append(time.perf_counter() - t1)
        figures[f"{label}_p50_ms"], figures[f"{label}_p99_ms"] = percentiles_ms(samples)
        figures[f"{label}_ratio"] = figures[f"{label}_p50_ms"] / figures["raw_turn_query_p50_ms"]
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``--episodes N [N ...] [--turns T] [--tenants T] [--queries Q] [--json OUT]``."""
    parser = argparse.ArgumentParser(
        prog="python -m episeg.benchmarks.hierarchical_bench",
        description=__doc__.split("\n")[0] if __doc__ else None,
    )
    parser.add_argument("--episodes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--turns", type=int, default=4, help="turns per episode (default 4)")
    parser.add_argument("--tenants", type=int, default=10)
    parser.add_argument("--others-each", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--path", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args(argv)
    results = []
    for n in args.episodes:
        path = None if args.path is None else args.path / f"n{n}"
        try:
            res = run_hierarchical_bench(
                n,
                args.tenants,
                args.queries,
                turns=args.turns,
                path=path,
                seed=args.seed,
                others_each=args.others_each,
            )
        except ValueError as exc:
            parser.error(str(exc))
        results.append(res)
        print(json.dumps(res), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
