"""Latency of one episode write at scale, for each ``store.sync_threshold``.

Chroma persists a collection's vector index, and purges its write-ahead log,
every ``sync_threshold`` writes (:class:`~episeg.config.StoreConfig`); at 1,
episeg's default, every write rewrites the whole index, so a write costs more
the larger the tenant. For each threshold this times
``ChromaEpisodeStore.add`` of one new episode at a time (``turns`` turns,
random unit vectors, as :mod:`episeg.benchmarks.hierarchical_bench` makes
them) into:

* ``large``: the tenant ``tenant-0`` of a filled store holding ``n_episodes``;
* ``fresh``: a new tenant of the same store (the small-index baseline of the
  same run).

It also times the reinforcement write-back at scale: ``store.update`` of 10
stored episodes of the large tenant (their recall state, what
``confirm_used`` writes), ``updates`` times (``large_update10_*``; the first
not timed).

Each tenant first takes one untimed add (Chroma loads its index then); p50,
p99 and the mean are of the ``adds`` after it. The mean carries the persists
a larger threshold spreads out (one every ``sync_threshold`` writes), so
``adds`` should exceed the largest threshold to see them.

Every threshold runs on its own copy of one filled store (``source``, e.g. the
hierarchical benchmark's ``--path .../n100000``; without it a store is filled
here first), the threshold set by a child process and the copy then opened
here, since Chroma applies a collection's new threshold when it next opens it.
``*_ratio`` = a p50 over the fresh tenant's p50 at threshold 1 in the same run.

Run ``python -m episeg.benchmarks.write_bench --episodes 100000 --source DIR``.

>>> res = run_write_bench(40, thresholds=(1, 100), adds=3, updates=3, turns=2)
>>> [r["sync_threshold"] for r in res["runs"]], res["runs"][0]["large_add_p50_ms"] > 0
([1, 100], True)
>>> res["runs"][1]["large_update10_p50_ms"] > 0
True
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from episeg.benchmarks import percentiles_ms
from episeg.benchmarks.hierarchical_bench import _episodes
from episeg.benchmarks.store_bench import fill
from episeg.store import ChromaBackend

__all__ = ["main", "run_write_bench"]

_TENANT = "tenant-0"


def _reopened(folder: Path, threshold: int) -> ChromaBackend:
    """The store in ``folder`` with ``threshold`` set and in effect.

    A child process sets it on the collections (Chroma applies a changed
    threshold when it next opens a collection); this process has never opened
    ``folder``, so its first open reads the new value.
    """
    code = (
        "import sys; from episeg.store import ChromaBackend; "
        "b = ChromaBackend.persistent(sys.argv[1], sync_threshold=int(sys.argv[2])); "
        "[b.store_for(t) for t in sys.argv[3:]]"
    )
    argv = [sys.executable, "-c", code, str(folder), str(threshold), _TENANT, "tenant-fresh"]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:  # say why: the child's own error, not only its exit status
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(
            f"setting sync_threshold {threshold} on {folder} failed"
            f" (exit {done.returncode}):\n{tail}"
        )
    return ChromaBackend.persistent(folder, sync_threshold=threshold)


def _time_adds(
    backend: ChromaBackend, tenant: str, adds: int, turns: int, seed: int
) -> list[float]:
    """Seconds per ``add`` of one episode, after one untimed add (Chroma loads the index then)."""
    store = backend.store_for(tenant)
    rng = np.random.default_rng([seed, len(tenant)])
    warm, *timed = _episodes(rng, adds + 1, turns, f"{tenant}-w{seed}-", 1.7e9)
    store.add([warm])
    samples = []
    for ep in timed:
        t0 = time.perf_counter()
        store.add([ep])
        samples.append(time.perf_counter() - t0)
    return samples


def _time_reinforcement(backend: ChromaBackend, updates: int, seed: int) -> list[float]:
    """Seconds per ``update`` of 10 stored episodes' recall state (what ``confirm_used`` writes)."""
    store = backend.store_for(_TENANT)
    rng = np.random.default_rng([seed, 2])
    offsets = rng.integers(0, max(1, store.count() - 10), size=updates)
    samples = []
    for n, offset in enumerate(offsets):
        page = store.list_episodes(limit=10, offset=int(offset))
        bumped = [dataclasses.replace(ep, recall_count=ep.recall_count + 1) for ep in page]
        t0 = time.perf_counter()
        store.update(bumped)
        samples.append(time.perf_counter() - t0)
        if n == 0:
            samples.clear()  # the first write after the warm adds is not timed either
    return samples or [0.0]


