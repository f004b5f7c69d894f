"""Recall latency and ingest throughput of the Chroma store at scale.

Fills an embedded Chroma with synthetic episodes (random unit vectors of dim
384, *not* the model, so it is fast): one target tenant holds
``n_episodes``; ``n_tenants - 1`` other tenants hold ``others_each`` (default
100) episodes each, so the database is multi-tenant without the others
dominating the run time. It then times ``queries`` recalls on the target
tenant: the store query of ``config.recall.candidates`` neighbours plus the
rerank (no embedding), with and without the reinforcement write-back. The
baseline, timed in the same run on the same collection and query vectors, is a
raw ``chromadb`` ``collection.query`` for the same number of neighbours with
the same payload (metadatas, embeddings, distances); ``*_ratio`` figures are
episeg's p50 over the baseline's p50.

Run ``python -m episeg.benchmarks.recall_bench --episodes 10000 100000 --json out.json``.

>>> import tempfile
>>> from episeg.benchmarks.recall_bench import run_recall_bench
>>> res = run_recall_bench(200, n_tenants=3, queries=5, path=tempfile.mkdtemp(), others_each=10)
>>> res["n_episodes"], res["total_rows"], res["recall_p50_ms"] > 0, res["raw_query_p50_ms"] > 0
(200, 220, True, True)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from episeg.benchmarks.store_bench import DIM, fill, main_for, open_chroma, time_each, unit_vectors
from episeg.config import EpisegConfig
from episeg.recall.rerank import Recaller
from episeg.store.tenants import collection_name
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Episode, Salience, Turn

__all__ = ["main", "run_recall_bench"]

_BATCH = 2000


def _episodes(rng: np.random.Generator, n: int, prefix: str, now: float) -> list[Episode]:
    vecs = unit_vectors(rng, n)
    ages = rng.uniform(0, 30 * 86400, n)
    scores = rng.integers(1, 11, n)
    out = []
    for i in range(n):
        t = now - float(ages[i])
        out.append(
            Episode(
                id=f"{prefix}{i}",
                user=prefix,
                session="bench",
                summary=f"synthetic episode {i}",
                turns=(
                    Turn(actor=Actor.USER, text=f"question {i}", ts=t - 60),
                    Turn(actor=Actor.ASSISTANT, text=f"answer {i}", ts=t),
                ),
                opened_at=t - 60,
                closed_at=t,
                embedding=vecs[i],
                salience=Salience.scored(int(scores[i]), scorer="bench"),
            )
        )
    return out


def run_recall_bench(
    n_episodes: int,
    n_tenants: int = 100,
    queries: int = 200,
    *,
    path: str | Path | None = None,
    seed: int = 0,
    others_each: int = 100,
) -> dict[str, Any]:
    """Fill a store and time recall; returns a JSON-ready dict of figures (ms, eps/s)."""
    if n_episodes < 1 or n_tenants < 1 or queries < 1 or others_each < 0:
        raise ValueError("n_episodes, n_tenants and queries must be >= 1, others_each >= 0")
    rng = np.random.default_rng(seed)
    now = 1.7e9
    client, backend = open_chroma(path)

    def make(size: int, prefix: str) -> list[Episode]:
        return _episodes(rng, size, prefix, now)

    other_secs = 0.0
    for t in range(1, n_tenants):
        other_secs += fill(backend.store_for(f"tenant-{t}"), others_each, _BATCH, make)
    target = backend.store_for("tenant-0")
    target_secs = fill(target, n_episodes, _BATCH, make)
    cfg = EpisegConfig()
    qvecs = unit_vectors(rng, queries)
    figures: dict[str, Any] = {
        "n_episodes": n_episodes,
        "n_tenants": n_tenants,
        "others_each": others_each,
        "total_rows": n_episodes + (n_tenants - 1) * others_each,
        "queries": queries,
        "k": 10,
        "candidates": cfg.recall.candidates,
        "dim": DIM,
        "seed": seed,
        "ingest_eps": n_episodes / target_secs,
        "ingest_eps_all": (n_episodes + (n_tenants - 1) * others_each) / (target_secs + other_secs),
    }
    raw = client.get_collection(collection_name("tenant-0"))
    include: Any = ["metadatas", "embeddings", "distances"]
    raw.query(query_embeddings=qvecs[:1], n_results=cfg.recall.candidates, include=include)
    figures["raw_query_p50_ms"], figures["raw_query_p99_ms"] = time_each(
        lambda q: raw.query(
            query_embeddings=q.reshape(1, -1), n_results=cfg.recall.candidates, include=include
        ),
        qvecs,
    )
    emb = HashingEmbedder(dim=DIM)  # never called: queries are vectors
    for label, reinforce in (("recall", False), ("recall_reinforced", True)):
        recaller = Recaller(target, emb, config=cfg, clock=lambda: now, reinforce=reinforce)
        recaller.recall(qvecs[0], k=10)  # warm-up
        figures[f"{label}_p50_ms"], figures[f"{label}_p99_ms"] = time_each(
            partial(recaller.recall, k=10), qvecs
        )
        figures[f"{label}_ratio"] = figures[f"{label}_p50_ms"] / figures["raw_query_p50_ms"]
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``--episodes N [N ...] [--tenants T] [--queries Q] [--json OUT]``."""
    return main_for(
        run_recall_bench,
        argv,
        prog="python -m episeg.benchmarks.recall_bench",
        doc=__doc__,
        tenants=100,
    )


if __name__ == "__main__":
    sys.exit(main())
