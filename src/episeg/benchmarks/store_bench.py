"""What the two store benchmarks share: a multi-tenant embedded Chroma, fills, timings, the CLI.

``recall_bench`` (the older episode-level :class:`~episeg.recall.Recaller`)
and ``hierarchical_bench`` (:class:`~episeg.recall.hierarchical.HierarchicalRecaller`)
both fill one target tenant with ``n_episodes`` synthetic episodes (random
unit vectors of dim 384, not the model) and ``n_tenants - 1`` others with
``others_each``, then time queries against a raw Chroma query of the same
collection in the same run.

>>> import numpy as np
>>> vectors = unit_vectors(np.random.default_rng(0), 3)
>>> vectors.shape, bool(np.allclose(np.linalg.norm(vectors, axis=1), 1.0))
((3, 384), True)
>>> p50, p99 = time_each(lambda x: x * 2, [1, 2, 3])
>>> 0 <= p50 <= p99
True
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import chromadb
import numpy as np
from chromadb.config import Settings

from episeg.benchmarks import percentiles_ms
from episeg.store import ChromaBackend, ChromaEpisodeStore
from episeg.types import Episode

__all__ = ["DIM", "fill", "main_for", "open_chroma", "time_each", "unit_vectors"]

DIM = 384
T = TypeVar("T")


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` random unit vectors of dimension :data:`DIM` (float32)."""
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs


def open_chroma(path: str | Path | None) -> tuple[Any, ChromaBackend]:
    """An embedded Chroma client under ``path`` (default: a new temp folder) and its backend."""
    workdir = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="episeg-bench-"))
    client = chromadb.PersistentClient(
        path=str(workdir), settings=Settings(anonymized_telemetry=False)
    )
    return client, ChromaBackend(client)


def fill(
    store: ChromaEpisodeStore,
    n: int,
    batch: int,
    make: Callable[[int, str], list[Episode]],
) -> float:
    """Add ``n`` episodes in batches made by ``make(size, id_prefix)``; seconds spent in ``add``."""
    spent = 0.0
    for start in range(0, n, batch):
        episodes = make(min(batch, n - start), f"{store.tenant}-{start}-")
        t0 = time.perf_counter()
        store.add(episodes)
        spent += time.perf_counter() - t0
    return spent


def time_each(call: Callable[[T], object], items: Iterable[T]) -> tuple[float, float]:
    """(p50, p99) in milliseconds of ``call(item)`` over ``items``."""
    samples = []
    for item in items:
        t0 = time.perf_counter()
        call(item)
        samples.append(time.perf_counter() - t0)
    return percentiles_ms(samples)


def time_interleaved(
    baseline: Callable[[T], object],
    measured: Callable[[T], object],
    items: Sequence[T],
    *,
    rounds: int = 3,
) -> tuple[float, float]:
    """p50 in milliseconds of ``baseline`` and of ``measured``, timed turn about.

    Timing one loop after the other lets the machine's load drift between
    them (on this 2-core machine the same raw query's p50 moved from 3.3 to
    5.7 ms between runs). Here, in each round, item ``i`` is timed with
    ``baseline`` and right after it item ``(i + n // 2) % n`` with
    ``measured``, so both see the same moments; with two items or more, never
    the same item twice in a row, because a repeated query runs faster while
    its data are still in cache (docs/RESULTS.md, "Tried and not kept: pausing
    the lexical lists").

    >>> base, meas = time_interleaved(abs, lambda x: sorted(range(x)), [5, 50, 500], rounds=2)
    >>> base >= 0 and meas >= 0
    True
    """
    n = len(items)
    if n < 1 or rounds < 1:
        raise ValueError(f"need at least one item and one round, got {n} and {rounds}")
    base: list[float] = []
    meas: list[float] = []
    for _ in range(rounds):
        for i in range(n):
            t0 = time.perf_counter()
            baseline(items[i])
            t1 = time.perf_counter()
            measured(items[(i + n // 2) % n])
            base.append(t1 - t0)
            meas.append(time.perf_counter() - t1)
    return percentiles_ms(base)[0], percentiles_ms(meas)[0]


def main_for(
    run: Callable[..., dict[str, Any]],
    argv: Sequence[str] | None,
    *,
    prog: str,
    doc: str | None,
    tenants: int,
    turns: int | None = None,
) -> int:
    """The shared CLI: ``--episodes N [N ...]`` runs ``run`` once per size; ``--json OUT``."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0] if doc else None)
    parser.add_argument("--episodes", type=int, nargs="+", default=[10_000])
    if turns is not None:
        parser.add_argument("--turns", type=int, default=turns, help="turns per episode")
    parser.add_argument("--tenants", type=int, default=tenants)
    parser.add_argument("--others-each", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--path", type=Path, default=None, help="parent folder for the data (default: temp)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args(argv)
    extra = {} if turns is None else {"turns": args.turns}
    results = []
    for n in args.episodes:
        try:
            res = run(
                n,
                args.tenants,
                args.queries,
                path=None if args.path is None else args.path / f"n{n}",
                seed=args.seed,
                others_each=args.others_each,
                **extra,
            )
        except ValueError as exc:
            parser.error(str(exc))
        results.append(res)
        print(json.dumps(res), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0