def run_write_bench(
    n_episodes: int,
    *,
    thresholds: Sequence[int] = (1, 1000),
    adds: int = 30,
    updates: int = 30,
    source: str | Path | None = None,
    turns: int = 2,
    seed: int = 0,
) -> dict[str, Any]:
    """Time single-episode adds per threshold (module docstring); a JSON-ready dict."""
    if min(n_episodes, adds, turns, *thresholds) < 1 or updates < 2:
        raise ValueError("n_episodes, adds, turns and thresholds must be >= 1, updates >= 2")
    work = Path(tempfile.mkdtemp(prefix="episeg-write-bench-"))
    try:
        if source is None:
            source = work / "source"
            rng = np.random.default_rng(seed)
            store = ChromaBackend.persistent(source).store_for(_TENANT)
            fill(
                store,
                n_episodes,
                1000,
                lambda size, prefix: _episodes(rng, size, turns, prefix, 1.7e9),
            )
        runs = []
        for threshold in thresholds:
            copy = work / f"t{threshold}"
            shutil.copytree(source, copy)  # the source itself is never opened: nothing changes it
            backend = _reopened(copy, threshold)
            found = backend.store_for(_TENANT).count()
            if found != n_episodes:
                raise ValueError(f"{source} holds {found} episodes of {_TENANT}, not {n_episodes}")
            row: dict[str, Any] = {"sync_threshold": threshold}
            for label, tenant in (("large", _TENANT), ("fresh", "tenant-fresh")):
                samples = _time_adds(backend, tenant, adds, turns, seed)
                p50, p99 = percentiles_ms(samples)
                row[f"{label}_add_p50_ms"], row[f"{label}_add_p99_ms"] = p50, p99
                row[f"{label}_add_mean_ms"] = 1000.0 * float(np.mean(samples))
            samples = _time_reinforcement(backend, updates, seed)
            p50, p99 = percentiles_ms(samples)
            row["large_update10_p50_ms"], row["large_update10_p99_ms"] = p50, p99
            row["large_update10_mean_ms"] = 1000.0 * float(np.mean(samples))
            runs.append(row)
            shutil.rmtree(copy, ignore_errors=True)
        base = runs[0]["fresh_add_p50_ms"] if runs[0]["sync_threshold"] == 1 else None
        for row in runs:
            for label in ("large", "fresh"):
                row[f"{label}_ratio"] = row[f"{label}_add_p50_ms"] / base if base else None
        return {"n_episodes": n_episodes, "turns": turns, "adds": adds, "runs": runs}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``--episodes N [--source DIR] [--thresholds 1 1000] [--adds 30] [--json OUT]``."""
    parser = argparse.ArgumentParser(prog="python -m episeg.benchmarks.write_bench")
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--source", type=Path, default=None, help="a filled store to copy")
    parser.add_argument("--thresholds", type=int, nargs="+", default=[1, 1000])
    parser.add_argument("--adds", type=int, default=30)
    parser.add_argument("--updates", type=int, default=30)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    args = parser.parse_args(argv)
    try:
        res = run_write_bench(
            args.episodes,
            thresholds=args.thresholds,
            adds=args.adds,
            updates=args.updates,
            source=args.source,
            turns=args.turns,
            seed=args.seed,
        )
    except ValueError as exc:
        parser.error(str(exc))
    print(json.dumps(res))
    if args.json is not None:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
